package io.gantry.cdc;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * The row changes of one committed transaction, in binlog order, as they go to the change sink.
 *
 * @param gtid       the transaction's GTID in its flavour's text form ({@code 0-3306-42},
 *                   {@code 3E11FA47-...:23}); for snapshot rows, the snapshot's position as a GTID set
 * @param server     {@code host:port} of the server the change was read from
 * @param commitTime when the transaction committed on its origin (binlog timestamps have whole seconds)
 * @param changes    the row changes of the selected tables; may be empty when the transaction touched none
 * @param changesAccounts whether it changed accounts or privileges ({@code GRANT}, {@code REVOKE},
 *                   {@code DROP USER}, ..., or a row of a grant table: {@link AccountStatements}); not part of the
 *                   sink's lines
 * @param changesWatched whether it changed a row of a table the filter watches ({@link TableFilter#watching});
 *                   not part of the sink's lines
 */
public record ChangeTransaction(String gtid, String server, Instant commitTime, List<RowChange> changes,
                                boolean changesAccounts, boolean changesWatched) {

    /** A transaction of row changes only. */
    public ChangeTransaction(String gtid, String server, Instant commitTime, List<RowChange> changes) {
        this(gtid, server, commitTime, changes, false, false);
    }

    public ChangeTransaction {
        Objects.requireNonNull(gtid, "gtid");
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(commitTime, "commitTime");
        changes = List.copyOf(changes);
    }
}
