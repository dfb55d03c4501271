package io.gantry.proxy.execution;

import static io.gantry.proxy.session.SessionContext.LOG;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.BackendFailure;
import io.gantry.proxy.backend.BackendPool;
import io.gantry.proxy.backend.BackendPools;
import io.gantry.proxy.backend.InternalCommand;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.proxy.session.Reply;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.session.SessionErrors;
import io.gantry.proxy.state.HeldState;
import io.gantry.route.ServerId;
import io.gantry.route.StatementClass;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.Packet;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * A session's connections to the servers, one {@link SessionBackend} per server, opened on first use and logged in
 * as the client; what each of them holds that replay cannot rebuild ({@link HeldState}) decides what losing it
 * means. Before a connection runs the session's command, {@link BackendStateSync} brings it to the session's state;
 * when one leaves the session is {@link BackendReleaser}'s business.
 */
public final class SessionBackends {

    /** The shortest {@code wait_timeout} a server accepts: 1 s. */
    private static final long SHORTEST_WAIT_TIMEOUT_NANOS = 1_000_000_000L;

    private final SessionContext session;
    private final EventLoop loop;
    /** The idle connections sessions share; {@code --multiplex} says whether this session takes from them. */
    private final BackendPools pools;
    /** {@code --connection-retention-ms}: how long an idle connection stays before it goes to the pool. */
    private final Duration retention;
    private final BackendStateSync stateSync;
    private final AfterStatements afterStatements;
    private final BackendOpener opener;
    private final BackendReleaser releaser;
    /** Concurrent because another session's KILL reads the thread ids ({@link #threads}); the rest is this loop's. */
    private final Map<ServerId, SessionBackend> backends = new ConcurrentHashMap<>();

    /**
     * @param loop         the session's event loop: its connections run there, and take from its pool
     * @param alloc        the client channel's allocator, for the commands Gantry sends on them
     * @param connector    how a new connection is opened and logged in ({@link BackendOpener})
     * @param clock        the time a completed statement is recorded at for the read guarantees
     * @param nudgeSampler asks the position sampler the proxy runs by then for a sample soon
     */
    public SessionBackends(SessionContext session, EventLoop loop, ByteBufAllocator alloc, ProxyConfig config,
                           Upstreams upstreams, BackendPools pools, BackendPools.Opener connector, Clock clock,
                           Runnable nudgeSampler) {
        this.session = session;
        this.loop = loop;
        this.pools = pools;
        this.retention = config.connectionRetention();
        this.stateSync = new BackendStateSync(session, alloc, upstreams);
        this.opener = new BackendOpener(session, loop, pools, connector, upstreams);
        this.afterStatements = new AfterStatements(session, stateSync,
                new ConsistencyRecorder(session, upstreams, clock, nudgeSampler), this::of,
                this::scheduleRetentionClose);
        this.releaser = new BackendReleaser(session, this, stateSync, afterStatements, loop, alloc, config,
                upstreams, pools);
    }

    /** The session's backend threads now, by {@code host:port}: what a KILL of this session must kill. */
    public List<Map.Entry<String, Long>> threads() {
        List<Map.Entry<String, Long>> threads = new ArrayList<>(backends.size());
        for (SessionBackend backend : backends.values()) {
            threads.add(Map.entry(backend.server.hostPort(), backend.threadId));
        }
        return threads;
    }

    /** What the session knows of {@code connection}, or null when it is not (or no longer) the session's. */
    SessionBackend of(BackendConnection connection) {
        SessionBackend backend = backends.get(session.serverId(connection.server()));
        return backend != null && backend.connection == connection ? backend : null;
    }

    /** The session's usable connection to the server with this address, or null. */
    public BackendConnection usable(String hostPort) {
        return usable(new ServerId(hostPort));
    }

    public BackendConnection usable(ServerId server) {
        SessionBackend backend = backends.get(server);
        return backend != null && backend.connection.isUsable() ? backend.connection : null;
    }

