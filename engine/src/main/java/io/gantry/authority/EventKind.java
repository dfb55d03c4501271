package io.gantry.authority;

/** The kinds of entry on the failover timeline ({@code gantry.events.kind} holds the {@link #sqlName()}). */
public enum EventKind {
    /** A server was marked down (failed health check or failed session connection). */
    DOWN("down"),
    /** A server that was down passed a health check, or a broken or diverged replica recovered. */
    UP("up"),
    /** A replica's replication stopped with an error; it serves no reads until it runs again. */
    BROKEN("broken"),
    /** A replica holds transactions the primary lacks (errant GTIDs); it serves no reads until they are gone. */
    DIVERGED("diverged"),
    /** A client host was blocked after failed logins ({@code server} names the host). */
    HOST_BLOCKED("host_blocked"),
    /** A server's role changed (primary, replica, unknown), or the primary moved. */
    ROLE_CHANGE("role_change"),
    /** The change stream moved to another server. */
    CDC_MOVED("cdc_moved"),
    /** The change stream passed over a server that lacks transactions it already applied. */
    CDC_SKIPPED("cdc_skipped"),
    /** The change stream was stopped ({@code STOP GANTRY REPLICATION}, or its sink failed). */
    CDC_STOPPED("cdc_stopped"),
    /** The change stream started streaming ({@code START GANTRY REPLICATION}, or Gantry started). */
    CDC_STARTED("cdc_started"),
    /** A server list was replaced (first start or {@code ALTER GANTRY CHANGE ... TO}). */
    LIST_CHANGED("list_changed"),
    /** A server's weight changed ({@code ALTER GANTRY SET WEIGHT}). */
    WEIGHT_CHANGED("weight_changed"),
    /**
     * The transactions open when the primary was lost, and what became of them: replayed on the new primary, or
     * ended and why ({@code server} names the new primary).
     */
    TRANSACTIONS_REPLAYED("transactions_replayed"),
    /**
     * A take-over ended: how many sessions moved to the new Gantry process, how many were ended or drained, and how
     * long it took.
     */
    TAKE_OVER("take_over"),
    /** Gantry started. */
    STARTUP("startup");

    private final String sqlName;

    EventKind(String sqlName) {
        this.sqlName = sqlName;
    }

    /** The name stored in {@code gantry.events.kind}, lower case with underscores. */
    public String sqlName() {
        return sqlName;
    }

    /**
     * The kind with this SQL name.
     *
     * @throws IllegalArgumentException naming the value
     */
    public static EventKind fromSqlName(String name) {
        for (EventKind kind : values()) {
            if (kind.sqlName.equals(name)) {
                return kind;
            }
        }
        throw new IllegalArgumentException("unknown event kind '" + name + "'");
    }
}
