package io.gantry.digest;

import io.gantry.route.RouteReason;
import java.time.Instant;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * One row of the statement digests as read: a shape run in a schema by an account, or the "other" row that holds
 * the shapes folded out of the table ({@link #folded()}), with exact counts.
 *
 * @param shape         the shape ({@code SqlTokenizer#writeDigestShape}), {@value #OTHER} for the folded row
 * @param schema        the session's database ({@code ""} for none, and for the folded row)
 * @param account       the client's user name ({@code ""} for the folded row)
 * @param count         statements answered
 * @param errorsByCode  how many of them ended with each error code, in code order
 * @param rowsSent      result-set rows sent to clients
 * @param rowsAffected  rows the servers reported as affected
 * @param totalMicros   the sum of their latencies: from the command's arrival to the end of its answer
 * @param ranOn         how many ran where
 * @param reasons       how many were routed for each reason, in the order of {@link RouteReason}
 */
public record ShapeDigest(String shape, String schema, String account, long count, Map<Integer, Long> errorsByCode,
                          long rowsSent, long rowsAffected, long totalMicros, long p50Micros, long p95Micros,
                          long p99Micros, long maxMicros, Map<RanOn, Long> ranOn, Map<RouteReason, Long> reasons,
                          Instant firstSeen, Instant lastSeen, boolean folded) {

    /** The shape text of the row of folded shapes. */
    public static final String OTHER = "other";

    public ShapeDigest {
        Objects.requireNonNull(shape, "shape");
        errorsByCode = Collections.unmodifiableSortedMap(new TreeMap<>(errorsByCode));
        ranOn = ranOn.isEmpty() ? Map.of() : Collections.unmodifiableMap(new EnumMap<>(ranOn));
        reasons = reasons.isEmpty() ? Map.of() : Collections.unmodifiableMap(new EnumMap<>(reasons));
    }

    /** Statements that ended with an error. */
    public long errors() {
        long errors = 0;
        for (long n : errorsByCode.values()) {
            errors += n;
        }
        return errors;
    }

    /** How many ran {@code where}. */
    public long ran(RanOn where) {
        return ranOn.getOrDefault(where, 0L);
    }

    /** The errors as {@code code:count} pairs, space-separated, in code order: {@code 1062:3 1213:1}. */
    public String errorCodesText() {
        return pairs(errorsByCode);
    }

    /** The routing reasons as {@code reason:count} pairs, lower case: {@code read_on_replica:90 not_a_read:2}. */
    public String reasonsText() {
        return pairs(reasons);
    }

    private static String pairs(Map<?, Long> counts) {
        StringBuilder text = new StringBuilder();
        counts.forEach((key, count) -> (text.isEmpty() ? text : text.append(' '))
                .append(key.toString().toLowerCase(Locale.ROOT)).append(':').append(count));
        return text.toString();
    }
}