    /**
     * Runs a client command on a server: obtains (or opens) the session's connection to it, brings its session
     * state up to date, then hands the connection to {@code then} (which forwards the command). When
     * {@code unreachable} is given and the server cannot be reached at all (no connection was made, so nothing was
     * sent), it gets the failure instead of the session's end, and {@code packet} is still its caller's.
     */
    public void run(Packet packet, UpstreamServer server, Consumer<BackendConnection> then,
                    Consumer<BackendFailure> unreachable) {
        BackendConnection ready = readyConnection(server);
        if (ready != null) {
            then.accept(ready);
            return;
        }
        session.markRunning();
        obtain(server).addListener(future -> {
            if (!future.isSuccess() && unreachable != null && future.cause() instanceof BackendFailure failure
                    && failure.serverUnreachable()) {
                unreachable.accept(failure);
                return;
            }
            if (!future.isSuccess()) {
                // Its own, unless a retry already let it go: an exception here would leave the client unanswered.
                SessionContext.releaseIfHeld(packet);
                // Nothing was sent: a statement that may run elsewhere does, once the server is known to be down.
                if (future.cause() instanceof BackendFailure failure && failure.serverUnreachable()
                        && !server.isReachable() && session.ranElsewhere(server, failure.getMessage())) {
                    return;
                }
                session.backendFailed(server, future.cause());
                return;
            }
            proceed(server, (BackendConnection) future.getNow(), packet, then);
        });
    }

    /**
     * The usual command's way to its server, without a future or closures: the session's open connection to
     * {@code server} when nothing needs doing on it first (settings to replay, session tracking to set up, a held
     * {@code SET TRANSACTION}), marked as running the session's command; null when {@link #run} must get it ready.
     */
    public BackendConnection readyConnection(UpstreamServer server) {
        SessionBackend open = backends.get(session.serverId(server));
        if (open == null || !open.connection.isUsable() || !stateSync.upToDate(open)) {
            return null;
        }
        session.markRunning();
        open.lastCommand = session.commands();
        open.lastCommandNanos = System.nanoTime();
        return open.connection;
    }

    /** Brings the connection's session state up to date, then hands it to {@code then}. */
    private void proceed(UpstreamServer server, BackendConnection connection, Packet packet,
                         Consumer<BackendConnection> then) {
        SessionBackend backend = of(connection);
        if (backend == null) {
            // Left the session (closed or abandoned) while this listener waited its turn on the loop.
            packet.release();
            session.backendFailed(server, new BackendFailure(server.address(), "the connection to "
                    + server.address() + " closed before the command was sent", null));
            return;
        }
        backend.lastCommand = session.commands();
        backend.lastCommandNanos = System.nanoTime();
        Consumer<ErrPacket> refused = error -> {
            SessionContext.releaseIfHeld(packet);
            session.finish(Reply.error(error));
        };
        stateSync.bringUpToDate(backend, packet, then, refused);
    }

    public void run(Packet packet, UpstreamServer server, Consumer<BackendConnection> then) {
        run(packet, server, then, null);
    }

    /** The session's connection to a server, opened and logged in on first use. */
    public Future<BackendConnection> obtain(UpstreamServer server) {
        ServerId key = session.serverId(server);
        SessionBackend existing = backends.get(key);
        if (existing != null && existing.connection.isUsable()) {
            return loop.newSucceededFuture(existing.connection);
        }
        if (existing != null) {
            drop(existing);
            if (!existing.held.isEmpty()) {
                return loop.newFailedFuture(new BackendFailure(server.address(), "the connection "
                        + "to " + server.address() + " was lost, and with it " + HeldState.describe(existing.held),
                        null));
            }
        }
        BackendPool pool = pool();
        BackendPool.Key poolKey = session.client().poolKey(server.address());
        if (pool != null) {
            BackendPool.Idle pooled = pool.take(poolKey);
            if (pooled != null) {
                stateSync.adopted(keep(key, pooled.connection()), pooled);
                return loop.newSucceededFuture(pooled.connection());
            }
        }
        return opener.open(server, poolKey, connection -> keep(key, connection),
                handed -> stateSync.adopted(keep(key, handed.connection()), handed));
    }

    /** The session's connection to the server {@code key} names from now on (opened for it, or from the pool). */
    private SessionBackend keep(ServerId key, BackendConnection connection) {
        SessionBackend backend = new SessionBackend(key, connection);
        backends.put(key, backend);
        connection.onIdleClose(() -> closedByServer(backend));
        return backend;
    }

