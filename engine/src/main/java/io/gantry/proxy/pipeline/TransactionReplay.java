package io.gantry.proxy.pipeline;

import static io.gantry.proxy.session.SessionContext.LOG;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.BackendFailure;
import io.gantry.proxy.execution.AnswerChecksum;
import io.gantry.proxy.execution.PrimaryWait;
import io.gantry.proxy.execution.ReadOnlyRefusal;
import io.gantry.proxy.execution.SessionBackends;
import io.gantry.proxy.session.LogText;
import io.gantry.proxy.session.ReplayCounts;
import io.gantry.proxy.session.Reply;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.session.SessionErrors;
import io.gantry.proxy.state.TransactionLog;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import io.gantry.wire.CommandType;
import io.gantry.wire.Packet;
import io.gantry.wire.ResponseFraming;
import io.gantry.wire.ServerStatus;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Runs a session's transaction again on a new primary after its connection to the old one was lost
 * ({@code --transaction-replay}), then the statement that was waiting: it waits for the primary (as a held write
 * does, up to {@code --transaction-replay-timeout-ms}), takes a connection there brought to the session's settings,
 * sends the statements the {@link TransactionLog} kept one after the other, and compares each answer's
 * {@link AnswerChecksum} with the one the client got. Every answer the same: the session goes on in the replayed
 * transaction, none the wiser. One different (another session changed the data meanwhile, a {@code NOW()}, an
 * auto-increment id taken by someone else): the replay's connection is closed, so its transaction rolls back, and
 * the session ends with an error saying why, as it would have ended without a replay; never a different result.
 * One per session, on its event loop; a replay runs while the session's command waits, so nothing else interleaves.
 */
public final class TransactionReplay {

    /**
     * How an execution of a prepared statement is sent again on a connection: prepared there first, with that
     * connection's statement id and parameter types.
     */
    public interface Executions {
        /**
         * Sends the kept COM_STMT_EXECUTE {@code payload} (with the client's statement id) on {@code connection}; its
         * answer goes to {@code answer}, or {@code refused} says why it could not be sent.
         */
        void replay(byte[] payload, BackendConnection connection, BackendConnection.ResponseListener answer,
                    Consumer<String> refused);
    }

    private final SessionContext session;
    private final SessionBackends backends;
    private final Upstreams upstreams;
    private final PrimaryWait primaryWait;
    private final ReplayCounts counts;
    private final Duration timeout;
    private final StatementPipeline pipeline;
    /** The session's event loop: where a loss's tally is published. */
    private final EventLoop loop;
    private Executions executions;

    TransactionReplay(SessionContext session, SessionBackends backends, Upstreams upstreams, PrimaryWait primaryWait,
                      ReplayCounts counts, Duration timeout, StatementPipeline pipeline, EventLoop loop) {
        this.session = session;
        this.backends = backends;
        this.upstreams = upstreams;
        this.primaryWait = primaryWait;
        this.counts = counts;
        this.timeout = timeout;
        this.pipeline = pipeline;
        this.loop = loop;
    }

    void executions(Executions value) {
        executions = value;
    }

    /** Whether a replay is due before the session's next statement, or one was cut short. */
    boolean due() {
        TransactionLog log = session.transactionLog();
        return log.replayDue() || log.replayCutShort() != null;
    }

    /**
     * Replays the transaction the log says is due, then runs {@code trip} (the statement that was waiting, not sent
     * yet) through the pipeline; or ends the session if the replay cannot be done.
     */
    Reply replayThen(StatementTrip trip) {
        TransactionLog log = session.transactionLog();
        String cutShort = log.replayCutShort();
        if (cutShort != null) {
            // The replay ended without a word (the new primary refused the session's settings): the transaction
            // is not open anywhere, so this statement must not run as if it were.
            counts.ended(ReplayCounts.Outcome.FAILED, null, loop);
            log.clear();
            SessionContext.releaseIfHeld(trip.command());
            return Reply.close(SessionErrors.transactionNotReplayed(cutShort, "the new primary refused the "
                    + "session's settings"));
        }
        Attempt attempt = new Attempt(trip, log.lostServer(), log.lostWhy(), System.nanoTime() + timeout.toNanos());
        log.replayStarted();
        // The waiting statement's packet is held by the replay too: in runs under load something let it go during
        // the wait (not found yet), and the statement then failed after the replay (see Attempt#ownPacketBack).
        trip.command().retain();
        session.markRunning();
        attempt.awaitPrimary(attempt.lostServer());
        return Reply.LATER;
    }

