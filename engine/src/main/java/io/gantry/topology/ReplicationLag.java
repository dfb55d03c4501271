package io.gantry.topology;

import io.gantry.gtid.GtidSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.Optional;

/**
 * Replication lag measured from GTIDs, not {@code Seconds_Behind_Master}: the primary's executed set is sampled
 * over time, and a replica's safe time is the latest sample time whose set the replica contains. Its lag is how
 * long ago that was — zero when it has everything the primary had at the latest sample. Not thread-safe; the
 * position sampler owns it.
 */
final class ReplicationLag {

    /** What a replica's position says about its lag. */
    record Lag(long millis, boolean lowerBound) {
        static final Lag UNKNOWN = new Lag(-1, false);
    }

    private record Sample(Instant at, GtidSet primary) {
    }

    private final Duration keep;
    private final Deque<Sample> samples = new ArrayDeque<>();

    /** @param keep how far back samples go; a replica further behind is reported as at least this far */
    ReplicationLag(Duration keep) {
        this.keep = keep;
    }

    /** Records the primary's executed set at a moment. */
    void sample(Instant at, GtidSet primary) {
        Sample newest = samples.peekLast();
        if (newest != null && newest.primary().flavour() != primary.flavour()) {
            samples.clear(); // another server flavour took over: old samples cannot be compared
        }
        samples.addLast(new Sample(at, primary));
        while (!samples.isEmpty() && samples.peekFirst().at().isBefore(at.minus(keep))) {
            samples.removeFirst();
        }
    }

    /**
     * The sampling time of the newest primary set that {@code replica} contains: the replica holds everything the
     * primary had executed then. Empty when it contains no sample kept (or the flavours differ).
     */
    Optional<Instant> safeTime(GtidSet replica) {
        Iterator<Sample> newestFirst = samples.descendingIterator();
        while (newestFirst.hasNext()) {
            Sample sample = newestFirst.next();
            if (sample.primary().flavour() != replica.flavour()) {
                return Optional.empty();
            }
            if (replica.contains(sample.primary())) {
                return Optional.of(sample.at());
            }
        }
        return Optional.empty();
    }

    /** The lag of a replica whose executed set is {@code replica}, as of {@code now}. */
    Lag lagOf(GtidSet replica, Instant now) {
        Sample newest = samples.peekLast();
        if (newest == null || newest.primary().flavour() != replica.flavour()) {
            return Lag.UNKNOWN;
        }
        if (replica.contains(newest.primary())) {
            return new Lag(0, false);
        }
        Iterator<Sample> newestFirst = samples.descendingIterator();
        while (newestFirst.hasNext()) {
            Sample sample = newestFirst.next();
            if (replica.contains(sample.primary())) {
                return new Lag(Duration.between(sample.at(), now).toMillis(), false);
            }
        }
        // Behind every sample kept: at least as old as the oldest, and never shown as caught up.
        return new Lag(Math.max(1, Duration.between(samples.peekFirst().at(), now).toMillis()), true);
    }
}