    /** This event loop's pool of idle connections, or null with {@code --multiplex off}. */
    BackendPool pool() {
        return pools.settings().multiplex() ? pools.of(loop) : null;
    }

    /**
     * Each connection the session holds now, and whether it goes to the pool when idle or why not: for {@code SHOW
     * GANTRY SESSION} and {@code EXPLAIN GANTRY ROUTE}.
     */
    public String describeConnections() {
        if (backends.isEmpty()) {
            return pool() == null ? "none" : "none: the next statement takes a pooled connection";
        }
        StringJoiner described = new StringJoiner("; ");
        backends.forEach((key, backend) -> {
            String kept = releaser.whyKept(backend);
            described.add(key.hostPort() + " " + (kept != null ? kept : "pooled after "
                    + retention.toMillis() + " ms idle"));
        });
        return described.toString();
    }

    /**
     * A server closed one of the session's idle connections (its {@code wait_timeout}, a KILL, a restart). If the
     * connection held state replay cannot rebuild, or the session has been idle since it last used it (so the
     * server's idle timeout is the session's own), the session ends as a direct one would; otherwise the
     * connection is forgotten and reopened on next use.
     */
    private void closedByServer(SessionBackend backend) {
        String hostPort = backend.server.hostPort();
        if (has(backend) && !session.isClosed()) {
            if (!backend.held.isEmpty()) {
                String why = hostPort + " closed this session's connection";
                if (!replayLater(backend, why)) {
                    endLosing(hostPort, why, backend.held);
                }
                return;
            }
            // A wait_timeout is at least a second: a connection used less than that ago was closed for another reason
            // (its server shutting down), and the session goes on elsewhere as after a lost pooled connection.
            if (backend.lastCommand == session.commands()
                    && System.nanoTime() - backend.lastCommandNanos >= SHORTEST_WAIT_TIMEOUT_NANOS) {
                LOG.atInfo().addKeyValue("session", session.id()).addKeyValue("server", hostPort)
                        .log("session {}: {} closed the session's connection while the session was idle (its "
                                + "wait_timeout, or the server went away); ending the session, as the server would",
                                session.id(), hostPort);
                session.endSession(SessionErrors.closedWhileIdle(hostPort), this::closeAll);
                return;
            }
        }
        drop(backend);
    }

    /**
     * {@code server} was marked down (it stopped answering, or could not be connected to): the session leaves it at
     * once instead of waiting on it. A command running there fails, or runs again elsewhere when it is a read that
     * may ({@link SessionContext#mayRunElsewhere}); an idle connection holding nothing is let go, so the session's
     * next statement goes elsewhere; one holding what replay cannot rebuild ends the session, naming the server.
     */
    public void serverDown(UpstreamServer server, String reason) {
        SessionBackend backend = backends.get(session.serverId(server));
        if (backend == null || session.isClosed()) {
            return;
        }
        BackendFailure failure = BackendFailure.serverDown(server.address(), reason);
        if (backend.connection.isBusy()) {
            backend.connection.abandon(failure);
            return;
        }
        if (replayLater(backend, failure.getMessage())) {
            return;
        }
        drop(backend);
        backend.connection.abandon(failure);
        if (!backend.held.isEmpty()) {
            endLosing(server.address(), failure.getMessage(), backend.held);
        }
    }

    /**
     * The idle session's connection holding its transaction was lost ({@code why}): when the session's transaction
     * log can replay it, the connection is let go and the transaction is replayed on the primary before the
     * session's next statement; false when it cannot (the connection held more than the transaction, or the
     * transaction is not replayable), and the session ends as it would without replay.
     */
    private boolean replayLater(SessionBackend backend, String why) {
        if (!letGoForReplay(backend.connection, why)) {
            return false;
        }
        LOG.atInfo().addKeyValue("session", session.id()).addKeyValue("server", backend.server.hostPort())
                .log("session {}: {} while its transaction was open; the transaction will be replayed on the "
                        + "primary before the session's next statement", session.id(), why);
        return true;
    }

    private static boolean onlyTheTransaction(Set<HeldState> held) {
        return held.size() == 1 && held.contains(HeldState.TRANSACTION);
    }

