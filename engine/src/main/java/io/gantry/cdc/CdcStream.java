package io.gantry.cdc;

import io.gantry.authority.Authority;
import io.gantry.authority.CdcPosition;
import io.gantry.authority.EventKind;
import io.gantry.events.EventPublisher;
import io.gantry.gtid.GtidSet;
import io.gantry.topology.UpstreamUrl;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
 * {@linkplain ChangeListener listeners}. {@link FailoverLoop} runs them on the stream's own thread,
 * {@link StreamSnapshot} takes snapshots, {@link PositionCheckpoints} saves the position, {@link StreamControl}
 * carries the commands to the thread and {@link StreamReport} reports status and events. This class puts them
 * together and is what the rest of Gantry calls. Time comes from the clock it is given.
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

    private final CdcSettings settings;
    private final JsonlSink sink;
    private final ChangeListeners listeners;
    private final AppliedPosition position;
    private final Throughput throughput;
    private final StreamControl control;
    private final StreamReport report;
    private final StreamSnapshot snapshot;
    private final PositionCheckpoints checkpoints;
    private final FailoverLoop loop;
    private final ScheduledExecutorService flusher;

    private CdcStream(long binlogClientId, EventPublisher events, List<UpstreamUrl> servers, CdcSettings settings,
                      Clock clock, JsonlSink sink, ChangeListeners listeners, AppliedPosition position,
                      boolean snapshotPending, SharedFeed feed) {
        this.settings = settings;
        this.sink = sink;
        this.listeners = listeners;
        this.position = position;
        this.throughput = new Throughput(clock);
        this.control = new StreamControl(servers);
        this.report = new StreamReport(events, clock, position, control);
        this.snapshot = new StreamSnapshot(settings, clock, sink, position, report, snapshotPending,
                feed == null ? () -> true : feed::mayWrite);
        this.checkpoints = new PositionCheckpoints(position, throughput, control, report);
        this.loop = new FailoverLoop(settings, control, report, snapshot, position, checkpoints, binlogClientId);
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
        Optional<String> saved = authority.loadPosition(STREAM).map(CdcPosition::gtidSet);
        // A stable id per data directory: a restarted Gantry replaces its own dump thread on the server instead
        // of leaving a second one behind.
        long binlogClientId = 0x4000_0000L | (authority.dataDir().toAbsolutePath().hashCode() & 0x3FFF_FFFFL);
        return open(saved, (gtids, server) -> authority.savePosition(STREAM, gtids, server), null, binlogClientId,
                servers, settings, clock, events);
    }

    /**
     * Opens a stream on a cluster's shared feed ({@link SharedFeed}): its sink (the same file for every instance)
     * is recovered now, its position is the feed's, and it writes the sink only while {@link SharedFeed#mayWrite()}
     * says this instance owns the feed; a write or a save refused for that stops it for good.
     *
     * @param binlogClientId the server id its binlog connections use, other than the instance's own stream's
     */
    public static CdcStream openShared(SharedFeed feed, long binlogClientId, List<UpstreamUrl> servers,
                                       CdcSettings settings, Clock clock, EventPublisher events) {
        if (settings.sink().isEmpty()) {
            throw new IllegalArgumentException("a shared feed needs a sink");
        }
        return open(feed.savedPosition(), feed::savePosition, feed, binlogClientId, servers, settings, clock, events);
    }

    private static CdcStream open(Optional<String> saved, AppliedPosition.Store store, SharedFeed feed,
                                  long binlogClientId, List<UpstreamUrl> servers, CdcSettings settings, Clock clock,
                                  EventPublisher events) {
        if (servers.isEmpty()) {
            throw new IllegalArgumentException("the CDC server list is empty");
        }
        ChangeListeners listeners = new ChangeListeners(clock);
        JsonlSink sink = null;
        List<String> recovered = List.of();
        if (settings.sink().isPresent()) {
            sink = new JsonlSink(settings.sink().get(), settings.sinkRotateBytes());
            recovered = recover(sink);
            listeners.add(feed == null ? sink : new OwnedSink(sink, feed), true);
        }
        AppliedPosition position = new AppliedPosition(store, listeners, saved, recovered);
        boolean snapshot = sink != null && (settings.snapshot() || !position.known());
        CdcStream stream = new CdcStream(binlogClientId, events, servers, settings, clock, sink, listeners, position,
                snapshot, feed);
        LOG.info("cdc: starting; servers by weight: {}; {}; sink: {}{}; tables: {}",
                UpstreamUrl.addressesAndWeights(FailoverPolicy.byWeight(servers)),
                saved.map(p -> "saved position " + p).orElse("no saved position"),
                settings.sink().map(Object::toString).orElse("none"), feed == null ? "" : " (the cluster's feed)",
                settings.tables());
        return stream;
    }

    /** The sink of a shared feed: written only while this instance owns the feed. */
    private record OwnedSink(JsonlSink sink, SharedFeed feed) implements ChangeListener {

        @Override
        public void onTransaction(AppliedTransaction transaction) {
            sink.onTransaction(transaction); // buffers only
        }

        @Override
        public void makeDurable() throws IOException {
            if (!feed.mayWrite()) {
                throw new IOException("this instance no longer owns the cluster's change feed: it writes no more");
            }
            sink.makeDurable();
        }

        @Override
        public void positionSaved() throws IOException {
            sink.positionSaved();
        }
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
        control.addListener(listeners, listener);
    }

    /**
     * Starts streaming on its own thread. {@code knownDown} is what the health loop knows:
     * {@code knownDown.test("host:port")} is true for a server it has marked down, and starting (also on
     * {@code START GANTRY REPLICATION}) begins with the highest-weight server not known to be down instead of
     * spending retries on one that is. Servers the health loop does not check count as up.
     */
    public void start(Predicate<String> knownDown) {
        loop.knownDown(knownDown);
        control.markStarted();
        loop.start();
        long period = FLUSH_INTERVAL.toMillis();
        flusher.scheduleWithFixedDelay(checkpoints::checkpointQuietly, period, period, TimeUnit.MILLISECONDS);
    }

    // ---- commands --------------------------------------------------------------------------------------------

    /** {@code STOP GANTRY REPLICATION}: ends the stream and saves the position. Returns false if already stopped. */
    public boolean stopReplication(String by) {
        if (!control.stop("STOP GANTRY REPLICATION by '" + by + "'")) {
            return false;
        }
        report.recordEvent(null, EventKind.CDC_STOPPED, "STOP GANTRY REPLICATION by '" + by + "'; position "
                + positionText());
        return true;
    }

    /**
     * {@code START GANTRY REPLICATION}: streams again, from the highest-weight server that answers. Returns false if
     * it was not stopped.
     */
    public boolean startReplication(String by) {
        return control.restart("START GANTRY REPLICATION by '" + by + "'");
    }

    /**
     * Stops streaming so that a Gantry taking over goes on from here: waits for the stream's thread to stop, then
     * writes the sink and saves the position, so that the next writer of both starts where this one ended.
     *
     * @return whether it stopped the stream (false if it was stopped already: {@link #resumeAfterHandOver} then leaves
     *         it so)
     * @throws TimeoutException when the thread did not stop within {@code wait}; the stream is
     *         then started again
     */
    public boolean pauseForHandOver(String reason, Duration wait)
            throws InterruptedException, TimeoutException {
        boolean stoppedNow = control.stop(reason);
        long deadline = System.nanoTime() + wait.toNanos();
        while (report.state() != State.STOPPED && !control.stoppedForGood()) {
            if (System.nanoTime() > deadline) {
                if (stoppedNow) {
                    control.restart("the take-over did not happen: " + reason);
                }
                throw new TimeoutException("the change stream did not stop within "
                        + wait.toMillis() + " ms");
            }
            Thread.sleep(10);
        }
        checkpoints.checkpointQuietly();
        LOG.info("cdc: paused for a take-over; position saved: GTID {}", StreamReport.display(positionText()));
        return stoppedNow;
    }

    /** Streams again after {@link #pauseForHandOver} stopped it, when the take-over did not happen. */
    public void resumeAfterHandOver(String reason) {
        control.restart(reason);
    }

    /**
     * {@code ALTER GANTRY CHANGE CDC TO}: keeps streaming without a pause when the current server is on the new list;
     * otherwise moves to the highest-weight server of the new list.
     */
    public void changeServers(List<UpstreamUrl> newServers, String by) {
        if (newServers.isEmpty()) {
            throw new IllegalArgumentException("the CDC server list cannot be empty");
        }
        control.changeServers(newServers, report.active(), by);
    }

    // ---- status ----------------------------------------------------------------------------------------------

    /** Whether the stream stopped for good: its sink or a position save failed (docs/change-stream.md, "Limits"). */
    public boolean stoppedForGood() {
        return control.stoppedForGood();
    }

    /** The server streamed from now, if any ({@code active_cdc} in {@code gantry.upstream_servers}). */
    public Optional<String> activeServer() {
        UpstreamUrl current = report.active();
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
        State state = report.state();
        return new Status(activeServer(), state, positionText(), snapshot.describe(state), rates.rows(),
                rates.transactions(), report.lastError());
    }

    /** How long the stream's thread may take to stop: a binlog connection being made may first have to fail. */
    public Duration stopWait() {
        return settings.connectTimeout().multipliedBy(2).plusSeconds(1);
    }

    /** Ends the stream, writes and saves what was applied, and closes the sink. */
    @Override
    public void close() {
        if (!control.close("Gantry is stopping")) {
            return;
        }
        try {
            loop.join(stopWait().toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        flusher.shutdownNow();
        checkpoints.checkpointQuietly();
        LOG.info("cdc: stopped; position saved: GTID {}", StreamReport.display(positionText()));
        if (sink != null) {
            try {
                sink.close();
            } catch (IOException e) {
                LOG.error("cdc: closing the change sink failed: {}", e.toString());
            }
        }
        report.inactive();
        report.enter(State.STOPPED, null, "Gantry is stopping");
    }
}
