package io.gantry.topology;

/**
 * Whether a server takes new work. Only {@link #UP} servers serve reads; {@link #BROKEN} and {@link #DIVERGED}
 * replicas answer (they are not down) but their data cannot be trusted, so routing passes them over until the health
 * loop sees them recover.
 */
public enum Health {
    /** The last check or connection succeeded, and (for a replica) its replication is sound. */
    UP,
    /** A check or a session's connection failed; new sessions skip it until a check succeeds. */
    DOWN,
    /**
     * A replica whose replication stopped with an error (its SQL thread, or its IO thread that gave up): it answers,
     * but it no longer follows the primary.
     */
    BROKEN,
    /** A replica whose executed GTID set holds transactions the primary lacks (errant transactions). */
    DIVERGED;

    /** The name shown in {@code gantry.upstream_servers.health} and the events: lower case. */
    public String sqlName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