    /**
     * Lets go of {@code connection}, which holds the session's transaction, for a replay of that transaction on the
     * primary: it is closed (its server rolls the transaction back, if it still has it), and the session's
     * transaction log is due for a replay before anything else runs. False, and nothing done, when the log cannot
     * replay the transaction, or the connection holds more than it.
     */
    public boolean letGoForReplay(BackendConnection connection, String why) {
        SessionBackend backend = of(connection);
        if ((backend != null && !onlyTheTransaction(backend.held)) || !session.transactionLog().replayable()) {
            return false;
        }
        forget(connection);
        connection.close();
        session.transactionLog().lost(connection.server().address(), why);
        return true;
    }

    /** Forgets {@code connection}, closed or being closed, if it is still the session's. */
    public void forget(BackendConnection connection) {
        SessionBackend backend = of(connection);
        if (backend != null) {
            drop(backend);
        }
    }

    /**
     * The session's transaction was replayed on {@code connection} and its last answer had {@code status}: the
     * connection holds the transaction now, as the connection it replaced did.
     */
    public void replayedOn(BackendConnection connection, int status) {
        SessionBackend backend = of(connection);
        if (backend != null) {
            HeldState.afterStatement(backend.held, null, status, true);
        }
        session.statusFrom(connection.server(), status);
    }

    /** Ends the session, as a direct one would end: its connection to {@code hostPort} is gone with what it held. */
    private void endLosing(String hostPort, String why, Set<HeldState> held) {
        String lost = HeldState.describe(held);
        LOG.atWarn().addKeyValue("session", session.id()).addKeyValue("server", hostPort)
                .log("session {}: {}, and the session's connection there held {}; ending the session", session.id(),
                        why, lost);
        session.endSession(SessionErrors.sessionEnded("Gantry: " + why + ", and this session's connection there "
                + "held " + lost + ", which is lost; this session is closed"), this::closeAll);
    }

    /** Whether {@code backend} is still the session's connection to its server. */
    boolean has(SessionBackend backend) {
        return backends.get(backend.server) == backend;
    }

    /** Forgets a connection that closed or is being closed, with everything the session knew about it. */
    void drop(SessionBackend backend) {
        if (backends.remove(backend.server, backend)) {
            afterStatements.left(backend.connection);
            session.prepared().forgetBackend(backend.server.hostPort());
        }
    }

    /**
     * The session ended: each of its connections that can serve another session goes to the pool (see
     * {@link BackendReleaser#release}), the others are closed.
     */
    public void releaseAll() {
        if (pool() == null) {
            closeAll();
            return;
        }
        afterStatements.forgetKeptForNextStatement(); // nobody will ask
        for (SessionBackend backend : new ArrayList<>(backends.values())) {
            releaser.release(backend);
        }
        closeAll();
    }

    /**
     * The session moves to another process (a take-over) and goes on there: each of its connections, which hold
     * nothing replay cannot rebuild, goes to the pool or is closed ({@link BackendReleaser#release}), while what the
     * session keeps by value (its prepared statements, its user variables) stays.
     */
    public void releaseForMove() {
        if (pool() == null) {
            for (SessionBackend backend : new ArrayList<>(backends.values())) {
                drop(backend);
                backend.connection.close();
            }
            return;
        }
        afterStatements.forgetKeptForNextStatement();
        for (SessionBackend backend : new ArrayList<>(backends.values())) {
            releaser.release(backend);
        }
    }

    /** Closes every backend connection of the session and forgets what it knew about them. */
    public void closeAll() {
        for (SessionBackend backend : backends.values()) {
            backend.connection.close();
        }
        backends.clear();
        afterStatements.userVariablesDropped();
        session.prepared().clear();
    }

    /** Closes every connection but the one to {@code keep} (a COM_RESET_CONNECTION keeps the primary's). */
    public void closeAllBut(ServerId keep) {
        for (SessionBackend backend : new ArrayList<>(backends.values())) {
            if (!backend.server.equals(keep)) {
                drop(backend);
                backend.connection.close();
            }
        }
    }

    /** A statement on {@code connection} generated {@code insertId}: the session's LAST_INSERT_ID() from now on. */
    void insertIdGenerated(BackendConnection connection, long insertId) {
        session.insertIdGenerated(insertId);
        SessionBackend backend = of(connection);
        if (backend != null) {
            backend.insertId = insertId;
        }
    }

