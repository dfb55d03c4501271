package io.gantry.console.queries;

import io.gantry.admin.protocol.QueryShape;
import io.gantry.admin.protocol.Reply;
import io.gantry.console.engine.EngineConnection;
import io.gantry.console.ui.Formats;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import javafx.beans.property.BooleanProperty;
import javafx.beans.property.ObjectProperty;
import javafx.beans.property.SimpleBooleanProperty;
import javafx.beans.property.SimpleObjectProperty;
import javafx.beans.property.SimpleStringProperty;
import javafx.beans.property.StringProperty;
import javafx.collections.FXCollections;
import javafx.collections.ObservableList;
import javafx.collections.transformation.FilteredList;

/**
 * The Queries tab: the statement digests' rows with the most total time, as the engine pushes them every 2 s on its
 * {@code queries} topic, filtered by text; the selected shape's latency over time (kept here from the pushes: the
 * mean of each interval and the p99 since first seen, {@value #MAX_POINTS} points, some 6 minutes) and where it ran;
 * the rows the filter shows exported as CSV.
 */
public final class QueriesViewModel implements EngineConnection.Listener {

    /** Points kept per shape: 180 pushes, 6 minutes at the engine's 2 s. */
    static final int MAX_POINTS = 180;
    static final String CSV_HEADER = "query,schema,account,count,errors,error_codes,rows_sent,rows_affected,total_us,"
            + "p50_us,p95_us,p99_us,max_us,on_primary,on_replica,on_cache,on_gantry,routing_reasons,first_seen,"
            + "last_seen";

    private final Executor ui;
    private final Executor worker;
    private final ObservableList<QueryRow> rows = FXCollections.observableArrayList();
    private final FilteredList<QueryRow> filtered = new FilteredList<>(rows);
    private final StringProperty filter = new SimpleStringProperty("");
    private final StringProperty selectedKey = new SimpleStringProperty();
    private final ObjectProperty<QueryRow> selected = new SimpleObjectProperty<>();
    private final ObservableList<LatencyPoint> history = FXCollections.observableArrayList();
    private final StringProperty message = new SimpleStringProperty("Waiting for the engine's statement digests ...");
    private final BooleanProperty failed = new SimpleBooleanProperty();
    /** By row key: the row as last pushed, and its points. Only the UI thread touches them. */
    private final Map<String, QueryShape> last = new HashMap<>();
    private final Map<String, Deque<LatencyPoint>> points = new HashMap<>();

    /** @param worker where the CSV file is written (never the UI thread) */
    public QueriesViewModel(Executor ui, Executor worker) {
        this.ui = ui;
        this.worker = worker;
        filter.addListener((o, was, now) -> filtered.setPredicate(row -> row.matches(now)));
        selectedKey.addListener((o, was, now) -> showSelected());
    }

    @Override
    public void push(Reply push) {
        if (push instanceof Reply.Queries queries) {
            ui.execute(() -> apply(queries));
        }
    }

    @Override
    public void disconnected(String reason, Duration retryIn, int attempt) {
        ui.execute(() -> message.set("Not connected: the rows are those of the last push."));
    }

    /** On the UI thread: one push, all rows again. */
    void apply(Reply.Queries queries) {
        long at = queries.at().toEpochMilli();
        Map<String, QueryShape> now = new HashMap<>();
        List<QueryRow> fresh = new ArrayList<>(queries.shapes().size());
        for (QueryShape shape : queries.shapes()) {
            String key = shape.key();
            now.put(key, shape);
            fresh.add(new QueryRow(shape));
            Deque<LatencyPoint> kept = points.computeIfAbsent(key, k -> new ArrayDeque<>());
            kept.addLast(point(at, last.get(key), shape));
            while (kept.size() > MAX_POINTS) {
                kept.removeFirst();
            }
        }
        points.keySet().retainAll(now.keySet());
        last.clear();
        last.putAll(now);
        rows.setAll(fresh);
        message.set(fresh.isEmpty() ? "No statement counted yet." : fresh.size() + " shapes with the most total time, "
                + "as of " + Formats.time(queries.at()));
        failed.set(false);
        showSelected();
    }

