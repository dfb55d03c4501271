package io.gantry.cache;

import io.gantry.route.SqlMode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * The query shapes Gantry proxied, for {@code SHOW PROXIED QUERIES}: how often each was seen, its latency (p50, p99,
 * from a histogram with buckets 19% apart) and whether a cache could hold it, or why not. Sessions record one
 * SELECT in {@value #SAMPLE_EVERY} (the first of each session's run of that many), so the data path pays for
 * shaping only there; counts are those of the recorded statements. At most {@value #MAX_SHAPES} shapes are kept.
 */
public final class ProxiedQueries {

    /** A session records one statement in this many. */
    public static final int SAMPLE_EVERY = 16;
    static final int MAX_SHAPES = 1000;
    private static final int BUCKETS = 128;
    /** Bucket b holds latencies up to 2^(b/4) microseconds. */
    private static final double BUCKETS_PER_DOUBLING = 4;

    private final Map<String, Shape> shapes = new ConcurrentHashMap<>();
    private final String defaultDatabase;

    ProxiedQueries(String defaultDatabase) {
        this.defaultDatabase = defaultDatabase;
    }

    private static final class Shape {
        final String cacheable;
        final LongAdder count = new LongAdder();
        final AtomicLongArray latency = new AtomicLongArray(BUCKETS);

        Shape(String cacheable) {
            this.cacheable = cacheable;
        }
    }

    /**
     * A proxied statement completed.
     *
     * @param shape the statement's shape ({@link io.gantry.route.SqlTokenizer#writeShape})
     * @param text  the statement, to judge whether it could be cached (once per shape)
     */
    public void record(String shape, String text, long nanos) {
        Shape known = shapes.get(shape);
        if (known == null) {
            if (shapes.size() >= MAX_SHAPES) {
                return;
            }
            known = shapes.computeIfAbsent(shape, s -> new Shape(cacheability(text)));
        }
        known.count.increment();
        known.latency.incrementAndGet(bucket(nanos));
    }

    private String cacheability(String text) {
        try {
            QueryShape.of(text, SqlMode.DEFAULT, defaultDatabase);
            return "yes";
        } catch (CacheException e) {
            return "no: " + e.getMessage().replace("this query cannot be cached: ", "");
        }
    }

    static int bucket(long nanos) {
        double micros = Math.max(1, nanos / 1000.0);
        return (int) Math.min(BUCKETS - 1, Math.ceil(Math.log(micros) / Math.log(2) * BUCKETS_PER_DOUBLING));
    }

    /** The upper bound of a bucket, in microseconds. */
    static long bucketMicros(int bucket) {
        return Math.round(Math.pow(2, bucket / BUCKETS_PER_DOUBLING));
    }

    QueryCaches.Table table(ShapeIndex cached) {
        List<Map.Entry<String, Shape>> entries = new ArrayList<>(shapes.entrySet());
        entries.sort(Comparator.comparingLong((Map.Entry<String, Shape> e) -> e.getValue().count.sum()).reversed());
        List<List<String>> rows = new ArrayList<>();
        for (Map.Entry<String, Shape> entry : entries) {
            Shape shape = entry.getValue();
            QueryCache cache = cached.find(entry.getKey());
            rows.add(List.of(entry.getKey(), Long.toString(shape.count.sum()), percentile(shape, 0.50),
                    percentile(shape, 0.99), shape.cacheable, cache == null ? "" : cache.name()));
        }
        return new QueryCaches.Table(List.of("query", "count", "p50_us", "p99_us", "cacheable", "cache"), rows);
    }

    private static String percentile(Shape shape, double fraction) {
        long total = 0;
        for (int b = 0; b < BUCKETS; b++) {
            total += shape.latency.get(b);
        }
        long wanted = (long) Math.ceil(total * fraction);
        long seen = 0;
        for (int b = 0; b < BUCKETS; b++) {
            seen += shape.latency.get(b);
            if (seen >= wanted && seen > 0) {
                return Long.toString(bucketMicros(b));
            }
        }
        return "";
    }
}
