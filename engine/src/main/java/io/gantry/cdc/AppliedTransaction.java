package io.gantry.cdc;

import io.gantry.gtid.Gtid;
import io.gantry.gtid.GtidSet;
import java.util.Objects;

/**
 * A transaction the change stream applied, as its {@linkplain ChangeListener listeners} receive it.
 *
 * @param gtid        the transaction's GTID
 * @param transaction its row changes of the selected tables (maybe none), its server and its commit time
 * @param position    the stream's applied position with this transaction: a server that has executed this set is at
 *                    least as new as the change
 */
public record AppliedTransaction(Gtid gtid, ChangeTransaction transaction, GtidSet position) {

    public AppliedTransaction {
        Objects.requireNonNull(gtid, "gtid");
        Objects.requireNonNull(transaction, "transaction");
        Objects.requireNonNull(position, "position");
    }
}
