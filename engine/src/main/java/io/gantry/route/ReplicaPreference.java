package io.gantry.route;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.random.RandomGenerator;

/**
 * How a read picks among the replicas that qualify for it ({@code --follower-reads-prefer}, and the session's own
 * {@code gantry_follower_reads_prefer}): by weight alone, or the closest first. Closest means the lowest round trip
 * the health loop measures, smoothed ({@link ReplicaCandidate#roundTripMicros()}); every replica within the tolerance
 * of the closest counts as close, and among the close ones the choice is by weight again. The tolerance keeps
 * replicas of one data centre, whose round trips differ by noise, sharing reads by their weights; it is the larger
 * of {@code --follower-reads-closest-tolerance-ms} and {@value #RELATIVE_TOLERANCE_PERCENT} % of the closest's round
 * trip, so that replicas far away (tens of milliseconds) are not told apart by a millisecond of jitter. A replica
 * whose round trip is not measured yet is not known to be close; while none is measured the choice is by weight.
 *
 * @param closest whether the closest replicas are preferred ({@code closest}), or only weights count ({@code weight})
 * @param toleranceMicros the absolute part of the tolerance, in microseconds, 0 or more
 */
public record ReplicaPreference(boolean closest, long toleranceMicros) {

    /** The default of {@code --follower-reads-closest-tolerance-ms}: 1 ms. */
    public static final long DEFAULT_TOLERANCE_MICROS = 1_000;
    /** The relative part of the tolerance: this share of the closest replica's round trip. */
    public static final int RELATIVE_TOLERANCE_PERCENT = 20;
    /** The default: by weight, as before the preference existed. */
    public static final ReplicaPreference WEIGHT = new ReplicaPreference(false, DEFAULT_TOLERANCE_MICROS);

    /** Validates the tolerance. */
    public ReplicaPreference {
        if (toleranceMicros < 0) {
            throw new IllegalArgumentException("--follower-reads-closest-tolerance-ms must be 0 or more, got "
                    + toleranceMicros / 1000.0);
        }
    }

    /**
     * Whether {@code value}, as {@code --follower-reads-prefer} or {@code gantry_follower_reads_prefer} takes it
     * ({@code closest} or {@code weight}, any case), prefers the closest; null when it is neither.
     */
    public static Boolean prefersClosest(String value) {
        return switch (value == null ? "" : value.trim().toLowerCase(Locale.ROOT)) {
            case "closest" -> Boolean.TRUE;
            case "weight" -> Boolean.FALSE;
            default -> null;
        };
    }

    /** A copy that prefers the closest replicas or not, with the same tolerance. */
    public ReplicaPreference withClosest(boolean value) {
        return new ReplicaPreference(value, toleranceMicros);
    }

    /** {@code closest} or {@code weight}, as the flag and the session setting write it. */
    public String sqlName() {
        return closest ? "closest" : "weight";
    }

    /**
     * The smoothed round trip of the closest replica a read may take (up and qualifying, round trip measured), in
     * microseconds; -1 when replicas are chosen by weight or none of them is measured.
     */
    public long closestRoundTrip(List<ReplicaCandidate> candidates) {
        if (!closest) {
            return -1;
        }
        long lowest = -1;
        for (int i = 0; i < candidates.size(); i++) {
            ReplicaCandidate candidate = candidates.get(i);
            if (candidate.eligible() && candidate.roundTripMicros() >= 0
                    && (lowest < 0 || candidate.roundTripMicros() < lowest)) {
                lowest = candidate.roundTripMicros();
            }
        }
        return lowest;
    }

    /** The highest round trip, in microseconds, still close to a closest one of {@code closestRoundTrip}. */
    public long closeBound(long closestRoundTrip) {
        return closestRoundTrip + Math.max(toleranceMicros, closestRoundTrip * RELATIVE_TOLERANCE_PERCENT / 100);
    }

    /**
     * Whether a read may take {@code candidate} under this preference, given {@link #closestRoundTrip} of the
     * candidates: eligible, and close when the closest are preferred and one is known.
     */
    public boolean admits(ReplicaCandidate candidate, long closestRoundTrip) {
        return candidate.eligible() && (closestRoundTrip < 0
                || candidate.roundTripMicros() >= 0 && candidate.roundTripMicros() <= closeBound(closestRoundTrip));
    }

    /**
     * Picks a replica for a read: by weight among the eligible ones, or among the close ones when the closest are
     * preferred and one is known.
     *
     * @return the chosen candidate, or empty when none is eligible
     */
    public Optional<ReplicaCandidate> pick(List<ReplicaCandidate> candidates, RandomGenerator random) {
        long closestRoundTrip = closestRoundTrip(candidates);
        if (closestRoundTrip < 0) {
            return WeightedChoice.pick(candidates, random);
        }
        return WeightedChoice.pick(candidates, candidate -> admits(candidate, closestRoundTrip), random);
    }

    /** The preference in an operator's words, for {@code EXPLAIN GANTRY ROUTE} and {@code SHOW GANTRY SESSION}. */
    public String inWords() {
        if (!closest) {
            return "weight: a replica that qualifies is picked by weight";
        }
        return "closest: among the replicas that qualify, those whose smoothed round trip is within "
                + millis(toleranceMicros) + " ms or " + RELATIVE_TOLERANCE_PERCENT + " % (the larger) of the "
                + "closest one's, then by weight";
    }

    /** Microseconds as milliseconds with two decimals, as round trips are shown. */
    public static String millis(long micros) {
        return String.format(Locale.ROOT, "%.2f", micros / 1000.0);
    }
}
