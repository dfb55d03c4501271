package io.gantry.cdc;

import com.github.shyiko.mysql.binlog.BinaryLogClient;
import io.gantry.authority.Authority;
import io.gantry.authority.CdcPosition;
import io.gantry.authority.EventKind;
import io.gantry.gtid.Flavour;
import io.gantry.gtid.Gtid;
import io.gantry.gtid.GtidSet;
import io.gantry.gtid.MariaDbGtidSet;
import io.gantry.topology.ServiceConnections;
import io.gantry.topology.UpstreamUrl;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The change stream: one binlog stream at a time, from the highest-weight CDC server that answers, applied to the
 * change sink with the position saved in the Authority.
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
 * sink is never repeated and what did not is read again.
 */
public final class CdcStream implements AutoCloseable {

    /** The name of this stream's row in {@code gantry.cdc_position}. */
    public static final String STREAM = "default";

    private static final Logger LOG = LoggerFactory.getLogger(CdcStream.class);
    private static final Duration FLUSH_INTERVAL = Duration.ofMillis(100);
    private static final Duration RETRY_PAUSE = Duration.ofMillis(200);
    private static final Duration ROUND_PAUSE = Duration.ofSeconds(1);
    private static final long HEARTBEAT_MILLIS = 1000;
    private static final Duration RATE_WINDOW = Duration.ofSeconds(10);
    /**
     * The binlog client logs every connection at INFO through java.util.logging, in its own format; Gantry logs
     * the same facts in words. Held here so the setting is not garbage-collected with the logger.
     */
    private static final java.util.logging.Logger BINLOG_CLIENT_LOG =
            java.util.logging.Logger.getLogger("com.github.shyiko.mysql.binlog");

    static {
        BINLOG_CLIENT_LOG.setLevel(java.util.logging.Level.WARNING);
    }

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

    private final Authority authority;
    private final CdcSettings settings;
    private final JsonlSink sink;
    private final long binlogClientId;
    private final Thread thread;
    private final ScheduledExecutorService flusher;

    // Commands and the server list, guarded by `lock`; the stream thread waits on it while stopped or pausing.
    private final Object lock = new Object();
    private List<UpstreamUrl> servers;
    private boolean stopRequested;
    private boolean restartFromTop;
    private boolean closed;
    private String commandReason;
    private BinaryLogClient client;

    // What has been applied, guarded by `applyLock`.
    private final Object applyLock = new Object();
    private final List<String> recoveredGtids;
    private final String savedPositionText;
    private GtidSet position;
    private String positionServer = "";
    private boolean dirty;
    private long rowsApplied;
    private long transactionsApplied;
    private final ArrayDeque<long[]> rateSamples = new ArrayDeque<>(); // {nanoTime, rows, transactions}

    private volatile Predicate<String> knownDown = address -> false;
    private volatile State state = State.STARTING;
    private volatile UpstreamUrl active;
    private volatile String lastError = "none";
    private volatile SnapshotProgress snapshot;
    private volatile String snapshotSummary;
    private volatile boolean snapshotPending;
    private volatile boolean writeFailed;
    private String lastStreamedFrom;
    private boolean streamedSinceFailure;
    private final Set<String> announcedSkips = new HashSet<>();

