package io.gantry.proxy.pipeline;

import static io.gantry.proxy.session.SessionContext.LOG;

import io.gantry.gtid.GtidSet;
import io.gantry.gtid.SampledPosition;
import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.BackendFailure;
import io.gantry.proxy.backend.InternalCommand;
import io.gantry.proxy.caching.CacheFill;
import io.gantry.proxy.caching.CachedReads;
import io.gantry.proxy.execution.AfterResponse;
import io.gantry.proxy.execution.CausalWait;
import io.gantry.proxy.execution.PrimaryWait;
import io.gantry.proxy.execution.ResponseForwarder;
import io.gantry.proxy.execution.SessionBackends;
import io.gantry.proxy.execution.SessionRouting;
import io.gantry.proxy.routing.ReadCounters;
import io.gantry.proxy.session.FailoverSettings;
import io.gantry.proxy.session.InDoubtCommits;
import io.gantry.proxy.session.ReplayCounts;
import io.gantry.proxy.session.Reply;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.session.SessionErrors;
import io.gantry.proxy.state.TransactionLog;
import io.gantry.route.ReplicaRefusal;
import io.gantry.route.SessionRouteState;
import io.gantry.route.StatementKind;
import io.gantry.route.TransactionState;
import io.gantry.topology.Role;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import io.gantry.wire.Packet;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The one way a session's statement goes to a server, whatever command carried it (a text, an execution of a prepared
 * statement, a part of a multi-statement text): route ({@link SessionRouting}); without a primary, wait for one
 * ({@link PrimaryWait}); note where the cache's capture went ({@link CachedReads#routed}); say what the statement may
 * do if its first try fails harmlessly (a read outside a transaction runs again elsewhere, once; a write outside one
 * that the primary refuses as read-only waits for the new primary); take a connection ({@link SessionBackends}); for a
 * read that must first see the session's writes, wait on its replica ({@link CausalWait}); forward
 * ({@link ResponseForwarder}). Each statement's state through all of it is its {@link StatementTrip}; every retry comes
 * back here with it.
 */
public final class StatementPipeline {

    private final SessionContext session;
    private final SessionBackends backends;
    private final SessionRouting routing;
    private final ResponseForwarder forwarder;
    private final CachedReads cachedReads;
    private final PrimaryWait primaryWait;
    private final Upstreams upstreams;
    private final ReadCounters readCounters;
    /**
     * What a read outside a transaction does when its server is marked down before it answered: it runs again
     * elsewhere, once ({@link SessionContext#mayRunElsewhere}). One per session, with the running trip in
     * {@link #lostTrip}, so that a read costs no closure for it.
     */
    private final Runnable runLostElsewhere = this::runLostElsewhere;
    private StatementTrip lostTrip;
    /** Runs the session's transaction again on a new primary when its connection was lost. */
    private final TransactionReplay replay;
    private final Duration replayTimeout;
    private final ReplayCounts replayCounts;

    /**
     * @param failover how long a statement waits for a primary ({@code --switchover-hold-ms}), and how a transaction
     *                 is replayed when its primary is lost ({@code --transaction-replay...})
     * @param loop     the session's event loop, where those waits poll
     */
    public StatementPipeline(SessionContext session, SessionBackends backends, SessionRouting routing,
                             ResponseForwarder forwarder, CachedReads cachedReads, Upstreams upstreams,
                             ReadCounters readCounters, FailoverSettings failover, ReplayCounts replayCounts,
                             InDoubtCommits inDoubtCommits, EventLoop loop) {
        this.session = session;
        this.backends = backends;
        this.routing = routing;
        this.forwarder = forwarder;
        this.cachedReads = cachedReads;
        this.upstreams = upstreams;
        this.readCounters = readCounters;
        this.primaryWait = new PrimaryWait(session, upstreams, failover.switchoverHold(), loop);
        this.replayTimeout = failover.replay().timeout();
        this.replayCounts = replayCounts;
        this.replay = new TransactionReplay(session, backends, upstreams, primaryWait, replayCounts, inDoubtCommits,
                replayTimeout, this, loop);
    }

