package io.gantry.cache;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class ProxiedQueriesTest {

    @Test
    void countsShapesWithPercentilesAndSaysWhyOneCannotBeCached() {
        ProxiedQueries proxied = new ProxiedQueries("app");
        for (int i = 1; i <= 100; i++) {
            proxied.record("SELECT c FROM t WHERE id = ?", "SELECT c FROM t WHERE id = " + i, i * 1_000_000L);
        }
        proxied.record("SELECT NOW() FROM t", "SELECT NOW() FROM t", 5_000);
        QueryCaches.Table table = proxied.table(ShapeIndex.EMPTY);
        assertThat(table.columns()).containsExactly("query", "count", "p50_us", "p99_us", "cacheable", "cache");
        List<String> point = table.rows().get(0);
        assertThat(point.get(0)).isEqualTo("SELECT c FROM t WHERE id = ?");
        assertThat(point.get(1)).isEqualTo("100");
        // 50 ms and 99 ms, within a bucket (19 %) above
        assertThat(Long.parseLong(point.get(2))).isBetween(50_000L, 60_000L);
        assertThat(Long.parseLong(point.get(3))).isBetween(99_000L, 118_000L);
        assertThat(point.get(4)).isEqualTo("yes");
        assertThat(table.rows().get(1).get(4)).startsWith("no: it calls NOW()");
    }
}