    /**
     * The transaction's connection was lost while {@code trip}'s statement was on its way, before any of its answer
     * reached the client. A statement that would have ended the transaction ({@code COMMIT}) may have committed:
     * it is never run blindly again, and the session ends saying its outcome is unknown. Any other statement runs
     * again after the replay.
     */
    void lostBeforeAnswer(StatementTrip trip, BackendConnection connection, BackendFailure failure) {
        String lost = "the connection to " + connection.server().address() + " was lost (" + failure.getMessage()
                + ")";
        if (trip.mayEndTransaction()) {
            counts.ended(ReplayCounts.Outcome.COMMIT_UNKNOWN, connection.server().address(), loop);
            session.transactionLog().clear();
            backends.forget(connection);
            LOG.atWarn().addKeyValue("session", session.id()).addKeyValue("server", connection.server().address())
                    .log("session {}: {} while its COMMIT (or a statement that commits) was on its way; whether it "
                            + "committed is not known, so it is not replayed; ending the session", session.id(), lost);
            SessionContext.releaseIfHeld(trip.command());
            session.sendErrorAndClose(1, SessionErrors.transactionNotReplayed(lost, "its COMMIT (or a statement "
                    + "that commits) was sent and no answer came, so whether the transaction committed is not known; "
                    + "look before running it again"));
            return;
        }
        if (!backends.letGoForReplay(connection, lost)) {
            session.backendFailed(connection.server(), failure);
            return;
        }
        LOG.atInfo().addKeyValue("session", session.id()).addKeyValue("server", connection.server().address())
                .log("session {}: {} during its transaction; replaying the transaction on the primary, then the "
                        + "statement", session.id(), lost);
        session.finish(trip.run(trip.again(), trip.holdUntil()));
    }

    /** One replay of the transaction, and the statement that waits for it. */
    private final class Attempt {
        private final StatementTrip trip;
        private final String lostServer;
        private final String lostWhy;
        private final long deadline;
        private final long started = System.nanoTime();
        private final AnswerChecksum checksum = new AnswerChecksum();

        Attempt(StatementTrip trip, String lostServer, String lostWhy, long deadline) {
            this.trip = trip;
            this.lostServer = lostServer;
            this.lostWhy = lostWhy;
            this.deadline = deadline;
        }

        /** The server whose connection was lost, if it is still one of Gantry's: the primary the replay avoids. */
        UpstreamServer lostServer() {
            return upstreams.find(lostServer).orElse(null);
        }

        /** Waits for a primary other than {@code notThis} (or that one again once the health loop looked), then runs. */
        void awaitPrimary(UpstreamServer notThis) {
            primaryWait.awaitForReplay(notThis, "session " + session.id() + " replays its transaction after "
                    + lostWhy, deadline, this::onPrimary, () -> fail(ReplayCounts.Outcome.FAILED, "no primary was "
                    + "found within " + timeout.toMillis() + " ms (--transaction-replay-timeout-ms)"), () -> {
                        ownPacketBack();
                        SessionContext.releaseIfHeld(trip.command());
                    });
        }

        private void onPrimary() {
            UpstreamServer primary = upstreams.primaryOrNull();
            if (primary == null) {
                awaitPrimary(null);
                return;
            }
            // The connection is brought to the session's settings as for the transaction's first statement (a held
            // SET TRANSACTION goes before it): a copy of it, never sent, stands for it. The waiting statement's own
            // packet stays the trip's.
            Packet first = new Packet(0, Unpooled.wrappedBuffer(session.transactionLog().entries().get(0).command()));
            backends.run(first, primary, connection -> send(connection, 0));
        }

        /** Sends statement {@code index} of the transaction on {@code connection}. */
        private void send(BackendConnection connection, int index) {
            checksum.reset();
            TransactionLog.Entry entry = session.transactionLog().entries().get(index);
            ReplayedAnswer answer = new ReplayedAnswer(connection, index);
            if (entry.command()[0] == CommandType.COM_STMT_EXECUTE.code()) {
                executions.replay(entry.command(), connection, answer, why -> {
                    connection.close();
                    backends.forget(connection);
                    fail(ReplayCounts.Outcome.FAILED, "statement " + (index + 1) + " could not be sent again: "
                            + why);
                });
            } else {
                connection.execute(new Packet(0, Unpooled.wrappedBuffer(entry.command())), answer);
            }
        }

        /** Every statement answered as before: the transaction is the session's again, and the statement runs. */
        /**
         * Gives back the reference the replay took on the waiting statement's packet; if another owner let it go
         * meanwhile (which should not happen), the replay's reference stands for it, and that is logged.
         */
        private void ownPacketBack() {
            Packet command = trip.command();
            if (command.refCnt() >= 2) {
                command.release();
                return;
            }
            LOG.atWarn().addKeyValue("session", session.id())
                    .log("session {}: the statement waiting for the replay had its packet let go meanwhile; the "
                            + "replay's own reference keeps it (a fault of Gantry's, please report it)", session.id());
        }

