package io.gantry.console.export;

import io.gantry.admin.protocol.HealthCsv;
import io.gantry.admin.protocol.HealthTimes;
import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Request;
import io.gantry.console.engine.AdminCalls;
import io.gantry.console.engine.Failures;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import javafx.beans.property.BooleanProperty;
import javafx.beans.property.DoubleProperty;
import javafx.beans.property.ObjectProperty;
import javafx.beans.property.SimpleBooleanProperty;
import javafx.beans.property.SimpleDoubleProperty;
import javafx.beans.property.SimpleObjectProperty;
import javafx.beans.property.SimpleStringProperty;
import javafx.beans.property.StringProperty;
import javafx.collections.FXCollections;
import javafx.collections.ObservableList;

/**
 * Exports the health history as CSV, the same file {@code gantry export-health} writes for the same range and
 * server ({@link HealthCsv}): pages of the admin socket's {@code health} written to a file beside the target,
 * moved into place at the end (a failed or cancelled export leaves no half file). Progress is the share of the time
 * range read.
 */
public final class ExportViewModel {

    /** The server filter's entry for every server. */
    public static final String ALL_SERVERS = "every server";
    static final int PAGE = 10_000;
    private static final Duration PAGE_TIMEOUT = Duration.ofSeconds(40);

    private final Executor ui;
    private final AdminCalls engine;
    private final Clock clock;
    private final Executor worker;
    private final StringProperty from = new SimpleStringProperty("-1h");
    private final StringProperty until = new SimpleStringProperty("now");
    private final ObservableList<String> servers = FXCollections.observableArrayList(ALL_SERVERS);
    private final StringProperty server = new SimpleStringProperty(ALL_SERVERS);
    private final StringProperty file = new SimpleStringProperty("");
    private final DoubleProperty progress = new SimpleDoubleProperty(0);
    private final BooleanProperty running = new SimpleBooleanProperty();
    private final StringProperty message = new SimpleStringProperty("");
    private final BooleanProperty failed = new SimpleBooleanProperty();
    private final ObjectProperty<Result> result = new SimpleObjectProperty<>();
    private final AtomicBoolean cancel = new AtomicBoolean();

    /** A finished export. */
    public record Result(Path file, long rows) {
    }

    /**
     * @param worker runs the export's loop (it waits for the engine's pages, so never the UI thread)
     */
    public ExportViewModel(Executor ui, AdminCalls engine, Clock clock, Executor worker) {
        this.ui = ui;
        this.engine = engine;
        this.clock = clock;
        this.worker = worker;
    }

    /** First sample, inclusive: ISO-8601 time, a date, {@code -1h}/{@code -30m}/{@code -7d}, {@code now}, or empty. */
    public StringProperty fromProperty() {
        return from;
    }

    /** End, exclusive; the same forms. */
    public StringProperty untilProperty() {
        return until;
    }

    public ObservableList<String> servers() {
        return servers;
    }

    public StringProperty serverProperty() {
        return server;
    }

    public StringProperty fileProperty() {
        return file;
    }

    public DoubleProperty progressProperty() {
        return progress;
    }

    public BooleanProperty runningProperty() {
        return running;
    }

    public StringProperty messageProperty() {
        return message;
    }

    public BooleanProperty failedProperty() {
        return failed;
    }

    public ObjectProperty<Result> resultProperty() {
        return result;
    }

    /** Asks a running export to stop; its file is not written. */
    public void cancel() {
        cancel.set(true);
    }

