package io.gantry.proxy.backend;

import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * How long new connections to one server waited for room under its cap, over the last one to two minutes: two
 * histograms (microseconds, two significant digits), the older dropped each minute. Thread-safe; written once per
 * new connection, not per statement.
 */
final class WaitTimes {

    private static final long PERIOD_NANOS = TimeUnit.MINUTES.toNanos(1);
    /** Waits are bounded by --backend-wait-timeout-ms (at most 10 min); anything longer counts as that. */
    private static final long LONGEST_MICROS = TimeUnit.MINUTES.toMicros(10);

    private Histogram current = newHistogram();
    private Histogram previous = newHistogram();
    private long periodStart = System.nanoTime();

    synchronized void record(long nanos) {
        rotate();
        current.recordValue(Math.min(LONGEST_MICROS, Math.max(0, TimeUnit.NANOSECONDS.toMicros(nanos))));
    }

    /** The 99th percentile in milliseconds; 0 with nothing recorded. */
    synchronized double p99Millis() {
        rotate();
        Histogram both = current.copy();
        both.add(previous);
        return both.getTotalCount() == 0 ? 0 : both.getValueAtPercentile(99) / 1000.0;
    }

    private void rotate() {
        long now = System.nanoTime();
        if (now - periodStart < PERIOD_NANOS) {
            return;
        }
        boolean skippedAPeriod = now - periodStart >= 2 * PERIOD_NANOS;
        previous = skippedAPeriod ? newHistogram() : current;
        current = newHistogram();
        periodStart = now;
    }

    private static Histogram newHistogram() {
        return new Histogram(LONGEST_MICROS, 2);
    }
}
