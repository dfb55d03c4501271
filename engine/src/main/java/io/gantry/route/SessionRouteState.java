package io.gantry.route;

import java.util.Objects;
import java.util.Optional;

/**
 * What the router needs to know about one client session. Immutable: the proxy keeps the latest value per session
 * and replaces it with {@link #afterRouting(RouteDecision)} after each statement is sent and with
 * {@link #withServerStatus(ServerId, boolean, boolean, boolean)} after each OK/EOF packet from the server that
 * answered the client (not from replayed session-state statements).
 *
 * <p>Session pinning. Once a statement of the following kinds has run, every later statement of the session goes
 * to the primary until the client disconnects ({@link RouteReason#SESSION_PINNED}); pinning is never undone, not
 * even by {@code UNLOCK TABLES}, {@code RELEASE_LOCK()} or {@code DROP TEMPORARY TABLE}, because the proxy cannot
 * tell that nothing else of the kind is left:
 * <ul>
 *   <li>it sets a user variable: {@code SET @x = ...}, {@code SELECT ... INTO @x}, {@code @x := ...},
 *       {@code GET DIAGNOSTICS @x = ...};</li>
 *   <li>it creates or drops a temporary table: {@code CREATE [OR REPLACE] TEMPORARY TABLE},
 *       {@code DROP TEMPORARY TABLE};</li>
 *   <li>it takes or releases table locks: {@code LOCK TABLES}, {@code UNLOCK TABLES}, {@code LOCK INSTANCE FOR
 *       BACKUP}, {@code FLUSH TABLES ... WITH READ LOCK}, {@code FLUSH TABLES ... FOR EXPORT};</li>
 *   <li>it uses named locks: {@code GET_LOCK()}, {@code RELEASE_LOCK()}, {@code RELEASE_ALL_LOCKS()},
 *       {@code IS_FREE_LOCK()}, {@code IS_USED_LOCK()};</li>
 *   <li>{@code LOAD DATA LOCAL INFILE};</li>
 *   <li>a multi-statement text mixes a session-state change with other statements
 *       ({@code SET NAMES utf8mb4; SELECT ...}), so it cannot be replayed on other backends.</li>
 * </ul>
 * Plain session-state changes ({@code SET NAMES}, {@code SET sql_mode}, {@code USE db}, ...) do not pin: the proxy
 * replays them on every backend connection of the session.
 *
 * @param autocommit the session's autocommit, from {@code SERVER_STATUS_AUTOCOMMIT}
 * @param transaction the session's transaction, from the status flags
 * @param pinnedBy present once the session is pinned to the primary; the flag of the statement that pinned it
 * @param sessionReplica the replica the session reads from under {@link ReadBalance#SESSION}, once chosen
 * @param previousServer the server that ran the session's previous statement, for diagnostics such as
 *        {@code SHOW WARNINGS}
 */
public record SessionRouteState(
        boolean autocommit,
        TransactionState transaction,
        Optional<StatementFlag> pinnedBy,
        Optional<ServerId> sessionReplica,
        Optional<ServerId> previousServer) {

    /** The state of a new session: autocommit on, no transaction, not pinned, no replica chosen yet. */
    public static final SessionRouteState INITIAL = new SessionRouteState(
            true, TransactionState.NONE, Optional.empty(), Optional.empty(), Optional.empty());

    /** Rejects nulls. */
    public SessionRouteState {
        Objects.requireNonNull(transaction, "transaction");
        Objects.requireNonNull(pinnedBy, "pinnedBy");
        Objects.requireNonNull(sessionReplica, "sessionReplica");
        Objects.requireNonNull(previousServer, "previousServer");
    }

    /**
     * The session's routing state in an operator's words, for {@code EXPLAIN GANTRY ROUTE}: "autocommit on, no
     * transaction, not pinned, no replica chosen yet, no statement run yet". {@link #toString()} stays the record's,
     * for debugging.
     */
    public String inWords() {
        return (autocommit ? "autocommit on" : "autocommit off") + ", " + transaction.inWords() + ", "
                + pinnedBy.map(flag -> "pinned to the primary: an earlier statement " + flag.description())
                        .orElse("not pinned")
                + ", " + sessionReplica.map(replica -> "reads on the replica " + replica)
                        .orElse("no replica chosen yet")
                + ", " + previousServer.map(server -> "previous statement on " + server).orElse("no statement run yet");
    }

    /** Whether the session is pinned to the primary. */
    public boolean pinned() {
        return pinnedBy.isPresent();
    }

    /**
     * The state after {@code decision} was carried out: remembers the server as the previous one, pins the session
     * if the decision says so (the first pin's flag is kept), and remembers a newly chosen session replica.
     */
    public SessionRouteState afterRouting(RouteDecision decision) {
        Optional<StatementFlag> pin = pinnedBy.isPresent() ? pinnedBy : decision.pinsSession();
        ServerId server = decision.server();
        boolean newReplica = decision.reason().choosesReplica() && !isSome(sessionReplica, server);
        if (pin == pinnedBy && !newReplica && isSome(previousServer, server)) {
            return this; // the usual statement: the same server as the last one (routed per statement, no garbage)
        }
        return new SessionRouteState(autocommit, transaction, pin, newReplica ? Optional.of(server) : sessionReplica,
                isSome(previousServer, server) ? previousServer : Optional.of(server));
    }

    private static boolean isSome(Optional<ServerId> known, ServerId server) {
        return known.isPresent() && known.get().equals(server);
    }

    /**
     * The state after an OK or EOF packet from {@code server}, the server that answered the client.
     *
     * @param inTransaction {@code SERVER_STATUS_IN_TRANS}
     * @param readOnlyTransaction {@code SERVER_STATUS_IN_TRANS_READONLY}
     * @param autocommitOn {@code SERVER_STATUS_AUTOCOMMIT}
     */
    public SessionRouteState withServerStatus(
            ServerId server, boolean inTransaction, boolean readOnlyTransaction, boolean autocommitOn) {
        TransactionState state = !inTransaction ? TransactionState.NONE
                : readOnlyTransaction ? new TransactionState.ReadOnly(server) : TransactionState.READ_WRITE;
        if (autocommitOn == autocommit && state.equals(transaction)) {
            return this; // every response ends with a status; most change nothing
        }
        return new SessionRouteState(autocommitOn, state, pinnedBy, sessionReplica, previousServer);
    }

    /** A copy with another transaction state (for tests and for a proxy that tracks it itself). */
    public SessionRouteState withTransaction(TransactionState state) {
        return new SessionRouteState(autocommit, state, pinnedBy, sessionReplica, previousServer);
    }

    /** A copy with autocommit changed. */
    public SessionRouteState withAutocommit(boolean value) {
        return new SessionRouteState(value, transaction, pinnedBy, sessionReplica, previousServer);
    }

    /** A copy pinned by {@code flag}. */
    public SessionRouteState withPin(StatementFlag flag) {
        return new SessionRouteState(autocommit, transaction, Optional.of(flag), sessionReplica, previousServer);
    }

    /** A copy with the session replica set. */
    public SessionRouteState withSessionReplica(ServerId replica) {
        return new SessionRouteState(autocommit, transaction, pinnedBy, Optional.of(replica), previousServer);
    }

    /** A copy with the previous statement's server set. */
    public SessionRouteState withPreviousServer(ServerId server) {
        return new SessionRouteState(autocommit, transaction, pinnedBy, sessionReplica, Optional.of(server));
    }
}
