package io.gantry.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.digest.RanOn;
import io.gantry.digest.StatementDigests;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;

class ProxiedQueriesTest {

    @Test
    void showsTheSelectShapesOfTheDigestsWithPercentilesAndSaysWhyOneCannotBeCached() {
        StatementDigests digests = new StatementDigests(100, Clock.systemUTC());
        for (int i = 1; i <= 100; i++) {
            // two accounts: SHOW PROXIED QUERIES has one row per shape
            digests.record("SELECT c FROM t WHERE id = ?", "app", i % 2 == 0 ? "alice" : "bob", RanOn.REPLICA, null,
                    0, 1, 0, i * 1_000_000L);
        }
        digests.record("SELECT NOW() FROM t", "app", "alice", RanOn.REPLICA, null, 0, 1, 0, 5_000);
        digests.record("UPDATE t SET c = ? WHERE id = ?", "app", "alice", RanOn.PRIMARY, null, 0, 0, 1, 5_000);
        QueryCaches.Table table = new ProxiedQueries("app").table(digests.snapshotByShape(), ShapeIndex.EMPTY);
        assertThat(table.columns()).containsExactly("query", "count", "p50_us", "p99_us", "cacheable", "cache");
        assertThat(table.rows()).hasSize(2);
        List<String> point = table.rows().get(0);
        assertThat(point.get(0)).isEqualTo("SELECT c FROM t WHERE id = ?");
        assertThat(point.get(1)).isEqualTo("100");
        // 50 ms and 99 ms, read back at most 1/16 above
        assertThat(Long.parseLong(point.get(2))).isBetween(50_000L, 50_000L * 17 / 16);
        assertThat(Long.parseLong(point.get(3))).isBetween(99_000L, 99_000L * 17 / 16);
        assertThat(point.get(4)).isEqualTo("yes");
        assertThat(table.rows().get(1).get(4)).startsWith("no: it calls NOW()");
    }
}
