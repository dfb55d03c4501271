package io.gantry.proxy.execution;

import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import io.gantry.proxy.backend.InternalCommand;
import io.gantry.wire.ErrPacket;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * The server functions a read waits with on a replica until it has applied a GTID set: MariaDB's
 * {@code MASTER_GTID_WAIT(pos, timeout)} (0 when reached, -1 on timeout) and MySQL's
 * {@code WAIT_FOR_EXECUTED_GTID_SET(set, timeout)} (0 when reached, 1 on timeout); timeouts in seconds, whole
 * seconds on MySQL.
 */
public final class CausalWait {

    private CausalWait() {
    }

    /** The query that waits on a server of {@code flavour} for {@code floor}, up to {@code timeout}. */
    public static String query(Flavour flavour, GtidSet floor, Duration timeout) {
        // MySQL 8.0 reads the timeout as whole seconds (0.7 would be 0, no wait at all): round up there.
        String seconds = flavour == Flavour.MYSQL ? Long.toString((timeout.toMillis() + 999) / 1000)
                : String.format(Locale.ROOT, "%.3f", timeout.toMillis() / 1000.0);
        String function = flavour == Flavour.MYSQL ? "WAIT_FOR_EXECUTED_GTID_SET" : "MASTER_GTID_WAIT";
        // A GTID set's text holds digits, hex, ':', '-' and ',' only: nothing to quote.
        return "SELECT " + function + "('" + floor + "', " + seconds + ")";
    }

    /** Whether the wait's answer says the server has applied the set in time. */
    public static boolean caughtUp(List<InternalCommand.Value> row, ErrPacket error) {
        return error == null && row != null && !row.isEmpty() && "0".equals(row.get(0).text());
    }
}
