package io.gantry.console.chart;

import io.gantry.admin.protocol.HealthPoint;
import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Request;
import io.gantry.console.engine.AdminCalls;
import io.gantry.console.engine.EngineConnection;
import io.gantry.console.engine.Failures;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import javafx.beans.property.BooleanProperty;
import javafx.beans.property.ObjectProperty;
import javafx.beans.property.ReadOnlyObjectProperty;
import javafx.beans.property.ReadOnlyStringProperty;
import javafx.beans.property.SimpleBooleanProperty;
import javafx.beans.property.SimpleObjectProperty;
import javafx.beans.property.SimpleStringProperty;
import javafx.beans.property.StringProperty;

/**
 * Lag and RTT per server over a chosen window, from the engine's health history: loaded whole when the window
 * changes, then the new samples every refresh. Each series is cut into at most {@value #BUCKETS} buckets over the
 * window, each showing its highest value, so a lag spike is never averaged away and an hour or a day costs the same
 * to draw.
 */
public final class HealthChartViewModel implements EngineConnection.Listener {

    /** The windows offered. */
    public static final List<Duration> WINDOWS = List.of(Duration.ofMinutes(5), Duration.ofMinutes(15),
            Duration.ofHours(1), Duration.ofHours(6), Duration.ofDays(1));
    static final int BUCKETS = 300;
    static final int PAGE = 10_000;

    /** A value at a time. */
    public record Point(long atMillis, double value) {
    }

    /** A server's samples, as kept: time, RTT (NaN when none) and lag (-1 when unknown). */
    private record Sample(long atMillis, double rttMs, long lagMs) {
    }

    /**
     * What the chart draws.
     *
     * @param lag    per server, the bucket maxima of lag in ms
     * @param rtt    per server, the bucket maxima of RTT in ms
     * @param maxLag per server, the highest lag in the window (null when none known)
     */
    public record Series(Instant from, Instant until, Map<String, List<Point>> lag, Map<String, List<Point>> rtt,
                         Map<String, Long> maxLag) {
    }

    private final Executor ui;
    private final AdminCalls engine;
    private final Clock clock;
    private final ObjectProperty<Duration> window = new SimpleObjectProperty<>(Duration.ofMinutes(15));
    private final ObjectProperty<Series> series = new SimpleObjectProperty<>();
    private final StringProperty error = new SimpleStringProperty();
    private final BooleanProperty loading = new SimpleBooleanProperty();
    private final Map<String, Deque<Sample>> samples = new TreeMap<>();
    /** Where the next refresh starts: after the newest sample read (null: the window's start). */
    private Instant next;
    private long generation;
    private boolean inFlight;

    public HealthChartViewModel(Executor ui, AdminCalls engine, Clock clock) {
        this.ui = ui;
        this.engine = engine;
        this.clock = clock;
        window.addListener((o, was, now) -> reload());
    }

    public ObjectProperty<Duration> windowProperty() {
        return window;
    }

    public ReadOnlyObjectProperty<Series> seriesProperty() {
        return series;
    }

    public ReadOnlyStringProperty errorProperty() {
        return error;
    }

    public BooleanProperty loadingProperty() {
        return loading;
    }

    /** Samples held now, over every server (what the console's memory for the chart grows with). */
    public int samplesHeld() {
        return samples.values().stream().mapToInt(Deque::size).sum();
    }

    @Override
    public void connected(Reply.Welcome welcome) {
        ui.execute(this::reload);
    }

    /** Forgets what was read and loads the whole window again. */
    public void reload() {
        generation++;
        samples.clear();
        next = null;
        inFlight = false;
        refresh();
    }

    /** Reads the samples newer than the last read (the whole window the first time); on the UI thread. */
    public void refresh() {
        if (inFlight) {
            return;
        }
        inFlight = true;
        long asked = generation;
        Instant from = next != null ? next : clock.instant().minus(window.get());
        loading.set(next == null);
        List<HealthPoint> read = new ArrayList<>();
        page(from, read).whenComplete((last, failure) -> ui.execute(() -> {
            if (asked != generation) {
                return;
            }
            inFlight = false;
            loading.set(false);
            if (failure != null) {
                error.set("cannot read the health history: " + Failures.message(failure));
                return;
            }
            error.set(null);
            add(read);
            if (last != null) {
                next = last;
            }
            publish();
        }));
    }

    /** Reads pages from {@code from} into {@code into}; completes with where the next read starts. */
    private CompletableFuture<Instant> page(Instant from, List<HealthPoint> into) {
        return engine.call(id -> new Request.Health(id, from, null, null, PAGE)).thenCompose(reply -> {
            if (reply instanceof Reply.Error refused) {
                throw new IllegalStateException(refused.message());
            }
            Reply.Health health = (Reply.Health) reply;
            into.addAll(health.samples());
            if (health.next() != null) {
                return page(health.next(), into);
            }
            Instant after = health.samples().isEmpty() ? null
                    : health.samples().get(health.samples().size() - 1).at().plusMillis(1);
            return CompletableFuture.completedFuture(after != null ? after : (into.isEmpty() ? null
                    : into.get(into.size() - 1).at().plusMillis(1)));
        });
    }

    void add(List<HealthPoint> points) {
        for (HealthPoint point : points) {
            samples.computeIfAbsent(point.server(), s -> new ArrayDeque<>()).add(new Sample(point.at().toEpochMilli(),
                    point.rttMs() == null ? Double.NaN : point.rttMs(), point.lagMs() == null ? -1 : point.lagMs()));
        }
    }

    void publish() {
        Instant until = clock.instant();
        Instant from = until.minus(window.get());
        long start = from.toEpochMilli();
        double width = Math.max(1, (until.toEpochMilli() - start) / (double) BUCKETS);
        Map<String, List<Point>> lag = new TreeMap<>();
        Map<String, List<Point>> rtt = new TreeMap<>();
        Map<String, Long> maxLag = new TreeMap<>();
        for (Map.Entry<String, Deque<Sample>> entry : samples.entrySet()) {
            Deque<Sample> kept = entry.getValue();
            while (!kept.isEmpty() && kept.peekFirst().atMillis() < start) {
                kept.removeFirst();
            }
            double[] lagMax = new double[BUCKETS];
            double[] rttMax = new double[BUCKETS];
            java.util.Arrays.fill(lagMax, -1);
            java.util.Arrays.fill(rttMax, -1);
            long highest = -1;
            for (Sample sample : kept) {
                int bucket = (int) Math.min(BUCKETS - 1, Math.max(0, (sample.atMillis() - start) / width));
                if (sample.lagMs() >= 0) {
                    lagMax[bucket] = Math.max(lagMax[bucket], sample.lagMs());
                    highest = Math.max(highest, sample.lagMs());
                }
                if (!Double.isNaN(sample.rttMs())) {
                    rttMax[bucket] = Math.max(rttMax[bucket], sample.rttMs());
                }
            }
            lag.put(entry.getKey(), points(lagMax, start, width));
            rtt.put(entry.getKey(), points(rttMax, start, width));
            maxLag.put(entry.getKey(), highest < 0 ? null : highest);
        }
        series.set(new Series(from, until, lag, rtt, maxLag));
    }

    private static List<Point> points(double[] maxima, long start, double width) {
        List<Point> points = new ArrayList<>();
        for (int i = 0; i < maxima.length; i++) {
            if (maxima[i] >= 0) {
                points.add(new Point(start + Math.round((i + 0.5) * width), maxima[i]));
            }
        }
        return points;
    }
}