    private CdcStream(Authority authority, List<UpstreamUrl> servers, CdcSettings settings, JsonlSink sink,
                      List<String> recoveredGtids, String savedPositionText, boolean snapshotPending) {
        this.authority = authority;
        this.servers = List.copyOf(servers);
        this.settings = settings;
        this.sink = sink;
        this.recoveredGtids = recoveredGtids;
        this.savedPositionText = savedPositionText;
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
     * Recovers the sink and the saved position, then starts streaming on its own thread, taking every server as up.
     *
     * @throws UncheckedIOException when the sink cannot be opened or recovered; nothing is started
     */
    public static CdcStream start(Authority authority, List<UpstreamUrl> servers, CdcSettings settings) {
        CdcStream stream = open(authority, servers, settings);
        stream.start(address -> false);
        return stream;
    }

    /**
     * Recovers the sink and the saved position; {@link #start(Predicate)} then starts streaming. Status and
     * commands work in between (the stream shows {@code starting}).
     *
     * @throws UncheckedIOException when the sink cannot be opened or recovered
     */
    public static CdcStream open(Authority authority, List<UpstreamUrl> servers, CdcSettings settings) {
        if (servers.isEmpty()) {
            throw new IllegalArgumentException("the CDC server list is empty");
        }
        Optional<CdcPosition> saved = authority.loadPosition(STREAM);
        JsonlSink sink = null;
        List<String> recovered = List.of();
        if (settings.sink().isPresent()) {
            sink = new JsonlSink(settings.sink().get(), settings.sinkRotateBytes());
            JsonlSink.Recovery recovery;
            try {
                recovery = sink.recover();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot open the change sink " + settings.sink().get() + ": "
                        + e.getMessage(), e);
            }
            recovered = recovery.gtids();
            if (recovery.droppedBytes() > 0) {
                LOG.warn("cdc: the change sink {} ended in a half-written transaction ({} bytes) from an earlier "
                        + "crash; cut it off, it will be read again from the server", settings.sink().get(),
                        recovery.droppedBytes());
            }
            if (recovery.discardedPartialSnapshot()) {
                LOG.warn("cdc: discarded an unfinished snapshot from an earlier run; it will be taken again");
            }
        }
        boolean hasPosition = saved.isPresent() || !recovered.isEmpty();
        boolean snapshot = sink != null && (settings.snapshot() || !hasPosition);
        CdcStream stream = new CdcStream(authority, servers, settings, sink, recovered,
                saved.map(CdcPosition::gtidSet).orElse(null), snapshot);
        LOG.info("cdc: starting; servers by weight: {}; {}; sink: {}; tables: {}", describe(byWeight(servers)),
                saved.map(p -> "saved position " + p.gtidSet()).orElse("no saved position"),
                settings.sink().map(Object::toString).orElse("none"), settings.tables());
        return stream;
    }

