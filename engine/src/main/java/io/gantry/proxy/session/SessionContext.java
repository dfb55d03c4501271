package io.gantry.proxy.session;

import io.gantry.proxy.backend.BackendFailure;
import io.gantry.proxy.login.ClientIdentity;
import io.gantry.proxy.prepared.PreparedStatements;
import io.gantry.proxy.state.GantrySettings;
import io.gantry.proxy.state.NextTransaction;
import io.gantry.proxy.state.SessionStateLog;
import io.gantry.proxy.state.SessionTracking;
import io.gantry.proxy.state.TransactionLog;
import io.gantry.route.CausalScopeKey;
import io.gantry.route.RouteDecision;
import io.gantry.route.ServerId;
import io.gantry.route.SessionConsistency;
import io.gantry.route.SessionRouteState;
import io.gantry.route.SqlMode;
import io.gantry.route.StatementFlag;
import io.gantry.route.TransactionState;
import io.gantry.topology.UpstreamServer;
import io.gantry.wire.ComQuery;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.OkPacket;
import io.gantry.wire.Packet;
import io.gantry.wire.ServerStatus;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client session's state, shared by its login, its command handlers, its backends and its response forwarding:
 * who the client is and what it negotiated, the session's routing state, its settings and prepared statements, the
 * phase it is in, and the client's queued commands. Gantry's own answers go out through it, to its
 * {@link ClientWriter}: {@link #finish} ends a command, {@link #sendErrorAndClose} ends the session; a command whose
 * answer is more than one packet writes it to the writer itself, its OK and ERR made here ({@link #okPacket},
 * {@link #errorPacket}). Everything runs on the client channel's event loop, so nothing here needs a lock.
 */
public final class SessionContext {

    /** Every session class logs under one name, so operators filter a session's story with one logger. */
    public static final Logger LOG = LoggerFactory.getLogger("io.gantry.proxy.ClientSession");

    public enum Phase { GREETING_SENT, AUTHENTICATING, OPENING_BACKEND, READY, RUNNING, CLOSED }

    /** How long a session whose server side is gone waits for the client's next command to tell it why. */
    private static final Duration LOST_SESSION_GRACE = Duration.ofSeconds(60);

    private final ProxyServices services;
    private final long id;
    private final ClientWriter writer;
    private final EventLoop loop;
    /**
     * The client connection's close one second after the session ended with it open (so that an error written
     * after the end still arrives), until the client closes it first: the timer holds the whole session while it
     * waits, so it goes when the connection does.
     */
    private ScheduledFuture<?> closeLater;
    private final ByteBufAllocator alloc;
    private final String host;
    private final SessionStateLog stateLog = new SessionStateLog();
    private final PreparedStatements prepared = new PreparedStatements();
    /** What the session has read and written, for its read guarantees. */
    private final SessionConsistency consistency;
    private final CausalScopeKey scopeKey = new CausalScopeKey();
    /** Gantry's own session tracking on the backends: the session's GTIDs, its transactions' default access mode. */
    private final SessionTracking tracking = new SessionTracking();
    private final ClientIdentity client = new ClientIdentity();
    private final GantrySettings settings;
    /** What a replay of the session's open transaction on a new primary would run. */
    private final TransactionLog transactionLog;

    private Phase phase = Phase.GREETING_SENT;
    private final LoginCounts counts;
    private int lastStatus = ServerStatus.SERVER_STATUS_AUTOCOMMIT;
    /** Whether {@link #lastStatus} came from a server's answer, not from the assumption a login starts with. */
    private boolean statusFromServer;
    private SessionRouteState routeState = SessionRouteState.INITIAL;
    /** Commands the client has sent: tells whether the session was idle since a backend connection's last use. */
    private long commands;
    private final IdleLimit idleLimit;
    /** What {@code LAST_INSERT_ID()} answers in this session: the last id a statement of its generated. */
    private long lastInsertId;
    /** Set when the session's server side is gone: the answer to the client's next command, before the close. */
    private ErrPacket sessionLost;
    /**
     * Whether the session holds nothing a drain waits for: it is closed, or its server side is gone. Written on the
     * session's loop, read by the drain's waiter.
     */
    private volatile boolean released;

    private final CommandQueue queued;
    private final BooleanSupplier ready = () -> phase == Phase.READY;
    private Consumer<Packet> dispatcher;
    private Runnable onClose = () -> { };
    /** What the running command does if its server is marked down before it answered ({@link #mayRunElsewhere}). */
    private Runnable elsewhereIfServerDown;

    /**
     * @param loop  the client channel's event loop, which runs everything of the session
     * @param alloc the client channel's allocator, for the packets and commands Gantry makes
     */
    public SessionContext(ProxyServices services, long id, ClientWriter writer, EventLoop loop, ByteBufAllocator alloc,
                          String host) {
        this.services = services;
        this.id = id;
        this.writer = writer;
        this.loop = loop;
        this.alloc = alloc;
        this.idleLimit = new IdleLimit(this, loop, writer);
        this.queued = new CommandQueue(writer);
        this.host = host;
        this.counts = new LoginCounts(services, host);
        this.settings = new GantrySettings(services.config().routing(), services.config().readGuarantees());
        // The scope as the session's settings and account say now: a SET or a change of user takes effect at once.
        this.consistency = new SessionConsistency(services.causalScopes(), () -> scopeKey.of(
                settings.guarantees().scope(), client.user(), settings.guarantees().causalToken()));
        FailoverSettings.TransactionReplay replay = services.config().failover().replay();
        this.transactionLog = new TransactionLog(replay.enabled(), replay.maxBytes());
    }

    // ---- what the session is ------------------------------------------------------------------------------------

    public long id() {
        return id;
    }

    /** The client's address, as logs and the login gate name it. */
    public String host() {
        return host;
    }

    public SessionStateLog stateLog() {
        return stateLog;
    }

    public PreparedStatements prepared() {
        return prepared;
    }

    public SessionConsistency consistency() {
        return consistency;
    }

    public SessionTracking tracking() {
        return tracking;
    }

    /** Who the client is and what its login negotiated. */
    public ClientIdentity client() {
        return client;
    }

    /** The session's own Gantry settings and the {@code SET TRANSACTION} held for its next statement. */
    public GantrySettings settings() {
        return settings;
    }

    public Phase phase() {
        return phase;
    }

    /** The status flags of the last server answer the client saw. */
    int lastStatus() {
        return lastStatus;
    }

    /**
     * Whether the session's statements commit on their own, as the last status a server gave it says; null before
     * any server has answered one of its statements (a server's default may be off, which Gantry's login OK does not
     * know).
     */
    public Boolean autocommit() {
        return statusFromServer ? ServerStatus.has(lastStatus, ServerStatus.SERVER_STATUS_AUTOCOMMIT) : null;
    }

    /** Whether the last server answer the client saw left a transaction open. */
    public boolean inTransaction() {
        return ServerStatus.has(lastStatus, ServerStatus.SERVER_STATUS_IN_TRANS);
    }

    public TransactionLog transactionLog() {
        return transactionLog;
    }

    public SessionRouteState routeState() {
        return routeState;
    }

    public long lastInsertId() {
        return lastInsertId;
    }

    /** A statement of the session's generated {@code insertId} (its OK packet said so). */
    public void insertIdGenerated(long insertId) {
        lastInsertId = insertId;
    }

    public long commands() {
        return commands;
    }

    /** The answer to the client's next command when the session's server side is gone, else null. */
    public ErrPacket sessionLost() {
        return sessionLost;
    }

    public boolean released() {
        return released;
    }

    // ---- the login ---------------------------------------------------------------------------------------------

    /** What the session counts for in the login gate and toward {@code --max-client-connections}. */
    public LoginCounts counts() {
        return counts;
    }

    /**
     * COM_CHANGE_USER: everything the old account's session had goes ({@link #reset}, what it read and wrote, its
     * status, its secret), and the session goes on as {@code user} in {@code database}; a collation of 0 keeps the
     * current one.
     */
    public void changedUser(String user, String database, int collationId) {
        reset();
        consistency.clear();
        lastStatus = ServerStatus.SERVER_STATUS_AUTOCOMMIT;
        statusFromServer = false;
        client.changedUser(user, database, collationId);
    }

    public void markAuthenticating() {
        phase = Phase.AUTHENTICATING;
    }

    public void markOpeningBackend() {
        phase = Phase.OPENING_BACKEND;
    }

    // ---- the session's state as commands change it ------------------------------------------------------------

    /** A command arrived from the client. */
    public void commandArrived() {
        commands++;
    }

    /** The command is on its way (to a server, or to Gantry's own work): commands that arrive now are queued. */
    public void markRunning() {
        phase = Phase.RUNNING;
    }

    /**
     * COM_RESET_CONNECTION (and a change of user): the session's settings, routing state, Gantry settings and
     * tracking go back to those of a new session.
     */
    public void reset() {
        stateLog.clear();
        lastInsertId = 0;
        idleLimit.set(0); // wait_timeout back to the server's default
        routeState = SessionRouteState.INITIAL;
        settings.reset();
        tracking.reset();
        transactionLog.clear();
    }

    /** A server answered with {@code status}: the session's transaction state and mode flags follow it. */
    public void statusFrom(UpstreamServer server, int status) {
        lastStatus = status;
        statusFromServer = true;
        routeState = routeState.withServerStatus(serverId(server),
                ServerStatus.has(status, ServerStatus.SERVER_STATUS_IN_TRANS),
                ServerStatus.has(status, ServerStatus.SERVER_STATUS_IN_TRANS_READONLY),
                ServerStatus.has(status, ServerStatus.SERVER_STATUS_AUTOCOMMIT));
    }

    /** The statement goes where {@code decision} says: the routing state moves on with it. */
    public void routed(RouteDecision decision) {
        routeState = routeState.afterRouting(decision);
    }

    /** The read runs on {@code server} after all (a causal wait that timed out goes to the primary). */
    public void readOn(ServerId server) {
        routeState = routeState.withPreviousServer(server);
    }

    /** The session stays on the primary from now on, for {@code reason}; a session pinned already keeps its reason. */
    public void pin(StatementFlag reason) {
        if (!routeState.pinned()) {
            routeState = routeState.withPin(reason);
        }
    }

    /**
     * Whether a transaction the session begins without an access mode of its own is read-only: by the held
     * {@code SET TRANSACTION}, else by the session's {@code transaction_read_only}.
     */
    public boolean nextTransactionReadOnly() {
        NextTransaction next = settings.nextTransaction();
        return next != null ? next.readOnly() : tracking.readOnlyByDefault();
    }

    /** Where queued commands go once the running one is done, and what else closes with the session. */
    public void wire(Consumer<Packet> dispatcher, Runnable onClose) {
        this.dispatcher = dispatcher;
        this.onClose = onClose;
    }

    public boolean isClosed() {
        return phase == Phase.CLOSED;
    }

    /** The client's sql_mode has NO_BACKSLASH_ESCAPES, as the last server status said. */
    public boolean noBackslashEscapes() {
        return ServerStatus.has(lastStatus, ServerStatus.SERVER_STATUS_NO_BACKSLASH_ESCAPES);
    }

    /** The session's mode as the last server status said: where the text's strings and quoted names end. */
    public SqlMode sqlMode() {
        return SqlMode.of(noBackslashEscapes(), ServerStatus.has(lastStatus, ServerStatus.SERVER_STATUS_ANSI_QUOTES));
    }

    public ServerId serverId(UpstreamServer server) {
        return services.serverIds().of(server);
    }

    // ---- commands ----------------------------------------------------------------------------------------------

    /** Keeps a command that arrived while another runs (a pipelining client; see {@link CommandQueue}). */
    public void queue(Packet packet) {
        queued.add(packet);
    }

    /** A command's answer: written to the client (unless it comes later), then the next queued command runs. */
    public void finish(Reply reply) {
        if (reply instanceof Reply.Later || isClosed()) {
            return;
        }
        if (reply instanceof Reply.Close close) {
            services.metrics().gantryError(close.error().errorCode());
            sendErrorAndClose(1, close.error());
            return;
        }
        if (reply instanceof Reply.Ok) {
            writer.write(okPacket(1, 0, 0));
            writer.flush();
        } else if (reply instanceof Reply.Error error) {
            services.metrics().gantryError(error.error().errorCode());
            writer.write(errorPacket(1, error.error()));
            writer.flush();
        }
        commandDone();
    }

    /** The running command is done: the next queued one runs, in a loop rather than by recursion. */
    public void commandDone() {
        if (isClosed()) {
            return;
        }
        phase = Phase.READY;
        elsewhereIfServerDown = null;
        idleLimit.ready();
        if (services.sessions().isDraining()) {
            endIfIdleForDrain();
        }
        queued.runQueued(dispatcher, ready);
    }

    // ---- answers Gantry makes itself ---------------------------------------------------------------------------

    /**
     * The status flags for a packet Gantry makes itself: the session's transaction and mode flags as the last
     * server reported them, without flags that describe that server's own packet (session state changed, more
     * results), which would promise content this packet does not have.
     */
    public int localStatus() {
        return lastStatus & (ServerStatus.SERVER_STATUS_IN_TRANS | ServerStatus.SERVER_STATUS_AUTOCOMMIT
                | ServerStatus.SERVER_STATUS_IN_TRANS_READONLY | ServerStatus.SERVER_STATUS_NO_BACKSLASH_ESCAPES);
    }

    /**
     * An OK of Gantry's own, for a command that writes its answer itself through the {@link ClientWriter} (a command
     * whose answer is one OK returns {@link Reply#OK} instead).
     *
     * @param moreStatus status flags beyond the session's own ({@code SERVER_MORE_RESULTS_EXISTS})
     */
    public Packet okPacket(int sequenceId, long affectedRows, int moreStatus) {
        ByteBuf out = alloc.buffer(16);
        OkPacket.of(affectedRows, 0, localStatus() | moreStatus, 0).encode(out, client.capabilities());
        return new Packet(sequenceId & 0xFF, out);
    }

    /** An ERR of Gantry's own, for a command that writes its answer itself through the {@link ClientWriter}. */
    public Packet errorPacket(int sequenceId, ErrPacket error) {
        ByteBuf out = alloc.buffer(32 + error.message().length());
        error.encode(out);
        return new Packet(sequenceId & 0xFF, out);
    }

    /** The login's OK, flushed by {@code frontend.ClientLogin}; commands use {@link #finish} or {@link #okPacket}. */
    public void writeOk(int sequenceId) {
        writer.write(okPacket(sequenceId, 0, 0));
    }

    public void sendErrorAndClose(int sequenceId, ErrPacket error) {
        if (isClosed()) {
            return;
        }
        writer.write(errorPacket(sequenceId, error));
        writer.closeAfterFlush();
        closeSession();
    }

    /**
     * The running command may run again elsewhere if its server is marked down before any of its answer reached the
     * client ({@code retry}), or may not (null): set for each command that reaches a server.
     */
    public void mayRunElsewhere(Runnable retry) {
        elsewhereIfServerDown = retry;
    }

    /**
     * Runs the running command again elsewhere if it may ({@link #mayRunElsewhere}) because {@code server} failed it
     * ({@code why}); false when it may not, and the failure is the caller's to answer.
     */
    public boolean ranElsewhere(UpstreamServer server, String why) {
        Runnable retry = elsewhereIfServerDown;
        elsewhereIfServerDown = null;
        if (retry == null) {
            return false;
        }
        LOG.atInfo().addKeyValue("session", id).addKeyValue("server", server.address())
                .log("session {}: {}; running the statement again elsewhere", id, why);
        retry.run();
        return true;
    }

    /** Polls for the health loop's round of {@code ticket} (at most until {@code deadline}), then runs elsewhere. */
    private void runElsewhereOnceChecked(UpstreamServer server, String why, long ticket, long deadline) {
        if (isClosed()) {
            return;
        }
        if (services.upstreams().checkedSince(ticket) || System.nanoTime() - deadline >= 0) {
            ranElsewhere(server, why);
            return;
        }
        loop.schedule(() -> runElsewhereOnceChecked(server, why, ticket, deadline), 10, TimeUnit.MILLISECONDS);
    }

    /** The running command's answer started to reach the client: it can no longer run again elsewhere. */
    public void answerStarted() {
        elsewhereIfServerDown = null;
    }

    /** A backend connection failed under a command: the server's refusal, or the end of the session. */
    public void backendFailed(UpstreamServer server, Throwable cause) {
        backendFailed(1, server, cause);
    }

    /** As {@link #backendFailed(UpstreamServer, Throwable)}, the error with the given sequence id. */
    public void backendFailed(int sequenceId, UpstreamServer server, Throwable cause) {
        if (cause instanceof BackendFailure failure && elsewhereIfServerDown != null) {
            if (failure.serverMarkedDown()) {
                ranElsewhere(server, failure.getMessage());
            } else {
                // The connection went before the health loop marked its server down (a crash, seen first here): the
                // read waits for the health loop's next look, then runs where routing sends it then.
                long ticket = services.upstreams().requestCheck("session " + id + " lost its connection to "
                        + server.address());
                runElsewhereOnceChecked(server, failure.getMessage(), ticket,
                        System.nanoTime() + services.config().failover().switchoverHold().toNanos());
            }
            return;
        }
        if (SessionErrors.endsSession(cause)) {
            LOG.atWarn().addKeyValue("session", id).addKeyValue("server", server.address())
                    .log("session {}: closing, backend {} failed: {}", id, server.address(),
                            SessionErrors.describe(cause));
            // A lost server connection may be a server that died or froze: the health loop looks at once.
            services.upstreams().requestCheck("session " + id + " lost its connection to " + server.address());
        }
        sendErrorAndClose(sequenceId, SessionErrors.backendFailed(server, cause));
    }

    /**
     * Ends a session whose server side is gone while the client is idle: the backends go now (through
     * {@code closeBackends}); the client gets {@code error} as the answer to its next command (drivers do not read an
     * error that arrives with the close itself), and the connection is closed then, or after
     * {@link #LOST_SESSION_GRACE} at the latest.
     */
    public void endSession(ErrPacket error, Runnable closeBackends) {
        closeBackends.run();
        client.clearSecret();
        sessionLost = error;
        released = true;
        services.sessions().released();
        loop.schedule(this::closeSession, LOST_SESSION_GRACE.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * While Gantry drains, a session that is ready and outside a transaction ends: its backends go now and its next
     * command (or one already queued) is answered with {@link SessionErrors#shuttingDown}. A session inside a
     * transaction, or with a command running, goes on; it comes here again when its command is done.
     */
    public void endIfIdleForDrain() {
        if (phase != Phase.READY || sessionLost != null
                || ServerStatus.has(lastStatus, ServerStatus.SERVER_STATUS_IN_TRANS)) {
            return;
        }
        LOG.debug("session {}: closing for the drain: no transaction open", id);
        endSession(SessionErrors.shuttingDown(), onClose);
    }

    /** The session's {@code wait_timeout}, as a server read it back after the session set it ({@link IdleLimit}). */
    public void idleLimit(long seconds) {
        idleLimit.set(seconds);
    }

    public void closeSession() {
        if (isClosed()) {
            return;
        }
        end();
        if (writer.isOpen()) {
            // Let a pending error reach the client first; the write's listener closes the channel.
            closeLater = loop.schedule(writer::close, 1, TimeUnit.SECONDS);
        }
    }

    /**
     * COM_QUIT: the session ends and its connection closes as soon as what was written to it has left, as a server
     * closes it at once. Clients that wait for that close before they let their socket go (node {@code mysql2} does)
     * would otherwise hold it, and Gantry the session, for the second {@link #closeSession} leaves an error to arrive.
     */
    public void quit() {
        if (isClosed()) {
            return;
        }
        end();
        writer.closeAfterFlush();
    }

    /** The session ends here: it leaves every count and its server connections go. */
    private void end() {
        phase = Phase.CLOSED;
        released = true;
        onClose.run();
        queued.clear();
        client.clearSecret();
        services.sessions().unregister(id);
        services.sessions().released();
        counts.closed();
    }

    // ---- a take-over: the session moves to another Gantry process ------------------------------------------------

    /**
     * Whether a statement runs and nothing else keeps the session from moving once it is answered (no command
     * queued behind it, nothing lost): a take-over holds such a session's next command back ({@code ClientWriter
     * .holdForMove}).
     */
    public boolean onlyRunsAStatement() {
        return (phase == Phase.RUNNING || phase == Phase.OPENING_BACKEND) && queued.isEmpty() && sessionLost == null
                && !released;
    }

    /**
     * Why the session cannot move to another process now, or null when it can: it must be between two statements with
     * nothing a server keeps for it that replay cannot rebuild (ready, no command queued, outside a transaction, no
     * long data sent); its server connections are the caller's to check ({@code SessionBackends.holding}). A session
     * pinned to the primary moves with its pin: what pinned it lives on no connection any more, or one holds it.
     */
    public String whyNotMovable() {
        switch (phase) {
            case READY -> { }
            case RUNNING, OPENING_BACKEND -> {
                return "a statement runs";
            }
            case CLOSED -> {
                return "it is ending";
            }
            case GREETING_SENT, AUTHENTICATING -> {
                return "it logs in";
            }
        }
        if (sessionLost != null || released) {
            return "it is ending";
        }
        if (!queued.isEmpty()) {
            return "commands wait";
        }
        if (ServerStatus.has(lastStatus, ServerStatus.SERVER_STATUS_IN_TRANS)) {
            return "in a transaction";
        }
        if (prepared.anyLongData()) {
            return "long data of a prepared statement waits on a server";
        }
        return null;
    }

    /**
     * The session by value for the Gantry taking over, with {@code unread}, the bytes of the client's next command
     * already read; from now on it runs nothing (it is marked running) until {@link #movedAway} or {@link #stays}.
     */
    public MovedSession moving(byte[] unread) {
        phase = Phase.RUNNING;
        GantrySettings own = settings;
        return new MovedSession(id, host, client.kept(), stateLog.recorded(), prepared.kept(), consistency.kept(),
                tracking.kept(), MovedSession.Routing.of(own.routing()), MovedSession.Guarantees.of(own.guarantees()),
                own.nextTransaction(), routeState.pinnedBy().map(Enum::name).orElse(null), lastInsertId, lastStatus,
                idleLimit.seconds(), unread);
    }

    /** The session did not move: it serves on, ready for the client's next command. */
    public void stays() {
        commandDone();
    }

    /**
     * The Gantry taking over serves the session now: this process's copy ends, leaving every count, without a word
     * to the client (the caller closes this process's copy of the socket).
     */
    public void movedAway() {
        if (!isClosed()) {
            end();
        }
    }

    /**
     * Takes on a session moved from the Gantry taken over ({@link #moving} there), with its id: logged in, ready for
     * the client's next command.
     */
    public void adopt(MovedSession moved) {
        client.restore(moved.client());
        stateLog.restore(moved.settings());
        prepared.restore(moved.prepared());
        consistency.restore(moved.consistency());
        tracking.restore(moved.tracking());
        settings.use(moved.routing().config(), moved.guarantees().value());
        if (moved.nextTransaction() != null) {
            settings.holdNextTransaction(moved.nextTransaction());
        }
        lastInsertId = moved.lastInsertId();
        lastStatus = moved.lastStatus();
        // Between two statements and outside a transaction: only autocommit and the pin say anything yet.
        routeState = new SessionRouteState(ServerStatus.has(lastStatus, ServerStatus.SERVER_STATUS_AUTOCOMMIT),
                TransactionState.NONE, Optional.ofNullable(moved.pinnedBy()).map(StatementFlag::valueOf),
                Optional.empty(), Optional.empty());
        idleLimit.set(moved.waitTimeoutSeconds());
        services.sessions().admitMoved();
        counts.admitted();
        phase = Phase.READY;
        idleLimit.ready();
    }

    /** The client's connection closed: the session ends, and a close still waiting for it has nothing to do. */
    public void clientClosed() {
        closeSession();
        if (closeLater != null) {
            closeLater.cancel(false);
            closeLater = null;
        }
    }

    // ---- SQL text Gantry sends ---------------------------------------------------------------------------------

    /** A COM_QUERY payload for text Gantry made or changed ({@link ComQuery}). */
    public ByteBuf queryPayload(String sql) {
        byte[] command = ComQuery.payload(sql);
        return alloc.buffer(command.length).writeBytes(command);
    }

    public static void releaseIfHeld(Packet packet) {
        if (packet.refCnt() > 0) {
            packet.release();
        }
    }
}
