package io.gantry.cache;

import io.gantry.digest.ShapeDigest;
import io.gantry.route.SqlMode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * {@code SHOW PROXIED QUERIES}: the SELECT shapes of the statement digests ({@link io.gantry.digest.StatementDigests},
 * every statement counted, with its latency), and whether a cache could hold each, or why not, and which cache does.
 */
final class ProxiedQueries {

    private final String defaultDatabase;

    ProxiedQueries(String defaultDatabase) {
        this.defaultDatabase = defaultDatabase;
    }

    /** @param shapes the digests' rows merged per shape ({@link io.gantry.digest.StatementDigests#snapshotByShape}) */
    QueryCaches.Table table(List<ShapeDigest> shapes, ShapeIndex cached) {
        List<ShapeDigest> selects = new ArrayList<>();
        for (ShapeDigest shape : shapes) {
            if (!shape.folded() && shape.shape().regionMatches(true, 0, "SELECT", 0, 6)) {
                selects.add(shape);
            }
        }
        selects.sort(Comparator.comparingLong(ShapeDigest::count).reversed());
        List<List<String>> rows = new ArrayList<>();
        for (ShapeDigest shape : selects) {
            QueryCache cache = cached.find(shape.shape());
            rows.add(List.of(shape.shape(), Long.toString(shape.count()), Long.toString(shape.p50Micros()),
                    Long.toString(shape.p99Micros()), cacheability(shape.shape()), cache == null ? "" : cache.name()));
        }
        return new QueryCaches.Table(List.of("query", "count", "p50_us", "p99_us", "cacheable", "cache"), rows);
    }

    private String cacheability(String shape) {
        try {
            QueryShape.of(shape, SqlMode.DEFAULT, defaultDatabase);
            return "yes";
        } catch (CacheException e) {
            return "no: " + e.getMessage().replace("this query cannot be cached: ", "");
        }
    }
}