    /** Routes the trip's statement and runs this try of it; every later try comes back here. */
    public Reply run(StatementTrip trip) {
        if (replay.due() || transactionConnectionClosed()) {
            return replay.replayThen(trip);
        }
        CacheFill fill = trip.fill();
        Packet command = trip.command();
        SessionRouting.Routed routed = trip.route(routing, fill != null && fill.checksAccount());
        if (routed.refused()) {
            if (replay.due()) {
                return replay.replayThen(trip); // the primary moved from the transaction's server: replayed first
            }
            if (routed.refusedForNoPrimary() && primaryWait.holdForPrimary(command, trip.holdUntil(), trip)) {
                return Reply.LATER;
            }
            if (routed.refusedForNoPrimary() && transactionLetGoForNoPrimary()) {
                return replay.replayThen(trip); // the transaction waits for the new primary, and moves there
            }
            command.release();
            return routed.refusal();
        }
        trip.routed(routed);
        AfterResponse after = trip.after(routed);
        cachedReads.routed(fill, routed);
        ResponseForwarder.ResponseRewriter rewriter = trip.rewriter(routed.server());
        if (fill == null || routed.waits()) {
            trip.answerWith(after, rewriter); // a read that waits on its replica first is not captured
        } else {
            trip.answerWith(fill.completing(after), fill.capturing(rewriter));
        }
        fallbacks(trip, routed);
        BackendConnection ready = backends.readyConnection(routed.server());
        if (ready != null) {
            connected(trip, ready); // the usual read or write: no closure
        } else {
            backends.run(command, routed.server(), trip, ifUnreachable(trip, routed));
        }
        return Reply.LATER;
    }

    /**
     * What a trip does when the new connection its server needs cannot be made (nothing was sent): a read on a
     * replica marked down is routed again, once; a statement for the primary waits for the next one (its transaction
     * moves there by replay). Null: the failure ends the statement as any other. A session's connection there that
     * died unnoticed counts as none: it is replaced by a new one, which may be refused.
     */
    private Consumer<BackendFailure> ifUnreachable(StatementTrip trip, SessionRouting.Routed routed) {
        if (routed.server().role() == Role.PRIMARY) {
            return failure -> session.finish(primaryUnreachable(trip, routed.server(), failure));
        }
        if (trip.reroutesUnreachableReplica() && trip.mayGoElsewhere()
                && routed.statement().kind() == StatementKind.READ) {
            return failure -> replicaUnreachable(trip, routed.server(), failure);
        }
        return null;
    }

    /**
     * Runs a trip on the server it must take, unrouted (an execution whose long data went there): {@code after}
     * follows its answer; it neither waits for a primary nor runs again elsewhere.
     */
    public Reply runOn(StatementTrip trip, UpstreamServer server, AfterResponse after) {
        trip.answerWith(after, trip.rewriter(server));
        trip.mayNotWaitAfterRefusal();
        BackendConnection ready = backends.readyConnection(server);
        if (ready != null) {
            connected(trip, ready);
        } else {
            backends.run(trip.command(), server, trip);
        }
        return Reply.LATER;
    }

    /**
     * What the statement does instead of failing when its first try shows it can run again. A write outside a
     * transaction refused as read-only waits for the new primary ({@link PrimaryWait}), with its bytes kept for that:
     * the trip is the forwarder's fallback. A read outside a transaction (a session setting too) whose server is
     * marked down before it answered runs again elsewhere, once: told to the session.
     */
    private void fallbacks(StatementTrip trip, SessionRouting.Routed routed) {
        if (session.transactionLog().replayable() && (routed.server().role() == Role.PRIMARY
                || holdsTheTransaction(routed.server()))) {
            // In a transaction Gantry can replay, a statement refused as read-only (a write, or the COMMIT of one:
            // it did not run) or lost before its answer runs again after the replay, made again from the trip.
            lostTrip = null;
            session.mayRunElsewhere(null);
            trip.keepForElsewhere();
            trip.mayWaitAfterRefusal(System.nanoTime() + replayTimeout.toNanos(), null, 0);
            return;
        }
        if (routed.statement().kind() == StatementKind.WRITE) {
            lostTrip = null;
            session.mayRunElsewhere(null);
            if (session.transactionLog().enabled()) {
                trip.keepForElsewhere(); // in doubt if lost, it runs again if it did not commit
            }
            long deadline = primaryWait.deadlineAfterRefusal(trip.holdUntil());
            if (deadline == PrimaryWait.OFF) {
                trip.mayNotWaitAfterRefusal();
            } else {
                Packet command = trip.command();
                trip.mayWaitAfterRefusal(deadline, ByteBufUtil.getBytes(command.payload()), command.sequenceId());
            }
            return;
        }
        trip.mayNotWaitAfterRefusal();
        if (trip.mayGoElsewhere() && routing.mayRunAgain(routed.statement())) {
            trip.keepForElsewhere();
            lostTrip = trip;
            session.mayRunElsewhere(runLostElsewhere);
        } else {
            lostTrip = null; // no earlier trip (and its capture) is kept past its statement
            session.mayRunElsewhere(null);
        }
    }

    /**
     * Whether the connection holding the session's replayable transaction has closed without Gantry hearing of it
     * yet (its server shut down as the session's statement arrived): it is let go for a replay, as it would be once
     * heard of.
     */
    private boolean transactionConnectionClosed() {
        BackendConnection holder = replayableTransaction();
        return holder != null && !holder.isUsable() && backends.letGoForReplay(holder, "the connection to "
                + holder.server().address() + " closed");
    }

