package io.gantry.proxy.pipeline;

import static io.gantry.proxy.session.SessionContext.LOG;

import io.gantry.gtid.MariaDbGtidSet;
import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.BackendFailure;
import io.gantry.proxy.execution.AnswerChecksum;
import io.gantry.proxy.execution.PrimaryWait;
import io.gantry.proxy.execution.ReadOnlyRefusal;
import io.gantry.proxy.execution.SessionBackends;
import io.gantry.proxy.session.CommitOutcome;
import io.gantry.proxy.session.InDoubtCommits;
import io.gantry.proxy.session.LogText;
import io.gantry.proxy.session.OwnStatement;
import io.gantry.proxy.session.ReplayCounts;
import io.gantry.proxy.session.Reply;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.session.SessionErrors;
import io.gantry.proxy.state.TransactionLog;
import io.gantry.route.StatementKind;
import io.gantry.route.TransactionEffects;
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
import java.util.ArrayList;
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

        /** The kept COM_STMT_EXECUTE {@code payload} as a binlog would log it, or null when that cannot be told. */
        OwnStatement asLogged(byte[] payload);
    }

    private final SessionContext session;
    private final SessionBackends backends;
    private final Upstreams upstreams;
    private final PrimaryWait primaryWait;
    private final ReplayCounts counts;
    private final InDoubtCommits inDoubtCommits;
    private final Duration timeout;
    private final StatementPipeline pipeline;
    /** The session's event loop: where a loss's tally is published. */
    private final EventLoop loop;
    private Executions executions;

    TransactionReplay(SessionContext session, SessionBackends backends, Upstreams upstreams, PrimaryWait primaryWait,
                      ReplayCounts counts, InDoubtCommits inDoubtCommits, Duration timeout, StatementPipeline pipeline,
                      EventLoop loop) {
        this.session = session;
        this.backends = backends;
        this.upstreams = upstreams;
        this.primaryWait = primaryWait;
        this.counts = counts;
        this.inDoubtCommits = inDoubtCommits;
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
     * The connection was lost while {@code trip}'s statement was on its way, before any of its answer reached the
     * client. A statement that leaves the transaction open runs again after the transaction's replay. A statement
     * that may have committed is never run blindly again: a {@code COMMIT} (or an autocommit write) waits for the new
     * primary, which says whether it committed ({@link InDoubt}); a {@code ROLLBACK} has rolled back either way; any
     * other (a statement that commits implicitly) ends the session saying its outcome is unknown.
     */
    void lostBeforeAnswer(StatementTrip trip, BackendConnection connection, BackendFailure failure) {
        String lost = "the connection to " + connection.server().address() + " was lost (" + failure.getMessage()
                + ")";
        if (trip.autocommitWrite()) {
            backends.forget(connection);
            new InDoubt(trip, connection, lost, failure).startUnlessFrozen();
            return;
        }
        if (session.transactionLog().keptNothingBefore() && (!trip.mayEndTransaction() || (trip.routed() != null
                && trip.routed().statement().kind() == StatementKind.TRANSACTION_BEGIN))) {
            // The statement was the transaction's first (a BEGIN with none open): nothing of it is lost.
            backends.forget(connection);
            LOG.atInfo().addKeyValue("session", session.id()).addKeyValue("server", connection.server().address())
                    .log("session {}: {} under the first statement of its transaction; running it again on the "
                            + "primary", session.id(), lost);
            session.finish(trip.run(trip.again(), trip.holdUntil()));
            return;
        }
        if (!trip.mayEndTransaction()) {
            if (!backends.letGoForReplay(connection, lost)) {
                session.backendFailed(connection.server(), failure);
                return;
            }
            LOG.atInfo().addKeyValue("session", session.id()).addKeyValue("server", connection.server().address())
                    .log("session {}: {} during its transaction; replaying the transaction on the primary, then the "
                            + "statement", session.id(), lost);
            session.finish(trip.run(trip.again(), trip.holdUntil()));
            return;
        }
        String text = trip.text();
        if (text != null && TransactionEffects.isPlainRollback(text) && backends.letGoForReplay(connection, lost)) {
            session.transactionLog().clear();
            counts.ended(ReplayCounts.Outcome.ROLLED_BACK, connection.server().address(), loop);
            LOG.atInfo().addKeyValue("session", session.id()).addKeyValue("server", connection.server().address())
                    .log("session {}: {} while its ROLLBACK was on its way; the transaction is rolled back either "
                            + "way", session.id(), lost);
            session.statusFrom(connection.server(), autocommitStatus());
            session.finish(Reply.OK);
            return;
        }
        if (text != null && TransactionEffects.isPlainCommit(text) && backends.letGoForReplay(connection, lost)) {
            new InDoubt(trip, connection, lost, failure).startUnlessFrozen();
            return;
        }
        counts.ended(ReplayCounts.Outcome.COMMIT_UNKNOWN, connection.server().address(), loop);
        inDoubtCommits.counted(InDoubtCommits.Found.UNKNOWN);
        session.transactionLog().clear();
        backends.forget(connection);
        LOG.atWarn().addKeyValue("session", session.id()).addKeyValue("server", connection.server().address())
                .log("session {}: {} while a statement that commits was on its way; whether it committed is not "
                        + "known, so it is not replayed; ending the session", session.id(), lost);
        SessionContext.releaseIfHeld(trip.command());
        session.sendErrorAndClose(1, SessionErrors.transactionNotReplayed(lost, "a statement that commits was sent "
                + "and no answer came, so whether the transaction committed is not known; look before running it "
                + "again"));
    }

    /** The status of an OK that ends the session's transaction. */
    private int autocommitStatus() {
        return session.routeState().autocommit() ? ServerStatus.SERVER_STATUS_AUTOCOMMIT : 0;
    }

    /**
     * A {@code COMMIT} of a transaction Gantry can replay, or an autocommit write, whose connection was lost on its
     * way: it waits for the new primary, and Gantry reads there what was logged after the old primary's position
     * from before it was sent ({@link InDoubtCommits}). Committed: the COMMIT gets its OK (an autocommit write, whose
     * answer held counts Gantry cannot know, gets an error saying it committed). Not committed: the transaction is
     * replayed and the COMMIT runs again, or the write runs again. Cannot be told: the session ends saying so.
     */
    private final class InDoubt {
        private final StatementTrip trip;
        private final UpstreamServer lostServer;
        /** The lost connection's thread on its server: ended there first when that server is the primary still. */
        private final long lostThreadId;
        private final String lostWhy;
        private final BackendFailure failure;
        /** From when it was sent: a client waits for its answer at most the timeout, the wait for a primary included. */
        private final long deadline;
        private final String what;

        InDoubt(StatementTrip trip, BackendConnection lost, String lostWhy, BackendFailure failure) {
            this.trip = trip;
            this.lostServer = lost.server();
            this.lostThreadId = lost.serverThreadId();
            this.lostWhy = lostWhy;
            this.failure = failure;
            this.deadline = trip.sentNanos() + timeout.toNanos();
            this.what = trip.autocommitWrite() ? "write" : "COMMIT";
        }

        /**
         * Starts finding out, unless the server was marked down for not answering and still accepts connections: it
         * may be frozen (SIGSTOP, a hung host) with the statement in its socket, and run it when it wakes, after
         * any answer Gantry gave. One that refuses connections is gone, and what it committed is all there is.
         */
        void startUnlessFrozen() {
            if (!failure.serverMarkedDown()) {
                start();
                return;
            }
            inDoubtCommits.whenListening(lostServer, loop, listening -> {
                if (session.isClosed()) {
                    return;
                }
                if (listening) {
                    settle(null, new CommitOutcome.Unknown(lostServer.address() + " stopped answering but still "
                            + "accepts connections: it may be frozen, and run it when it wakes"));
                } else {
                    start();
                }
            });
        }

        void start() {
            LOG.atInfo().addKeyValue("session", session.id()).addKeyValue("server", lostServer.address())
                    .log("session {}: {} while its {} was on its way; waiting for the new primary to find out "
                            + "whether it committed", session.id(), lostWhy, what);
            awaitPrimary(lostServer);
        }

        private void awaitPrimary(UpstreamServer notThis) {
            primaryWait.awaitForReplay(notThis, "session " + session.id() + " finds out whether its " + what
                    + " committed after " + lostWhy, deadline, this::onPrimary, () -> settle(null,
                    new CommitOutcome.Unknown("no primary was found within " + timeout.toMillis() + " ms "
                            + "(--transaction-replay-timeout-ms)")), () -> {
                    });
        }

        private void onPrimary() {
            UpstreamServer primary = upstreams.primaryOrNull();
            if (primary == null) {
                awaitPrimary(null);
                return;
            }
            if (!(trip.sentAfter() instanceof MariaDbGtidSet before)) {
                settle(primary, new CommitOutcome.Unknown(trip.sentAfter() == null ? "the old primary's position "
                        + "from before it was sent is not known" : "finding it out is done on MariaDB only"));
                return;
            }
            long left = Math.max(TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()), 1000);
            inDoubtCommits.find(primary, primary == lostServer ? lostThreadId : -1, before, ownStatements(),
                    Duration.ofMillis(left), loop,
                    outcome -> settle(primary, outcome), readFailed -> {
                        if (InDoubtCommits.unreachable(readFailed) && System.nanoTime() - deadline < 0
                                && !session.isClosed()) {
                            awaitPrimary(primary); // gone too, or not marked down yet: the next primary then
                        } else {
                            settle(primary, new CommitOutcome.Unknown("the binlog of " + whichPrimary(primary) + " "
                                    + primary.address() + " could not be read (" + readFailed.getMessage() + ")"));
                        }
                    });
        }

        /** The statements the session sent in it, as the server's binlog would log them; null if one cannot be. */
        private List<OwnStatement> ownStatements() {
            List<OwnStatement> own = new ArrayList<>();
            if (!trip.autocommitWrite()) {
                for (TransactionLog.Entry entry : session.transactionLog().entries()) {
                    byte[] command = entry.command();
                    OwnStatement logged = command[0] == CommandType.COM_QUERY.code()
                            ? OwnStatement.Text.ofComQuery(command)
                            : command[0] == CommandType.COM_STMT_EXECUTE.code() ? executions.asLogged(command) : null;
                    if (logged == null) {
                        return null;
                    }
                    own.add(logged);
                }
            }
            OwnStatement last = trip.asLogged();
            if (last == null) {
                return null;
            }
            own.add(last);
            return own;
        }

        /** How the log names the primary looked at: the same one, when only the connection was lost. */
        private String whichPrimary(UpstreamServer primary) {
            return primary == lostServer ? "the primary" : "the new primary";
        }

        private void settle(UpstreamServer primary, CommitOutcome outcome) {
            if (session.isClosed()) {
                return;
            }
            if (outcome instanceof CommitOutcome.NotCommitted) {
                inDoubtCommits.counted(InDoubtCommits.Found.NOT_COMMITTED);
                LOG.atInfo().addKeyValue("session", session.id()).addKeyValue("server", primary.address())
                        .log("session {}: its {} had not committed: {} {} has no trace of it; "
                                + "running it again{}", session.id(), what, whichPrimary(primary), primary.address(),
                                trip.autocommitWrite() ? "" : " after the transaction's replay");
                session.finish(trip.run(trip.again(), trip.holdUntil()));
            } else if (outcome instanceof CommitOutcome.Committed committed) {
                inDoubtCommits.counted(InDoubtCommits.Found.COMMITTED);
                session.consistency().committed(MariaDbGtidSet.of(committed.gtid()));
                if (trip.autocommitWrite()) {
                    LOG.atWarn().addKeyValue("session", session.id())
                            .log("session {}: its write had committed as {} before {}; its answer is lost, so "
                                    + "the session ends", session.id(), committed.gtid(), lostWhy);
                    session.sendErrorAndClose(1, SessionErrors.sessionEnded("Gantry: " + lostWhy + " while "
                            + "this write was on its way; it committed (as " + committed.gtid() + ", found on "
                            + whichPrimary(primary) + " " + primary.address() + "), but its answer is lost; this "
                            + "session is closed"));
                    return;
                }
                session.transactionLog().clear();
                counts.ended(ReplayCounts.Outcome.COMMIT_FOUND, primary.address(), loop);
                LOG.atInfo().addKeyValue("session", session.id()).addKeyValue("server", primary.address())
                        .log("session {}: its COMMIT had committed before {}: {} {} has it as {}; answering OK",
                                session.id(), lostWhy, whichPrimary(primary), primary.address(), committed.gtid());
                session.statusFrom(primary, autocommitStatus());
                session.finish(Reply.OK);
            } else if (outcome instanceof CommitOutcome.Unknown unknown) {
                inDoubtCommits.counted(InDoubtCommits.Found.UNKNOWN);
                LOG.atWarn().addKeyValue("session", session.id())
                        .log("session {}: whether its {} committed cannot be told: {}; ending the session",
                                session.id(), what, unknown.why());
                if (trip.autocommitWrite()) {
                    session.backendFailed(lostServer, failure);
                    return;
                }
                counts.ended(ReplayCounts.Outcome.COMMIT_UNKNOWN, lostServer.address(), loop);
                session.transactionLog().clear();
                session.sendErrorAndClose(1, SessionErrors.transactionNotReplayed(lostWhy, "its COMMIT was sent "
                        + "and no answer came, and whether it committed cannot be told (" + unknown.why()
                        + "); look before running it again"));
            }
        }
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
            backends.run(first, primary, connection -> send(connection, 0), unreachable -> {
                if (System.nanoTime() - deadline < 0) {
                    awaitPrimary(primary); // not marked down yet: wait for the health loop's next look
                } else {
                    fail(ReplayCounts.Outcome.FAILED, "the primary " + primary.address() + " could not be reached ("
                            + unreachable.getMessage() + ")");
                }
            });
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
