package io.gantry.consistency;

import java.util.Objects;

/**
 * One client operation of a history: a write of a version to a key, or a read of a key and the version it saw.
 *
 * @param session           the client session (a reconnect starts a new one: a proxy keeps no guarantee across it)
 * @param kind              write or read
 * @param key               the row's key
 * @param version           written: the version the write set (at least); read: the version seen, {@link #ABSENT}
 *                          when the row did not exist; meaningless when the outcome is not {@link Outcome#OK}
 * @param invokedNanos      {@link System#nanoTime()} just before the statement was sent
 * @param completedNanos    {@link System#nanoTime()} just after its answer was read
 * @param invokedWallMillis {@link System#currentTimeMillis()} at invocation, for reports
 * @param outcome           whether it took effect
 * @param servedBy          the server that ran it ({@code @@server_id} as text), or null when not known
 * @param stalenessBoundMillis the staleness bound the read ran under (the session's
 *                          {@code gantry_follower_read_staleness_ms}, or the proxy's max stale bound when smaller),
 *                          0 for none; always 0 for writes
 * @param errorCode         the server's error number when the outcome is not OK (0 when none)
 * @param error             the error text when the outcome is not OK, else null
 */
public record Operation(String session, Kind kind, int key, long version, long invokedNanos, long completedNanos,
                        long invokedWallMillis, Outcome outcome, String servedBy, long stalenessBoundMillis,
                        int errorCode, String error) {

    /** The version a read reports for a row that does not exist. */
    public static final long ABSENT = 0;

    public enum Kind { WRITE, READ }

    public enum Outcome {
        /** It took effect (a write committed; a read returned a row or none). */
        OK,
        /** The server refused it: it did not take effect. */
        FAILED,
        /** The connection broke before the answer: a write may or may not have committed. */
        UNKNOWN
    }

    public Operation {
        Objects.requireNonNull(session, "session");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(outcome, "outcome");
        if (completedNanos < invokedNanos) {
            throw new IllegalArgumentException("completed before invoked: " + completedNanos + " < " + invokedNanos);
        }
    }

    /** A write that committed. */
    public static Operation write(String session, int key, long version, long invokedNanos, long completedNanos) {
        return new Operation(session, Kind.WRITE, key, version, invokedNanos, completedNanos, 0, Outcome.OK, null, 0,
                0, null);
    }

    /** A read that saw {@code version} ({@link #ABSENT} for no row). */
    public static Operation read(String session, int key, long version, long invokedNanos, long completedNanos) {
        return new Operation(session, Kind.READ, key, version, invokedNanos, completedNanos, 0, Outcome.OK, null, 0,
                0, null);
    }

    public Operation withBound(long millis) {
        return new Operation(session, kind, key, version, invokedNanos, completedNanos, invokedWallMillis, outcome,
                servedBy, millis, errorCode, error);
    }

    public Operation withOutcome(Outcome value, int code, String message) {
        return new Operation(session, kind, key, version, invokedNanos, completedNanos, invokedWallMillis, value,
                servedBy, stalenessBoundMillis, code, message);
    }

    public Operation servedBy(String server) {
        return new Operation(session, kind, key, version, invokedNanos, completedNanos, invokedWallMillis, outcome,
                server, stalenessBoundMillis, errorCode, error);
    }

    public boolean ok() {
        return outcome == Outcome.OK;
    }

    /** For violation reports; times relative to {@code originNanos} in milliseconds. */
    public String describe(long originNanos) {
        StringBuilder out = new StringBuilder();
        out.append(session).append(' ').append(kind == Kind.WRITE ? "write" : "read").append(" k=").append(key);
        if (outcome == Outcome.OK) {
            out.append(kind == Kind.WRITE ? " v:=" : " saw v=").append(version == ABSENT && kind == Kind.READ
                    ? "absent" : Long.toString(version));
        } else {
            out.append(' ').append(outcome).append(kind == Kind.WRITE ? " v:=" + version : "")
                    .append(" (").append(errorCode).append(": ").append(error).append(')');
        }
        out.append(String.format(" [%.1f..%.1f ms]", (invokedNanos - originNanos) / 1e6,
                (completedNanos - originNanos) / 1e6));
        if (servedBy != null) {
            out.append(" on ").append(servedBy);
        }
        if (stalenessBoundMillis > 0) {
            out.append(" bound ").append(stalenessBoundMillis).append(" ms");
        }
        return out.toString();
    }
}