    /** The replica of a read's new connection cannot be reached: once it is marked down, the read is routed again. */
    private void replicaUnreachable(StatementTrip trip, UpstreamServer replica, BackendFailure failure) {
        if (replica.isReachable()) {
            trip.command().release();
            session.backendFailed(replica, failure);
            return;
        }
        LOG.atInfo().addKeyValue("session", session.id()).addKeyValue("server", replica.address())
                .log("session {}: {} cannot be reached; routing the read again", session.id(), replica.address());
        session.finish(trip.rerouted());
    }

    /**
     * The primary could not be reached for the trip's new connection: nothing was sent, so the statement waits for
     * the health loop to look again (the next primary, or this one back), and its transaction moves there by replay;
     * or it is refused as it would be without a primary.
     */
    private Reply primaryUnreachable(StatementTrip trip, UpstreamServer primary, BackendFailure failure) {
        LOG.atInfo().addKeyValue("session", session.id()).addKeyValue("server", primary.address())
                .log("session {}: the primary {} cannot be reached ({}); the statement waits for a primary",
                        session.id(), primary.address(), failure.getMessage());
        if (primaryWait.holdAfterUnreachable(primary, trip.command(), trip.holdUntil(), trip)) {
            return Reply.LATER;
        }
        if (transactionLetGoForNoPrimary()) {
            return replay.replayThen(trip);
        }
        trip.command().release();
        return Reply.error(SessionErrors.noPrimary("statement", "the primary " + primary.address()
                + " cannot be reached (" + failure.getMessage() + ")"));
    }

    /**
     * No primary is known for a statement of the session's transaction (a switchover under way): a replayable
     * transaction lets its connection go, to be replayed on the primary the health loop finds next, instead of the
     * statement's refusal. False when it is not replayable.
     */
    private boolean transactionLetGoForNoPrimary() {
        BackendConnection holder = replayableTransaction();
        return holder != null && backends.letGoForReplay(holder, "no primary is known ("
                + upstreams.noPrimaryReason() + ")");
    }

    /** Whether the session's open transaction is on {@code server}. */
    private boolean holdsTheTransaction(UpstreamServer server) {
        BackendConnection holder = backends.holdingTransaction();
        return holder != null && holder.server() == server;
    }

    /** The connection holding the session's transaction when Gantry can replay that transaction, else null. */
    private BackendConnection replayableTransaction() {
        return session.transactionLog().replayable() ? backends.holdingTransaction() : null;
    }

    private void runLostElsewhere() {
        StatementTrip trip = lostTrip;
        lostTrip = null;
        session.finish(trip.elsewhere());
    }

    /**
     * The primary refused the trip's write as read-only: it waits for the new one, then runs again there; in a
     * transaction Gantry can replay, the transaction is replayed there first.
     */
    void awaitAfterRefusal(StatementTrip trip) {
        if (trip.refusedPayload() == null) { // a statement of a replayable transaction (fallbacks)
            BackendConnection holder = replayableTransaction();
            String why = "the primary " + trip.routed().server().address() + " refused a statement of the "
                    + "transaction as read-only";
            if (holder != null && backends.letGoForReplay(holder, why)) {
                session.finish(trip.run(trip.again(), trip.holdUntil()));
            } else {
                SessionContext.releaseIfHeld(trip.command());
                session.finish(Reply.close(SessionErrors.transactionNotReplayed(why, "the transaction's connection "
                        + "holds more than the transaction")));
            }
            return;
        }
        primaryWait.afterRefusal(trip.routed().server(), trip.refusalDeadline(), trip.refusedSequence(),
                trip.refusedPayload(), trip);
    }

    /** The trip's connection is ready: a read that must first see the session's writes waits there; else it goes. */
    void connected(StatementTrip trip, BackendConnection connection) {
        SessionRouting.Routed routed = trip.routed();
        if (routed != null && routed.waits()) {
            waitThenForward(trip, connection); // only a text waits: an execution is routed with mayWait off
            return;
        }
        trip.send(trip.command(), connection);
    }

    /** The last step of every try: the command goes, and its answer comes back through the forwarder. */
    void forward(StatementTrip trip, Packet command, BackendConnection connection) {
        CacheFill fill = trip.fill();
        if (fill != null) {
            fill.start(connection);
        }
        boolean kept = keptForReplay(trip, command, connection);
        boolean autocommitWrite = !kept && autocommitWriteOnPrimary(trip, connection);
        if (kept || autocommitWrite) {
            trip.inDoubtIfLost(positionOf(connection.server()), autocommitWrite);
        }
        forwarder.forward(command, connection, trip.after(), trip.rewriter(), trip.readOnlyFallback(),
                kept || autocommitWrite ? trip : null);
    }

