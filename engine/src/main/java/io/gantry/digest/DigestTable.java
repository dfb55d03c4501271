package io.gantry.digest;

import io.gantry.route.RouteReason;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The digest rows of the statements of one thread (an event loop, or the admin thread): only that thread adds to
 * it, so its lock is taken without contention but for the moment a reader copies the rows
 * ({@link StatementDigests#snapshot}). Rows are taken from a budget shared by all tables
 * ({@code --digest-max-shapes}); when none is left, {@link StatementDigests} has the tables fold the least used
 * rows into their "other" rows, which keep their counts exactly, and a new shape finds room again.
 */
final class DigestTable {

    private final AtomicInteger budget;
    private final Map<Object, ShapeFigures> rows = new HashMap<>();
    private final Probe probe = new Probe();
    private ShapeFigures other;

    DigestTable(AtomicInteger budget) {
        this.budget = budget;
    }

    /**
     * Counts a statement in its row; false, counting nothing, when its shape is new here and no row is left in the
     * budget ({@link StatementDigests} then makes room and asks again, or counts it as "other").
     */
    synchronized boolean record(CharSequence shape, String schema, String account, RanOn where, RouteReason reason,
                                int errorCode, long rowsSent, long affected, long nanos, long nowMillis) {
        ShapeFigures figures = rows.get(probe.of(shape, schema, account));
        if (figures == null) {
            if (!takeOne()) {
                return false;
            }
            figures = new ShapeFigures();
            rows.put(new DigestKey(shape.toString(), schema, account), figures);
        }
        figures.add(where, reason, errorCode, rowsSent, affected, nanos, nowMillis);
        return true;
    }

    /** Counts a statement in the "other" row. */
    synchronized void recordAsOther(RanOn where, RouteReason reason, int errorCode, long rowsSent, long affected,
                                    long nanos, long nowMillis) {
        otherRow().add(where, reason, errorCode, rowsSent, affected, nanos, nowMillis);
    }

    private boolean takeOne() {
        for (int left = budget.get(); left > 0; left = budget.get()) {
            if (budget.compareAndSet(left, left - 1)) {
                return true;
            }
        }
        return false;
    }

    /** How many statements each row counted, for {@link StatementDigests} to find the least used of all tables. */
    synchronized long[] counts() {
        long[] counts = new long[rows.size()];
        int i = 0;
        for (ShapeFigures figures : rows.values()) {
            counts[i++] = figures.count;
        }
        return counts;
    }

    /** Folds every row that counted at most {@code count} statements into "other", giving their budget back. */
    synchronized void foldUsedAtMost(long count) {
        int folded = 0;
        for (var entries = rows.values().iterator(); entries.hasNext(); ) {
            ShapeFigures figures = entries.next();
            if (figures.count <= count) {
                otherRow().merge(figures);
                entries.remove();
                folded++;
            }
        }
        budget.addAndGet(folded);
    }

    private ShapeFigures otherRow() {
        if (other == null) {
            other = new ShapeFigures();
        }
        return other;
    }

    /**
     * Adds a copy of this table's rows to {@code into}, and its "other" row to {@code otherInto}.
     *
     * @param byShape whether rows of one shape in several schemas or accounts are added as one
     */
    synchronized void copyInto(Map<DigestKey, ShapeFigures> into, ShapeFigures otherInto, boolean byShape) {
        rows.forEach((key, figures) -> into.merge(byShape ? new DigestKey(((DigestKey) key).shape(), "", "")
                : (DigestKey) key, figures.copy(), (mine, theirs) -> {
            mine.merge(theirs);
            return mine;
        }));
        if (other != null) {
            otherInto.merge(other);
        }
    }

    /**
     * Adds each row's total latency to {@code into} (by key), and the "other" row's to {@code otherTotal[0]}: the first
     * pass of {@link StatementDigests#topByTotalTime}, which copies no histogram, so the lock is held briefly.
     */
    synchronized void addTotals(Map<DigestKey, long[]> into, long[] otherTotal) {
        rows.forEach((key, figures) -> into.computeIfAbsent((DigestKey) key, k -> new long[1])[0]
                += figures.totalNanos);
        if (other != null) {
            otherTotal[0] += other.totalNanos;
        }
    }

    /** Adds a copy of the rows of {@code keys} to {@code into}, and, when {@code otherInto} is given, "other". */
    synchronized void copyRows(Set<DigestKey> keys, Map<DigestKey, ShapeFigures> into, ShapeFigures otherInto) {
        for (DigestKey key : keys) {
            ShapeFigures figures = rows.get(key);
            if (figures != null) {
                into.merge(key, figures.copy(), (mine, theirs) -> {
                    mine.merge(theirs);
                    return mine;
                });
            }
        }
        if (otherInto != null && other != null) {
            otherInto.merge(other);
        }
    }

    /** Forgets every row ({@code FLUSH GANTRY QUERIES}), giving their budget back. */
    synchronized void clear() {
        budget.addAndGet(rows.size());
        rows.clear();
        other = null;
    }

    /**
     * A key looked up by a shape still in a builder: equal to the {@link DigestKey} of the same characters, with the
     * same hash, so a known shape costs no string. One per table, used under its lock.
     */
    private static final class Probe {
        private CharSequence shape;
        private String schema;
        private String account;
        private int hash;

        Probe of(CharSequence shape, String schema, String account) {
            this.shape = shape;
            this.schema = schema;
            this.account = account;
            hash = DigestKey.hash(shape instanceof String known ? known.hashCode() : hashOf(shape), schema, account);
            return this;
        }

        /** {@link String#hashCode} of the same characters (a prepared statement's shape is a string, hashed once). */
        private static int hashOf(CharSequence shape) {
            int shapeHash = 0;
            for (int i = 0; i < shape.length(); i++) {
                shapeHash = 31 * shapeHash + shape.charAt(i);
            }
            return shapeHash;
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof DigestKey key && key.shape().contentEquals(shape) && key.schema().equals(schema)
                    && key.account().equals(account);
        }
    }
}
