package io.gantry.digest;

import io.gantry.route.RouteReason;
import java.util.Map;
import java.util.TreeMap;
import org.HdrHistogram.Histogram;

/**
 * The running figures of one digest row, changed by one thread at a time (its {@link DigestTable}'s lock): counts,
 * errors by code, rows, where the statements ran and why, and their latency in a histogram.
 *
 * <p>The histogram keeps microseconds to one significant digit (a value is read back at most 1/16 above what was
 * recorded) and grows only over the range of latencies seen (HdrHistogram's auto-resizing): 0.8 KB for one value,
 * 1.8 KB for 50 µs to 5 ms, 3.3 KB for 1 µs to 30 s. Two digits would cost 2.5 to 20 KB a row, up to 200 MB at the
 * default 10 000 rows, for a precision an operator's p99 does not need.
 */
final class ShapeFigures {

    private static final int SIGNIFICANT_DIGITS = 1;
    private static final RouteReason[] REASONS = RouteReason.values();

    long count;
    long errors;
    /** Error code to how many statements ended with it; null until the first error. */
    Map<Integer, Long> errorsByCode;
    long rowsSent;
    long rowsAffected;
    long totalNanos;
    final Histogram latencyMicros = new Histogram(SIGNIFICANT_DIGITS);
    final long[] ranOn = new long[RanOn.values().length];
    final long[] reasons = new long[REASONS.length];
    long firstSeenMillis = Long.MAX_VALUE;
    long lastSeenMillis;

    void add(RanOn where, RouteReason reason, int errorCode, long rows, long affected, long nanos, long nowMillis) {
        count++;
        if (errorCode != 0) {
            errors++;
            if (errorsByCode == null) {
                errorsByCode = new TreeMap<>();
            }
            errorsByCode.merge(errorCode, 1L, Long::sum);
        }
        rowsSent += rows;
        rowsAffected += affected;
        totalNanos += nanos;
        latencyMicros.recordValue(Math.max(0, nanos / 1000));
        ranOn[where.ordinal()]++;
        if (reason != null) {
            reasons[reason.ordinal()]++;
        }
        firstSeenMillis = Math.min(firstSeenMillis, nowMillis);
        lastSeenMillis = Math.max(lastSeenMillis, nowMillis);
    }

    /** Adds another row's figures to these (a folded row, or the same row of another table). */
    void merge(ShapeFigures other) {
        count += other.count;
        errors += other.errors;
        if (other.errorsByCode != null) {
            if (errorsByCode == null) {
                errorsByCode = new TreeMap<>();
            }
            other.errorsByCode.forEach((code, n) -> errorsByCode.merge(code, n, Long::sum));
        }
        rowsSent += other.rowsSent;
        rowsAffected += other.rowsAffected;
        totalNanos += other.totalNanos;
        latencyMicros.add(other.latencyMicros);
        for (int i = 0; i < ranOn.length; i++) {
            ranOn[i] += other.ranOn[i];
        }
        for (int i = 0; i < reasons.length; i++) {
            reasons[i] += other.reasons[i];
        }
        firstSeenMillis = Math.min(firstSeenMillis, other.firstSeenMillis);
        lastSeenMillis = Math.max(lastSeenMillis, other.lastSeenMillis);
    }

    ShapeFigures copy() {
        ShapeFigures copy = new ShapeFigures();
        copy.merge(this);
        return copy;
    }

    static RouteReason reason(int ordinal) {
        return REASONS[ordinal];
    }
}