        private void replayed(BackendConnection connection, int status) {
            ownPacketBack();
            session.transactionLog().replayEnded();
            backends.replayedOn(connection, status);
            counts.ended(ReplayCounts.Outcome.REPLAYED, connection.server().address(), loop);
            LOG.atInfo().addKeyValue("session", session.id()).addKeyValue("server", connection.server().address())
                    .log("session {}: replayed its transaction ({} statements) on {} in {} ms, every answer the same",
                            session.id(), session.transactionLog().entries().size(), connection.server().address(),
                            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
            try {
                session.finish(pipeline.run(trip));
            } catch (RuntimeException e) {
                // The statement must get an answer whatever went wrong: a client left waiting is the worst end.
                LOG.atError().addKeyValue("session", session.id()).setCause(e)
                        .log("session {}: the statement after the replay failed in Gantry", session.id());
                session.sendErrorAndClose(1, SessionErrors.transactionNotReplayed(lostWhy, "Gantry failed to run "
                        + "the statement after the replay (" + e + "); see its log"));
            }
        }

        /** The replay cannot be done: its connection goes (rolling back what it ran), and the session ends. */
        private void fail(ReplayCounts.Outcome outcome, String why) {
            ownPacketBack();
            counts.ended(outcome, lostServer, loop);
            session.transactionLog().clear();
            LOG.atWarn().addKeyValue("session", session.id())
                    .log("session {}: {}; its transaction could not be replayed: {}; ending the session",
                            session.id(), lostWhy, why);
            SessionContext.releaseIfHeld(trip.command());
            session.sendErrorAndClose(1, SessionErrors.transactionNotReplayed(lostWhy, why));
        }

        /** The answer to one replayed statement, checked against the one the client got. */
        private final class ReplayedAnswer implements BackendConnection.ResponseListener {
            private final BackendConnection connection;
            private final int index;
            private boolean refusedAsReadOnly;
            private boolean first = true;

            ReplayedAnswer(BackendConnection connection, int index) {
                this.connection = connection;
                this.index = index;
            }

            @Override
            public void onPacket(Packet packet, ResponseFraming framing) {
                if (first && framing.lastPacketKind() == ResponseFraming.PacketKind.ERR
                        && ReadOnlyRefusal.is(packet.payload())) {
                    refusedAsReadOnly = true;
                }
                first = false;
                checksum.add(packet, framing);
                packet.release();
            }

            @Override
            public void onBatchEnd() {
            }

            @Override
            public void onComplete(ResponseFraming framing) {
                List<TransactionLog.Entry> entries = session.transactionLog().entries();
                if (session.isClosed()) {
                    connection.close();
                    return;
                }
                if (refusedAsReadOnly) {
                    // Not the primary any more (or not yet): start again on the one the health loop finds next.
                    connection.close();
                    backends.forget(connection);
                    awaitPrimary(connection.server());
                    return;
                }
                TransactionLog.Entry entry = entries.get(index);
                if (checksum.value() != entry.answerChecksum()) {
                    connection.close();
                    backends.forget(connection);
                    fail(ReplayCounts.Outcome.CHECKSUM_MISMATCH, "statement " + (index + 1) + " of "
                            + entries.size() + " (" + LogText.abbreviate(text(entry)) + ") answered differently on "
                            + connection.server().address() + " than it did before");
                    return;
                }
                if (index + 1 < entries.size()) {
                    send(connection, index + 1);
                    return;
                }
                int status = framing.serverStatus();
                replayed(connection, status == ResponseFraming.NO_STATUS ? ServerStatus.SERVER_STATUS_IN_TRANS
                        : status);
            }

            @Override
            public void onFailure(BackendFailure failure) {
                backends.forget(connection);
                if (System.nanoTime() - deadline < 0) {
                    awaitPrimary(connection.server()); // the new primary went too: wait for the next
                } else {
                    fail(ReplayCounts.Outcome.FAILED, "the connection to " + connection.server().address()
                            + " failed during the replay (" + failure.getMessage() + ")");
                }
            }
        }
    }

    /** A kept statement, for the log and the error: a COM_QUERY's SQL after its command byte. */
    private static String text(TransactionLog.Entry entry) {
        byte[] command = entry.command();
        if (command[0] == CommandType.COM_STMT_EXECUTE.code()) {
            return "an execution of prepared statement " + ((command[1] & 0xFF) | (command[2] & 0xFF) << 8
                    | (command[3] & 0xFF) << 16 | (long) (command[4] & 0xFF) << 24);
        }
        return command.length > 1 ? new String(command, 1, command.length - 1, StandardCharsets.UTF_8) : "";
    }
}
