package io.gantry.route;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.offset;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class WeightedChoiceTest {

    private static final int DRAWS = 100_000;

    private static ReplicaCandidate eligible(String hostPort, int weight) {
        return new ReplicaCandidate(new ServerId(hostPort), weight, true, true);
    }

    static Stream<Arguments> weightSets() {
        return Stream.of(
                Arguments.of(List.of(eligible("a:1", 10), eligible("b:1", 30), eligible("c:1", 60))),
                Arguments.of(List.of(eligible("a:1", 50), eligible("b:1", 50))),
                Arguments.of(List.of(
                        eligible("a:1", 1), eligible("b:1", 100), eligible("c:1", 7), eligible("d:1", 42))),
                Arguments.of(List.of(eligible("a:1", 100))));
    }

    @ParameterizedTest
    @MethodSource("weightSets")
    void distributionFollowsTheWeightsWithinOnePercent(List<ReplicaCandidate> candidates) {
        SplittableRandom random = new SplittableRandom(42);
        Map<ServerId, Integer> counts = new HashMap<>();
        for (int i = 0; i < DRAWS; i++) {
            counts.merge(WeightedChoice.pick(candidates, random).orElseThrow().id(), 1, Integer::sum);
        }
        double total = candidates.stream().mapToInt(ReplicaCandidate::weight).sum();
        for (ReplicaCandidate candidate : candidates) {
            double expected = candidate.weight() / total;
            double observed = counts.getOrDefault(candidate.id(), 0) / (double) DRAWS;
            assertThat(observed).as(candidate.id().hostPort()).isCloseTo(expected, offset(0.01));
        }
    }

    @Test
    void skipsReplicasThatAreDownOrDoNotQualify() {
        List<ReplicaCandidate> candidates = List.of(
                new ReplicaCandidate(new ServerId("down:1"), 100, false, true),
                new ReplicaCandidate(new ServerId("stale:1"), 100, true, false),
                eligible("a:1", 20),
                eligible("b:1", 80));
        SplittableRandom random = new SplittableRandom(1);
        Map<String, Integer> counts = new HashMap<>();
        for (int i = 0; i < DRAWS; i++) {
            counts.merge(WeightedChoice.pick(candidates, random).orElseThrow().id().hostPort(), 1, Integer::sum);
        }
        assertThat(counts).containsOnlyKeys("a:1", "b:1");
        assertThat(counts.get("a:1") / (double) DRAWS).isBetween(0.19, 0.21);
    }

    @Test
    void nothingToPickFromGivesEmpty() {
        SplittableRandom random = new SplittableRandom(1);
        assertThat(WeightedChoice.pick(List.of(), random)).isEmpty();
        assertThat(WeightedChoice.pick(List.of(new ReplicaCandidate(new ServerId("a:1"), 5, false, true),
                new ReplicaCandidate(new ServerId("b:1"), 5, true, false)), random)).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, 101})
    void weightOutsideOneToHundredIsRejected(int weight) {
        assertThatThrownBy(() -> new ReplicaCandidate(new ServerId("a:1"), weight, true, true))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a:1").hasMessageContaining("between 1 and 100")
                .hasMessageContaining(String.valueOf(weight));
    }
}
