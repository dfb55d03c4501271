package io.gantry.route;

import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.random.RandomGenerator;

/**
 * Picks one replica among the {@linkplain ReplicaCandidate#eligible() eligible} ones (up and qualifying), or among
 * a narrower set, with probability exactly proportional to its weight: one uniform draw in
 * {@code [0, sum of weights)}, two passes over the list, no allocation besides the result.
 */
public final class WeightedChoice {

    private WeightedChoice() {
    }

    /**
     * @return the chosen candidate, or empty when none is eligible
     */
    public static Optional<ReplicaCandidate> pick(List<ReplicaCandidate> candidates, RandomGenerator random) {
        return pick(candidates, ReplicaCandidate::eligible, random);
    }

    /**
     * Like {@link #pick(List, RandomGenerator)}, among the candidates {@code among} admits (a narrower set than the
     * eligible ones: {@link ReplicaPreference}'s closest).
     *
     * @return the chosen candidate, or empty when {@code among} admits none
     */
    public static Optional<ReplicaCandidate> pick(List<ReplicaCandidate> candidates, Predicate<ReplicaCandidate> among,
                                                  RandomGenerator random) {
        long total = 0;
        int size = candidates.size();
        for (int i = 0; i < size; i++) {
            ReplicaCandidate candidate = candidates.get(i);
            if (among.test(candidate)) {
                total += candidate.weight();
            }
        }
        if (total == 0) {
            return Optional.empty();
        }
        long draw = random.nextLong(total);
        ReplicaCandidate last = null;
        for (int i = 0; i < size; i++) {
            ReplicaCandidate candidate = candidates.get(i);
            if (among.test(candidate)) {
                draw -= candidate.weight();
                last = candidate;
                if (draw < 0) {
                    return Optional.of(candidate);
                }
            }
        }
        // Only reachable if the list changed between the passes; the last eligible one is still a fair answer.
        return Optional.ofNullable(last);
    }
}
