package io.gantry.route;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import io.gantry.gtid.SampledPosition;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The per-session floors and pending completions that decide which replica may serve a read. */
class SessionConsistencyTest {

    private static final ServerId PRIMARY = new ServerId("p:1");
    private static final ServerId R1 = new ServerId("r1:1");
    private static final ServerId R2 = new ServerId("r2:1");
    private static final ReadGuarantees DEFAULTS = ReadGuarantees.DEFAULTS;
    private final Map<ServerId, SampledPosition> positions = new HashMap<>();
    private final SessionConsistency session = new SessionConsistency();

    @Test
    void aFreshSessionMayReadFromAnyReplicaWithinTheStaleBound() {
        assertThat(session.judge(R1, at("0-1-10", 1_000, 1_000), DEFAULTS, 1_100)).isNull();
        assertThat(session.judge(R1, null, DEFAULTS, 1_100)).isEqualTo(ReplicaRefusal.POSITION_UNKNOWN);
        assertThat(session.judge(R1, at("0-1-10", 1_000, 1_000), DEFAULTS, 1_000 + 60_001))
                .isEqualTo(ReplicaRefusal.TOO_STALE);
        assertThat(session.judge(R1, at("0-1-10", 1_000, 1_000), DEFAULTS.withMaxStaleReadBound(Duration.ZERO),
                1_000 + 600_000)).isNull();
    }

    @Test
    void aCommitWhoseGtidIsKnownNeedsExactlyThatGtidAndNoSample() {
        session.committed(GtidSet.parse("0-1-15", Flavour.MARIADB));
        assertThat(session.hasPending()).isFalse();
        assertThat(session.judge(R1, at("0-1-14", 2_000, 2_000), DEFAULTS, 2_001)).isEqualTo(ReplicaRefusal.OWN_WRITES);
        // The replica is behind the primary (0-1-30 there), but has the session's own write: it qualifies.
        assertThat(session.judge(R1, at("0-1-15", 2_000, 1_000), DEFAULTS, 2_001)).isNull();
        assertThat(session.judge(R1, at("0-1-14", 2_000, 2_000), DEFAULTS.withReadYourWrites(false), 2_001)).isNull();
        assertThat(session.floor(true)).hasToString("0-1-15");
    }

    @Test
    void whatWasKeptJudgesReplicasAsTheSessionDidBeforeItMoved() {
        session.committed(GtidSet.parse("0-1-15", Flavour.MARIADB));
        session.readAt(GtidSet.parse("0-1-12", Flavour.MARIADB));
        session.completed(R1, 3_000, false);

        SessionConsistency moved = new SessionConsistency();
        moved.restore(session.kept());
        assertThat(moved.floor(true)).isEqualTo(session.floor(true));
        assertThat(moved.pendingDescriptions()).isEqualTo(session.pendingDescriptions());
        assertThat(moved.judge(R1, at("0-1-14", 4_000, 4_000), DEFAULTS, 4_001))
                .isEqualTo(session.judge(R1, at("0-1-14", 4_000, 4_000), DEFAULTS, 4_001))
                .isEqualTo(ReplicaRefusal.OWN_WRITES);
        SessionConsistency fresh = new SessionConsistency();
        fresh.restore(new SessionConsistency().kept());
        assertThat(fresh.hasPending()).isFalse();
        assertThat(fresh.floor(true)).isNull();
    }

    @Test
    void aStalenessBoundRefusesReplicasWhoseSafeTimeIsOlder() {
        ReadGuarantees bounded = DEFAULTS.withFollowerReadStaleness(Duration.ofMillis(500));
        assertThat(session.judge(R1, at("0-1-10", 10_000, 9_600), bounded, 10_000)).isNull();
        assertThat(session.judge(R1, at("0-1-10", 10_000, 9_400), bounded, 10_000))
                .isEqualTo(ReplicaRefusal.TOO_STALE);
    }

    @Test
    void afterAWriteNoReplicaQualifiesUntilOneHoldsThePrimarysPositionSampledAfterIt() {
        session.completed(PRIMARY, 2_000, true);
        SampledPosition caughtUp = at("0-1-20", 2_000, 1_900);
        assertThat(session.judge(R1, caughtUp, DEFAULTS, 2_001)).isEqualTo(ReplicaRefusal.OWN_WRITES);
        // A primary sample in the same millisecond cannot settle it; a later one does.
        positions.put(PRIMARY, at("0-1-20", 2_000, 2_000));
        session.settle(PRIMARY, positions::get);
        assertThat(session.hasPending()).isTrue();
        positions.put(PRIMARY, at("0-1-21", 2_001, 2_001));
        session.settle(PRIMARY, positions::get);
        assertThat(session.hasPending()).isFalse();
        assertThat(session.judge(R1, at("0-1-20", 2_002, 2_001), DEFAULTS, 2_003)).isEqualTo(ReplicaRefusal.OWN_WRITES);
        assertThat(session.judge(R1, at("0-1-21", 2_002, 2_001), DEFAULTS, 2_003)).isNull();
        // With read-your-writes off the write does not count.
        assertThat(session.judge(R1, at("0-1-20", 2_002, 2_001), DEFAULTS.withReadYourWrites(false), 2_003))
                .isNull();
    }

