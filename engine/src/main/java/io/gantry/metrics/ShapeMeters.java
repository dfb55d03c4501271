package io.gantry.metrics;

import io.gantry.digest.ShapeDigest;
import io.gantry.digest.SlowStatementLog;
import io.gantry.digest.StatementDigests;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The statement digests as Prometheus series: the {@value #TOP_SHAPES} rows with the largest total latency, read
 * again at each scrape ({@link StatementDigests#topByTotalTime}), each labelled with its shape, schema and account
 * and a {@code digest} id. A row that leaves the top loses its series, one that enters gets them: the series at
 * once are bounded by {@value #TOP_SHAPES} rows whatever the traffic (ProxySQL's digest table, exported whole, is
 * what operators learned to fear). The counters count from the row's first statement (or the last
 * {@code FLUSH GANTRY QUERIES}, which Prometheus sees as a counter reset); the latency quantiles are the row's
 * whole histogram, not a window.
 */
final class ShapeMeters {

    /** The rows published: the largest by total latency. */
    static final int TOP_SHAPES = 20;
    /** The most characters of a shape in its {@code shape} label. */
    static final int MAX_SHAPE_LABEL = 200;

    private final MeterRegistry registry;
    private final StatementDigests digests;
    /** The rows of the last scrape, by digest id; the meters read them. Written on the scraping thread only. */
    private volatile Map<String, ShapeDigest> top = Map.of();
    private final Map<String, List<Meter>> meters = new HashMap<>();

    ShapeMeters(MeterRegistry registry, StatementDigests digests, SlowStatementLog slowStatements) {
        this.registry = registry;
        this.digests = digests;
        FunctionCounter.builder("gantry.slow.statements", slowStatements, SlowStatementLog::written)
                .description("Statements written to the slow-statement log (--slow-statement-ms)")
                .register(registry);
        FunctionCounter.builder("gantry.slow.statements.dropped", slowStatements, SlowStatementLog::dropped)
                .description("Slow statements left out of the log: its queue was full or its file could not be "
                        + "written").register(registry);
    }

    /** Reads the top rows again and makes the series follow them: called before each scrape. */
    synchronized void refresh() {
        Map<String, ShapeDigest> now = new LinkedHashMap<>();
        for (ShapeDigest row : digests.topByTotalTime(TOP_SHAPES)) {
            now.put(digestId(row), row);
        }
        top = now;
        for (Iterator<Map.Entry<String, List<Meter>>> it = meters.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, List<Meter>> published = it.next();
            if (!now.containsKey(published.getKey())) {
                published.getValue().forEach(registry::remove);
                it.remove();
            }
        }
        now.forEach((id, row) -> meters.computeIfAbsent(id, k -> register(k, row)));
    }

    private List<Meter> register(String id, ShapeDigest row) {
        Tags tags = Tags.of("digest", id, "shape", label(row.shape()), "schema", row.schema(), "account",
                row.account());
        List<Meter> made = new ArrayList<>();
        made.add(counter("gantry.query.shape.statements", "Statements of the shape (the top rows by total time)",
                tags, id, ShapeDigest::count));
        made.add(counter("gantry.query.shape.errors", "Statements of the shape that ended with an error", tags, id,
                ShapeDigest::errors));
        made.add(counter("gantry.query.shape.seconds", "Total latency of the shape's statements", tags, id,
                r -> r.totalMicros() / 1e6));
        made.add(counter("gantry.query.shape.rows.sent", "Result-set rows the shape's statements sent", tags, id,
                ShapeDigest::rowsSent));
        made.add(gauge("gantry.query.shape.latency.p50.seconds", "Median latency of the shape's statements since it "
                + "was first seen", tags, id, r -> r.p50Micros() / 1e6));
        made.add(gauge("gantry.query.shape.latency.p95.seconds", "95th percentile of the shape's latency since it "
                + "was first seen", tags, id, r -> r.p95Micros() / 1e6));
        made.add(gauge("gantry.query.shape.latency.p99.seconds", "99th percentile of the shape's latency since it "
                + "was first seen", tags, id, r -> r.p99Micros() / 1e6));
        made.add(gauge("gantry.query.shape.latency.max.seconds", "The slowest statement of the shape since it was "
                + "first seen", tags, id, r -> r.maxMicros() / 1e6));
        return made;
    }

    private Meter counter(String name, String description, Tags tags, String id, ToDoubleFunction<ShapeDigest> of) {
        return FunctionCounter.builder(name, this, m -> m.value(id, of)).description(description).tags(tags)
                .register(registry);
    }

    private Meter gauge(String name, String description, Tags tags, String id, ToDoubleFunction<ShapeDigest> of) {
        return Gauge.builder(name, this, m -> m.value(id, of)).description(description).tags(tags)
                .register(registry);
    }

    private double value(String id, ToDoubleFunction<ShapeDigest> of) {
        ShapeDigest row = top.get(id);
        return row == null ? Double.NaN : of.applyAsDouble(row);
    }

    /**
     * A row's id: 16 hex digits of a 64-bit FNV-1a hash of its shape, schema and account, the same in every
     * instance and across restarts, so a row's series continue and can be joined across instances.
     */
    static String digestId(ShapeDigest row) {
        long hash = 0xcbf29ce484222325L;
        for (String part : List.of(row.shape(), row.schema(), row.account())) {
            for (int i = 0; i < part.length(); i++) {
                hash = (hash ^ part.charAt(i)) * 0x100000001b3L;
            }
            hash = (hash ^ 0xffff) * 0x100000001b3L; // a separator no character of a part can be
        }
        return String.format("%016x", hash);
    }

    private static String label(String shape) {
        return shape.length() <= MAX_SHAPE_LABEL ? shape : shape.substring(0, MAX_SHAPE_LABEL) + "...";
    }
}
