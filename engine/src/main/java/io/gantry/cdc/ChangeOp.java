package io.gantry.cdc;

import java.util.Locale;

/** What happened to a row: the {@code op} of a change-sink line. */
public enum ChangeOp {
    INSERT, UPDATE, DELETE,
    /** A row read by a snapshot, not a change: the table held it at the snapshot's position. */
    SNAPSHOT;

    /** The name written to the sink: lower case. */
    public String jsonName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