    /** A statement on {@code connection} completed: see {@link BackendReleaser#scheduleRetentionClose}. */
    void scheduleRetentionClose(BackendConnection connection) {
        releaser.scheduleRetentionClose(connection);
    }

    /**
     * The client has been told it is logged in, and {@code connection}, the one the login was checked on, is idle:
     * it leaves the session one retention later, as after a statement. Without this a session whose statements all
     * ran elsewhere (a client that only reads, and sends nothing at login) kept it for its whole life.
     */
    public void loginDone(BackendConnection connection) {
        releaser.scheduleRetentionClose(connection);
    }

    /** Commits the read-only transaction the session holds on {@code server}, if its connection is still there. */
    void endTransactionOn(ServerId server) {
        BackendConnection connection = usable(server);
        if (connection == null) {
            return;
        }
        InternalCommand.run(connection, session.queryPayload("COMMIT"), (first, error) -> { },
                failure -> LOG.debug("session {}: ending the read-only transaction on {} failed: {}", session.id(),
                        server, failure.getMessage()));
    }

    // ---- held state ------------------------------------------------------------------------------------------

    /**
     * A connection of the session that holds state replay cannot rebuild, or null.
     *
     * @param tyingOnly only state that ties the whole session to that server (not a transaction or a cursor)
     */
    public BackendConnection holding(boolean tyingOnly) {
        return holding(tyingOnly ? HeldState::tiesSession : held -> !held.isEmpty());
    }

    /** The connection that holds the session's open transaction, or null. */
    public BackendConnection holdingTransaction() {
        return holding(held -> held.contains(HeldState.TRANSACTION));
    }

    /** A connection whose held state matches {@code what}, or null. */
    private BackendConnection holding(Predicate<Set<HeldState>> what) {
        for (SessionBackend backend : backends.values()) {
            if (what.test(backend.held)) {
                return backend.connection;
            }
        }
        return null;
    }

    /** What {@code connection} holds, in words ("a transaction, user variables"). */
    public String describeHeld(BackendConnection connection) {
        SessionBackend backend = of(connection);
        return backend == null ? "nothing" : HeldState.describe(backend.held);
    }

    /**
     * A COM_RESET_CONNECTION succeeded on the connection: the server dropped everything it held and set its session
     * variables, what is tracked among them, back to their defaults.
     */
    public void serverReset(BackendConnection connection) {
        SessionBackend backend = of(connection);
        if (backend != null) {
            backend.held.clear();
            stateSync.serverReset(backend);
        }
        afterStatements.userVariablesDropped();
    }

    /**
     * Notes what a statement left on its connection and, for a session setting that succeeded, records how to
     * replay it.
     *
     * @param statement the statement's class, or null for a command that is not a statement
     * @param sql the text, or null when the command has no text to look into (COM_INIT_DB, COM_SET_OPTION)
     * @param stateCommand the session-setting command as sent, or null when it is not one
     */
    public AfterResponse afterStatement(StatementClass statement, String sql, byte[] stateCommand) {
        return afterStatements.of(statement, sql, stateCommand);
    }

    /**
     * What the session's previous statement left for {@code ROW_COUNT()} and {@code FOUND_ROWS()} when the connection
     * that ran it has left the session, to be written into a statement that asks for them; null while the session
     * still has that connection, which answers them itself.
     */
    public PreviousCounts countsToWriteIn() {
        return afterStatements.countsToWriteIn();
    }

    /**
     * Gantry answered a statement with an OK of its own in the server's place: {@code ROW_COUNT()} is 0 after it, as
     * after the server's, and no connection knows that.
     */
    public void answeredWithOk() {
        afterStatements.answeredWithOk();
    }

    /**
     * A setting that cannot fail, answered by Gantry ({@link #answeredWithOk}): recorded for every connection of the
     * session to take before its next statement.
     */
    public void settingAnsweredByGantry(String sql) {
        stateSync.settingAnsweredByGantry(sql);
    }

    /** A setting that cannot be replayed: the session stays where it was made, and loses it with the connection. */
    public void keepOnThisConnection(BackendConnection connection, String why) {
        afterStatements.keepOnThisConnection(connection, why);
    }
}
