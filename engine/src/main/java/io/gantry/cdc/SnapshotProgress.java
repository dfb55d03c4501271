package io.gantry.cdc;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How far a snapshot has come, per table: rows read against the server's estimate (the estimate is InnoDB's,
 * from {@code information_schema.TABLES}, so it can be off by a good part either way). Written by the snapshot
 * thread, read by {@code SHOW GANTRY STATUS} and the progress log.
 */
final class SnapshotProgress {

    private final String server;
    private final Clock clock;
    private final Instant started;
    private final Map<String, long[]> tables = new LinkedHashMap<>(); // table -> {done, estimate}
    private String current;
    private String outcome;

    /** Starts now, by {@code clock}, which also times {@link #describe()}. */
    SnapshotProgress(String server, Clock clock) {
        this.server = server;
        this.clock = clock;
        this.started = clock.instant();
    }

    synchronized void planned(String table, long estimate) {
        tables.put(table, new long[] {0, Math.max(0, estimate)});
    }

    synchronized void reading(String table) {
        current = table;
    }

    synchronized void rowsDone(String table, long done) {
        long[] counts = tables.get(table);
        if (counts != null) {
            counts[0] = done;
        }
    }

    synchronized void finished(String summary) {
        current = null;
        outcome = summary;
    }

    /**
     * One line for status and logs: every table with rows read against the estimate, in reading order
     * ({@code app.a 1200/1200 done, app.b 5120/~200000 reading, app.c 0/~300 waiting}).
     */
    synchronized String describe() {
        if (outcome != null) {
            return outcome;
        }
        List<String> parts = new ArrayList<>();
        boolean passedCurrent = current == null;
        for (Map.Entry<String, long[]> table : tables.entrySet()) {
            long[] counts = table.getValue();
            String state;
            if (table.getKey().equals(current)) {
                state = "reading";
                passedCurrent = true;
            } else {
                state = passedCurrent ? "waiting" : "done";
            }
            parts.add(table.getKey() + " " + counts[0] + "/~" + counts[1] + " " + state);
        }
        long seconds = Duration.between(started, clock.instant()).toSeconds();
        return "snapshotting from " + server + " for " + seconds + " s: "
                + (parts.isEmpty() ? "listing tables" : String.join(", ", parts));
    }
}
