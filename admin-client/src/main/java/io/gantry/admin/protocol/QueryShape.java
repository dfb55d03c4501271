package io.gantry.admin.protocol;

import java.time.Instant;
import java.util.Objects;

/**
 * One row of the statement digests as the {@code queries} topic pushes it: a statement shape run in a schema by an
 * account (or the "other" row of folded shapes), with what {@code SHOW GANTRY QUERIES} says of it. Times are in
 * microseconds; the counts and totals count from the row's first statement or the last {@code FLUSH GANTRY
 * QUERIES}, so a client that keeps the pushes can tell what happened between two of them.
 *
 * @param errorCodes {@code code:count} pairs, space-separated ({@code 1062:3 1213:1}); empty for none
 * @param reasons    {@code reason:count} pairs, lower case ({@code read_on_replica:90 not_a_read:2})
 * @param folded     whether this is the "other" row (its shape {@code other}, schema and account empty)
 */
public record QueryShape(String shape, String schema, String account, long count, long errors, String errorCodes,
                         long rowsSent, long rowsAffected, long totalMicros, long p50Micros, long p95Micros,
                         long p99Micros, long maxMicros, long onPrimary, long onReplica, long onCache,
                         long onGantry, String reasons, Instant firstSeen, Instant lastSeen, boolean folded) {

    public QueryShape {
        Objects.requireNonNull(shape, "shape");
        Objects.requireNonNull(schema, "schema");
        Objects.requireNonNull(account, "account");
        Objects.requireNonNull(errorCodes, "errorCodes");
        Objects.requireNonNull(reasons, "reasons");
        Objects.requireNonNull(firstSeen, "firstSeen");
        Objects.requireNonNull(lastSeen, "lastSeen");
    }

    /** What tells this row from the others: its shape, schema and account. */
    public String key() {
        return shape + '\0' + schema + '\0' + account;
    }
}
