package io.gantry.route;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ReplicaPreferenceTest {

    private static final ServerId NEAR = new ServerId("near:3306");
    private static final ServerId NEAR_TOO = new ServerId("near2:3306");
    private static final ServerId FAR = new ServerId("far:3306");
    private static final ReplicaPreference CLOSEST = ReplicaPreference.WEIGHT.withClosest(true);
    private static final int DRAWS = 20_000;

    private static ReplicaCandidate replica(ServerId id, int weight, long roundTripMicros) {
        return new ReplicaCandidate(id, weight, true, true, roundTripMicros);
    }

    private static Map<ServerId, Integer> draws(ReplicaPreference preference, List<ReplicaCandidate> replicas) {
        SplittableRandom random = new SplittableRandom(11);
        Map<ServerId, Integer> counts = new HashMap<>();
        for (int i = 0; i < DRAWS; i++) {
            counts.merge(preference.pick(replicas, random).orElseThrow().id(), 1, Integer::sum);
        }
        return counts;
    }

    @Test
    void closestSendsEveryReadToTheNearReplicaWhateverTheWeights() {
        List<ReplicaCandidate> replicas = List.of(replica(NEAR, 10, 200), replica(FAR, 90, 5_000));

        assertThat(draws(CLOSEST, replicas)).containsOnlyKeys(NEAR);
    }

    @Test
    void weightIgnoresTheRoundTrips() {
        List<ReplicaCandidate> replicas = List.of(replica(NEAR, 10, 200), replica(FAR, 90, 5_000));

        assertThat(draws(ReplicaPreference.WEIGHT, replicas).get(FAR) / (double) DRAWS).isBetween(0.88, 0.92);
    }

    @Test
    void replicasWithinTheAbsoluteToleranceShareReadsByWeight() {
        // 200 µs and 1 100 µs: within 1 ms of each other, so both are close; the far one is not.
        List<ReplicaCandidate> replicas = List.of(replica(NEAR, 25, 200), replica(NEAR_TOO, 75, 1_100),
                replica(FAR, 100, 5_000));

        Map<ServerId, Integer> counts = draws(CLOSEST, replicas);

        assertThat(counts).containsOnlyKeys(NEAR, NEAR_TOO);
        assertThat(counts.get(NEAR_TOO) / (double) DRAWS).isBetween(0.73, 0.77);
    }

    @Test
    void farAwayReplicasAreToldApartByTwentyPercentNotByTheMillisecond() {
        assertThat(CLOSEST.closeBound(40_000)).isEqualTo(48_000);
        assertThat(CLOSEST.closeBound(200)).isEqualTo(1_200);
        List<ReplicaCandidate> wide = List.of(replica(NEAR, 50, 40_000), replica(NEAR_TOO, 50, 47_000),
                replica(FAR, 50, 49_000));

        assertThat(draws(CLOSEST, wide)).containsOnlyKeys(NEAR, NEAR_TOO);
    }

    @Test
    void theClosestIsJudgedAmongTheReplicasThatQualifyOnly() {
        List<ReplicaCandidate> replicas = List.of(new ReplicaCandidate(NEAR, 50, true, false, 200),
                new ReplicaCandidate(NEAR_TOO, 50, false, true, 300), replica(FAR, 50, 5_000));

        assertThat(CLOSEST.closestRoundTrip(replicas)).isEqualTo(5_000);
        assertThat(draws(CLOSEST, replicas)).containsOnlyKeys(FAR);
    }

    @Test
    void anUnmeasuredReplicaIsNotKnownToBeCloseAndWithNoneMeasuredWeightDecides() {
        List<ReplicaCandidate> oneMeasured = List.of(replica(NEAR, 50, 200), replica(FAR, 50, -1));
        assertThat(draws(CLOSEST, oneMeasured)).containsOnlyKeys(NEAR);

        List<ReplicaCandidate> noneMeasured = List.of(replica(NEAR, 50, -1), replica(FAR, 50, -1));
        assertThat(CLOSEST.closestRoundTrip(noneMeasured)).isEqualTo(-1);
        assertThat(draws(CLOSEST, noneMeasured)).containsOnlyKeys(NEAR, FAR);
    }

    @Test
    void weightHasNoClosestAndAdmitsEveryEligibleReplica() {
        List<ReplicaCandidate> replicas = List.of(replica(NEAR, 50, 200), replica(FAR, 50, 5_000));

        assertThat(ReplicaPreference.WEIGHT.closestRoundTrip(replicas)).isEqualTo(-1);
        assertThat(replicas).allMatch(r -> ReplicaPreference.WEIGHT.admits(r, -1));
        assertThat(CLOSEST.admits(replicas.get(1), CLOSEST.closestRoundTrip(replicas))).isFalse();
    }

    @Test
    void noEligibleReplicaPicksNone() {
        assertThat(CLOSEST.pick(List.of(new ReplicaCandidate(NEAR, 50, false, true, 200)), new SplittableRandom(1)))
                .isEmpty();
    }

    @Test
    void theFlagAndTheSettingTakeClosestOrWeightInAnyCase() {
        assertThat(ReplicaPreference.prefersClosest(" Closest ")).isTrue();
        assertThat(ReplicaPreference.prefersClosest("WEIGHT")).isFalse();
        assertThat(ReplicaPreference.prefersClosest("nearest")).isNull();
        assertThat(ReplicaPreference.prefersClosest(null)).isNull();
        assertThat(CLOSEST.sqlName()).isEqualTo("closest");
        assertThat(ReplicaPreference.WEIGHT.sqlName()).isEqualTo("weight");
    }

    @Test
    void aNegativeToleranceIsRefusedNamingTheFlag() {
        assertThatThrownBy(() -> new ReplicaPreference(true, -1))
                .hasMessageContaining("--follower-reads-closest-tolerance-ms");
    }

    @Test
    void saysItselfInAnOperatorsWords() {
        assertThat(ReplicaPreference.WEIGHT.inWords())
                .isEqualTo("weight: a replica that qualifies is picked by weight");
        assertThat(new ReplicaPreference(true, 500).inWords()).isEqualTo("closest: among the replicas that qualify, "
                + "those whose smoothed round trip is within 0.50 ms or 20 % (the larger) of the closest one's, then "
                + "by weight");
    }
}
