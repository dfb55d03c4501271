package io.gantry.proxy;

import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import io.gantry.proxy.backend.BackendLogin;
import io.gantry.proxy.backend.BackendSecret;
import io.gantry.proxy.prepared.PreparedStatements;
import io.gantry.proxy.state.NextTransaction;
import io.gantry.proxy.state.SessionStateLog;
import io.gantry.proxy.state.SessionTracking;
import io.gantry.route.ReadGuarantees;
import io.gantry.route.RoutingConfig;
import io.gantry.route.ServerId;
import io.gantry.route.SessionConsistency;
import io.gantry.route.SessionRouteState;
import io.gantry.route.SqlMode;
import io.gantry.route.StatementClass;
import io.gantry.route.StatementKind;
import io.gantry.topology.UpstreamServer;
import io.gantry.wire.CommandType;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.OkPacket;
import io.gantry.wire.Packet;
import io.gantry.wire.ServerStatus;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client session's state, shared by its login, its command handlers, its backends and its response forwarding:
 * who the client is and what it negotiated, the session's routing state, its settings and prepared statements, the
 * phase it is in, and the client's queued commands. It is also the one way out to the client for answers Gantry
 * makes itself: {@link #finish} ends a command, {@link #sendErrorAndClose} ends the session. Everything runs on the
 * client channel's event loop, so nothing here needs a lock.
 */
final class SessionContext {

    /** Every session class logs under one name, so operators filter a session's story with one logger. */
    static final Logger LOG = LoggerFactory.getLogger(ClientSession.class);

    enum Phase { GREETING_SENT, AUTHENTICATING, OPENING_BACKEND, READY, RUNNING, CLOSED }

    static final int UTF8MB4_GENERAL_CI = 45;
    private static final int MAX_QUEUED_COMMANDS = 16;
    private static final int MAX_QUEUED_BYTES = 1 << 20;
    /** How long a session whose server side is gone waits for the client's next command to tell it why. */
    private static final Duration LOST_SESSION_GRACE = Duration.ofSeconds(60);

    final ProxyServices services;
    final long id;
    final ChannelHandlerContext ctx;
    final String host;
    final SessionStateLog stateLog = new SessionStateLog();
    final PreparedStatements prepared = new PreparedStatements();
    /** What the session has read and written, for its read guarantees. */
    final SessionConsistency consistency = new SessionConsistency();
    /** Gantry's own session tracking on the backends: the session's GTIDs, its transactions' default access mode. */
    final SessionTracking tracking = new SessionTracking();
    final CachedReads cachedReads = new CachedReads(this);

    Phase phase = Phase.GREETING_SENT;
    /** Counted as a session toward {@code --max-client-connections}: from the end of the login on. */
    boolean admitted;
    /** Counted by the login gate: from the connection until the login ends. */
    boolean pendingLogin;
    int capabilities;
    /** MariaDB extended capabilities negotiated with the client (0 for MySQL clients and primaries). */
    int mariaDbCapabilities;
    int collationId = UTF8MB4_GENERAL_CI;
    String user = "";
    String initialDatabase = "";
    boolean tlsActive;
    int lastStatus = ServerStatus.SERVER_STATUS_AUTOCOMMIT;
    SessionRouteState routeState = SessionRouteState.INITIAL;
    /** The session's routing settings: the flags, changed by its own {@code SET gantry_read_from_followers}. */
    RoutingConfig routing;
    /** The session's read guarantees: the flags, changed by its own {@code SET gantry_...}. */
    ReadGuarantees guarantees;
    /** {@code SET TRANSACTION ... READ ONLY|READ WRITE} not yet sent: for the session's next statement. */
    NextTransaction nextTransaction;
    /** Commands the client has sent: tells whether the session was idle since a backend connection's last use. */
    long commands;
    /** Set when the session's server side is gone: the answer to the client's next command, before the close. */
    ErrPacket sessionLost;
    /**
     * Whether the session holds nothing a drain waits for: it is closed, or its server side is gone. Written on the
     * session's loop, read by the drain's waiter.
     */
    volatile boolean released;
    /** The client's secret for backend logins; only here, cleared when the session ends or changes user. */
    private BackendSecret secret;

    private final ArrayDeque<Packet> queued = new ArrayDeque<>();
    private long queuedBytes;
    private boolean draining;
    private Consumer<Packet> dispatcher;
    private Runnable onClose = () -> { };

    SessionContext(ProxyServices services, long id, ChannelHandlerContext ctx, String host) {
        this.services = services;
        this.id = id;
        this.ctx = ctx;
        this.host = host;
        resetGantrySettings();
    }

    /** Every {@code gantry_...} setting back to the flags' values (a new session, a reset, a change of user). */
    void resetGantrySettings() {
        this.routing = services.config().routing();
        this.guarantees = services.config().readGuarantees();
        this.nextTransaction = null;
    }

    /**
     * Whether a transaction the session begins without an access mode of its own is read-only: by the held
     * {@code SET TRANSACTION}, else by the session's {@code transaction_read_only}.
     */
    boolean nextTransactionReadOnly() {
        return nextTransaction != null ? nextTransaction.readOnly() : tracking.readOnlyByDefault();
    }

    /** Where queued commands go once the running one is done, and what else closes with the session. */
    void wire(Consumer<Packet> dispatcher, Runnable onClose) {
        this.dispatcher = dispatcher;
        this.onClose = onClose;
    }

    boolean isClosed() {
        return phase == Phase.CLOSED;
    }

    /** The client's sql_mode has NO_BACKSLASH_ESCAPES, as the last server status said. */
    boolean noBackslashEscapes() {
        return ServerStatus.has(lastStatus, ServerStatus.SERVER_STATUS_NO_BACKSLASH_ESCAPES);
    }

    /** The session's mode as the last server status said: where the text's strings and quoted names end. */
    SqlMode sqlMode() {
        return SqlMode.of(noBackslashEscapes(), ServerStatus.has(lastStatus, ServerStatus.SERVER_STATUS_ANSI_QUOTES));
    }

    ServerId serverId(UpstreamServer server) {
        return services.serverIds().of(server);
    }

    /**
     * A statement of the session's completed on {@code server}: what it read, or wrote on the primary, becomes part
     * of what the session's next reads must not be older than (see {@link SessionConsistency}).
     *
     * @param statement the statement's class, or null for a command that is not a statement (an execute whose
     *                  class is unknown, a fetch): taken as a write on the primary and a read elsewhere
     */
    void completedOn(UpstreamServer server, StatementClass statement) {
        // The GTIDs the command's commits produced (BEGIN too commits an open transaction): a replica serves the
        // session again once it has applied exactly them, with no need to wait for a sample of the primary.
        GtidSet committed = committedGtids(tracking.takeOwnGtids());
        if (committed != null) {
            consistency.committed(committed);
        }
        StatementKind kind = statement == null ? null : statement.kind();
        if (kind == StatementKind.SESSION_STATE || kind == StatementKind.TRANSACTION_BEGIN
                || kind == StatementKind.TRANSACTION_SAVEPOINT) {
            return; // no data read or written
        }
        boolean onPrimary = services.upstreams().isPrimary(server);
        boolean wrote = onPrimary && (kind == null || kind == StatementKind.WRITE
                || kind == StatementKind.TRANSACTION_END);
        if (!wrote || committed == null) {
            // A write whose GTID was not reported (tracking unavailable, or nothing reached the binlog) waits for
            // a sample taken after it, which holds it if it committed.
            consistency.completed(serverId(server), services.clock().millis(), wrote);
        }
        if (onPrimary) {
            // Until a sample settles it, no replica may serve the session. A read on a replica needs no sample to
            // go on reading there: the session asks for one only if it is kept from moving (SessionRouting).
            services.nudgeSampler();
        }
    }

    /** The reported GTIDs as one set (MySQL's are {@code uuid:n}, MariaDB's {@code domain-server-seq}), or null. */
    private GtidSet committedGtids(List<String> reported) {
        if (reported == null) {
            return null;
        }
        GtidSet committed = null;
        for (String text : reported) {
            try {
                GtidSet one = GtidSet.parse(text, text.indexOf(':') >= 0 ? Flavour.MYSQL : Flavour.MARIADB);
                committed = committed == null || committed.flavour() != one.flavour() ? one : committed.union(one);
            } catch (IllegalArgumentException unreadable) {
                LOG.debug("session {}: unreadable GTID '{}' reported by a server: {}", id, text,
                        unreadable.getMessage());
            }
        }
        return committed;
    }

    // ---- the client's secret -----------------------------------------------------------------------------------

    void keepSecret(BackendSecret newSecret) {
        clearSecret();
        this.secret = newSecret;
    }

    void clearSecret() {
        if (secret != null) {
            secret.clear();
            secret = null;
        }
    }

    /** What a new backend connection logs in with: the client's account, database, collation and capabilities. */
    BackendLogin backendLogin() {
        return new BackendLogin(user, secret, initialDatabase, collationId, capabilities, mariaDbCapabilities);
    }

    // ---- commands ----------------------------------------------------------------------------------------------

    /**
     * Keeps a command that arrived while another runs (a pipelining client). Reading stays on in the usual
     * one-command-at-a-time case, which saves two system calls per command; it pauses only while a pipelining
     * client is ahead by more than {@value #MAX_QUEUED_COMMANDS} commands or {@value #MAX_QUEUED_BYTES} bytes.
     */
    void queue(Packet packet) {
        queued.add(packet);
        queuedBytes += packet.payload().readableBytes();
        if (queued.size() > MAX_QUEUED_COMMANDS || queuedBytes > MAX_QUEUED_BYTES) {
            ctx.channel().config().setAutoRead(false);
        }
    }

    /** A command's answer: written to the client (unless it comes later), then the next queued command runs. */
    void finish(Reply reply) {
        if (reply instanceof Reply.Later || isClosed()) {
            return;
        }
        if (reply instanceof Reply.Close close) {
            services.metrics().gantryError(close.error().errorCode());
            sendErrorAndClose(1, close.error());
            return;
        }
        if (reply instanceof Reply.Ok) {
            writeOk(1);
            ctx.flush();
        } else if (reply instanceof Reply.Error error) {
            services.metrics().gantryError(error.error().errorCode());
            writeError(1, error.error());
            ctx.flush();
        }
        commandDone();
    }

    /** The running command is done: the next queued one runs, in a loop rather than by recursion. */
    void commandDone() {
        if (isClosed()) {
            return;
        }
        phase = Phase.READY;
        if (services.sessions().isDraining()) {
            endIfIdleForDrain();
        }
        if (draining) {
            return; // the loop below takes the next command
        }
        draining = true;
        try {
            Packet next;
            while (phase == Phase.READY && (next = queued.poll()) != null) {
                queuedBytes -= next.payload().readableBytes();
                dispatcher.accept(next);
            }
        } finally {
            draining = false;
        }
        if (phase == Phase.READY && !ctx.channel().config().isAutoRead()) {
            ctx.channel().config().setAutoRead(true);
        }
    }

    // ---- answers Gantry makes itself ---------------------------------------------------------------------------

    /**
     * The status flags for a packet Gantry makes itself: the session's transaction and mode flags as the last
     * server reported them, without flags that describe that server's own packet (session state changed, more
     * results), which would promise content this packet does not have.
     */
    int localStatus() {
        return lastStatus & (ServerStatus.SERVER_STATUS_IN_TRANS | ServerStatus.SERVER_STATUS_AUTOCOMMIT
                | ServerStatus.SERVER_STATUS_IN_TRANS_READONLY | ServerStatus.SERVER_STATUS_NO_BACKSLASH_ESCAPES);
    }

    void writeOk(int sequenceId) {
        writeOk(sequenceId, 0);
    }

    void writeOk(int sequenceId, long affectedRows) {
        ByteBuf out = ctx.alloc().buffer(16);
        OkPacket.of(affectedRows, 0, localStatus(), 0).encode(out, capabilities);
        ctx.write(new Packet(sequenceId, out));
    }

    void writeError(int sequenceId, ErrPacket error) {
        ByteBuf out = ctx.alloc().buffer(32 + error.message().length());
        error.encode(out);
        ctx.write(new Packet(sequenceId & 0xFF, out));
    }

    void sendErrorAndClose(int sequenceId, ErrPacket error) {
        if (isClosed()) {
            return;
        }
        writeError(sequenceId, error);
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        closeSession();
    }

    /** A backend connection failed under a command: the server's refusal, or the end of the session. */
    void backendFailed(UpstreamServer server, Throwable cause) {
        backendFailed(1, server, cause);
    }

    /** As {@link #backendFailed(UpstreamServer, Throwable)}, the error with the given sequence id. */
    void backendFailed(int sequenceId, UpstreamServer server, Throwable cause) {
        if (SessionErrors.endsSession(cause)) {
            LOG.atWarn().addKeyValue("session", id).addKeyValue("server", server.address())
                    .log("session {}: closing, backend {} failed: {}", id, server.address(),
                            SessionErrors.describe(cause));
        }
        sendErrorAndClose(sequenceId, SessionErrors.backendFailed(server, cause));
    }

    /**
     * Ends a session whose server side is gone while the client is idle: the backends go now (through
     * {@code closeBackends}); the client gets {@code error} as the answer to its next command (drivers do not read an
     * error that arrives with the close itself), and the connection is closed then, or after
     * {@link #LOST_SESSION_GRACE} at the latest.
     */
    void endSession(ErrPacket error, Runnable closeBackends) {
        closeBackends.run();
        clearSecret();
        sessionLost = error;
        released = true;
        services.sessions().released();
        ctx.executor().schedule(this::closeSession, LOST_SESSION_GRACE.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * While Gantry drains, a session that is ready and outside a transaction ends: its backends go now and its next
     * command (or one already queued) is answered with {@link SessionErrors#shuttingDown}. A session inside a
     * transaction, or with a command running, goes on; it comes here again when its command is done.
     */
    void endIfIdleForDrain() {
        if (phase != Phase.READY || sessionLost != null
                || ServerStatus.has(lastStatus, ServerStatus.SERVER_STATUS_IN_TRANS)) {
            return;
        }
        LOG.debug("session {}: closing for the drain: no transaction open", id);
        endSession(SessionErrors.shuttingDown(), onClose);
    }

    void closeSession() {
        if (isClosed()) {
            return;
        }
        phase = Phase.CLOSED;
        released = true;
        onClose.run();
        Packet packet;
        while ((packet = queued.poll()) != null) {
            packet.release();
        }
        clearSecret();
        services.sessions().unregister(id);
        services.sessions().released();
        if (pendingLogin) {
            pendingLogin = false;
            services.login().gate().leave(host);
        }
        if (admitted) {
            admitted = false;
            services.sessions().closed();
        }
        if (ctx.channel().isActive()) {
            // Let a pending error reach the client first; the write's listener closes the channel.
            ctx.channel().eventLoop().schedule(() -> ctx.close(), 1, TimeUnit.SECONDS);
        }
    }

    // ---- SQL text Gantry sends ---------------------------------------------------------------------------------

    /**
     * A COM_QUERY payload for text Gantry made or changed. SQL text in Gantry holds one character per byte
     * (ISO-8859-1, as COM_QUERY texts are decoded and read-back values are), so it goes back to the server byte for
     * byte, whatever the connection's character set.
     */
    ByteBuf queryPayload(String sql) {
        byte[] command = queryCommand(sql);
        return ctx.alloc().buffer(command.length).writeBytes(command);
    }

    /** {@link #queryPayload} as bytes, for the session-state log. */
    static byte[] queryCommand(String sql) {
        byte[] command = new byte[sql.length() + 1];
        command[0] = (byte) CommandType.COM_QUERY.code();
        System.arraycopy(sql.getBytes(StandardCharsets.ISO_8859_1), 0, command, 1, sql.length());
        return command;
    }

    // ---- log text ----------------------------------------------------------------------------------------------

    /** A peer-chosen name as it may appear in a log line: control characters escaped, so no line can be forged. */
    static String printable(String text) {
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x20 || c == 0x7F) {
                if (out == null) {
                    out = new StringBuilder(text.length() + 8).append(text, 0, i);
                }
                out.append(String.format("\\x%02x", (int) c));
            } else if (out != null) {
                out.append(c);
            }
        }
        return out == null ? text : out.toString();
    }

    static String abbreviate(String sql) {
        String oneLine = sql.replaceAll("\\s+", " ").trim();
        return oneLine.length() <= 120 ? oneLine : oneLine.substring(0, 117) + "...";
    }

    static void releaseIfHeld(Packet packet) {
        if (packet.refCnt() > 0) {
            packet.release();
        }
    }
}
