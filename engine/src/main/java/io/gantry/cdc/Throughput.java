package io.gantry.cdc;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Objects;

/**
 * Row changes and transactions applied per second, over about the last {@link #WINDOW}: samples of the running
 * counts, taken by the clock whenever the stream flushes or its status is read. Thread safe.
 */
final class Throughput {

    static final Duration WINDOW = Duration.ofSeconds(10);

    /** Rates per second. */
    record Rates(double rows, double transactions) {
    }

    private record Sample(long millis, long rows, long transactions) {
    }

    private final Clock clock;
    private final ArrayDeque<Sample> samples = new ArrayDeque<>();

    Throughput(Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** Records the counts now, and forgets samples older than the window (keeping two at least). */
    synchronized void sample(AppliedPosition.Counts counts) {
        long now = clock.millis();
        samples.addLast(new Sample(now, counts.rows(), counts.transactions()));
        while (samples.size() > 2 && now - samples.peekFirst().millis() > WINDOW.toMillis()) {
            samples.removeFirst();
        }
    }

    /** The rates between the oldest and the newest sample; zero until two samples are apart in time. */
    synchronized Rates rates() {
        Sample oldest = samples.peekFirst();
        Sample newest = samples.peekLast();
        double seconds = oldest == null ? 0 : (newest.millis() - oldest.millis()) / 1e3;
        if (seconds <= 0) {
            return new Rates(0, 0);
        }
        return new Rates((newest.rows() - oldest.rows()) / seconds,
                (newest.transactions() - oldest.transactions()) / seconds);
    }
}
