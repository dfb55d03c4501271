package io.gantry.digest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.route.RouteReason;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import org.junit.jupiter.api.Test;

class StatementDigestsTest {

    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-07T12:00:00Z"), ZoneOffset.UTC);

    @Test
    void countsAShapeWithItsErrorsRowsPercentilesAndWhereItRan() {
        StatementDigests digests = new StatementDigests(100, CLOCK);
        for (int i = 1; i <= 100; i++) {
            digests.record(new StringBuilder("SELECT c FROM t WHERE id = ?"), "app", "alice", RanOn.REPLICA,
                    RouteReason.READ_ON_REPLICA, 0, 1, 0, i * 1_000_000L);
        }
        digests.record("SELECT c FROM t WHERE id = ?", "app", "alice", RanOn.PRIMARY, RouteReason.NO_REPLICA_UP,
                1146, 0, 0, 500_000L);
        digests.record("SELECT c FROM t WHERE id = ?", "app", "alice", RanOn.CACHE, null, 0, 1, 0, 1_000L);

        List<ShapeDigest> rows = digests.snapshot();
        assertThat(rows).hasSize(1);
        ShapeDigest row = rows.get(0);
        assertThat(row.count()).isEqualTo(102);
        assertThat(row.errorsByCode()).isEqualTo(Map.of(1146, 1L));
        assertThat(row.errors()).isEqualTo(1);
        assertThat(row.rowsSent()).isEqualTo(101);
        assertThat(row.ran(RanOn.REPLICA)).isEqualTo(100);
        assertThat(row.ran(RanOn.PRIMARY)).isEqualTo(1);
        assertThat(row.ran(RanOn.CACHE)).isEqualTo(1);
        assertThat(row.reasons()).containsEntry(RouteReason.READ_ON_REPLICA, 100L)
                .containsEntry(RouteReason.NO_REPLICA_UP, 1L).hasSize(2);
        // 102 latencies: 1 µs, 500 µs, then 1..100 ms: the 51st, 97th and 101st are 49, 95 and 99 ms, read back at
        // most 1/16 above (one significant digit)
        assertThat(row.p50Micros()).isBetween(49_000L, 49_000L * 17 / 16);
        assertThat(row.p95Micros()).isBetween(95_000L, 95_000L * 17 / 16);
        assertThat(row.p99Micros()).isBetween(99_000L, 99_000L * 17 / 16);
        assertThat(row.maxMicros()).isBetween(100_000L, 100_000L * 17 / 16);
        assertThat(row.totalMicros()).isEqualTo(5_050_000L + 500 + 1);
        assertThat(row.firstSeen()).isEqualTo(CLOCK.instant());
        assertThat(row.lastSeen()).isEqualTo(CLOCK.instant());
    }

