package io.gantry.authority;

import java.time.Instant;
import java.util.Objects;

/**
 * One row of {@code gantry.queries}: a statement shape as the proxy's digests count it, copied in by
 * {@link Authority#replaceQueryDigests} before an admin query reads it. Components are in the table's column order;
 * times in microseconds.
 *
 * @param errorCodes     {@code code:count} pairs, space-separated
 * @param routingReasons {@code reason:count} pairs, space-separated
 * @param folded         whether this is the row of the shapes folded out of a full table ({@code query} "other")
 */
public record QueryDigestRow(String query, String schemaName, String account, long count, long errors,
                             String errorCodes, long rowsSent, long rowsAffected, long totalTimeUs, long p50Us,
                             long p95Us, long p99Us, long maxUs, long onPrimary, long onReplica, long onCache,
                             long onGantry, String routingReasons, Instant firstSeen, Instant lastSeen,
                             boolean folded) {

    public QueryDigestRow {
        Objects.requireNonNull(query, "query");
        Objects.requireNonNull(schemaName, "schemaName");
        Objects.requireNonNull(account, "account");
        Objects.requireNonNull(errorCodes, "errorCodes");
        Objects.requireNonNull(routingReasons, "routingReasons");
        Objects.requireNonNull(firstSeen, "firstSeen");
        Objects.requireNonNull(lastSeen, "lastSeen");
    }
}
