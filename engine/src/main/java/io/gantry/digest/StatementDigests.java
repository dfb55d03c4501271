package io.gantry.digest;

import io.gantry.route.RouteReason;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Every statement the proxy answered, counted under its shape, schema and account, with latency percentiles, rows,
 * errors by code, where it ran and why (ProxySQL's {@code stats_mysql_query_digest}, bounded). Behind
 * {@code SHOW GANTRY QUERIES}, {@code gantry.queries}, {@code SHOW PROXIED QUERIES}.
 *
 * <p>Each thread that records (each event loop) has a table of its own ({@link DigestTable}), so statements of
 * sessions on different loops never wait for each other; a read merges the tables, as a {@code LongAdder} sums its
 * cells. The rows of all tables together never exceed {@code maxShapes} (a shape seen on two loops is a row in
 * each); past that the least used are folded into one "other" row with exact counts.
 */
public final class StatementDigests {

    /** {@code --digest-max-shapes}'s default. */
    public static final int DEFAULT_MAX_SHAPES = 10_000;

    /** Fold this share of all rows when the budget runs out. */
    private static final int FOLD_DIVISOR = 10;

    private final int maxShapes;
    private final Clock clock;
    private final AtomicInteger budget;
    /** Taken only when the budget runs out (a new shape and a full table), never by a known shape. */
    private final Object roomLock = new Object();
    private final List<DigestTable> tables = new CopyOnWriteArrayList<>();
    private final ThreadLocal<DigestTable> own = ThreadLocal.withInitial(this::newTable);

    /** @param maxShapes rows kept at most, at least 1 ({@code --digest-max-shapes}) */
    public StatementDigests(int maxShapes, Clock clock) {
        if (maxShapes < 1) {
            throw new IllegalArgumentException("--digest-max-shapes must be at least 1, got " + maxShapes);
        }
        this.maxShapes = maxShapes;
        this.clock = clock;
        this.budget = new AtomicInteger(maxShapes);
    }

    private DigestTable newTable() {
        DigestTable table = new DigestTable(budget);
        tables.add(table);
        return table;
    }

    public int maxShapes() {
        return maxShapes;
    }

    /**
     * One statement answered, counted in the calling thread's table.
     *
     * @param shape     its shape, read before this returns
     * @param reason    why it went where it ran; null when it was not routed
     * @param errorCode the error it ended with, 0 for none
     * @param nanos     from its command's arrival to the end of its answer
     */
    public void record(CharSequence shape, String schema, String account, RanOn where, RouteReason reason,
                       int errorCode, long rowsSent, long rowsAffected, long nanos) {
        DigestTable table = own.get();
        String inSchema = schema == null ? "" : schema;
        String by = account == null ? "" : account;
        long now = clock.millis();
        if (!table.record(shape, inSchema, by, where, reason, errorCode, rowsSent, rowsAffected, nanos, now)) {
            makeRoom();
            if (!table.record(shape, inSchema, by, where, reason, errorCode, rowsSent, rowsAffected, nanos, now)) {
                table.recordAsOther(where, reason, errorCode, rowsSent, rowsAffected, nanos, now);
            }
        }
    }

    /**
     * Folds the least used tenth of all rows (at least one; all rows as little used as those too) into "other":
     * the least used of all tables, so a loop whose own table holds only busy rows finds room too. One table at a
     * time: a thread never holds two tables' locks. Sorting all counts once frees a tenth of the budget, so a flood
     * of new shapes sorts rarely. One thread at a time, and none once another has made room: the counts are read
     * while the budget is spent, so the tenth is of a full table.
     */
    private void makeRoom() {
        synchronized (roomLock) {
            if (budget.get() == 0) {
                foldLeastUsedTenth();
            }
        }
    }

    private void foldLeastUsedTenth() {
        long[] counts = new long[0];
        for (DigestTable table : tables) {
            long[] more = table.counts();
            int had = counts.length;
            counts = Arrays.copyOf(counts, had + more.length);
            System.arraycopy(more, 0, counts, had, more.length);
        }
        if (counts.length == 0) {
            return;
        }
        Arrays.sort(counts);
        long threshold = counts[Math.max(1, counts.length / FOLD_DIVISOR) - 1];
        for (DigestTable table : tables) {
            table.foldUsedAtMost(threshold);
        }
    }

    /** Every row, the "other" row last when some shapes were folded. */
    public List<ShapeDigest> snapshot() {
        return snapshot(false);
    }

    /**
     * One row per shape, whatever the schema and account (theirs {@code ""}), the "other" row last: what
     * {@code SHOW PROXIED QUERIES} shows.
     */
    public List<ShapeDigest> snapshotByShape() {
        return snapshot(true);
    }

    private List<ShapeDigest> snapshot(boolean byShape) {
        Map<DigestKey, ShapeFigures> merged = new HashMap<>();
        ShapeFigures other = new ShapeFigures();
        for (DigestTable table : tables) {
            table.copyInto(merged, other, byShape);
        }
        List<ShapeDigest> rows = new ArrayList<>(merged.size() + 1);
        merged.forEach((key, figures) -> rows.add(row(key.shape(), key.schema(), key.account(), figures, false)));
        if (other.count > 0) {
            rows.add(row(ShapeDigest.OTHER, "", "", other, true));
        }
        return rows;
    }

    /** The rows sorted by {@code order}, largest first, at most {@code limit} of them. */
    public List<ShapeDigest> top(DigestOrder order, int limit) {
        List<ShapeDigest> rows = snapshot();
        rows.sort(order.largestFirst());
        return rows.size() > limit ? List.copyOf(rows.subList(0, limit)) : rows;
    }

    /**
     * The {@code limit} rows with the largest total latency, largest first, the "other" row among them when its
     * total is one of the largest: {@link #top} by {@link DigestOrder#TOTAL_TIME} without copying every row. A first
     * pass adds up the totals only; the histograms of the rows chosen alone are copied. A row folded between the
     * passes is left out. For readers that look often (the metrics, the admin socket's {@code queries} feed).
     */
    public List<ShapeDigest> topByTotalTime(int limit) {
        Map<DigestKey, long[]> totals = new HashMap<>();
        long[] otherTotal = new long[1];
        for (DigestTable table : tables) {
            table.addTotals(totals, otherTotal);
        }
        List<Map.Entry<DigestKey, long[]>> ranked = new ArrayList<>(totals.entrySet());
        ranked.sort((a, b) -> Long.compare(b.getValue()[0], a.getValue()[0]));
        Set<DigestKey> chosen = new HashSet<>();
        boolean withOther = false;
        int i = 0;
        while (chosen.size() + (withOther ? 1 : 0) < limit) {
            boolean rowsLeft = i < ranked.size();
            if (!withOther && otherTotal[0] > 0 && (!rowsLeft || otherTotal[0] > ranked.get(i).getValue()[0])) {
                withOther = true;
            } else if (rowsLeft) {
                chosen.add(ranked.get(i++).getKey());
            } else {
                break;
            }
        }
        Map<DigestKey, ShapeFigures> copied = new HashMap<>();
        ShapeFigures other = new ShapeFigures();
        for (DigestTable table : tables) {
            table.copyRows(chosen, copied, withOther ? other : null);
        }
        List<ShapeDigest> rows = new ArrayList<>(copied.size() + 1);
        copied.forEach((key, figures) -> rows.add(row(key.shape(), key.schema(), key.account(), figures, false)));
        if (other.count > 0) {
            rows.add(row(ShapeDigest.OTHER, "", "", other, true));
        }
        rows.sort(DigestOrder.TOTAL_TIME.largestFirst());
        return rows;
    }

    /** Forgets every row ({@code FLUSH GANTRY QUERIES}). */
    public void flush() {
        for (DigestTable table : tables) {
            table.clear();
        }
    }

    private static ShapeDigest row(String shape, String schema, String account, ShapeFigures figures,
                                   boolean folded) {
        Map<RanOn, Long> ranOn = new EnumMap<>(RanOn.class);
        for (RanOn where : RanOn.values()) {
            if (figures.ranOn[where.ordinal()] > 0) {
                ranOn.put(where, figures.ranOn[where.ordinal()]);
            }
        }
        Map<RouteReason, Long> reasons = new EnumMap<>(RouteReason.class);
        for (int i = 0; i < figures.reasons.length; i++) {
            if (figures.reasons[i] > 0) {
                reasons.put(ShapeFigures.reason(i), figures.reasons[i]);
            }
        }
        return new ShapeDigest(shape, schema, account, figures.count,
                figures.errorsByCode == null ? Map.of() : figures.errorsByCode, figures.rowsSent,
                figures.rowsAffected, figures.totalNanos / 1000, percentile(figures, 50), percentile(figures, 95),
                percentile(figures, 99), figures.count == 0 ? 0 : figures.latencyMicros.getMaxValue(), ranOn,
                reasons, Instant.ofEpochMilli(figures.firstSeenMillis), Instant.ofEpochMilli(figures.lastSeenMillis),
                folded);
    }

    private static long percentile(ShapeFigures figures, double percentile) {
        return figures.count == 0 ? 0 : figures.latencyMicros.getValueAtPercentile(percentile);
    }
}