    @Test
    void keepsShapesApartBySchemaAndAccount() {
        StatementDigests digests = new StatementDigests(100, CLOCK);
        digests.record("SELECT ?", "app", "alice", RanOn.REPLICA, null, 0, 1, 0, 1000);
        digests.record("SELECT ?", "app", "bob", RanOn.REPLICA, null, 0, 1, 0, 1000);
        digests.record("SELECT ?", "other_db", "alice", RanOn.REPLICA, null, 0, 1, 0, 1000);
        digests.record("SELECT ?", null, "alice", RanOn.REPLICA, null, 0, 1, 0, 1000);
        assertThat(digests.snapshot()).extracting(ShapeDigest::schema, ShapeDigest::account)
                .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("app", "alice"),
                        org.assertj.core.groups.Tuple.tuple("app", "bob"),
                        org.assertj.core.groups.Tuple.tuple("other_db", "alice"),
                        org.assertj.core.groups.Tuple.tuple("", "alice"));
    }

    @Test
    void foldsTheLeastUsedIntoOtherWithExactCountsAndNeverHoldsMoreRowsThanTheBound() {
        StatementDigests digests = new StatementDigests(50, CLOCK);
        // ten hot shapes, then a flood of distinct ones
        for (int round = 0; round < 100; round++) {
            for (int hot = 0; hot < 10; hot++) {
                digests.record("SELECT hot" + hot, "app", "a", RanOn.PRIMARY, RouteReason.NOT_A_READ, 0, 1, 0, 1000);
            }
        }
        long flood = 100_000;
        for (long i = 0; i < flood; i++) {
            digests.record("SELECT flood" + i, "app", "a", RanOn.REPLICA, null, i % 7 == 0 ? 1064 : 0, 2, 0, 1000);
        }
        List<ShapeDigest> rows = digests.snapshot();
        assertThat(rows.size()).isLessThanOrEqualTo(50 + 1);
        assertThat(rows.stream().filter(row -> !row.folded()).count()).isLessThanOrEqualTo(50);
        assertThat(rows).filteredOn(row -> row.shape().startsWith("SELECT hot")).hasSize(10)
                .allSatisfy(row -> assertThat(row.count()).isEqualTo(100));
        assertThat(rows.stream().mapToLong(ShapeDigest::count).sum()).isEqualTo(1000 + flood);
        assertThat(rows.stream().mapToLong(ShapeDigest::rowsSent).sum()).isEqualTo(1000 + 2 * flood);
        assertThat(rows.stream().mapToLong(ShapeDigest::errors).sum()).isEqualTo((flood + 6) / 7);
        ShapeDigest other = rows.get(rows.size() - 1);
        assertThat(other.folded()).isTrue();
        assertThat(other.shape()).isEqualTo(ShapeDigest.OTHER);
        assertThat(other.count()).isGreaterThan(flood - 50);
        assertThat(other.ran(RanOn.REPLICA)).isEqualTo(other.count());
    }

    @Test
    void tablesOfSeveralThreadsAreMergedAndShareOneBound() throws InterruptedException {
        StatementDigests digests = new StatementDigests(20, CLOCK);
        Thread[] loops = new Thread[4];
        CyclicBarrier warm = new CyclicBarrier(loops.length);
        for (int t = 0; t < loops.length; t++) {
            int loop = t;
            loops[t] = new Thread(() -> {
                for (int i = 0; i < 1_000; i++) {
                    digests.record("SELECT shared", "app", "a", RanOn.PRIMARY, null, 0, 0, 1, 1000);
                }
                try {
                    warm.await(); // the busy shape is busy on every loop before the flood starts
                } catch (InterruptedException | BrokenBarrierException e) {
                    throw new IllegalStateException(e);
                }
                for (int i = 0; i < 10_000; i++) {
                    digests.record(i % 2 == 0 ? "SELECT shared" : "SELECT own" + loop + "_" + i, "app", "a",
                            RanOn.PRIMARY, null, 0, 0, 1, 1000);
                }
            });
            loops[t].start();
        }
        for (Thread loop : loops) {
            loop.join();
        }
        List<ShapeDigest> rows = digests.snapshot();
        assertThat(rows.stream().filter(row -> !row.folded()).count()).isLessThanOrEqualTo(20);
        assertThat(rows.stream().mapToLong(ShapeDigest::count).sum()).isEqualTo(44_000);
        assertThat(rows.stream().mapToLong(ShapeDigest::rowsAffected).sum()).isEqualTo(44_000);
        // the busy shape keeps its row on every loop: the least used of all tables are folded, never it
        assertThat(rows).filteredOn(row -> row.shape().equals("SELECT shared")).singleElement()
                .satisfies(row -> assertThat(row.count()).isEqualTo(24_000));
    }

    @Test
    void flushForgetsEveryRowAndGivesTheBudgetBack() {
        StatementDigests digests = new StatementDigests(2, CLOCK);
        digests.record("SELECT 1", "", "a", RanOn.GANTRY, null, 0, 0, 0, 1);
        digests.record("SELECT 2", "", "a", RanOn.GANTRY, null, 0, 0, 0, 1);
        digests.flush();
        assertThat(digests.snapshot()).isEmpty();
        digests.record("SELECT 3", "", "a", RanOn.GANTRY, null, 0, 0, 0, 1);
        digests.record("SELECT 4", "", "a", RanOn.GANTRY, null, 0, 0, 0, 1);
        assertThat(digests.snapshot()).extracting(ShapeDigest::shape)
                .containsExactlyInAnyOrder("SELECT 3", "SELECT 4");
    }

    @Test
    void sortsByTheAskedOrderLargestFirstAndLimits() {
        StatementDigests digests = new StatementDigests(10, CLOCK);
        digests.record("SELECT slow", "", "a", RanOn.PRIMARY, null, 0, 0, 0, 9_000_000);
        for (int i = 0; i < 5; i++) {
            digests.record("SELECT often", "", "a", RanOn.PRIMARY, null, 0, 0, 0, 1_000);
        }
        digests.record("SELECT broken", "", "a", RanOn.PRIMARY, null, 1064, 0, 0, 2_000);
        digests.record("SELECT broken", "", "a", RanOn.PRIMARY, null, 1064, 0, 0, 2_000);
        assertThat(digests.top(DigestOrder.TOTAL_TIME, 1)).extracting(ShapeDigest::shape).containsExactly("SELECT slow");
        assertThat(digests.top(DigestOrder.COUNT, 10)).extracting(ShapeDigest::shape)
                .containsExactly("SELECT often", "SELECT broken", "SELECT slow");
        assertThat(digests.top(DigestOrder.ERRORS, 1)).extracting(ShapeDigest::shape).containsExactly("SELECT broken");
        assertThat(digests.top(DigestOrder.P99, 2)).extracting(ShapeDigest::shape)
                .containsExactly("SELECT slow", "SELECT broken");
    }

    @Test
    void refusesABoundBelowOne() {
        assertThatThrownBy(() -> new StatementDigests(0, CLOCK)).hasMessageContaining("--digest-max-shapes");
    }

    @Test
    void topByTotalTimeIsTheTopOfAllRowsTheFoldedRowAmongThem() {
        StatementDigests digests = new StatementDigests(10, CLOCK);
        // 30 shapes in a budget of 10: the least used are folded into "other", whose total is then the largest
        for (int shape = 0; shape < 30; shape++) {
            for (int n = 0; n <= shape; n++) {
                digests.record("SELECT " + shape, "app", "alice", RanOn.REPLICA, null, 0, 1, 0, 1000L * (shape + 1));
            }
        }
        assertThat(digests.topByTotalTime(1)).extracting(ShapeDigest::folded).containsExactly(true);
        for (int limit : new int[] {1, 3, 5, 20}) {
            assertThat(digests.topByTotalTime(limit)).as("top %d", limit)
                    .isEqualTo(digests.top(DigestOrder.TOTAL_TIME, limit));
        }
        digests.flush();
        assertThat(digests.topByTotalTime(5)).isEmpty();
    }
}