    @Test
    void afterAReadOnlyThatReplicaServesUntilASampleSettlesWhatItSaw() {
        session.completed(R1, 3_000, false);
        assertThat(session.judge(R1, at("0-1-30", 2_990, 2_990), DEFAULTS, 3_001)).isNull();
        assertThat(session.judge(R2, at("0-1-30", 2_990, 2_990), DEFAULTS, 3_001))
                .isEqualTo(ReplicaRefusal.MONOTONIC_FLOOR);
        positions.put(R1, at("0-1-31", 3_001, 3_001));
        session.settle(PRIMARY, positions::get);
        // R2 behind what R1 had after the read: still refused; level with it: allowed.
        assertThat(session.judge(R2, at("0-1-30", 3_002, 3_002), DEFAULTS, 3_003))
                .isEqualTo(ReplicaRefusal.MONOTONIC_FLOOR);
        assertThat(session.judge(R2, at("0-1-31", 3_002, 3_002), DEFAULTS, 3_003)).isNull();
    }

    @Test
    void aReadPendingOnAReplicaThatIsNoLongerSampledIsSettledByThePrimary() {
        session.completed(R1, 4_000, false);
        positions.put(PRIMARY, at("0-1-40", 4_001, 4_001));
        session.settle(PRIMARY, positions::get);
        assertThat(session.hasPending()).isFalse();
        assertThat(session.judge(R2, at("0-1-40", 4_002, 4_002), DEFAULTS, 4_003)).isNull();
        assertThat(session.judge(R2, at("0-1-39", 4_002, 4_002), DEFAULTS, 4_003))
                .isEqualTo(ReplicaRefusal.MONOTONIC_FLOOR);
    }

    @Test
    void aReadPendingOnAReplicaStillSampledWaitsForThatReplicasSampleNotThePrimarys() {
        session.completed(R1, 5_000, false);
        positions.put(R1, at("0-1-45", 4_999, 4_999));
        positions.put(PRIMARY, at("0-1-50", 5_001, 5_001)); // the primary is sampled first in a round, and ahead
        session.settle(PRIMARY, positions::get);
        assertThat(session.hasPending()).isTrue();
        positions.put(R1, at("0-1-46", 5_002, 5_001));
        session.settle(PRIMARY, positions::get);
        assertThat(session.hasPending()).isFalse();
        // The floor is what R1 held after the read, not the primary's newer set.
        assertThat(session.judge(R2, at("0-1-46", 5_003, 5_001), DEFAULTS, 5_004)).isNull();
        assertThat(session.judge(R2, at("0-1-45", 5_003, 4_999), DEFAULTS, 5_004))
                .isEqualTo(ReplicaRefusal.MONOTONIC_FLOOR);
    }

    @Test
    void theFloorIsWhatTheNextReadsServerMustHold() {
        assertThat(session.floor(true)).isNull();
        session.completed(R1, 6_000, false);
        positions.put(R1, at("0-1-60", 6_001, 6_001));
        session.settle(PRIMARY, positions::get);
        assertThat(session.floor(true)).hasToString("0-1-60");
        session.completed(PRIMARY, 6_002, true);
        positions.put(PRIMARY, at("0-1-61", 6_003, 6_003));
        session.settle(PRIMARY, positions::get);
        assertThat(session.floor(true)).hasToString("0-1-61");
        assertThat(session.floor(false)).hasToString("0-1-60");
    }

    @Test
    void clearForgetsEverything() {
        session.completed(PRIMARY, 5_000, true);
        session.clear();
        assertThat(session.judge(R1, at("0-1-1", 5_001, 5_001), DEFAULTS, 5_002)).isNull();
    }

    @Test
    void stalenessBelowTwiceTheSampleIntervalIsRefusedNamingTheMinimum() {
        assertThat(ReadGuarantees.stalenessProblem(Duration.ofMillis(499), Duration.ofMillis(250)))
                .contains("minimum of 500 ms");
        assertThat(ReadGuarantees.stalenessProblem(Duration.ofMillis(500), Duration.ofMillis(250))).isNull();
    }

    private static SampledPosition at(String gtids, long sampledAt, long safeTime) {
        return new SampledPosition(GtidSet.parse(gtids, Flavour.MARIADB), Instant.ofEpochMilli(sampledAt),
                Instant.ofEpochMilli(safeTime));
    }
}
