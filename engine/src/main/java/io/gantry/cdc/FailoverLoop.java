package io.gantry.cdc;

import io.gantry.authority.EventKind;
import io.gantry.gtid.Gtid;
import io.gantry.gtid.GtidSet;
import io.gantry.topology.UpstreamUrl;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The change stream's own thread: it takes the commands, asks the {@link FailoverPolicy} for a server, checks it,
 * takes a snapshot if one is due, streams its binlog into the {@link AppliedPosition} until the stream ends, and on a
 * failure reports it and waits as the policy says before the next attempt. Kept apart from {@link CdcStream}, whose
 * callers give commands and read status from other threads.
 */
final class FailoverLoop {

    private static final Logger LOG = LoggerFactory.getLogger(CdcStream.class);

    private final CdcSettings settings;
    private final FailoverPolicy policy;
    private final StreamControl control;
    private final StreamReport report;
    private final StreamSnapshot snapshot;
    private final AppliedPosition position;
    private final PositionCheckpoints checkpoints;
    private final long binlogClientId;
    private final Thread thread;
    private volatile Predicate<String> knownDown = address -> false;

    FailoverLoop(CdcSettings settings, StreamControl control, StreamReport report, StreamSnapshot snapshot,
                 AppliedPosition position, PositionCheckpoints checkpoints, long binlogClientId) {
        this.settings = settings;
        this.policy = new FailoverPolicy(settings.connectRetries(), "Gantry started");
        this.control = control;
        this.report = report;
        this.snapshot = snapshot;
        this.position = position;
        this.checkpoints = checkpoints;
        this.binlogClientId = binlogClientId;
        this.thread = new Thread(this::run, "gantry-cdc");
        this.thread.setDaemon(true);
    }

    /** What the health loop knows, as {@link CdcStream#start(Predicate)} takes it; set before {@link #start()}. */
    void knownDown(Predicate<String> knownDown) {
        this.knownDown = Objects.requireNonNull(knownDown, "knownDown");
    }

    void start() {
        thread.start();
    }

    /** Waits up to {@code millis} for the thread to end. */
    void join(long millis) throws InterruptedException {
        thread.join(millis);
    }

    private void run() {
        while (control.awaitNotStopped(this::stopped)) {
            List<UpstreamUrl> order = control.takeCommand(policy);
            UpstreamUrl server = policy.next(order, knownDown);
            Failure failure = streamFrom(server);
            if (failure != null) {
                failedOn(server, order, failure);
            }
        }
    }

    private void stopped(String reason) {
        report.inactive();
        report.enter(CdcStream.State.STOPPED, null, reason);
    }

    /** Why an attempt on a server failed; {@code retryable} false when retrying it cannot help. */
    private record Failure(String reason, boolean retryable) {
    }

    /** Streams from {@code server} until the stream ends: null when a command ended it, else why it failed. */
    private Failure streamFrom(UpstreamUrl server) {
        try {
            attempt(server);
            return control.commandPending() ? null : new Failure("the server closed the binlog connection", true);
        } catch (MissingTransactionsException e) {
            if (policy.firstSkipOf(server)) {
                report.recordEvent(server.address(), EventKind.CDC_SKIPPED, e.getMessage());
            }
            LOG.warn("cdc: {}", e.getMessage());
            return new Failure(e.getMessage(), false);
        } catch (ChangeListeners.RequiredListenerFailed e) {
            checkpoints.stopForGood(e);
            return null;
        } catch (Exception e) {
            return control.commandPending() ? null : new Failure(FailureText.describe(e), true);
        } finally {
            report.inactive();
        }
    }

    /** Reports a failed attempt and waits as the policy says before the next one. */
    private void failedOn(UpstreamUrl server, List<UpstreamUrl> order, Failure failure) {
        // A skip's reason names the server already.
        report.failed(failure.retryable() ? server.address() + ": " + failure.reason() : failure.reason());
        report.enter(CdcStream.State.RETRYING, server, failure.reason());
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
        control.pause(next.pause());
    }

    /** One attempt on one server: check it, snapshot if one is due, then stream until the stream ends. */
    private void attempt(UpstreamUrl server) throws Exception {
        BinlogSession candidate = BinlogSession.check(server, settings.connectTimeout());
        FailoverPolicy.Resume resume = FailoverPolicy.resume(server.address(),
                position.recover(candidate.flavour(), snapshot.pending()), candidate.binlogHolds(),
                candidate.currentPosition());
        if (resume instanceof FailoverPolicy.Lacking lacking) {
            throw new MissingTransactionsException(lacking.reason());
        }
        if (snapshot.pending()) {
            snapshot.take(server, candidate.flavour(), control::commandPending);
        } else if (resume instanceof FailoverPolicy.From from && from.fresh()) {
            position.startAt(from.position(), server.address());
            LOG.atInfo().addKeyValue("server", server.address())
                    .log("cdc: no saved position and no change sink: streaming from {}'s current position {}",
                            server.address(), from.position());
        }
        GtidSet start = position.current().orElseThrow();
        if (!control.attach(candidate)) {
            return;
        }
        try {
            candidate.stream(start, binlogClientId, settings.tables(), new BinlogSession.Handler() {
                @Override
                public void connected() {
                    report.streaming(server, policy.streaming(), BinlogSession.startText(start));
                }

                @Override
                public void transaction(Gtid gtid, ChangeTransaction transaction) {
                    position.apply(gtid, transaction);
                }
            });
        } finally {
            control.detach();
            checkpoints.checkpointQuietly();
        }
    }

    /** A candidate server's binlog lacks transactions already applied: resuming there would skip them. */
    private static final class MissingTransactionsException extends Exception {
        MissingTransactionsException(String message) {
            super(message);
        }
    }
}
