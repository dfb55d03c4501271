package io.gantry.cdc;

import io.gantry.authority.Authority;
import io.gantry.authority.CdcPosition;
import io.gantry.authority.Event;
import io.gantry.authority.EventKind;
import io.gantry.events.EngineEvent;
import io.gantry.events.EventPublisher;
import io.gantry.gtid.Flavour;
import io.gantry.gtid.Gtid;
import io.gantry.gtid.GtidSet;
import io.gantry.topology.UpstreamUrl;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The change stream: one binlog stream at a time, from the highest-weight CDC server that answers, applied to its
 * listeners (the change sink first) with the position saved in the Authority. Its starts, moves, skips and stops
 * are published as timeline entries, and each change of its state as a state change.
 *
 * <p>The parts: {@link FailoverPolicy} decides which server to use next and from which position;
 * {@link BinlogSession} checks one server and reads its binlog; {@link AppliedPosition} holds what was applied and
 * makes it durable in order; {@link ChangeListeners} hands each transaction and state change to the
 * {@linkplain ChangeListener listeners}. This class runs them on its own thread, takes the commands, takes
 * snapshots, and reports status and events. Time comes from the clock it is given.
 *
 * <h2>Failover</h2>
 * When the stream fails, the same server is tried again {@code connectRetries} times, each attempt bounded by
 * {@code connectTimeout}; then the stream moves to the next server by weight (wrapping around the list) and resumes
 * from the last applied GTID set. Before resuming, the candidate's binlog must hold every transaction already
 * applied ({@code @@gtid_binlog_state} / {@code @@gtid_executed}); a candidate that lacks some is passed over with a
 * {@code cdc_skipped} event, never resumed from (that would skip ahead). There is no fail-back: a server that comes
 * back is used again only when the stream fails over to it in turn, or on {@code START GANTRY REPLICATION}.
 *
 * <h2>Exactly once</h2>
 * A transaction is applied whole or not at all ({@link TransactionAssembler}); each applied transaction's GTID is
 * added to the in-memory position, and a transaction already in the position is never applied again. The sink is
 * written and fsynced first, then the position is saved in the Authority, every {@link #FLUSH_INTERVAL} and when the
 * stream ends. After a crash, the position is the saved one plus the GTIDs of the complete transactions found in the
 * sink's current file ({@link JsonlSink#recover()}, which also cuts off a half-written tail), so what reached the
 * sink is never repeated and what did not is read again. When the sink cannot be written or the position not
 * saved, the stream stops for good: applying more would lose changes.
 */
public final class CdcStream implements AutoCloseable {

    /** The name of this stream's row in {@code gantry.cdc_position}. */
    public static final String STREAM = "default";

    private static final Logger LOG = LoggerFactory.getLogger(CdcStream.class);
    private static final Duration FLUSH_INTERVAL = Duration.ofMillis(100);

    /** What the stream is doing, as {@code CDC Status} shows it. */
    public enum State {
        STARTING, SNAPSHOTTING, STREAMING, RETRYING, STOPPED;

        public String displayName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * The stream as {@code SHOW GANTRY STATUS} shows it.
     *
     * @param server          {@code host:port} streamed from now, empty when none
     * @param position        the applied GTID set, empty text before the first connection
     * @param snapshot        the snapshot's progress or outcome, in words
     * @param rowsPerSecond   row changes applied per second over the last ten seconds
     * @param lastError       the last failure with its time and server, or {@code none}
     */
    public record Status(Optional<String> server, State state, String position, String snapshot,
                         double rowsPerSecond, double transactionsPerSecond, String lastError) {
    }

    private final EventPublisher events;
    private final CdcSettings settings;
    private final Clock clock;
    private final JsonlSink sink;
    private final ChangeListeners listeners;
    private final AppliedPosition position;
    private final Throughput throughput;
    private final FailoverPolicy policy;
    private final long binlogClientId;
    private final Thread thread;
    private final ScheduledExecutorService flusher;

    // Commands and the server list, guarded by `lock`; the stream thread waits on it while stopped or pausing.
    private final Object lock = new Object();
    private List<UpstreamUrl> servers;
    private boolean started;
    private boolean stopRequested;
    private boolean restartFromTop;
    private boolean announceRestart;
    private boolean closed;
    private boolean closeCalled;
    private String commandReason;
    private BinlogSession session;

    private volatile Predicate<String> knownDown = address -> false;
    private volatile State state = State.STARTING;
    private volatile UpstreamUrl active;
    private volatile String lastError = "none";
    private volatile SnapshotProgress snapshot;
    private volatile String snapshotSummary;
    private volatile boolean snapshotPending;
    private volatile boolean stoppedForGood;

    private CdcStream(Authority authority, EventPublisher events, List<UpstreamUrl> servers, CdcSettings settings,
                      Clock clock, JsonlSink sink, ChangeListeners listeners, AppliedPosition position,
                      boolean snapshotPending) {
        this.events = events;
        this.servers = List.copyOf(servers);
        this.settings = settings;
        this.clock = clock;
        this.sink = sink;
        this.listeners = listeners;
        this.position = position;
        this.throughput = new Throughput(clock);
        this.policy = new FailoverPolicy(settings.connectRetries(), "Gantry started");
        this.snapshotPending = snapshotPending;
        this.snapshotSummary = snapshotPending ? "pending" : sink == null ? "none (no change sink)"
                : "not needed (resuming from the saved position)";
        // A stable id per data directory: a restarted Gantry replaces its own dump thread on the server instead
        // of leaving a second one behind.
        this.binlogClientId = 0x4000_0000L | (authority.dataDir().toAbsolutePath().hashCode() & 0x3FFF_FFFFL);
        this.thread = new Thread(this::run, "gantry-cdc");
        this.thread.setDaemon(true);
        this.flusher = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread t = new Thread(runnable, "gantry-cdc-flush");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Recovers the sink and the saved position, then starts streaming on its own thread, taking every server as up,
     * with the system clock, publishing its events nowhere.
     *
     * @throws UncheckedIOException when the sink cannot be opened or recovered; nothing is started
     */
    public static CdcStream start(Authority authority, List<UpstreamUrl> servers, CdcSettings settings) {
        CdcStream stream = open(authority, servers, settings, Clock.systemUTC(), EventPublisher.NONE);
        stream.start(address -> false);
        return stream;
    }

    /**
     * Recovers the sink and the saved position; {@link #start(Predicate)} then starts streaming. Status and
     * commands work in between (the stream shows {@code starting}), and listeners are added then.
     *
     * @param clock  gives the time of events, errors, state changes, snapshots and rates
     * @param events where the stream's timeline entries and state changes are published
     * @throws UncheckedIOException when the sink cannot be opened or recovered
     */
    public static CdcStream open(Authority authority, List<UpstreamUrl> servers, CdcSettings settings, Clock clock,
                                 EventPublisher events) {
        if (servers.isEmpty()) {
            throw new IllegalArgumentException("the CDC server list is empty");
        }
        Optional<CdcPosition> saved = authority.loadPosition(STREAM);
        ChangeListeners listeners = new ChangeListeners(clock);
        JsonlSink sink = null;
        List<String> recovered = List.of();
        if (settings.sink().isPresent()) {
            sink = new JsonlSink(settings.sink().get(), settings.sinkRotateBytes());
            recovered = recover(sink);
            listeners.add(sink, true);
        }
        AppliedPosition position = new AppliedPosition((gtids, server) -> authority.savePosition(STREAM, gtids,
                server), listeners, saved.map(CdcPosition::gtidSet), recovered);
        boolean snapshot = sink != null && (settings.snapshot() || !position.known());
        CdcStream stream = new CdcStream(authority, events, servers, settings, clock, sink, listeners, position,
                snapshot);
        LOG.info("cdc: starting; servers by weight: {}; {}; sink: {}; tables: {}",
                describe(FailoverPolicy.byWeight(servers)),
                saved.map(p -> "saved position " + p.gtidSet()).orElse("no saved position"),
                settings.sink().map(Object::toString).orElse("none"), settings.tables());
        return stream;
    }

    private static List<String> recover(JsonlSink sink) {
        JsonlSink.Recovery recovery;
        try {
            recovery = sink.recover();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the change sink " + sink.path() + ": " + e.getMessage(), e);
        }
        if (recovery.droppedBytes() > 0) {
            LOG.warn("cdc: the change sink {} ended in a half-written transaction ({} bytes) from an earlier crash; "
                    + "cut it off, it will be read again from the server", sink.path(), recovery.droppedBytes());
        }
        if (recovery.discardedPartialSnapshot()) {
            LOG.warn("cdc: discarded an unfinished snapshot from an earlier run; it will be taken again");
        }
        return recovery.gtids();
    }

    /**
     * Adds a listener, called after the change sink and the listeners added before it. Its failures are isolated
     * from the stream and the other listeners ({@link ChangeListener} says what a listener may do).
     *
     * @throws IllegalStateException once the stream has started
     */
    public void addListener(ChangeListener listener) {
        synchronized (lock) {
            if (started) {
                throw new IllegalStateException("listeners are added before the change stream starts");
            }
            listeners.add(listener, false);
        }
    }

    /**
     * Starts streaming on its own thread. {@code knownDown} is what the health loop knows:
     * {@code knownDown.test("host:port")} is true for a server it has marked down, and starting (also on
     * {@code START GANTRY REPLICATION}) begins with the highest-weight server not known to be down instead of
     * spending retries on one that is. Servers the health loop does not check count as up.
     */
    public void start(Predicate<String> knownDown) {
        this.knownDown = Objects.requireNonNull(knownDown, "knownDown");
        synchronized (lock) {
            started = true;
        }
        thread.start();
        long period = FLUSH_INTERVAL.toMillis();
        flusher.scheduleWithFixedDelay(this::checkpointQuietly, period, period, TimeUnit.MILLISECONDS);
    }

    // ---- commands --------------------------------------------------------------------------------------------

    /** {@code STOP GANTRY REPLICATION}: ends the stream and saves the position. Returns false if already stopped. */
    public boolean stopReplication(String by) {
        synchronized (lock) {
            if (stopRequested) {
                return false;
            }
            stopRequested = true;
            interruptLocked("STOP GANTRY REPLICATION by '" + by + "'");
        }
        recordEvent(null, EventKind.CDC_STOPPED, "STOP GANTRY REPLICATION by '" + by + "'; position "
                + positionText());
        return true;
    }

    /**
     * {@code START GANTRY REPLICATION}: streams again, from the highest-weight server that answers. Returns false if
     * it was not stopped.
     */
    public boolean startReplication(String by) {
        synchronized (lock) {
            if (!stopRequested) {
                return false;
            }
            stopRequested = false;
            restartFromTop = true;
            announceRestart = true;
            commandReason = "START GANTRY REPLICATION by '" + by + "'";
            lock.notifyAll();
        }
        return true;
    }

    /**
     * {@code ALTER GANTRY CHANGE CDC TO}: keeps streaming without a pause when the current server is on the new list;
     * otherwise moves to the highest-weight server of the new list.
     */
    public void changeServers(List<UpstreamUrl> newServers, String by) {
        if (newServers.isEmpty()) {
            throw new IllegalArgumentException("the CDC server list cannot be empty");
        }
        synchronized (lock) {
            servers = List.copyOf(newServers);
            UpstreamUrl current = active;
            if (current != null && newServers.stream().noneMatch(u -> u.address().equals(current.address()))) {
                restartFromTop = true;
                announceRestart = false;
                interruptLocked("ALTER GANTRY CHANGE CDC by '" + by + "' removed " + current.address());
            } else if (current == null) {
                // Between servers (or stopped): whatever was being tried may have left the list.
                restartFromTop = true;
                announceRestart = false;
                interruptLocked("ALTER GANTRY CHANGE CDC by '" + by + "'");
            }
        }
    }

    private void interruptLocked(String reason) {
        commandReason = reason;
        lock.notifyAll();
        if (session != null) {
            session.disconnect();
        }
    }

    // ---- status ----------------------------------------------------------------------------------------------

    /** The server streamed from now, if any ({@code active_cdc} in {@code gantry.upstream_servers}). */
    public Optional<String> activeServer() {
        UpstreamUrl current = active;
        return current == null ? Optional.empty() : Optional.of(current.address());
    }

    /** The applied position as text (empty before the first connection when nothing was saved). */
    public String positionText() {
        return position.text();
    }

    /** The applied position, once the first server's flavour has fixed it. */
    public Optional<GtidSet> position() {
        return position.current();
    }

    public Status status() {
        throughput.sample(position.counts());
        Throughput.Rates rates = throughput.rates();
        SnapshotProgress progress = snapshot;
        String snapshotText = state == State.SNAPSHOTTING && progress != null ? progress.describe() : snapshotSummary;
        return new Status(activeServer(), state, positionText(), snapshotText, rates.rows(), rates.transactions(),
                lastError);
    }

    // ---- the stream thread -----------------------------------------------------------------------------------

    private void run() {
        while (awaitNotStopped()) {
            List<UpstreamUrl> order = takeCommand();
            UpstreamUrl server = policy.next(order, knownDown);
            Failure failure = streamFrom(server);
            if (failure != null) {
                failedOn(server, order, failure);
            }
        }
    }

    /** Why an attempt on a server failed; {@code retryable} false when retrying it cannot help. */
    private record Failure(String reason, boolean retryable) {
    }

    /** Takes a pending restart command into the policy; returns the server list by weight. */
    private List<UpstreamUrl> takeCommand() {
        synchronized (lock) {
            if (restartFromTop) {
                restartFromTop = false;
                policy.restart(commandReason, announceRestart);
            }
            commandReason = null;
            return FailoverPolicy.byWeight(servers);
        }
    }

    /** Streams from {@code server} until the stream ends: null when a command ended it, else why it failed. */
    private Failure streamFrom(UpstreamUrl server) {
        try {
            attempt(server);
            return commandPending() ? null : new Failure("the server closed the binlog connection", true);
        } catch (MissingTransactionsException e) {
            if (policy.firstSkipOf(server)) {
                recordEvent(server.address(), EventKind.CDC_SKIPPED, e.getMessage());
            }
            LOG.warn("cdc: {}", e.getMessage());
            return new Failure(e.getMessage(), false);
        } catch (ChangeListeners.RequiredListenerFailed e) {
            stopForGood(e);
            return null;
        } catch (Exception e) {
            return commandPending() ? null : new Failure(describe(e), true);
        } finally {
            active = null;
        }
    }

    /** Reports a failed attempt and waits as the policy says before the next one. */
    private void failedOn(UpstreamUrl server, List<UpstreamUrl> order, Failure failure) {
        // A skip's reason names the server already.
        lastError = stamped(failure.retryable() ? server.address() + ": " + failure.reason() : failure.reason());
        enter(State.RETRYING, server, failure.reason());
        FailoverPolicy.Next next = policy.failed(order, failure.reason(), failure.retryable());
        if (next instanceof FailoverPolicy.Retry retry) {
            LOG.atWarn().addKeyValue("server", server.address())
                    .log("cdc: {} failed ({}); retry {} of {}", server.address(), failure.reason(), retry.retry(),
                            retry.retries());
        } else if (failure.retryable()) {
            LOG.atWarn().addKeyValue("server", server.address())
                    .log("cdc: {} failed ({}); {} retries used, moving on", server.address(), failure.reason(),
                            settings.connectRetries());
        }
        if (next instanceof FailoverPolicy.MoveOn move && move.roundFailed()) {
            LOG.warn("cdc: no CDC server can serve the stream now ({} tried); trying again in {} ms",
                    order.size(), move.pause().toMillis());
        }
        pause(next.pause());
    }

    /** Waits while the stream is stopped, telling the listeners; false once the stream is closed. */
    private boolean awaitNotStopped() {
        String reason;
        synchronized (lock) {
            if (closed || !stopRequested) {
                return !closed;
            }
            reason = commandReason;
        }
        active = null;
        enter(State.STOPPED, null, reason == null ? "stopped" : reason);
        synchronized (lock) {
            while (stopRequested && !closed) {
                waitLocked(Duration.ZERO);
            }
            return !closed;
        }
    }

    /** One attempt on one server: check it, snapshot if one is due, then stream until the stream ends. */
    private void attempt(UpstreamUrl server) throws Exception {
        BinlogSession candidate = BinlogSession.check(server, settings.connectTimeout());
        FailoverPolicy.Resume resume = FailoverPolicy.resume(server.address(),
                position.recover(candidate.flavour(), snapshotPending), candidate.binlogHolds(),
                candidate.currentPosition());
        if (resume instanceof FailoverPolicy.Lacking lacking) {
            throw new MissingTransactionsException(lacking.reason());
        }
        if (snapshotPending) {
            snapshot(server, candidate.flavour());
        } else if (resume instanceof FailoverPolicy.From from && from.fresh()) {
            position.startAt(from.position(), server.address());
            LOG.atInfo().addKeyValue("server", server.address())
                    .log("cdc: no saved position and no change sink: streaming from {}'s current position {}",
                            server.address(), from.position());
        }
        GtidSet start = position.current().orElseThrow();
        synchronized (lock) {
            if (commandReason != null || closed) {
                return;
            }
            session = candidate;
        }
        try {
            candidate.stream(start, binlogClientId, settings.tables(), new BinlogSession.Handler() {
                @Override
                public void connected() {
                    onStreaming(server, BinlogSession.startText(start));
                }

                @Override
                public void transaction(Gtid gtid, ChangeTransaction transaction) {
                    position.apply(gtid, transaction);
                }
            });
        } finally {
            synchronized (lock) {
                session = null;
            }
            checkpointQuietly();
        }
    }

    private void onStreaming(UpstreamUrl server, String from) {
        active = server;
        String address = server.address();
        FailoverPolicy.Arrival arrival = policy.streaming();
        if (arrival instanceof FailoverPolicy.FirstStart first) {
            enter(State.STREAMING, server, first.reason());
            LOG.info("cdc: streaming from {} ({}), from GTID {}", address, first.reason(), display(from));
            recordEvent(address, EventKind.CDC_STARTED, "streaming from " + address + " (" + first.reason()
                    + "), resuming after GTID " + display(from));
        } else if (arrival instanceof FailoverPolicy.Moved moved) {
            enter(State.STREAMING, server, moved.reason());
            LOG.warn("cdc: moved from {} to {} ({}), resuming after GTID {}", moved.from(), address, moved.reason(),
                    from);
            recordEvent(address, EventKind.CDC_MOVED, "CDC moved from " + moved.from() + " to " + address + ": "
                    + moved.reason() + "; resuming after GTID " + display(from));
        } else if (arrival instanceof FailoverPolicy.Restarted restarted) {
            enter(State.STREAMING, server, restarted.reason());
            LOG.info("cdc: streaming from {} again ({}), from GTID {}", address, restarted.reason(), display(from));
            recordEvent(address, EventKind.CDC_STARTED, restarted.reason() + ": streaming from " + address
                    + ", resuming after GTID " + display(from));
        } else {
            enter(State.STREAMING, server, "reconnected");
            LOG.info("cdc: streaming from {} again, from GTID {}", address, display(from));
        }
    }

    private void snapshot(UpstreamUrl server, Flavour flavour) throws Exception {
        SnapshotProgress progress = new SnapshotProgress(server.address(), clock);
        snapshot = progress;
        enter(State.SNAPSHOTTING, server, "a snapshot of " + settings.tables());
        Instant started = clock.instant();
        Snapshotter snapshotter = new Snapshotter(server, flavour, settings.tables(), progress,
                this::commandPending, clock);
        LOG.atInfo().addKeyValue("server", server.address())
                .log("cdc: taking a snapshot of {} from {}", settings.tables(), server.address());
        try (Connection connection = Snapshotter.open(server, settings.connectTimeout())) {
            Snapshotter.Start start = snapshotter.begin(connection);
            SnapshotWriter writer = sink.beginSnapshot(start.position());
            long rows;
            try {
                rows = snapshotter.copyTables(connection, start, writer::add);
                position.resetTo(GtidSet.parse(start.position(), flavour), server.address(), writer::commit);
            } catch (Exception e) {
                writer.abort();
                progress.finished("failed on " + server.address() + ": " + describe(e) + "; it will be taken "
                        + "again from the start");
                snapshotSummary = progress.describe();
                throw e;
            }
            snapshotPending = false;
            String summary = String.format(Locale.ROOT, "done: %d rows from %s at GTID %s in %.1f s", rows,
                    server.address(), display(start.position()),
                    Duration.between(started, clock.instant()).toMillis() / 1e3);
            progress.finished(summary);
            snapshotSummary = summary;
            LOG.info("cdc: snapshot {}", summary);
        }
    }

    // ---- helpers ---------------------------------------------------------------------------------------------

    /** Saves the position if it moved; a failure stops the stream for good. */
    private void checkpointQuietly() {
        if (stoppedForGood) {
            return; // nothing more is written, and the failure was reported once
        }
        try {
            position.checkpoint();
            throughput.sample(position.counts());
        } catch (RuntimeException e) {
            stopForGood(e);
        }
    }

    /**
     * The sink could not be written (disk full, permissions) or the position not saved: the stream stops, since
     * applying more would lose changes. What was applied in memory but not written is read again from a server
     * after a restart (the sink and the saved position agree on what was written).
     */
    private void stopForGood(RuntimeException e) {
        String message = e instanceof ChangeListeners.RequiredListenerFailed ? describe(e)
                : "saving the position failed: " + describe(e);
        synchronized (lock) {
            if (stoppedForGood) {
                return;
            }
            stoppedForGood = true;
            closed = true;
            interruptLocked(message);
        }
        LOG.error("cdc: {}; the stream is stopped: fix the cause, restart Gantry to resume from the saved position",
                message, e);
        lastError = stamped(message);
        active = null;
        enter(State.STOPPED, null, message);
        recordEvent(null, EventKind.CDC_STOPPED, message);
    }

    /** Sets the state and tells the listeners; never called holding {@code lock}. Stopped for good stays so. */
    private void enter(State next, UpstreamUrl server, String reason) {
        if (stoppedForGood && next != State.STOPPED) {
            return;
        }
        state = next;
        Optional<String> address = Optional.ofNullable(server).map(UpstreamUrl::address);
        position.announce(new StateChange(next, address, reason, clock.instant()));
        events.publish(new EngineEvent.StateChanged(address.orElse(null), "change stream " + next.displayName()
                + ": " + reason));
    }

    /** A timeline entry, published for the recorder to store and for subscribers to show. */
    private void recordEvent(String server, EventKind kind, String reason) {
        events.publish(new EngineEvent.Timeline(new Event(0, clock.instant(), server, kind, reason)));
    }

    private String stamped(String message) {
        return clock.instant().truncatedTo(ChronoUnit.SECONDS) + " " + message;
    }

    private void pause(Duration pause) {
        if (pause.isZero()) {
            return;
        }
        synchronized (lock) {
            if (commandReason == null && !closed) {
                waitLocked(pause);
            }
        }
    }

    private boolean commandPending() {
        synchronized (lock) {
            return commandReason != null || closed;
        }
    }

    private void waitLocked(Duration timeout) {
        try {
            lock.wait(timeout.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closed = true;
        }
    }

    private static String describe(List<UpstreamUrl> servers) {
        return String.join(", ", servers.stream().map(u -> u.address() + "|" + u.weight()).toList());
    }

    /** The first line of a failure's message, with its root cause when that says more ("Connection refused"). */
    static String describe(Throwable failure) {
        String message = firstLine(failure);
        Throwable root = failure;
        for (int depth = 0; depth < 20 && root.getCause() != null && root.getCause() != root; depth++) {
            root = root.getCause(); // bounded: a cause chain can loop back on itself
        }
        String cause = firstLine(root);
        return root == failure || message.contains(cause) ? message : message + ": " + cause;
    }

    private static String firstLine(Throwable failure) {
        String message = failure.getMessage() == null || failure.getMessage().isBlank() ? failure.toString()
                : failure.getMessage().strip();
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline).strip();
    }

    private static String display(String gtid) {
        return gtid.isEmpty() ? "(the start of the binlog)" : gtid;
    }

    /** Ends the stream, writes and saves what was applied, and closes the sink. */
    @Override
    public void close() {
        synchronized (lock) {
            if (closeCalled) {
                return;
            }
            closeCalled = true;
            closed = true;
            interruptLocked("Gantry is stopping");
        }
        try {
            thread.join(settings.connectTimeout().toMillis() * 2 + 1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        flusher.shutdownNow();
        checkpointQuietly();
        LOG.info("cdc: stopped; position saved: GTID {}", display(positionText()));
        if (sink != null) {
            try {
                sink.close();
            } catch (IOException e) {
                LOG.error("cdc: closing the change sink failed: {}", e.toString());
            }
        }
        active = null;
        enter(State.STOPPED, null, "Gantry is stopping");
    }

    /** A candidate server's binlog lacks transactions already applied: resuming there would skip them. */
    private static final class MissingTransactionsException extends Exception {
        MissingTransactionsException(String message) {
            super(message);
        }
    }
}
