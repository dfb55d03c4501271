package io.gantry.console.timeline;

import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Request;
import io.gantry.admin.protocol.TimelineEvent;
import io.gantry.console.engine.AdminCalls;
import io.gantry.console.engine.EngineConnection;
import io.gantry.console.engine.Failures;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executor;
import java.util.stream.Collectors;
import javafx.beans.property.BooleanProperty;
import javafx.beans.property.ObjectProperty;
import javafx.beans.property.ReadOnlyStringProperty;
import javafx.beans.property.SimpleBooleanProperty;
import javafx.beans.property.SimpleObjectProperty;
import javafx.beans.property.SimpleStringProperty;
import javafx.beans.property.StringProperty;
import javafx.collections.FXCollections;
import javafx.collections.ObservableList;

/**
 * The failover timeline: every entry since the console connected (and the stored ones of the last day), one lane per
 * server plus one for the change stream and one for Gantry as a whole; a window of time that follows the present
 * unless the operator zooms or pans away. In a cluster the engine's timeline is every instance's, each entry naming
 * the instance that recorded it (shown with the entry's detail).
 */
public final class TimelineViewModel implements EngineConnection.Listener {

    /** The lane of entries about the change stream ({@code cdc_*}). */
    public static final String CHANGE_STREAM = "change stream";
    /** The lane of entries about Gantry as a whole (startup, a list changed, a client host blocked). */
    public static final String GANTRY = "Gantry";

    static final Duration MIN_WINDOW = Duration.ofSeconds(10);
    static final Duration MAX_WINDOW = Duration.ofDays(7);
    /** Stored entries loaded on connecting. */
    static final Duration HISTORY = Duration.ofDays(1);
    static final int HISTORY_LIMIT = 2000;
    /** Most entries kept; older ones are dropped. */
    static final int MAX_EVENTS = 10_000;

    private final Executor ui;
    private final AdminCalls engine;
    private final Clock clock;
    private final ObservableList<TimelineEvent> events = FXCollections.observableArrayList();
    private final ObservableList<String> lanes = FXCollections.observableArrayList();
    private final Set<String> servers = new TreeSet<>(TimelineViewModel::compareAddresses);
    private final Set<String> seen = new HashSet<>();
    private final ObjectProperty<TimelineEvent> selected = new SimpleObjectProperty<>();
    private final StringProperty detail = new SimpleStringProperty("Select an event for its full reason.");
    private final ObjectProperty<Duration> windowLength = new SimpleObjectProperty<>(Duration.ofMinutes(10));
    private final ObjectProperty<Instant> windowEnd = new SimpleObjectProperty<>();
    private final BooleanProperty followLive = new SimpleBooleanProperty(true);
    private final StringProperty error = new SimpleStringProperty();

    public TimelineViewModel(Executor ui, AdminCalls engine, Clock clock) {
        this.ui = ui;
        this.engine = engine;
        this.clock = clock;
        windowEnd.set(clock.instant());
        lanes.setAll(GANTRY, CHANGE_STREAM);
        selected.addListener((o, was, now) -> detail.set(now == null ? "Select an event for its full reason."
                : describe(now)));
        followLive.addListener((o, was, now) -> {
            if (now) {
                windowEnd.set(clock.instant());
            }
        });
    }

    /** Entries oldest first. */
    public ObservableList<TimelineEvent> events() {
        return events;
    }

    /** Lanes top to bottom: Gantry, each server by address, the change stream. */
    public ObservableList<String> lanes() {
        return lanes;
    }

    public ObjectProperty<TimelineEvent> selectedProperty() {
        return selected;
    }

    /**
     * Selects the entries of one mark (a dot standing for entries too close to tell apart): the newest becomes the
     * selected entry, and the detail gives every one of them, oldest first.
     */
    public void select(List<TimelineEvent> mark) {
        selected.set(mark.get(mark.size() - 1));
        if (mark.size() > 1) {
            detail.set(mark.size() + " entries, oldest first:\n" + mark.stream().map(TimelineViewModel::describe)
                    .collect(Collectors.joining("\n")));
        }
    }

    /** The selected entry in full: time, lane, kind and its whole reason. */
    public ReadOnlyStringProperty detailProperty() {
        return detail;
    }

    public ObjectProperty<Duration> windowLengthProperty() {
        return windowLength;
    }

    public ObjectProperty<Instant> windowEndProperty() {
        return windowEnd;
    }

    public Instant windowStart() {
        return windowEnd.get().minus(windowLength.get());
    }

    /** Whether the window follows the present (the default); zooming keeps it, panning leaves it. */
    public BooleanProperty followLiveProperty() {
        return followLive;
    }

    /** Why the stored entries could not be loaded, or null. */
    public ReadOnlyStringProperty errorProperty() {
        return error;
    }

    /** The lane an entry is drawn in. */
    public static String laneOf(TimelineEvent event) {
        if (event.kind().startsWith("cdc_")) {
            return CHANGE_STREAM;
        }
        if (event.server() == null || event.kind().equals("host_blocked")) {
            return GANTRY;
        }
        return event.server();
    }

    /** Moves a following window to the present; called by the view's clock. */
    public void tick() {
        if (followLive.get()) {
            windowEnd.set(clock.instant());
        }
    }

