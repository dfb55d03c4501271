package io.gantry.route;

import java.util.Objects;

/**
 * Whether the session is inside a transaction, as reported by the status flags of the last OK/EOF packet of the
 * server that answered the client ({@code SERVER_STATUS_IN_TRANS}, {@code SERVER_STATUS_IN_TRANS_READONLY}).
 */
public sealed interface TransactionState
        permits TransactionState.None, TransactionState.ReadWrite, TransactionState.ReadOnly {

    /** Not in a transaction. */
    TransactionState NONE = new None();

    /** In a read-write transaction (on the primary). */
    TransactionState READ_WRITE = new ReadWrite();

    /** The state in an operator's words: "no transaction", "in a read-only transaction on db2:3306", ... */
    String inWords();

    /** Not in a transaction. */
    record None() implements TransactionState {
        @Override
        public String inWords() {
            return "no transaction";
        }
    }

    /** In a transaction that may write: it runs on the primary. */
    record ReadWrite() implements TransactionState {
        @Override
        public String inWords() {
            return "in a read-write transaction, on the primary";
        }
    }

    /**
     * In a read-only transaction.
     *
     * @param server where the transaction runs (a replica, or the primary when rules 2 to 5 sent it there)
     */
    record ReadOnly(ServerId server) implements TransactionState {
        /** Rejects a null server. */
        public ReadOnly {
            Objects.requireNonNull(server, "server");
        }

        @Override
        public String inWords() {
            return "in a read-only transaction on " + server;
        }
    }
}