    /** Checks the fields and starts the export; on the UI thread. Returns whether it started. */
    public boolean start() {
        if (running.get()) {
            return false;
        }
        Instant start;
        Instant end;
        Path target;
        try {
            Instant now = clock.instant();
            start = parseTime("from", from.get(), now);
            end = parseTime("until", until.get(), now);
            if (end == null) {
                end = now;
            }
            if (start != null && !start.isBefore(end)) {
                throw new IllegalArgumentException("'from' (" + start + ") must be before 'until' (" + end + ")");
            }
            if (file.get() == null || file.get().isBlank()) {
                throw new IllegalArgumentException("choose a file to write");
            }
            target = Path.of(file.get().strip()).toAbsolutePath();
            if (!Files.isDirectory(target.getParent())) {
                throw new IllegalArgumentException("the directory " + target.getParent() + " does not exist");
            }
        } catch (IllegalArgumentException e) {
            fail(e.getMessage());
            return false;
        }
        String filter = ALL_SERVERS.equals(server.get()) || server.get() == null || server.get().isBlank() ? null
                : server.get().strip();
        cancel.set(false);
        running.set(true);
        failed.set(false);
        progress.set(0);
        result.set(null);
        message.set("exporting ...");
        Instant first = start;
        Instant last = end;
        CompletableFuture.supplyAsync(() -> export(first, last, filter, target), worker).whenComplete((rows, failure)
                -> ui.execute(() -> {
                    running.set(false);
                    if (failure != null) {
                        fail(Failures.message(failure));
                    } else {
                        progress.set(1);
                        message.set("wrote " + rows + " health samples to " + target);
                        result.set(new Result(target, rows));
                    }
                }));
        return true;
    }

    private void fail(String why) {
        failed.set(true);
        message.set(why);
    }

    private long export(Instant start, Instant end, String filter, Path target) {
        try {
            Path temporary = Files.createTempFile(target.getParent(), "." + target.getFileName(), ".part");
            try {
                long rows = 0;
                try (BufferedWriter writer = Files.newBufferedWriter(temporary, StandardCharsets.UTF_8)) {
                    HealthCsv csv = HealthCsv.start(writer);
                    Instant page = start;
                    Instant firstSeen = start;
                    while (true) {
                        if (cancel.get()) {
                            throw new IOException("cancelled; nothing written");
                        }
                        Instant pageFrom = page;
                        Reply reply = await(engine.call(id -> new Request.Health(id, pageFrom, end, filter, PAGE)));
                        if (reply instanceof Reply.Error refused) {
                            throw new IOException("the engine refused the export: " + refused.message());
                        }
                        Reply.Health health = (Reply.Health) reply;
                        try {
                            health.samples().forEach(csv::append);
                        } catch (UncheckedIOException e) {
                            throw e.getCause();
                        }
                        rows += health.samples().size();
                        if (firstSeen == null && !health.samples().isEmpty()) {
                            firstSeen = health.samples().get(0).at();
                        }
                        if (health.next() == null) {
                            break;
                        }
                        page = health.next();
                        double share = firstSeen == null ? 0 : (double) (page.toEpochMilli() - firstSeen.toEpochMilli())
                                / Math.max(1, end.toEpochMilli() - firstSeen.toEpochMilli());
                        long written = rows;
                        ui.execute(() -> {
                            progress.set(Math.max(0, Math.min(0.99, share)));
                            message.set("exporting ... " + written + " samples so far");
                        });
                    }
                }
                try {
                    Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING);
                }
                return rows;
            } finally {
                Files.deleteIfExists(temporary);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
    }

    private static Reply await(CompletableFuture<Reply> answer) throws IOException {
        try {
            return answer.get(PAGE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | CompletionException e) {
            throw new IOException(Failures.message(e), e);
        } catch (TimeoutException e) {
            throw new IOException("no page from the engine within " + PAGE_TIMEOUT.toSeconds() + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /** As {@code gantry export-health --since/--until} read them; null for an empty field. */
    static Instant parseTime(String field, String text, Instant now) {
        if (text == null || text.isBlank()) {
            return null;
        }
        try {
            return HealthTimes.parse(text, now);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("'" + field + "': '" + text + "' is not a time; use an "
                    + "ISO-8601 time (2026-11-30T21:00:00Z), a date (2026-11-30), -1h, -7d or now");
        }
    }
}