    /** Halves the window around its centre (its end while following). */
    public void zoomIn() {
        zoom(0.5);
    }

    public void zoomOut() {
        zoom(2);
    }

    /** Zooms by {@code factor} (below 1 closer), keeping the window between 10 s and 7 days. */
    public void zoom(double factor) {
        long millis = Math.round(windowLength.get().toMillis() * factor);
        millis = Math.max(MIN_WINDOW.toMillis(), Math.min(MAX_WINDOW.toMillis(), millis));
        if (!followLive.get()) {
            Instant centre = windowStart().plus(windowLength.get().dividedBy(2));
            windowEnd.set(centre.plusMillis(millis / 2));
        }
        windowLength.set(Duration.ofMillis(millis));
    }

    /** Moves the window by a fraction of its length (negative: back in time) and stops following. */
    public void pan(double fraction) {
        long by = Math.round(windowLength.get().toMillis() * fraction);
        Instant end = windowEnd.get().plusMillis(by);
        Instant now = clock.instant();
        if (!end.isBefore(now)) {
            followLive.set(true);
            return;
        }
        followLive.set(false);
        windowEnd.set(end);
    }

    @Override
    public void connected(Reply.Welcome welcome) {
        Instant since = clock.instant().minus(HISTORY);
        engine.call(id -> new Request.Events(id, since, HISTORY_LIMIT)).whenComplete((reply, failure) ->
                ui.execute(() -> {
                    if (failure != null) {
                        error.set("cannot load the timeline: " + Failures.message(failure));
                    } else if (reply instanceof Reply.Events stored) {
                        error.set(null);
                        addAll(stored.events());
                    } else if (reply instanceof Reply.Error refused) {
                        error.set("cannot load the timeline: " + refused.message());
                    }
                }));
    }

    @Override
    public void push(Reply push) {
        if (push instanceof Reply.Event event) {
            ui.execute(() -> addAll(List.of(event.event())));
        } else if (push instanceof Reply.ServerChanged changed) {
            String address = changed.server().address();
            ui.execute(() -> addLane(address));
        }
    }

    /** Adds entries not seen yet (a stored entry and its push are one), keeping the list in time order. */
    void addAll(List<TimelineEvent> incoming) {
        List<TimelineEvent> fresh = new ArrayList<>();
        for (TimelineEvent event : incoming) {
            if (seen.add(key(event))) {
                fresh.add(event);
                String lane = laneOf(event);
                if (!lane.equals(GANTRY) && !lane.equals(CHANGE_STREAM)) {
                    addLane(lane);
                }
            }
        }
        if (fresh.isEmpty()) {
            return;
        }
        fresh.sort(Comparator.comparing(TimelineEvent::at));
        if (followLive.get()) {
            // A following window shows the newest entry at once, even one stamped after the last tick.
            Instant newest = fresh.get(fresh.size() - 1).at();
            Instant now = clock.instant();
            windowEnd.set(newest.isAfter(now) ? newest : now);
        }
        if (events.isEmpty() || !fresh.get(0).at().isBefore(events.get(events.size() - 1).at())) {
            events.addAll(fresh);
        } else {
            List<TimelineEvent> all = new ArrayList<>(events);
            all.addAll(fresh);
            all.sort(Comparator.comparing(TimelineEvent::at));
            events.setAll(all);
        }
        if (events.size() > MAX_EVENTS) {
            List<TimelineEvent> dropped = new ArrayList<>(events.subList(0, events.size() - MAX_EVENTS));
            events.remove(0, dropped.size());
            dropped.forEach(e -> seen.remove(key(e)));
        }
    }

    private void addLane(String server) {
        if (servers.add(server)) {
            List<String> all = new ArrayList<>();
            all.add(GANTRY);
            all.addAll(servers);
            all.add(CHANGE_STREAM);
            lanes.setAll(all);
        }
    }

    private static String key(TimelineEvent event) {
        return event.at().toEpochMilli() + "|" + event.kind() + "|" + Objects.toString(event.server()) + "|"
                + Objects.toString(event.instance()) + "|" + event.reason();
    }

    /** Time, lane, kind, and in a cluster the instance that recorded it; then the whole reason. */
    static String describe(TimelineEvent event) {
        return io.gantry.console.ui.Formats.timeMillis(event.at()) + "  " + laneOf(event) + "  " + event.kind()
                + (event.server() != null && !laneOf(event).equals(event.server()) ? " (" + event.server() + ")" : "")
                + (event.instance() == null ? "" : "  on instance " + event.instance())
                + "\n" + event.reason();
    }

    /** Servers by host, then port as a number. */
    public static int compareAddresses(String a, String b) {
        int colonA = a.lastIndexOf(':');
        int colonB = b.lastIndexOf(':');
        if (colonA < 0 || colonB < 0) {
            return a.compareTo(b);
        }
        int host = a.substring(0, colonA).compareTo(b.substring(0, colonB));
        if (host != 0) {
            return host;
        }
        try {
            return Integer.compare(Integer.parseInt(a.substring(colonA + 1)), Integer.parseInt(b.substring(colonB + 1)));
        } catch (NumberFormatException e) {
            return a.compareTo(b);
        }
    }
}