    /** The server's sampled position, null when none is known. */
    private static GtidSet positionOf(UpstreamServer server) {
        SampledPosition position = server.position();
        return position == null ? null : position.executed();
    }

    /**
     * Whether the trip is a write outside a transaction on the primary (not one with long data, which is not kept),
     * with replay on: lost before its answer,
     * Gantry finds out whether it committed, and runs it again on the new primary if it did not.
     */
    private boolean autocommitWriteOnPrimary(StatementTrip trip, BackendConnection connection) {
        SessionRouting.Routed routed = trip.routed();
        SessionRouteState state = session.routeState();
        return session.transactionLog().enabled() && connection.server().role() == Role.PRIMARY && routed != null
                && routed.statement().kind() == StatementKind.WRITE && trip.notReplayableBecause() == null
                && state.transaction() == TransactionState.NONE && state.autocommit();
    }

    /**
     * Whether the session's transaction log follows this statement: a statement on the primary that opens or runs in
     * a transaction (autocommit off counts). Its command is kept (copied) while the transaction is replayable.
     */
    private boolean keptForReplay(StatementTrip trip, Packet command, BackendConnection connection) {
        TransactionLog log = session.transactionLog();
        // Once a transaction is followed, each of its statements is, even when its server stopped being the primary
        // meanwhile (a switchover under way): a replay must never leave one out.
        if (!log.enabled() || (connection.server().role() != Role.PRIMARY
                && (log.isEmpty() || !holdsTheTransaction(connection.server())))) {
            return false;
        }
        SessionRouteState state = session.routeState();
        SessionRouting.Routed routed = trip.routed();
        boolean opens = routed != null && routed.statement().kind() == StatementKind.TRANSACTION_BEGIN;
        if (!opens && state.transaction() == TransactionState.NONE && state.autocommit()) {
            return false;
        }
        if (log.isEmpty() && session.inTransaction() && !opens) {
            log.notReplayable("it began before Gantry kept its statements");
        }
        if (log.records()) {
            String notReplayable = trip.notReplayableBecause();
            if (notReplayable == null) {
                if (!log.sending(trip.replayCommand(command))) {
                    replayCounts.tooLarge();
                }
            } else {
                log.notReplayable(notReplayable);
            }
        }
        return true;
    }

    /** How a replay sends an execution of a prepared statement again: the prepared statements' handler's way. */
    public void replayExecutionsWith(TransactionReplay.Executions executions) {
        replay.executions(executions);
    }

    /** The trip's connection, holding the session's transaction, was lost before its answer: replay, then rerun. */
    void lostBeforeAnswer(StatementTrip trip, BackendConnection connection, BackendFailure failure) {
        replay.lostBeforeAnswer(trip, connection, failure);
    }

    /**
     * Waits on the read's replica until it has applied what the session needs ({@code MASTER_GTID_WAIT},
     * {@code WAIT_FOR_EXECUTED_GTID_SET}), then reads there; after {@code --causal-wait-timeout-ms}, the read goes
     * to the primary instead, never to another replica.
     */
    private void waitThenForward(StatementTrip trip, BackendConnection connection) {
        Packet command = trip.command();
        SessionRouting.Routed routed = trip.routed();
        AfterResponse after = trip.after();
        ResponseForwarder.ResponseRewriter rewriter = trip.rewriter();
        long started = System.nanoTime();
        Duration timeout = session.settings().guarantees().causalWaitTimeout();
        String wait = CausalWait.query(connection.flavour(), routed.waitFor(), timeout);
        InternalCommand.queryRow(connection, session.queryPayload(wait), (row, error) -> {
            readCounters.waited(System.nanoTime() - started);
            if (CausalWait.caughtUp(row, error)) {
                readCounters.servedByReplica();
                forwarder.forward(command, connection, after, rewriter);
                return;
            }
            readCounters.servedByPrimary();
            readCounters.consistentPrefixFailed(ReplicaRefusal.WAIT_TIMED_OUT);
            LOG.debug("session {}: {} did not apply {} within {} ms{}; reading from the primary", session.id(),
                    connection.server().address(), routed.waitFor(),
                    timeout.toMillis(), error == null ? "" : " (" + error.message() + ")");
            Optional<UpstreamServer> primary = upstreams.primary();
            if (primary.isEmpty()) {
                command.release();
                session.finish(Reply.error(SessionErrors.noPrimary("read",
                        upstreams.noPrimaryReason())));
                return;
            }
            session.readOn(session.serverId(primary.get()));
            backends.run(command, primary.get(), primaryConnection -> forwarder.forward(command, primaryConnection,
                    after, rewriter));
        }, failure -> {
            command.release(); // not sent: a read that may run elsewhere is made again from its text
            session.backendFailed(connection.server(), failure);
        });
    }
}