    /**
     * Starts streaming on its own thread. {@code knownDown} is what the health loop knows:
     * {@code knownDown.test("host:port")} is true for a server it has marked down, and starting (also on
     * {@code START GANTRY REPLICATION}) begins with the highest-weight server not known to be down instead of
     * spending retries on one that is. Servers the health loop does not check count as up.
     */
    public void start(Predicate<String> knownDown) {
        this.knownDown = Objects.requireNonNull(knownDown, "knownDown");
        thread.start();
        long period = FLUSH_INTERVAL.toMillis();
        flusher.scheduleWithFixedDelay(this::flushQuietly, period, period, TimeUnit.MILLISECONDS);
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
        authority.recordEvent(Instant.now(), null, EventKind.CDC_STOPPED, "STOP GANTRY REPLICATION by '" + by
                + "'; position " + positionText());
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
                interruptLocked("ALTER GANTRY CHANGE CDC by '" + by + "' removed " + current.address());
            } else if (current == null) {
                // Between servers (or stopped): whatever was being tried may have left the list.
                restartFromTop = true;
                interruptLocked("ALTER GANTRY CHANGE CDC by '" + by + "'");
            }
        }
    }

    private void interruptLocked(String reason) {
        commandReason = reason;
        lock.notifyAll();
        BinaryLogClient current = client;
        if (current != null) {
            disconnectQuietly(current);
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
        synchronized (applyLock) {
            return position != null ? position.toString() : savedPositionText == null ? "" : savedPositionText;
        }
    }

    public Status status() {
        double rowsRate;
        double transactionRate;
        synchronized (applyLock) {
            sampleRatesLocked();
            long[] oldest = rateSamples.peekFirst();
            long[] newest = rateSamples.peekLast();
            double seconds = oldest == null ? 0 : (newest[0] - oldest[0]) / 1e9;
            rowsRate = seconds <= 0 ? 0 : (newest[1] - oldest[1]) / seconds;
            transactionRate = seconds <= 0 ? 0 : (newest[2] - oldest[2]) / seconds;
        }
        SnapshotProgress progress = snapshot;
        String snapshotText = state == State.SNAPSHOTTING && progress != null ? progress.describe() : snapshotSummary;
        return new Status(activeServer(), state, positionText(), snapshotText, rowsRate, transactionRate, lastError);
    }

    // ---- the stream thread -----------------------------------------------------------------------------------

    private void run() {
        UpstreamUrl next = null;
        String moveReason = "Gantry started";
        int failuresInRow = 0;
        while (true) {
            List<UpstreamUrl> order;
            synchronized (lock) {
                while (stopRequested && !closed) {
                    state = State.STOPPED;
                    active = null;
                    waitLocked(Duration.ZERO);
                }
                if (closed) {
                    return;
                }
                if (restartFromTop) {
                    restartFromTop = false;
                    next = null;
                    moveReason = commandReason;
                    failuresInRow = 0;
                }
                commandReason = null;
                order = byWeight(servers);
            }
            UpstreamUrl server = next == null ? firstNotKnownDown(order) : find(order, next);
            String failure = runOn(server, moveReason);
            if (failure == null) {
                continue; // a command ended the stream: the loop reads what to do next
            }
            failuresInRow++;
            next = after(order, server);
            // A move's reason starts with the failure of the server it left, then each server passed over.
            String why = server.address() + " failed: " + failure;
            moveReason = streamedSinceFailure || moveReason == null ? why : moveReason + "; then " + why;
            streamedSinceFailure = false;
            if (failuresInRow >= order.size()) {
                LOG.warn("cdc: no CDC server can serve the stream now ({} tried); trying again in {} ms",
                        order.size(), ROUND_PAUSE.toMillis());
                failuresInRow = 0;
                synchronized (lock) {
                    waitLocked(ROUND_PAUSE);
                }
            }
        }
    }

    /**
     * Streams from {@code server} until a command ends it (returns null) or it has failed
     * {@code 1 + connectRetries} times in a row (returns the last failure, in words).
     */
    private String runOn(UpstreamUrl server, String moveReason) {
        String failure = null;
        for (int attempt = 0; ; attempt++) {
            boolean[] streamed = {false};
            try {
                session(server, moveReason, streamed);
                if (commandPending()) {
                    return null;
                }
                failure = "the server closed the binlog connection";
            } catch (MissingTransactionsException e) {
                if (announcedSkips.add(server.address())) {
                    authority.recordEvent(Instant.now(), server.address(), EventKind.CDC_SKIPPED, e.getMessage());
                }
                LOG.warn("cdc: {}", e.getMessage());
                state = State.RETRYING;
                lastError = Instant.now().truncatedTo(ChronoUnit.SECONDS) + " " + e.getMessage();
                return e.getMessage();
            } catch (Exception e) {
                if (commandPending()) {
                    return null;
                }
                failure = describe(e);
            } finally {
                active = null;
            }
            state = State.RETRYING;
            if (streamed[0]) {
                attempt = 0; // it was streaming: this is a new failure, with its own retries
            }
            lastError = Instant.now().truncatedTo(ChronoUnit.SECONDS) + " " + server.address() + ": " + failure;
            if (attempt >= settings.connectRetries()) {
                LOG.warn("cdc: {} failed ({}); {} retries used, moving on", server.address(), failure,
                        settings.connectRetries());
                return failure;
            }
            LOG.warn("cdc: {} failed ({}); retry {} of {}", server.address(), failure, attempt + 1,
                    settings.connectRetries());
            synchronized (lock) {
                waitLocked(RETRY_PAUSE);
            }
            if (commandPending()) {
                return null;
            }
        }
    }

    /** One connection: check the server, snapshot if one is due, then stream until the stream ends. */
    private void session(UpstreamUrl server, String moveReason, boolean[] streamed) throws Exception {
        Flavour flavour;
        String currentPosition;
        // Both bounds are the connect timeout, so a hung server costs one timeout per attempt.
        try (Connection connection = ServiceConnections.open(server, settings.connectTimeout(),
                settings.connectTimeout());
             Statement statement = connection.createStatement()) {
            flavour = flavour(statement);
            requireRowBinlog(statement, server);
            GtidSet serverHas = GtidSet.parse(single(statement, flavour == Flavour.MARIADB
                    ? "SELECT @@GLOBAL.gtid_binlog_state" : "SELECT @@GLOBAL.gtid_executed"), flavour);
            currentPosition = single(statement, flavour == Flavour.MARIADB ? "SELECT @@GLOBAL.gtid_binlog_pos"
                    : "SELECT @@GLOBAL.gtid_executed");
            synchronized (applyLock) {
                recoverPositionLocked(flavour);
                if (position != null && !holdsAll(serverHas, position)) {
                    throw new MissingTransactionsException(server.address() + " lacks transactions the change "
                            + "stream already applied (it has " + serverHas + ", applied " + position
                            + "); not resuming from it");
                }
            }
        }
        if (snapshotPending) {
            snapshot(server, flavour);
        }
        synchronized (applyLock) {
            if (position == null) {
                position = GtidSet.parse(currentPosition, flavour);
                positionServer = server.address();
                dirty = true;
                LOG.info("cdc: no saved position and no change sink: streaming from {}'s current position {}",
                        server.address(), position);
            }
        }
        stream(server, flavour, moveReason, streamed);
    }

    private void stream(UpstreamUrl server, Flavour flavour, String moveReason, boolean[] streamed)
            throws Exception {
        String from = startText(flavour);
        BinaryLogClient binlog = new BinaryLogClient(server.host(), server.port(), server.user(), server.password());
        binlog.setServerId(binlogClientId);
        binlog.setKeepAlive(false);
        binlog.setConnectTimeout(settings.connectTimeout().toMillis());
        binlog.setHeartbeatInterval(HEARTBEAT_MILLIS);
        // Heartbeats come every second on an idle stream: three missed, or a connect timeout if that is longer,
        // means the server hangs or the network dropped us.
        int readTimeout = (int) Math.max(3 * HEARTBEAT_MILLIS, settings.connectTimeout().toMillis());
        binlog.setSocketFactory(() -> {
            Socket socket = new Socket();
            socket.setSoTimeout(readTimeout);
            return socket;
        });
        BinlogTls.apply(server, binlog);
        binlog.setEventDeserializer(BinlogRowValues.newEventDeserializer());
        binlog.setGtidSet(from);
        Exception[] failure = {null};
        TransactionAssembler assembler = new TransactionAssembler(server.address(), settings.tables(), this::apply);
        binlog.registerEventListener(event -> {
            if (failure[0] != null) {
                return; // nothing after a failed event may be applied
            }
            try {
                assembler.onEvent(event);
            } catch (RuntimeException e) {
                failure[0] = e;
                disconnectQuietly(binlog);
            }
        });
        binlog.registerLifecycleListener(new BinaryLogClient.AbstractLifecycleListener() {
            @Override
            public void onConnect(BinaryLogClient connected) {
                streamed[0] = true;
                onStreaming(server, moveReason, from);
            }

            @Override
            public void onCommunicationFailure(BinaryLogClient failed, Exception e) {
                failure[0] = failure[0] == null ? e : failure[0];
            }

            @Override
            public void onEventDeserializationFailure(BinaryLogClient failed, Exception e) {
                failure[0] = failure[0] == null ? e : failure[0];
                disconnectQuietly(failed);
            }
        });
        synchronized (lock) {
            if (commandReason != null || closed) {
                return;
            }
            client = binlog;
        }
        try {
            binlog.connect();
        } finally {
            synchronized (lock) {
                client = null;
            }
            flushQuietly();
        }
        if (failure[0] != null && !commandPending()) {
            throw failure[0];
        }
    }

    private void onStreaming(UpstreamUrl server, String why, String from) {
        String reason = why == null ? "restarted" : why;
        active = server;
        state = State.STREAMING;
        announcedSkips.clear();
        streamedSinceFailure = true;
        String previous = lastStreamedFrom;
        lastStreamedFrom = server.address();
        if (previous == null) {
            LOG.info("cdc: streaming from {} ({}), from GTID {}", server.address(), reason, from);
            authority.recordEvent(Instant.now(), server.address(), EventKind.CDC_STARTED, "streaming from "
                    + server.address() + " (" + reason + "), resuming after GTID " + display(from));
        } else if (!previous.equals(server.address())) {
            LOG.warn("cdc: moved from {} to {} ({}), resuming after GTID {}", previous, server.address(), reason,
                    from);
            authority.recordEvent(Instant.now(), server.address(), EventKind.CDC_MOVED, "CDC moved from " + previous
                    + " to " + server.address() + ": " + reason + "; resuming after GTID " + display(from));
        } else if (reason.startsWith("START")) {
            authority.recordEvent(Instant.now(), server.address(), EventKind.CDC_STARTED, reason + ": streaming "
                    + "from " + server.address() + ", resuming after GTID " + display(from));
        } else {
            LOG.info("cdc: streaming from {} again, from GTID {}", server.address(), from);
        }
    }

    private void snapshot(UpstreamUrl server, Flavour flavour) throws Exception {
        state = State.SNAPSHOTTING;
        SnapshotProgress progress = new SnapshotProgress(server.address(), Instant.now());
        snapshot = progress;
        long started = System.nanoTime();
        Snapshotter snapshotter = new Snapshotter(server, flavour, settings.tables(), progress,
                this::commandPending);
        LOG.info("cdc: taking a snapshot of {} from {}", settings.tables(), server.address());
        try (Connection connection = Snapshotter.open(server, settings.connectTimeout())) {
            Snapshotter.Start start = snapshotter.begin(connection);
            SnapshotWriter writer = sink.beginSnapshot(start.position());
            long rows;
            try {
                rows = snapshotter.copyTables(connection, start, writer::add);
                synchronized (applyLock) {
                    flushLocked();
                    writer.commit();
                    position = GtidSet.parse(start.position(), flavour);
                    positionServer = server.address();
                    authority.savePosition(STREAM, position.toString(), positionServer);
                    dirty = false;
                }
            } catch (Exception e) {
                writer.abort();
                progress.finished("failed on " + server.address() + ": " + describe(e) + "; it will be taken "
                        + "again from the start");
                snapshotSummary = progress.describe();
                throw e;
            }
            snapshotPending = false;
            String summary = String.format(Locale.ROOT, "done: %d rows from %s at GTID %s in %.1f s", rows,
                    server.address(), display(start.position()), (System.nanoTime() - started) / 1e9);
            progress.finished(summary);
            snapshotSummary = summary;
            LOG.info("cdc: snapshot {}", summary);
        }
    }

    // ---- applying --------------------------------------------------------------------------------------------

    private void apply(Gtid gtid, ChangeTransaction transaction) {
        synchronized (applyLock) {
            if (position.containsTransaction(gtid)) {
                return; // already applied: never twice
            }
            if (sink != null && !transaction.changes().isEmpty()) {
                sink.append(transaction);
            }
            position = position.with(gtid);
            positionServer = transaction.server();
            rowsApplied += transaction.changes().size();
            transactionsApplied++;
            dirty = true;
        }
    }

    private void flushQuietly() {
        if (writeFailed) {
            return; // stopped for good: nothing more is written, and the failure was reported once
        }
        try {
            synchronized (applyLock) {
                flushLocked();
                sampleRatesLocked();
            }
        } catch (RuntimeException e) {
            writeFailed(e);
        }
    }

    /** Sink first (written and fsynced), then the position: a crash in between is repaired by sink recovery. */
    private void flushLocked() {
        if (!dirty) {
            return;
        }
        try {
            if (sink != null) {
                sink.flush();
            }
            authority.savePosition(STREAM, position.toString(), positionServer);
            dirty = false;
            if (sink != null) {
                sink.rotateIfDue();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
    }

    /**
     * The sink could not be written (disk full, permissions) or the position not saved: the stream stops, since
     * applying more would lose changes. What was applied in memory but not written is read again from a server
     * after a restart (the sink and the saved position agree on what was written).
     */
    private void writeFailed(RuntimeException e) {
        if (writeFailed) {
            return;
        }
        writeFailed = true;
        String message = "writing the change sink or saving the position failed: " + describe(e);
        LOG.error("cdc: {}; the stream is stopped: fix the cause, restart Gantry to resume from the saved position",
                message, e);
        lastError = Instant.now().truncatedTo(ChronoUnit.SECONDS) + " " + message;
        synchronized (lock) {
            closed = true;
            interruptLocked(message);
        }
        state = State.STOPPED;
        authority.recordEvent(Instant.now(), null, EventKind.CDC_STOPPED, message);
    }

    private void recoverPositionLocked(Flavour flavour) {
        if (position != null) {
            if (position.flavour() != flavour) {
                throw new IllegalStateException("the change stream's position " + position + " is "
                        + position.flavour().displayName() + ", but this server is " + flavour.displayName());
            }
            return;
        }
        GtidSet recovered = null;
        if (savedPositionText != null) {
            recovered = GtidSet.parse(savedPositionText, flavour);
        }
        for (String text : recoveredGtids) {
            GtidSet fromSink = GtidSet.parse(text, flavour);
            recovered = recovered == null ? fromSink : recovered.union(fromSink);
        }
        if (recovered != null && !snapshotPending) {
            position = recovered;
            if (!recoveredGtids.isEmpty()) {
                dirty = true; // the sink was ahead of the saved position: save the union
            }
        }
    }

    private void sampleRatesLocked() {
        long now = System.nanoTime();
        rateSamples.addLast(new long[] {now, rowsApplied, transactionsApplied});
        while (rateSamples.size() > 2 && now - rateSamples.peekFirst()[0] > RATE_WINDOW.toNanos()) {
            rateSamples.removeFirst();
        }
    }

    // ---- helpers ---------------------------------------------------------------------------------------------

    /** MariaDB needs one GTID per domain to start from; MySQL takes the whole set. */
    private String startText(Flavour flavour) {
        synchronized (applyLock) {
            return flavour == Flavour.MARIADB ? ((MariaDbGtidSet) position).position().toString()
                    : position.toString();
        }
    }

    private static boolean holdsAll(GtidSet serverHas, GtidSet applied) {
        if (serverHas instanceof MariaDbGtidSet has && applied instanceof MariaDbGtidSet done) {
            return has.containsPerServer(done);
        }
        return serverHas.contains(applied);
    }

    private static Flavour flavour(Statement statement) throws SQLException {
        return single(statement, "SELECT VERSION()").contains("MariaDB") ? Flavour.MARIADB : Flavour.MYSQL;
    }

    private static void requireRowBinlog(Statement statement, UpstreamUrl server) throws SQLException {
        String format = single(statement, "SELECT @@GLOBAL.binlog_format");
        if (!"ROW".equalsIgnoreCase(format)) {
            throw new SQLException(server.address() + " has binlog_format=" + format + "; the change stream needs "
                    + "ROW");
        }
    }

    private static String single(Statement statement, String sql) throws SQLException {
        try (ResultSet rows = statement.executeQuery(sql)) {
            rows.next();
            String value = rows.getString(1);
            return value == null ? "" : value;
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

    static List<UpstreamUrl> byWeight(List<UpstreamUrl> servers) {
        List<UpstreamUrl> sorted = new ArrayList<>(servers);
        sorted.sort(Comparator.comparingInt(UpstreamUrl::weight).reversed()); // stable: list order breaks ties
        return sorted;
    }

    static UpstreamUrl after(List<UpstreamUrl> order, UpstreamUrl server) {
        for (int i = 0; i < order.size(); i++) {
            if (order.get(i).address().equals(server.address())) {
                return order.get((i + 1) % order.size());
            }
        }
        return order.get(0);
    }

    private UpstreamUrl firstNotKnownDown(List<UpstreamUrl> order) {
        return order.stream().filter(u -> !knownDown.test(u.address())).findFirst().orElse(order.get(0));
    }

    /** The server of {@code order} with this address (its weight may have changed), else the first. */
    private static UpstreamUrl find(List<UpstreamUrl> order, UpstreamUrl server) {
        return order.stream().filter(u -> u.address().equals(server.address())).findFirst().orElse(order.get(0));
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

    private static void disconnectQuietly(BinaryLogClient binlog) {
        try {
            binlog.disconnect();
        } catch (IOException e) {
            LOG.debug("cdc: disconnect: {}", e.toString());
        }
    }

    /** Ends the stream, writes and saves what was applied, and closes the sink. */
    @Override
    public void close() {
        synchronized (lock) {
            if (closed && !thread.isAlive()) {
                return;
            }
            closed = true;
            interruptLocked("Gantry is stopping");
        }
        try {
            thread.join(settings.connectTimeout().toMillis() * 2 + 1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        flusher.shutdownNow();
        flushQuietly();
        if (sink != null) {
            try {
                sink.close();
            } catch (IOException e) {
                LOG.error("cdc: closing the change sink failed: {}", e.toString());
            }
        }
        active = null;
        state = State.STOPPED;
    }

    /** A candidate server's binlog lacks transactions already applied: resuming there would skip them. */
    private static final class MissingTransactionsException extends Exception {
        MissingTransactionsException(String message) {
            super(message);
        }
    }
}
