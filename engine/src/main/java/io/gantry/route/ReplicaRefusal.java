package io.gantry.route;

/**
 * Why a replica may not serve a session's read now; the reasons {@code consistent_prefix_failed_reads} counts. In
 * order of how much they say about a read sent to the primary: the session's own needs first, then lag.
 */
public enum ReplicaRefusal {
    /** It is not known to hold everything this session wrote. */
    OWN_WRITES("own_writes", "not known to hold this session's own writes"),
    /** It may be behind something this session has already read. */
    MONOTONIC_FLOOR("monotonic_floor", "may be behind what this session has already read"),
    /** Its lag is above {@code --max-stale-read-bound-ms}, or its safe time is older than the session's staleness. */
    TOO_STALE("too_stale", "lags more than the staleness allowed"),
    /** Its position has not been sampled (just started, or its sampling connection failed). */
    POSITION_UNKNOWN("position_unknown", "its position is not known"),
    /** With waiting on, it did not apply what the session needs within {@code --causal-wait-timeout-ms}. */
    WAIT_TIMED_OUT("waited", "did not catch up within --causal-wait-timeout-ms");

    private final String counterName;
    private final String description;

    ReplicaRefusal(String counterName, String description) {
        this.counterName = counterName;
        this.description = description;
    }

    /** The name in {@code SHOW GANTRY STATUS} ({@code Consistent_prefix_failed_reads_<name>}). */
    public String counterName() {
        return counterName;
    }

    public String description() {
        return description;
    }
}