    /** The interval since {@code before}: its statements and their mean; the whole life of a row first seen. */
    private static LatencyPoint point(long at, QueryShape before, QueryShape now) {
        long statements = now.count();
        long micros = now.totalMicros();
        if (before != null && now.count() >= before.count() && now.firstSeen().equals(before.firstSeen())) {
            statements -= before.count();
            micros -= before.totalMicros();
        }
        double mean = statements > 0 ? micros / 1000.0 / statements : Double.NaN;
        return new LatencyPoint(at, statements, mean, now.p99Micros() / 1000.0);
    }

    private void showSelected() {
        String key = selectedKey.get();
        QueryShape shape = key == null ? null : last.get(key);
        selected.set(shape == null ? null : new QueryRow(shape));
        Deque<LatencyPoint> kept = key == null ? null : points.get(key);
        history.setAll(kept == null ? List.of() : kept);
    }

    /** The operator selected {@code row} (null: none). The selection holds across pushes by the row's key. */
    public void select(QueryRow row) {
        selectedKey.set(row == null ? null : row.key());
    }

    /** Writes the rows the filter shows, largest total time first, to {@code file} as CSV (RFC 4180). */
    public void exportCsv(Path file) {
        List<QueryRow> shown = List.copyOf(filtered);
        message.set("Writing " + file + " ...");
        worker.execute(() -> {
            try {
                write(shown, file);
                ui.execute(() -> {
                    failed.set(false);
                    message.set("Exported " + shown.size() + (shown.size() == 1 ? " shape" : " shapes") + " to "
                            + file);
                });
            } catch (IOException | RuntimeException e) {
                ui.execute(() -> {
                    failed.set(true);
                    message.set("Export to " + file + " failed: " + e.getMessage());
                });
            }
        });
    }

    static void write(List<QueryRow> shown, Path file) throws IOException {
        try (Writer out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            out.write(CSV_HEADER);
            out.write("\r\n");
            for (QueryRow row : shown) {
                QueryShape q = row.shape();
                out.write(String.join(",", csv(q.shape()), csv(q.schema()), csv(q.account()),
                        Long.toString(q.count()), Long.toString(q.errors()), csv(q.errorCodes()),
                        Long.toString(q.rowsSent()), Long.toString(q.rowsAffected()), Long.toString(q.totalMicros()),
                        Long.toString(q.p50Micros()), Long.toString(q.p95Micros()), Long.toString(q.p99Micros()),
                        Long.toString(q.maxMicros()), Long.toString(q.onPrimary()), Long.toString(q.onReplica()),
                        Long.toString(q.onCache()), Long.toString(q.onGantry()), csv(q.reasons()),
                        q.firstSeen().toString(), q.lastSeen().toString()));
                out.write("\r\n");
            }
        }
    }

    /** A CSV field: quoted when it holds a comma, a quote or a line break, quotes doubled. */
    static String csv(String value) {
        if (value.indexOf(',') < 0 && value.indexOf('"') < 0 && value.indexOf('\n') < 0 && value.indexOf('\r') < 0) {
            return value;
        }
        return '"' + value.replace("\"", "\"\"") + '"';
    }

    /** Every row of the last push, largest total time first. */
    public ObservableList<QueryRow> rows() {
        return rows;
    }

    /** The rows the filter lets through. */
    public FilteredList<QueryRow> filtered() {
        return filtered;
    }

    public StringProperty filterProperty() {
        return filter;
    }

    public StringProperty selectedKeyProperty() {
        return selectedKey;
    }

    /** The selected row as last pushed; null when none is selected, or it fell out of the pushed rows. */
    public ObjectProperty<QueryRow> selectedProperty() {
        return selected;
    }

    /** The selected row's points, oldest first. */
    public ObservableList<LatencyPoint> history() {
        return history;
    }

    public StringProperty messageProperty() {
        return message;
    }

    public BooleanProperty failedProperty() {
        return failed;
    }
}
