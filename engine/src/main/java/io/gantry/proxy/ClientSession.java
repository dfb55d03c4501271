package io.gantry.proxy;

import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_ATTRS;
import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_WITH_DB;
import static io.gantry.wire.CapabilityFlags.CLIENT_DEPRECATE_EOF;
import static io.gantry.wire.CapabilityFlags.CLIENT_FOUND_ROWS;
import static io.gantry.wire.CapabilityFlags.CLIENT_IGNORE_SPACE;
import static io.gantry.wire.CapabilityFlags.CLIENT_INTERACTIVE;
import static io.gantry.wire.CapabilityFlags.CLIENT_LOCAL_FILES;
import static io.gantry.wire.CapabilityFlags.CLIENT_LONG_FLAG;
import static io.gantry.wire.CapabilityFlags.CLIENT_LONG_PASSWORD;
import static io.gantry.wire.CapabilityFlags.CLIENT_MULTI_RESULTS;
import static io.gantry.wire.CapabilityFlags.CLIENT_MULTI_STATEMENTS;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA;
import static io.gantry.wire.CapabilityFlags.CLIENT_PROTOCOL_41;
import static io.gantry.wire.CapabilityFlags.CLIENT_PS_MULTI_RESULTS;
import static io.gantry.wire.CapabilityFlags.CLIENT_SECURE_CONNECTION;
import static io.gantry.wire.CapabilityFlags.CLIENT_SESSION_TRACK;
import static io.gantry.wire.CapabilityFlags.CLIENT_TRANSACTIONS;

import io.gantry.route.ReplicaCandidate;
import io.gantry.route.RouteReason;
import io.gantry.route.RouteTarget;
import io.gantry.route.TransactionState;
import io.gantry.route.RouteDecision;
import io.gantry.route.ServerId;
import io.gantry.route.SessionRouteState;
import io.gantry.route.SqlMode;
import io.gantry.route.StatementClass;
import io.gantry.route.StatementClassifier;
import io.gantry.route.StatementFlag;
import io.gantry.route.StatementKind;
import io.gantry.route.ReadBalance;
import io.gantry.topology.Role;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import io.gantry.wire.ChangeUser;
import io.gantry.wire.ClientHandshake;
import io.gantry.wire.ColumnDefinition;
import io.gantry.wire.TextResultSet;
import io.gantry.wire.CommandType;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.HandshakeResponse41;
import io.gantry.wire.HandshakeV10;
import io.gantry.wire.MalformedPacketException;
import io.gantry.wire.NativePassword;
import io.gantry.wire.OkPacket;
import io.gantry.wire.Packet;
import io.gantry.wire.PacketDecodeFailure;
import io.gantry.wire.PacketFrameDecoder;
import io.gantry.wire.PacketFrameEncoder;
import io.gantry.wire.ResponseFraming;
import io.gantry.wire.ServerStatus;
import io.gantry.wire.SslRequest;
import io.gantry.wire.StmtPrepareOk;
import io.netty.buffer.Unpooled;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.Future;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection: the MySQL handshake with the client, then each command routed to a backend and its
 * response forwarded packet by packet. While a command runs the client channel does not read (back-pressure and
 * strict ordering); while the client cannot keep up, the backend channel does not read either.
 */
final class ClientSession extends ChannelInboundHandlerAdapter {

    private static final Logger LOG = LoggerFactory.getLogger(ClientSession.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Map<UpstreamServer, ServerId> SERVER_IDS = new java.util.concurrent.ConcurrentHashMap<>();

    /** What Gantry offers clients. Everything here is forwarded to backends unchanged. */
    static final int SERVER_CAPABILITIES = CLIENT_LONG_PASSWORD | CLIENT_FOUND_ROWS | CLIENT_LONG_FLAG
            | CLIENT_CONNECT_WITH_DB | CLIENT_LOCAL_FILES | CLIENT_IGNORE_SPACE | CLIENT_PROTOCOL_41
            | CLIENT_INTERACTIVE | CLIENT_TRANSACTIONS | CLIENT_SECURE_CONNECTION | CLIENT_MULTI_STATEMENTS
            | CLIENT_MULTI_RESULTS | CLIENT_PS_MULTI_RESULTS | CLIENT_PLUGIN_AUTH | CLIENT_CONNECT_ATTRS
            | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA | CLIENT_SESSION_TRACK | CLIENT_DEPRECATE_EOF;

    /** Stands for the primary in routing when none is known; a decision for it is answered with an error. */
    private static final ServerId NO_PRIMARY = new ServerId("(no primary)");
    private static final int UTF8MB4_GENERAL_CI = 45;
    private static final int MAX_QUEUED_COMMANDS = 16;
    /** ER_NO_SUCH_THREAD: what a server answers a KILL of a thread that has ended. */
    private static final int UNKNOWN_THREAD = 1094;
    private static final int MAX_QUEUED_BYTES = 1 << 20;
    /** Response packets up to this size are copied into the burst's buffer; larger ones are written as slices. */
    private static final int BATCH_COPY_LIMIT = 8 * 1024;
    /** How long a session whose server side is gone waits for the client's next command to tell it why. */
    private static final Duration LOST_SESSION_GRACE = Duration.ofSeconds(60);

    private enum Phase { GREETING_SENT, AUTHENTICATING, OPENING_BACKEND, READY, RUNNING, CLOSED }

    /** What the session knows of one of its backend connections. */
    private static final class BackendUse {
        /** The session-state log version this connection has applied. */
        long appliedStateVersion;
        /** The value of {@link #commands} when this connection last ran a command of the client's. */
        long lastCommand;
        /** What it holds that replaying the settings cannot rebuild. */
        final EnumSet<HeldState> held = HeldState.none();
    }

    private final ProxyServer proxy;
    private final long id;
    private final byte[] seed = new byte[NativePassword.SEED_LENGTH];
    private final Map<ServerId, BackendConnection> connections = new HashMap<>();
    private final Map<BackendConnection, BackendUse> backendUses = new IdentityHashMap<>();
    private final SessionStateLog stateLog = new SessionStateLog();
    /** Server thread id of each backend connection, by {@code host:port}; read by other sessions' KILL. */
    private final Map<String, Long> backendThreads = new java.util.concurrent.ConcurrentHashMap<>();
    private final PreparedStatements prepared = new PreparedStatements();
    private final ArrayDeque<Packet> queued = new ArrayDeque<>();
    private long queuedBytes;
    /** Response packets of the current read burst, framed, not yet written. */
    private ByteBuf batch;
    private ChannelHandlerContext ctx;
    private Phase phase = Phase.GREETING_SENT;
    /** Counted as a session toward {@code --max-client-connections}: from the end of the login on. */
    private boolean admitted;
    /** Counted by the login gate: from the connection until the login ends. */
    private boolean pendingLogin;
    private String host = "";
    private int capabilities;
    /** MariaDB extended capabilities negotiated with the client (0 for MySQL clients and primaries). */
    private int mariaDbCapabilities;
    private int offeredCapabilities;
    private int offeredMariaDbCapabilities;
    private int collationId = UTF8MB4_GENERAL_CI;
    private String user = "";
    private String initialDatabase = "";
    private int lastStatus = ServerStatus.SERVER_STATUS_AUTOCOMMIT;
    private SessionRouteState routeState = SessionRouteState.INITIAL;
    private ClientAuthentication authentication;
    /** The client's secret for backend logins; only here, cleared when the session ends or changes user. */
    private BackendSecret secret;
    private boolean tlsActive;
    private BackendConnection throttledBackend;
    private BackendConnection awaitingClientData;
    /** Set when the session's server side is gone: the answer to the client's next command, before the close. */
    private ErrPacket sessionLost;
    /** Commands the client has sent: tells whether the session was idle since a backend connection's last use. */
    private long commands;

    ClientSession(ProxyServer proxy, long id) {
        this.proxy = proxy;
        this.id = id;
    }

    // ---- connection phase --------------------------------------------------------------------------------------

    @Override
    public void channelActive(ChannelHandlerContext context) {
        this.ctx = context;
        this.host = remoteHost();
        if (proxy.sessionsFull()) {
            proxy.peerWarnings().warn("full", "session {}: refused {}, --max-client-connections ({}) reached", id,
                    host, proxy.config().maxClientConnections());
            sendErrorAndClose(0, tooManyConnections());
            return;
        }
        Optional<LoginGate.Refusal> refusal = proxy.loginGate().admit(host);
        if (refusal.isPresent()) {
            refuse(refusal.get());
            return;
        }
        pendingLogin = true;
        Duration timeout = proxy.config().login().handshakeTimeout();
        context.executor().schedule(() -> {
            if (pendingLogin && phase != Phase.CLOSED) {
                proxy.peerWarnings().warn("login-timeout", "session {}: closing, {} did not log in within {} s "
                        + "(--connect-timeout-secs)", id, host, timeout.toSeconds());
                closeSession();
            }
        }, timeout.toMillis(), TimeUnit.MILLISECONDS);
        proxy.register(id, this);
        RANDOM.nextBytes(seed);
        for (int i = 0; i < seed.length; i++) {
            // Seed bytes are NUL-terminated on the wire; keep them printable like servers do.
            seed[i] = (byte) (seed[i] & 0x7F);
            if (seed[i] == 0 || seed[i] == '$') {
                seed[i] = 'G';
            }
        }
        // The primary's version, capabilities, MariaDB extended capabilities and collation (see ServerGreetings).
        HandshakeV10 greeting = proxy.clientGreeting(id & 0xFFFF_FFFFL, seed);
        offeredCapabilities = greeting.capabilities();
        offeredMariaDbCapabilities = greeting.mariaDbCapabilities();
        ByteBuf out = context.alloc().buffer(128);
        greeting.encode(out);
        context.writeAndFlush(new Packet(0, out));
    }

    /** A new connection the login gate refused: the server's own errors for the two cases, and one log line. */
    private void refuse(LoginGate.Refusal refusal) {
        if (refusal instanceof LoginGate.Refusal.Blocked blocked) {
            long seconds = Math.max(1, blocked.left().toSeconds());
            proxy.peerWarnings().warn("blocked", "session {}: refused {}, blocked after failed logins for {} more s",
                    id, host, seconds);
            sendErrorAndClose(0, ErrPacket.of(1129, "HY000", "Host '" + host + "' is blocked because of many "
                    + "connection errors (Gantry: failed logins; retry in " + seconds + " s)"));
        } else {
            LoginGate.Refusal.TooManyPending pending = (LoginGate.Refusal.TooManyPending) refusal;
            String flag = pending.perHost() ? "--max-pending-logins-per-host" : "--max-pending-logins";
            proxy.peerWarnings().warn("pending", "session {}: refused {}, {} connections are logging in ({} {})",
                    id, host, pending.pending(), flag, pending.limit());
            sendErrorAndClose(0, ErrPacket.of(1040, "08004", "Too many connections (" + pending.pending()
                    + " connections " + (pending.perHost() ? "from " + host + " " : "") + "are still logging in; "
                    + "Gantry's " + flag + " is " + pending.limit() + ")"));
        }
    }

    private ErrPacket tooManyConnections() {
        return ErrPacket.of(1040, "08004", "Too many connections (Gantry's --max-client-connections is "
                + proxy.config().maxClientConnections() + ")");
    }

    /**
     * The client logged in: it stops counting as a pending login and starts counting as a session (a
     * COM_CHANGE_USER keeps its slot), and the packet size cap goes from the login bound to
     * {@code --max-allowed-packet}. Returns false after refusing the session when sessions are full.
     */
    private boolean finishLogin(int okSequence) {
        if (pendingLogin) {
            pendingLogin = false;
            proxy.loginGate().leave(host);
            raisePacketCap();
        }
        proxy.loginGate().succeeded(host);
        if (!admitted) {
            if (!proxy.admitSession()) {
                proxy.peerWarnings().warn("full", "session {}: refused '{}'@'{}', --max-client-connections ({}) "
                        + "reached", id, printable(user), host, proxy.config().maxClientConnections());
                sendErrorAndClose(okSequence, tooManyConnections());
                return false;
            }
            admitted = true;
        }
        return true;
    }

    /** Swaps the login-sized frame decoder for one capped at {@code --max-allowed-packet}. */
    private void raisePacketCap() {
        PacketFrameDecoder login = ctx.pipeline().get(PacketFrameDecoder.class);
        ByteBuf early = login.takeUndecodedBytes();
        PacketFrameDecoder full = new PacketFrameDecoder(proxy.config().maxPacketSize());
        ctx.pipeline().replace(login, "frames", full);
        if (early.isReadable()) {
            try {
                full.channelRead(ctx.pipeline().context(full), early); // (rare: clients wait for the OK)
            } catch (Exception e) {
                throw new IllegalStateException("session " + id + ": cannot hand early bytes to the decoder", e);
            }
        } else {
            early.release();
        }
    }

    /** A failed login from this host; blocks the host when it is one too many. */
    private void loginFailed() {
        proxy.loginGate().failed(host).ifPresent(proxy::hostBlocked);
    }

    @Override
    public void channelRead(ChannelHandlerContext context, Object message) {
        if (message instanceof PacketDecodeFailure failure) {
            proxy.peerWarnings().warn("bad-packet", "session {}: closing, bad packet from {}: {}", id, host,
                    failure.message());
            boolean tooLarge = failure.reason() == PacketDecodeFailure.Reason.TOO_LARGE;
            if (pendingLogin) {
                loginFailed();
            }
            sendErrorAndClose(failure.sequenceId() + 1, !tooLarge
                    ? ErrPacket.of(1835, "HY000", "Malformed communication packet: " + failure.message())
                    : pendingLogin ? ErrPacket.of(1153, "08S01", "Got a packet bigger than a login may send ("
                    + failure.sizeFound() + " > " + failure.cap() + " bytes before login)")
                    : ErrPacket.of(1153, "08S01", "Got a packet bigger than 'max_allowed_packet' bytes ("
                    + failure.sizeFound() + " > " + failure.cap() + ")"));
            return;
        }
        Packet packet = (Packet) message;
        Phase before = phase;
        try {
            switch (phase) {
                case GREETING_SENT -> onHandshakeResponse(packet);
                case AUTHENTICATING -> onAuthPacket(packet);
                case READY -> dispatch(packet);
                case OPENING_BACKEND, RUNNING -> {
                    if (awaitingClientData != null) {
                        forwardClientData(packet);
                    } else {
                        queue(packet);
                    }
                }
                case CLOSED -> packet.release();
            }
        } catch (MalformedPacketException e) {
            if (before == Phase.READY && phase == Phase.READY) {
                // A command the session could not read, refused before it changed anything: as the server
                // does, the client gets the server's error and the session goes on.
                boolean readable = packet.refCnt() > 0;
                CommandType command = readable ? CommandType.of(packet.payload()) : CommandType.COM_QUERY;
                boolean idCutOff = readable && packet.payload().readableBytes() < 5;
                releaseIfHeld(packet);
                LOG.debug("session {}: malformed {} from client: {}", id, command, e.getMessage());
                malformedCommandError(command, idCutOff).ifPresent(error -> {
                    writeError(1, error);
                    ctx.flush();
                });
                return;
            }
            // The handler may have released the packet already: releasing twice would log a stack trace per packet.
            releaseIfHeld(packet);
            if (pendingLogin) {
                loginFailed();
            }
            proxy.peerWarnings().warn("malformed", "session {}: closing, malformed packet from {}: {}", id, host,
                    e.getMessage());
            sendErrorAndClose(packet.sequenceId() + 1, ErrPacket.of(1835, "HY000",
                    "Malformed communication packet: " + e.getMessage()));
        } catch (RuntimeException e) {
            releaseIfHeld(packet);
            LOG.error("session {}: closing after an unexpected error: {}", id, e.toString(), e);
            sendErrorAndClose(packet.sequenceId() + 1, ErrPacket.of(1105, "HY000", "Gantry internal error: " + e));
        }
    }

    /**
     * What the server answers a command it cannot read: nothing for the commands that never get an answer
     * (COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA), 1210 for a COM_STMT_EXECUTE whose parameters are cut off, 1243
     * for a reset or fetch of a cut-off statement id, 1835 for the rest (as MariaDB does; compared in
     * {@code SessionTrustIT}).
     */
    private static Optional<ErrPacket> malformedCommandError(CommandType command, boolean statementIdCutOff) {
        return switch (command) {
            case COM_STMT_SEND_LONG_DATA, COM_STMT_CLOSE -> Optional.empty();
            case COM_STMT_EXECUTE -> Optional.of(statementIdCutOff
                    ? ErrPacket.of(1835, "08S01", "Malformed communication packet")
                    : ErrPacket.of(1210, "HY000", "Incorrect arguments to mysqld_stmt_execute"));
            // the server reads a cut-off id as statement 0, which never exists
            case COM_STMT_RESET -> Optional.of(ErrPacket.of(1243, "HY000",
                    "Unknown prepared statement handler (0) given to mysqld_stmt_reset"));
            case COM_STMT_FETCH -> Optional.of(ErrPacket.of(1243, "HY000",
                    "Unknown prepared statement handler (0) given to mysqld_stmt_fetch"));
            default -> Optional.of(ErrPacket.of(1835, "08S01", "Malformed communication packet"));
        };
    }

    private void onHandshakeResponse(Packet packet) {
        ClientHandshake handshake;
        try {
            handshake = ClientHandshake.decode(packet.payload());
        } finally {
            packet.release();
        }
        if (handshake instanceof SslRequest) {
            startTls(packet.sequenceId());
            return;
        }
        HandshakeResponse41 response = (HandshakeResponse41) handshake;
        capabilities = response.capabilities() & SERVER_CAPABILITIES & offeredCapabilities;
        mariaDbCapabilities = response.mariaDbCapabilities() & offeredMariaDbCapabilities;
        collationId = response.characterSet() == 0 ? UTF8MB4_GENERAL_CI : response.characterSet();
        user = response.username();
        initialDatabase = (capabilities & CLIENT_CONNECT_WITH_DB) != 0 ? response.database() : "";
        authentication = new ClientAuthentication(seed, tlsActive, proxy.rsaKey(), remoteHost());
        apply(authentication.onHandshakeResponse(user, response.authPluginName(), response.authResponse()),
                packet.sequenceId() + 1);
    }

    /**
     * SSLRequest: the rest of the exchange runs over TLS. The client sends its TLS ClientHello right behind the
     * request, so bytes already read past it are handed to the TLS handler rather than decoded as packets.
     */
    private void startTls(int sequenceId) {
        if (proxy.sslContext().isEmpty() || tlsActive) {
            sendErrorAndClose(sequenceId + 1, ErrPacket.of(1045, "28000",
                    "TLS is not enabled on this Gantry (start it with --tls-cert/--tls-key); connect without TLS"));
            return;
        }
        tlsActive = true;
        PacketFrameDecoder decoder = ctx.pipeline().get(PacketFrameDecoder.class);
        ByteBuf alreadyRead = decoder.takeUndecodedBytes();
        ctx.pipeline().addFirst("tls", proxy.sslContext().get().newHandler(ctx.alloc()));
        // Synchronously: the rest of the ClientHello may be in this same read burst and must come after it. The
        // TLS handler only answers a ClientHello, it passes nothing on, so the decoder is not re-entered.
        if (alreadyRead.isReadable()) {
            ctx.pipeline().fireChannelRead(alreadyRead);
        } else {
            alreadyRead.release();
        }
    }

    private void onAuthPacket(Packet packet) {
        byte[] data = ByteBufUtil.getBytes(packet.payload());
        packet.release();
        apply(authentication.onClientPacket(data), packet.sequenceId() + 1);
    }

    private void apply(ClientAuthentication.Step step, int firstSequence) {
        int sequence = firstSequence;
        for (byte[] payload : step.packets()) {
            ctx.write(new Packet(sequence++ & 0xFF, ctx.alloc().buffer(payload.length).writeBytes(payload)));
        }
        int next = sequence;
        switch (step.outcome()) {
            case CONTINUE -> {
                phase = Phase.AUTHENTICATING;
                ctx.flush();
            }
            case LOOKUP -> proxy.lookupAccount(user).whenComplete((entries, failure) -> ctx.executor().execute(() -> {
                if (phase == Phase.CLOSED) {
                    return;
                }
                if (failure != null) {
                    Throwable cause = failure.getCause() == null ? failure : failure.getCause();
                    LOG.error("session {}: cannot look up the account '{}': {}", id, printable(user),
                            cause.getMessage());
                    // Never 1045/28000 here: pools take that for bad credentials and stop retrying. SQLState class
                    // 08 (connection exception) is what drivers and pools treat as "cannot reach the server, retry".
                    sendErrorAndClose(next, ErrPacket.of(1105, "08S01", "Gantry cannot check the account '" + user
                            + "': the servers cannot be reached (" + cause.getMessage() + ")"));
                    return;
                }
                apply(authentication.onAccounts(entries), next);
            }));
            case ACCEPT -> {
                clearSecret();
                secret = step.secret();
                openFirstBackend(sequence);
            }
            case DENY -> {
                proxy.peerWarnings().warn("denied", "session {}: access denied for '{}'@'{}' ({}, {})", id,
                        printable(user), host, authentication.plugin(), step.reason());
                loginFailed();
                sendErrorAndClose(sequence, step.error());
            }
        }
    }

    /**
     * Logs in to one backend before telling the client it is in, so that what a server would refuse at login
     * (an unknown database, an account it does not know) is refused here too, with the server's own error.
     */
    private void openFirstBackend(int okSequence) {
        phase = Phase.OPENING_BACKEND;
        Upstreams upstreams = proxy.upstreams();
        Optional<UpstreamServer> first = upstreams.primary().or(() -> upstreams.upReplicas().stream().findFirst());
        if (first.isEmpty()) {
            sendErrorAndClose(okSequence, ErrPacket.of(1105, "HY000", "Gantry: no server is available: "
                    + upstreams.noPrimaryReason()));
            return;
        }
        obtain(first.get()).addListener(future -> {
            if (!future.isSuccess()) {
                sendErrorAndClose(okSequence, backendError(first.get(), future.cause()));
                return;
            }
            if (!finishLogin(okSequence)) {
                return;
            }
            LOG.debug("session {}: '{}'@'{}' logged in", id, printable(user), host);
            writeOk(okSequence);
            ctx.flush();
            commandDone();
        });
    }

    // ---- command phase -----------------------------------------------------------------------------------------

    private void dispatch(Packet packet) {
        if (packet.sequenceId() != 0) {
            // Every command starts a new exchange at sequence 0; anything else means client and proxy disagree.
            packet.release();
            LOG.warn("session {}: closing, command packet with sequence id {} instead of 0", id, packet.sequenceId());
            sendErrorAndClose(packet.sequenceId() + 1, ErrPacket.of(1156, "08S01", "Got packets out of order"));
            return;
        }
        if (sessionLost != null) {
            packet.release();
            sendErrorAndClose(1, sessionLost);
            return;
        }
        CommandType command = CommandType.of(packet.payload());
        commands++;
        switch (command) {
            case COM_QUIT -> {
                packet.release();
                closeSession();
            }
            case COM_PING -> onPing(packet);
            case COM_QUERY -> onQuery(packet);
            case COM_INIT_DB, COM_SET_OPTION -> runOnPrimary(packet, true);
            case COM_FIELD_LIST, COM_STATISTICS -> runOnPrimary(packet, false);
            case COM_RESET_CONNECTION -> onResetConnection(packet);
            case COM_STMT_PREPARE -> onPrepare(packet);
            case COM_STMT_EXECUTE -> onExecute(packet);
            case COM_STMT_SEND_LONG_DATA -> onLongData(packet);
            case COM_STMT_RESET -> onStatementReset(packet);
            case COM_STMT_CLOSE -> onStatementClose(packet);
            case COM_STMT_FETCH -> onFetch(packet);
            case COM_CHANGE_USER -> onChangeUser(packet);
            default -> {
                packet.release();
                writeError(1, ErrPacket.of(1047, "08S01", "Unknown command " + command + " (Gantry)"));
                ctx.flush();
            }
        }
    }

    private void onQuery(Packet packet) {
        ByteBuf payload = packet.payload();
        // Routing only needs keywords; ISO-8859-1 maps every byte to one char and cannot fail to decode.
        String sql = payload.toString(payload.readerIndex() + 1, payload.readableBytes() - 1,
                StandardCharsets.ISO_8859_1);
        Optional<CompletionStage<AdminReply>> admin = proxy.adminHandler().handle(sql, user, sqlMode());
        if (admin.isPresent()) {
            packet.release();
            runAdmin(admin.get());
            return;
        }
        SessionIdentitySql.KillText kill = SessionIdentitySql.inspectKill(sql, sqlMode());
        if (kill instanceof SessionIdentitySql.KillText.Single single) {
            packet.release();
            onKill(single.kill());
            return;
        }
        if (kill instanceof SessionIdentitySql.KillText.Refused refused) {
            // Never forwarded: the server would take a Gantry session id for one of its thread ids.
            packet.release();
            writeError(1, refused.error());
            ctx.flush();
            return;
        }
        Packet command = packet;
        String withId = SessionIdentitySql.withSessionId(sql, id);
        if (!withId.equals(sql)) {
            // CONNECTION_ID() is the Gantry session's id, whichever backend runs the statement.
            command = new Packet(0, queryPayload(withId));
            packet.release();
        }
        runQuery(command, sql, withId, true);
    }

    /**
     * Routes and runs a COM_QUERY.
     *
     * @param sql the client's text; {@code withId} the text as sent (with the session id in place of
     *        {@code CONNECTION_ID()})
     * @param mayGoElsewhere whether a plain read may be routed again when its replica turns out unreachable
     */
    private void runQuery(Packet command, String sql, String withId, boolean mayGoElsewhere) {
        Routed routed = route(withId, true);
        if (routed == null) {
            command.release();
            return;
        }
        byte[] stateCommand = routed.statement().kind() == StatementKind.SESSION_STATE
                ? ByteBufUtil.getBytes(command.payload()) : null;
        AfterResponse after = afterStatement(routed.statement(), withId, stateCommand);
        ResponseRewriter rewriter = withId == sql ? NO_REWRITE : connectionIdColumns(sql, withId);
        // A read that would open a new connection to a replica loses nothing if that replica is gone: obtain()
        // marks it down and the read is routed again, once, instead of ending the session.
        boolean fresh = mayGoElsewhere && routed.statement().kind() == StatementKind.READ
                && routed.server().role() == Role.REPLICA && !connections.containsKey(idOf(routed.server()));
        Runnable elsewhere = fresh ? () -> {
            LOG.info("session {}: {} cannot be reached; routing the read again", id, routed.server().address());
            runQuery(command, sql, withId, false);
        } : null;
        run(command, routed.server(), connection -> forward(command, connection, after, rewriter), elsewhere);
    }

    /** Column definitions named and typed as direct for {@code CONNECTION_ID()} (see {@link ConnectionIdColumns}). */
    private ResponseRewriter connectionIdColumns(String original, String rewritten) {
        ConnectionIdColumns columns = ConnectionIdColumns.of(original, rewritten,
                ServerStatus.has(lastStatus, ServerStatus.SERVER_STATUS_NO_BACKSLASH_ESCAPES));
        return (response, framing) -> {
            ResponseFraming.PacketKind kind = framing.lastPacketKind();
            ByteBuf payload = columns.rewrite(response.payload(), kind == ResponseFraming.PacketKind.COLUMN_COUNT,
                    kind == ResponseFraming.PacketKind.COLUMN_DEFINITION, ctx.alloc());
            return payload == response.payload() ? response : new Packet(response.sequenceId(), payload);
        };
    }

    /**
     * COM_PING is answered here, unless a backend connection holds state that replay cannot rebuild: then the
     * ping goes to that connection, so its server's idle clock restarts as it would for a direct client.
     */
    private void onPing(Packet packet) {
        BackendConnection holder = connectionHolding(false);
        if (holder == null) {
            packet.release();
            writeOk(1);
            ctx.flush();
            return;
        }
        run(packet, holder.server(), connection -> forward(packet, connection, NOTHING_MORE, NO_REWRITE));
    }

    /**
     * {@code KILL [QUERY|CONNECTION] n} with a Gantry session id: the KILL of each of that session's backend
     * threads runs on this session's own connection to the same server, so the server applies its own privilege
     * rules (the same account, or CONNECTION ADMIN / SUPER).
     */
    private void onKill(SessionIdentitySql.Kill kill) {
        Optional<ClientSession> found = proxy.session(kill.sessionId());
        if (found.isEmpty()) {
            writeError(1, ErrPacket.of(1094, "HY000", "Unknown thread id: " + kill.sessionId()));
            ctx.flush();
            return;
        }
        ClientSession target = found.get();
        if (target == this && !kill.queryOnly()) {
            writeOk(1);
            ctx.flush();
            closeSession();
            return;
        }
        List<Map.Entry<String, Long>> threads = new ArrayList<>(target.backendThreads.entrySet());
        if (threads.isEmpty() && !target.user.equals(user)) {
            writeError(1, ErrPacket.of(1095, "HY000", "You are not owner of thread " + kill.sessionId()));
            ctx.flush();
            return;
        }
        phase = Phase.RUNNING;
        killNext(threads, 0, kill, target);
    }

    private void killNext(List<Map.Entry<String, Long>> threads, int index, SessionIdentitySql.Kill kill,
                          ClientSession target) {
        if (index == threads.size()) {
            if (!kill.queryOnly()) {
                target.ctx.channel().eventLoop().execute(target::closeSession);
            }
            writeOk(1);
            ctx.flush();
            commandDone();
            return;
        }
        Map.Entry<String, Long> thread = threads.get(index);
        Optional<UpstreamServer> server = proxy.upstreams().find(thread.getKey()).filter(UpstreamServer::isReachable);
        if (server.isEmpty()) {
            killNext(threads, index + 1, kill, target); // a server that is down runs nothing of the session
            return;
        }
        obtain(server.get()).addListener(future -> {
            if (!future.isSuccess()) {
                killNext(threads, index + 1, kill, target);
                return;
            }
            ByteBuf payload = queryPayload(kill.serverText(thread.getValue()));
            InternalCommand.run((BackendConnection) future.getNow(), payload, (first, error) -> {
                if (error != null && error.errorCode() != UNKNOWN_THREAD) {
                    // The server's own refusal, told about the Gantry session the client named.
                    writeError(1, error.errorCode() == 1095
                            ? ErrPacket.of(1095, error.sqlState(), "You are not owner of thread " + kill.sessionId())
                            : error);
                    ctx.flush();
                    commandDone();
                } else {
                    // Done, or that backend thread had ended already (the target session may be closing its other
                    // connections while this KILL runs): on to the next one.
                    killNext(threads, index + 1, kill, target);
                }
            }, failure -> sendErrorAndClose(1, backendError(server.get(), failure)));
        });
    }

    /** Gantry's own SQL: the reply is computed off the event loop and written back on it. */
    private void runAdmin(CompletionStage<AdminReply> reply) {
        phase = Phase.RUNNING;
        reply.whenComplete((answer, failure) -> ctx.executor().execute(() -> {
            if (phase == Phase.CLOSED) {
                return;
            }
            if (failure != null) {
                LOG.error("session {}: admin statement failed: {}", id, failure.toString(), failure);
                writeError(1, ErrPacket.of(1105, "HY000", "Gantry admin statement failed: " + failure.getMessage()));
            } else {
                writeAdminReply(answer);
            }
            ctx.flush();
            commandDone();
        }));
    }

    private void writeAdminReply(AdminReply reply) {
        if (reply instanceof AdminReply.Rows rows) {
            List<ColumnDefinition> columns = rows.columns().stream()
                    .map(name -> ColumnDefinition.text("gantry", "", name)).toList();
            int sequence = 1;
            for (ByteBuf payload : TextResultSet.encode(columns, rows.rows(), capabilities, mariaDbCapabilities,
                    localStatus(), ctx.alloc())) {
                ctx.write(new Packet(sequence++ & 0xFF, payload));
            }
        } else if (reply instanceof AdminReply.Ok ok) {
            // No info text: mysql-connector-j misreads an OK's info unless it is empty, and the message is logged.
            LOG.info("session {}: admin statement done: {}", id, ok.message());
            ByteBuf out = ctx.alloc().buffer(16);
            OkPacket.of(ok.affectedRows(), 0, localStatus(), 0).encode(out, capabilities);
            ctx.write(new Packet(1, out));
        } else {
            writeError(1, ((AdminReply.Error) reply).error());
        }
    }

    /** Where a statement runs, and what it is. */
    private record Routed(UpstreamServer server, StatementClass statement) {
    }

    /**
     * Decides where a SQL text runs. With {@code commit}, the session's routing state moves on (the statement will
     * run); without, it is only asked. Returns null after answering the client with an error when there is no
     * server for it.
     */
    private Routed route(String sql, boolean commit) {
        StatementClass statement = StatementClassifier.classify(sql, sqlMode());
        if (commit && statement.kind() == StatementKind.SESSION_STATE && stateLog.isFull() && !routeState.pinned()) {
            LOG.info("session {}: more than {} distinct session settings; staying on the primary", id,
                    SessionStateLog.MAX_DISTINCT_COMMANDS);
            routeState = routeState.withPin(StatementFlag.MIXED_SESSION_STATE);
        }
        Upstreams upstreams = proxy.upstreams();
        Optional<UpstreamServer> primary = upstreams.primary();
        ServerId primaryId = primary.map(ClientSession::idOf).orElse(NO_PRIMARY);
        List<ReplicaCandidate> replicas = new ArrayList<>();
        for (UpstreamServer server : upstreams.servers()) {
            if (primary.orElse(null) != server && server.role() == Role.REPLICA) {
                replicas.add(new ReplicaCandidate(idOf(server), server.weight(), server.isUp(), true));
            }
        }
        RouteDecision decision = proxy.router().route(statement, routeState, proxy.config().routing(), primaryId,
                replicas);
        if (decision.server().equals(NO_PRIMARY) && statement.kind() == StatementKind.SESSION_STATE
                && decision.reason() == RouteReason.SESSION_STATE_CHANGE && !routeState.pinned()) {
            // Without a primary a session setting runs where the session's reads run, and is replayed from
            // there: drivers send settings at connect time, and reads from replicas must go on meanwhile.
            RouteDecision asRead = proxy.router().route(StatementClass.of(StatementKind.READ), routeState,
                    proxy.config().routing(), primaryId, replicas);
            if (!asRead.server().equals(NO_PRIMARY)) {
                decision = asRead;
            }
        }
        if (decision.server().equals(NO_PRIMARY)) {
            writeError(1, ErrPacket.of(1290, "HY000", "Gantry cannot run this statement: " + upstreams.noPrimaryReason()));
            ctx.flush();
            return null;
        }
        if (LOG.isDebugEnabled()) {
            LOG.debug("session {}: {} -> {}", id, abbreviate(sql), decision.describe());
        }
        if (commit && decision.reason() == RouteReason.WRITE_IN_READ_ONLY_TRANSACTION) {
            writeError(1, ErrPacket.of(1792, "25006", "Cannot execute statement in a READ ONLY transaction."));
            ctx.flush();
            return null;
        }
        if (commit && decision.target() == RouteTarget.PRIMARY && routeState.pinned()) {
            BackendConnection holder = connectionHolding(true);
            if (holder != null && !idOf(holder.server()).equals(decision.server())) {
                String held = HeldState.describe(backendUses.get(holder).held);
                LOG.warn("session {}: the primary is now {}, but the session's {} are on {}; closing the session",
                        id, decision.server().hostPort(), held, holder.server().address());
                sendErrorAndClose(1, sessionEnded("Gantry: the primary is now "
                        + decision.server().hostPort() + ", but this session's " + held + " stayed on "
                        + holder.server().address() + "; this session is closed, reconnect"));
                return null;
            }
        }
        if (commit) {
            if (decision.reason() == RouteReason.BEGINS_READ_WRITE_TRANSACTION
                    && routeState.transaction() instanceof TransactionState.ReadOnly readOnly
                    && !readOnly.server().equals(decision.server())) {
                // On a real server BEGIN commits the open transaction first; do that on the replica that holds it.
                endTransactionOn(readOnly.server());
            }
            routeState = routeState.afterRouting(decision);
        }
        return new Routed(serverFor(decision.server(), upstreams), statement);
    }

    private void endTransactionOn(ServerId server) {
        BackendConnection connection = connections.get(server);
        if (connection == null || !connection.isUsable()) {
            return;
        }
        InternalCommand.run(connection, queryPayload("COMMIT"), (first, error) -> { },
                failure -> LOG.debug("session {}: ending the read-only transaction on {} failed: {}", id, server,
                        failure.getMessage()));
    }

    /** Commands that belong to the session (COM_INIT_DB, COM_SET_OPTION) or are best answered by the primary. */
    private void runOnPrimary(Packet packet, boolean sessionState) {
        Optional<UpstreamServer> primary = proxy.upstreams().primary();
        if (primary.isEmpty()) {
            packet.release();
            writeError(1, ErrPacket.of(1290, "HY000", "Gantry cannot run this command: "
                    + proxy.upstreams().noPrimaryReason()));
            ctx.flush();
            return;
        }
        AfterResponse after = sessionState ? afterStatement(null, null, ByteBufUtil.getBytes(packet.payload()))
                : NOTHING_MORE;
        run(packet, primary.get(), connection -> forward(packet, connection, after, NO_REWRITE));
    }

    /**
     * COM_CHANGE_USER: a new login on the open connection. Everything of the old session goes — backend
     * connections, settings, prepared statements, pins — and the login runs as at connect time.
     */
    private void onChangeUser(Packet packet) {
        ChangeUser change;
        try {
            change = ChangeUser.decode(packet.payload(), capabilities);
        } finally {
            packet.release();
        }
        closeAllBackends();
        stateLog.clear();
        routeState = SessionRouteState.INITIAL;
        lastStatus = ServerStatus.SERVER_STATUS_AUTOCOMMIT;
        user = change.username();
        initialDatabase = change.database();
        if (change.characterSet() != 0) {
            collationId = change.characterSet();
        }
        authentication = new ClientAuthentication(seed, tlsActive, proxy.rsaKey(), remoteHost());
        phase = Phase.OPENING_BACKEND;
        apply(authentication.onHandshakeResponse(user, change.authPluginName(), change.authResponse()), 1);
    }

    private void onResetConnection(Packet packet) {
        // Reset every backend of the session: the primary's answer goes to the client, the rest are closed.
        Optional<UpstreamServer> primary = proxy.upstreams().primary();
        for (Iterator<Map.Entry<ServerId, BackendConnection>> it = connections.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<ServerId, BackendConnection> entry = it.next();
            if (primary.isEmpty() || !entry.getKey().equals(idOf(primary.get()))) {
                entry.getValue().close();
                backendUses.remove(entry.getValue());
                prepared.forgetBackend(entry.getKey().hostPort());
                it.remove();
            }
        }
        prepared.clear();
        stateLog.clear();
        routeState = SessionRouteState.INITIAL;
        Optional<UpstreamServer> target = proxy.upstreams().primary();
        if (target.isEmpty()) {
            runOnPrimary(packet, false);
            return;
        }
        // The reset drops transactions, user variables, temporary tables and locks on the server.
        run(packet, target.get(), connection -> forward(packet, connection, (c, framing, done) -> {
            BackendUse use = backendUses.get(c);
            if (use != null && !framing.failed()) {
                use.held.clear();
            }
            done.run();
        }, NO_REWRITE));
    }

    /**
     * Runs a client command on a server: obtains (or opens) the session's connection to it, brings its session
     * state up to date, then hands the connection to {@code then} (which forwards the command).
     */
    private void run(Packet packet, UpstreamServer server, Consumer<BackendConnection> then) {
        run(packet, server, then, null);
    }

    /**
     * As {@link #run(Packet, UpstreamServer, Consumer)}; when {@code unreachable} is given and the server cannot be
     * reached at all (no connection was ever made), it runs instead of ending the session.
     */
    private void run(Packet packet, UpstreamServer server, Consumer<BackendConnection> then, Runnable unreachable) {
        phase = Phase.RUNNING;
        obtain(server).addListener(future -> {
            if (!future.isSuccess() && unreachable != null && future.cause() instanceof BackendFailure failure
                    && failure.serverUnreachable() && !server.isReachable()) {
                unreachable.run();
                return;
            }
            if (!future.isSuccess()) {
                packet.release();
                sendErrorAndClose(1, backendError(server, future.cause()));
                return;
            }
            BackendConnection connection = (BackendConnection) future.getNow();
            BackendUse use = backendUses.get(connection);
            if (use != null) {
                use.lastCommand = commands;
            }
            syncState(connection, () -> then.accept(connection), error -> failCommand(packet, error));
        });
    }

    /** Answers the running command with an error; the session goes on. */
    private void failCommand(Packet packet, ErrPacket error) {
        if (packet.refCnt() > 0) {
            packet.release();
        }
        writeError(1, error);
        ctx.flush();
        commandDone();
    }

    /** Looks at (and may rewrite) each response packet before it goes to the client; returns what to send. */
    private interface ResponseRewriter {
        Packet rewrite(Packet response, ResponseFraming framing);
    }

    private static final ResponseRewriter NO_REWRITE = (response, framing) -> response;

    /** What happens once a forwarded command's response is complete, before the session takes its next command. */
    private interface AfterResponse {
        void run(BackendConnection connection, ResponseFraming framing, Runnable done);
    }

    private static final AfterResponse NOTHING_MORE = (connection, framing, done) -> done.run();

    /**
     * Notes what a statement left on its connection and, for a session setting that succeeded, records how to
     * replay it.
     *
     * @param statement the statement's class, or null for a command that is not a statement
     * @param sql the text, or null when the command has no text to look into (COM_INIT_DB, COM_SET_OPTION)
     * @param stateCommand the session-setting command as sent, or null when it is not one
     */
    private AfterResponse afterStatement(StatementClass statement, String sql, byte[] stateCommand) {
        return (connection, framing, done) -> {
            BackendUse use = backendUses.get(connection);
            if (use == null) {
                done.run();
                return;
            }
            int status = framing.serverStatus();
            HeldState.afterStatement(use.held, statement, status, status != ResponseFraming.NO_STATUS);
            if (stateCommand == null || framing.failed()) {
                done.run();
            } else {
                recordSetting(connection, use, sql, stateCommand, done);
            }
        };
    }

    /**
     * Records a session setting that succeeded on {@code connection} for replay on the session's other backends,
     * as values: a setting made from an expression is read back first (see {@link SettingReplay}).
     */
    private void recordSetting(BackendConnection connection, BackendUse use, String sql, byte[] command,
                               Runnable done) {
        boolean noBackslashEscapes = ServerStatus.has(lastStatus, ServerStatus.SERVER_STATUS_NO_BACKSLASH_ESCAPES);
        SettingReplay replay = sql == null ? new SettingReplay.Verbatim() : SettingReplay.of(sql, noBackslashEscapes);
        if (replay instanceof SettingReplay.Verbatim) {
            use.appliedStateVersion = stateLog.record(command);
            done.run();
        } else if (replay instanceof SettingReplay.NotReplayable notReplayable) {
            keepOnThisConnection(use, notReplayable.why());
            done.run();
        } else {
            SettingReplay.ReadBack readBack = (SettingReplay.ReadBack) replay;
            InternalCommand.queryRow(connection, queryPayload(readBack.query()), (row, error) -> {
                if (error != null) {
                    keepOnThisConnection(use, "reading back '" + abbreviate(sql) + "' failed: " + error.message());
                } else {
                    List<String> literals = new ArrayList<>(row.size());
                    for (InternalCommand.Value value : row) {
                        literals.add(SettingReplay.literal(value.text(), value.numeric(), noBackslashEscapes));
                    }
                    use.appliedStateVersion = stateLog.record(queryCommand(readBack.replayText(literals)));
                }
                done.run();
            }, failure -> sendErrorAndClose(1, backendError(connection.server(), failure)));
        }
    }

    /** A setting that cannot be replayed: the session stays where it was made, and loses it with the connection. */
    private void keepOnThisConnection(BackendUse use, String why) {
        LOG.info("session {}: {}; the session stays on the primary", id, why);
        if (use != null) {
            use.held.add(HeldState.UNREPLAYED_SETTINGS);
        }
        if (!routeState.pinned()) {
            routeState = routeState.withPin(StatementFlag.MIXED_SESSION_STATE);
        }
    }

    /**
     * A COM_QUERY payload for text Gantry made or changed. SQL text in Gantry holds one character per byte
     * (ISO-8859-1, as {@link #onQuery} decodes it and read-back values are decoded), so it goes back to the server
     * byte for byte, whatever the connection's character set.
     */
    private ByteBuf queryPayload(String sql) {
        byte[] command = queryCommand(sql);
        return ctx.alloc().buffer(command.length).writeBytes(command);
    }

    /** {@link #queryPayload} as bytes, for the session-state log. */
    private static byte[] queryCommand(String sql) {
        byte[] command = new byte[sql.length() + 1];
        command[0] = (byte) CommandType.COM_QUERY.code();
        System.arraycopy(sql.getBytes(StandardCharsets.ISO_8859_1), 0, command, 1, sql.length());
        return command;
    }

    /**
     * A connection of the session that holds state replay cannot rebuild, or null.
     *
     * @param tyingOnly only state that ties the whole session to that server (not a transaction or a cursor)
     */
    private BackendConnection connectionHolding(boolean tyingOnly) {
        for (Map.Entry<BackendConnection, BackendUse> entry : backendUses.entrySet()) {
            Set<HeldState> held = entry.getValue().held;
            if (tyingOnly ? HeldState.tiesSession(held) : !held.isEmpty()) {
                return entry.getKey();
            }
        }
        return null;
    }

    /**
     * Sends the client's command and streams the response back.
     *
     * @param after what to do once the response is complete (record a setting, note held state)
     */
    private void forward(Packet packet, BackendConnection connection, AfterResponse after,
                         ResponseRewriter rewriter) {
        connection.execute(packet, new BackendConnection.ResponseListener() {
            @Override
            public void onPacket(Packet packet, ResponseFraming framing) {
                Packet response = rewriter.rewrite(packet, framing);
                writeToClient(response);
                if (framing.awaitingClient()) {
                    // LOCAL INFILE: the client now sends the file, ending with an empty packet.
                    awaitingClientData = connection;
                    flushBatch();
                } else if (!ctx.channel().isWritable()) {
                    throttledBackend = connection;
                    connection.setAutoRead(false);
                    flushBatch();
                }
            }

            @Override
            public void onBatchEnd() {
                flushBatch();
            }

            @Override
            public void onComplete(ResponseFraming framing) {
                flushBatch();
                awaitingClientData = null;
                noteStatus(connection, framing.serverStatus());
                scheduleRetentionClose(connection);
                after.run(connection, framing, ClientSession.this::commandDone);
            }

            @Override
            public void onFailure(BackendFailure failure) {
                sendErrorAndClose(1, backendError(connection.server(), failure));
            }
        });
    }

    /**
     * Frames a response packet into the buffer of the current read burst: the packets of a burst (a whole small
     * result, typically) leave in one buffer and one write. Large packets go as they are, without a copy.
     */
    private void writeToClient(Packet response) {
        int length = response.payload().readableBytes();
        if (length > BATCH_COPY_LIMIT) {
            flushBatch();
            ctx.write(response);
            return;
        }
        if (batch == null) {
            batch = ctx.alloc().ioBuffer(Math.max(256, length + Packet.HEADER_SIZE));
        }
        PacketFrameEncoder.writeFramed(response, batch);
        response.release();
    }

    private void flushBatch() {
        if (batch != null) {
            ByteBuf out = batch;
            batch = null;
            ctx.write(out);
        }
        ctx.flush();
    }

    /**
     * LOCAL INFILE contents on their way to the server. When the server falls behind, reading from the client
     * pauses until it catches up, so a large upload does not pile up in Gantry's memory.
     */
    private void forwardClientData(Packet packet) {
        BackendConnection backend = awaitingClientData;
        boolean last = packet.payload().readableBytes() == 0;
        backend.forwardFromClient(packet);
        if (last) {
            awaitingClientData = null;
        } else if (!backend.isWritable()) {
            ctx.channel().config().setAutoRead(false);
            backend.whenWritable(() -> ctx.channel().config().setAutoRead(true));
        }
    }

    private void noteStatus(BackendConnection connection, int status) {
        if (status == ResponseFraming.NO_STATUS) {
            return;
        }
        lastStatus = status;
        routeState = routeState.withServerStatus(idOf(connection.server()),
                ServerStatus.has(status, ServerStatus.SERVER_STATUS_IN_TRANS),
                ServerStatus.has(status, ServerStatus.SERVER_STATUS_IN_TRANS_READONLY),
                ServerStatus.has(status, ServerStatus.SERVER_STATUS_AUTOCOMMIT));
    }

    private void commandDone() {
        if (phase == Phase.CLOSED) {
            return;
        }
        phase = Phase.READY;
        drainQueue();
        if (phase == Phase.READY && !ctx.channel().config().isAutoRead()) {
            ctx.channel().config().setAutoRead(true);
        }
    }

    /**
     * Keeps a command that arrived while another runs (a pipelining client). Reading stays on in the usual
     * one-command-at-a-time case, which saves two system calls per command; it pauses only while a pipelining
     * client is ahead by more than {@value #MAX_QUEUED_COMMANDS} commands or {@value #MAX_QUEUED_BYTES} bytes.
     */
    private void queue(Packet packet) {
        queued.add(packet);
        queuedBytes += packet.payload().readableBytes();
        if (queued.size() > MAX_QUEUED_COMMANDS || queuedBytes > MAX_QUEUED_BYTES) {
            ctx.channel().config().setAutoRead(false);
        }
    }

    private void drainQueue() {
        Packet next = queued.poll();
        if (next != null) {
            queuedBytes -= next.payload().readableBytes();
            dispatch(next);
        }
    }

    // ---- prepared statements -----------------------------------------------------------------------------------
    // A statement is prepared where the client first prepares it (the primary), and lazily on any other backend
    // an execution is routed to; the client sees Gantry's own statement ids.

    private void onPrepare(Packet packet) {
        ByteBuf payload = packet.payload();
        byte[] sql = ByteBufUtil.getBytes(payload, payload.readerIndex() + 1, payload.readableBytes() - 1);
        Optional<ErrPacket> kill = SessionIdentitySql.refusePrepared(new String(sql, StandardCharsets.ISO_8859_1),
                sqlMode());
        if (kill.isPresent()) {
            packet.release();
            writeError(1, kill.get());
            ctx.flush();
            return;
        }
        Optional<UpstreamServer> target = proxy.upstreams().primary();
        if (target.isEmpty()) {
            Routed routed = route(new String(sql, StandardCharsets.ISO_8859_1), false);
            if (routed == null) {
                packet.release();
                return;
            }
            target = Optional.of(routed.server());
        }
        String hostPort = target.get().address();
        run(packet, target.get(), connection -> forward(packet, connection, NOTHING_MORE, (response, framing) -> {
            if (framing.lastPacketKind() == ResponseFraming.PacketKind.STMT_PREPARE_OK) {
                PreparedStatements.Statement statement = prepared.register(sql, hostPort,
                        StmtPrepareOk.decode(response.payload().duplicate()));
                StmtPrepareOk.rewriteStatementId(response.payload(), statement.clientId());
            } else if (framing.lastPacketKind() == ResponseFraming.PacketKind.ERR) {
                prepared.prepareFailed();
            }
            return response;
        }));
    }

    private void onExecute(Packet packet) {
        long clientId = StmtExecutePayloads.statementId(packet.payload());
        Optional<PreparedStatements.Statement> found = prepared.find(clientId);
        if (found.isEmpty()) {
            unknownStatement(packet, clientId, "mysqld_stmt_execute");
            return;
        }
        PreparedStatements.Statement statement = found.get();
        StmtExecutePayloads.ExecuteHeader header = statement.paramCount() > 0
                ? StmtExecutePayloads.parseExecute(packet.payload(), statement.paramCount()) : null;
        Optional<PreparedStatements.LongData> longData = prepared.longData(statement.clientId());
        UpstreamServer target;
        AfterResponse after = afterStatement(null, null, null);
        if (longData.isPresent()) {
            if (longData.get().lost()) {
                prepared.reset(statement.clientId());
                packet.release();
                writeError(1, ErrPacket.of(1105, "HY000", "the long data sent for this statement was lost with "
                        + "the connection to " + longData.get().hostPort() + "; send it again"));
                ctx.flush();
                return;
            }
            target = proxy.upstreams().find(longData.get().hostPort()).orElseThrow();
        } else {
            Routed routed = route(statement.sql(), true);
            if (routed == null) {
                packet.release();
                return;
            }
            AfterResponse tracked = afterStatement(routed.statement(), null, null);
            if (routed.statement().kind() == StatementKind.SESSION_STATE) {
                // A setting made through a prepared statement cannot be replayed on other backends.
                after = (connection, framing, done) -> {
                    keepOnThisConnection(backendUses.get(connection), "a session setting made by a prepared statement");
                    tracked.run(connection, framing, done);
                };
            } else {
                after = tracked;
            }
            target = routed.server();
        }
        AfterResponse afterExecute = after;
        run(packet, target, connection -> ensurePrepared(connection, statement, backendId -> {
            Packet command = withBackendTypesAndId(packet, header, statement, connection.server().address(),
                    backendId);
            prepared.executed(statement.clientId(), connection.server().address());
            forward(command, connection, afterExecute, NO_REWRITE);
        }, error -> failCommand(packet, error)));
    }

    /**
     * The execute packet as this backend needs it: its own statement id, and the parameter types if the client
     * sent them only to another backend (the client sends types once; each backend needs them once).
     */
    private Packet withBackendTypesAndId(Packet packet, StmtExecutePayloads.ExecuteHeader header,
                                         PreparedStatements.Statement statement, String hostPort, long backendId) {
        Packet command = packet;
        if (header != null) {
            if (header.newParamsBound()) {
                prepared.typesSent(statement.clientId(), hostPort, header.paramTypes());
            } else {
                Optional<byte[]> missing = prepared.missingTypes(statement.clientId(), hostPort);
                if (missing.isPresent()) {
                    command = new Packet(0, StmtExecutePayloads.withParamTypes(packet.payload(),
                            statement.paramCount(), missing.get()));
                    packet.release();
                    prepared.typesSent(statement.clientId(), hostPort, missing.get());
                }
            }
        }
        StmtExecutePayloads.setStatementId(command.payload(), backendId);
        return command;
    }

    private void onLongData(Packet packet) {
        long clientId = StmtExecutePayloads.statementId(packet.payload());
        Optional<PreparedStatements.Statement> found = prepared.find(clientId);
        Optional<PreparedStatements.LongData> longData = found.flatMap(st -> prepared.longData(st.clientId()));
        if (found.isEmpty() || longData.map(PreparedStatements.LongData::lost).orElse(false)) {
            packet.release(); // no response is ever sent for long data; the execute will report the problem
            return;
        }
        PreparedStatements.Statement statement = found.get();
        UpstreamServer target;
        if (longData.isPresent()) {
            target = proxy.upstreams().find(longData.get().hostPort()).orElseThrow();
        } else {
            Routed routed = route(statement.sql(), false);
            if (routed == null) {
                packet.release();
                return;
            }
            target = routed.server();
        }
        run(packet, target, connection -> ensurePrepared(connection, statement, backendId -> {
            StmtExecutePayloads.setStatementId(packet.payload(), backendId);
            prepared.longDataSent(statement.clientId(), connection.server().address());
            forward(packet, connection, NOTHING_MORE, NO_REWRITE);
        }, error -> {
            prepared.longDataLost(statement.clientId(), connection.server().address());
            packet.release();
            commandDone();
        }));
    }

    private void onStatementReset(Packet packet) {
        long clientId = StmtExecutePayloads.statementId(packet.payload());
        Optional<PreparedStatements.Statement> found = prepared.find(clientId);
        if (found.isEmpty()) {
            unknownStatement(packet, clientId, "mysqld_stmt_reset");
            return;
        }
        // Long data and open cursors live on the backends that hold them; reset there, answer here.
        for (String hostPort : prepared.reset(found.get().clientId())) {
            BackendConnection connection = connections.get(new ServerId(hostPort));
            OptionalLong backendId = prepared.backendId(found.get().clientId(), hostPort);
            if (connection != null && connection.isUsable() && backendId.isPresent()) {
                InternalCommand.run(connection, StmtExecutePayloads.withStatementId(packet.payload(),
                        backendId.getAsLong()), (first, error) -> { }, failure -> { });
            }
        }
        packet.release();
        writeOk(1);
        ctx.flush();
    }

    private void onStatementClose(Packet packet) {
        long clientId = StmtExecutePayloads.statementId(packet.payload());
        Optional<PreparedStatements.Statement> found = prepared.find(clientId);
        if (found.isPresent()) {
            for (Map.Entry<String, Long> backend : prepared.close(found.get().clientId()).entrySet()) {
                BackendConnection connection = connections.get(new ServerId(backend.getKey()));
                // Never open a connection just to close a statement: a closed connection took it along.
                if (connection != null && connection.isUsable()) {
                    InternalCommand.run(connection, StmtExecutePayloads.withStatementId(packet.payload(),
                            backend.getValue()), (first, error) -> { }, failure -> { });
                }
            }
        }
        packet.release(); // COM_STMT_CLOSE has no response
    }

    private void onFetch(Packet packet) {
        long clientId = StmtExecutePayloads.statementId(packet.payload());
        Optional<PreparedStatements.Statement> found = prepared.find(clientId);
        Optional<String> hostPort = found.flatMap(st -> prepared.executedOn(st.clientId()));
        OptionalLong backendId = hostPort.isPresent()
                ? prepared.backendId(found.get().clientId(), hostPort.get()) : OptionalLong.empty();
        BackendConnection connection = hostPort.map(hp -> connections.get(new ServerId(hp))).orElse(null);
        if (backendId.isEmpty() || connection == null || !connection.isUsable()) {
            packet.release();
            writeError(1, ErrPacket.of(1421, "HY000", "The statement (" + clientId + ") has no open cursor."));
            ctx.flush();
            return;
        }
        StmtExecutePayloads.setStatementId(packet.payload(), backendId.getAsLong());
        AfterResponse after = afterStatement(null, null, null);
        run(packet, connection.server(), c -> forward(packet, c, after, NO_REWRITE));
    }

    /** Prepares a statement on this backend if it is not prepared there yet, then passes its id there on. */
    private void ensurePrepared(BackendConnection connection, PreparedStatements.Statement statement,
                                LongConsumer then, Consumer<ErrPacket> onError) {
        String hostPort = connection.server().address();
        OptionalLong known = prepared.backendId(statement.clientId(), hostPort);
        if (known.isPresent()) {
            then.accept(known.getAsLong());
            return;
        }
        ByteBuf prepare = ctx.alloc().buffer();
        statement.writePrepare(prepare);
        InternalCommand.run(connection, prepare, (first, error) -> {
            if (error != null) {
                onError.accept(error);
                return;
            }
            StmtPrepareOk ok = StmtPrepareOk.decode(Unpooled.wrappedBuffer(first));
            prepared.addBackend(statement.clientId(), hostPort, ok.statementId());
            then.accept(ok.statementId());
        }, failure -> sendErrorAndClose(1, backendError(connection.server(), failure)));
    }

    private void unknownStatement(Packet packet, long clientId, String where) {
        packet.release();
        writeError(1, ErrPacket.of(1243, "HY000", "Unknown prepared statement handler (" + clientId + ") given to "
                + where));
        ctx.flush();
    }

    // ---- backend connections -----------------------------------------------------------------------------------

    /** The session's connection to a server, opened and logged in on first use. */
    private Future<BackendConnection> obtain(UpstreamServer server) {
        ServerId key = idOf(server);
        BackendConnection existing = connections.get(key);
        if (existing != null && existing.isUsable()) {
            return ctx.executor().newSucceededFuture(existing);
        }
        if (existing != null) {
            BackendUse lost = backendUses.get(existing);
            dropConnection(key, existing);
            if (lost != null && !lost.held.isEmpty()) {
                return ctx.executor().newFailedFuture(new BackendFailure(server.address(), "the connection to "
                        + server.address() + " was lost, and with it " + HeldState.describe(lost.held), null));
            }
        }
        BackendLogin login = new BackendLogin(user, secret, initialDatabase, collationId, capabilities,
                mariaDbCapabilities);
        return BackendConnection.open(server, login, ctx.channel().eventLoop(), proxy.config().connectTimeout(),
                proxy.config().maxPacketSize(), proxy.greetings()).addListener(future -> {
            if (future.isSuccess()) {
                BackendConnection connection = (BackendConnection) future.getNow();
                if (phase == Phase.CLOSED) {
                    connection.close();
                    return;
                }
                connections.put(key, connection);
                backendUses.put(connection, new BackendUse());
                backendThreads.put(server.address(), connection.serverThreadId());
                connection.onIdleClose(() -> closedByServer(key, connection));
            } else if (future.cause() instanceof BackendFailure failure && failure.serverUnreachable()) {
                // The first session to fail marks it down, so the next sessions skip it instead of waiting too.
                proxy.upstreams().markDown(server, failure.getMessage());
            }
        });
    }

    /**
     * A server closed one of the session's idle connections (its {@code wait_timeout}, a KILL, a restart). If the
     * connection held state replay cannot rebuild, or the session has been idle since it last used it (so the
     * server's idle timeout is the session's own), the session ends as a direct one would; otherwise the
     * connection is forgotten and reopened on next use.
     */
    private void closedByServer(ServerId key, BackendConnection connection) {
        BackendUse use = backendUses.get(connection);
        if (use != null && phase != Phase.CLOSED) {
            if (!use.held.isEmpty()) {
                LOG.warn("session {}: {} closed the session's connection, which held {}; ending the session, as a "
                        + "direct connection would end", id, key.hostPort(), HeldState.describe(use.held));
                endSession(sessionEnded("Gantry: " + key.hostPort() + " closed this session's "
                        + "connection, which held " + HeldState.describe(use.held) + "; this session is closed"));
                return;
            }
            if (use.lastCommand == commands) {
                LOG.info("session {}: {} closed the session's connection while the session was idle (its "
                        + "wait_timeout, or the server went away); ending the session, as the server would", id,
                        key.hostPort());
                endSession(ErrPacket.of(4031, "HY000", "Gantry: " + key.hostPort() + " closed this session's "
                        + "connection while it was idle (its wait_timeout, or the server went away); this session "
                        + "is closed"));
                return;
            }
        }
        dropConnection(key, connection);
    }

    /**
     * Ends a session whose server side is gone while the client is idle: the backends go now; the client gets
     * {@code error} as the answer to its next command (drivers do not read an error that arrives with the close
     * itself), and the connection is closed then, or after {@link #LOST_SESSION_GRACE} at the latest.
     */
    private void endSession(ErrPacket error) {
        closeAllBackends();
        clearSecret();
        sessionLost = error;
        ctx.executor().schedule(this::closeSession, LOST_SESSION_GRACE.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Forgets a connection that closed or is being closed, with everything the session knew about it. */
    private void dropConnection(ServerId key, BackendConnection connection) {
        if (connections.remove(key, connection)) {
            backendThreads.remove(key.hostPort(), connection.serverThreadId());
            backendUses.remove(connection);
            prepared.forgetBackend(key.hostPort());
        }
    }

    /** Replays the session-state commands this connection has not run yet, one at a time. */
    private void syncState(BackendConnection connection, Runnable then, Consumer<ErrPacket> onError) {
        BackendUse use = backendUses.get(connection);
        long applied = use == null ? 0L : use.appliedStateVersion;
        List<byte[]> missing = stateLog.since(applied);
        if (missing.isEmpty()) {
            then.run();
            return;
        }
        replay(connection, missing, 0, () -> {
            if (use != null) {
                use.appliedStateVersion = stateLog.version();
            }
            then.run();
        }, onError);
    }

    private void replay(BackendConnection connection, List<byte[]> commands, int index, Runnable then,
                        Consumer<ErrPacket> onError) {
        if (index == commands.size()) {
            then.run();
            return;
        }
        ByteBuf payload = ctx.alloc().buffer(commands.get(index).length).writeBytes(commands.get(index));
        InternalCommand.run(connection, payload, (first, error) -> {
            if (error != null) {
                onError.accept(error);
            } else {
                replay(connection, commands, index + 1, then, onError);
            }
        }, failure -> sendErrorAndClose(1, backendError(connection.server(), failure)));
    }

    /** Under statement balance, an idle replica connection is kept only briefly for the next statement. */
    private void scheduleRetentionClose(BackendConnection connection) {
        if (proxy.config().routing().readBalance() != ReadBalance.STATEMENT
                || proxy.upstreams().primary().map(p -> p == connection.server()).orElse(false)) {
            return;
        }
        long commandsAtSchedule = commands;
        ctx.executor().schedule(() -> {
            if (commands == commandsAtSchedule && !connection.isBusy() && phase != Phase.CLOSED) {
                ServerId key = idOf(connection.server());
                if (connections.get(key) == connection) {
                    dropConnection(key, connection);
                    connection.close();
                }
            }
        }, proxy.config().connectionRetention().toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext context) {
        if (context.channel().isWritable() && throttledBackend != null) {
            throttledBackend.setAutoRead(true);
            throttledBackend = null;
        }
        context.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext context) {
        closeSession();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext context, Throwable cause) {
        LOG.debug("session {}: connection error: {}", id, cause.toString());
        closeSession();
    }

    // ---- replies and closing -----------------------------------------------------------------------------------

    /**
     * The status flags for a packet Gantry makes itself: the session's transaction and mode flags as the last
     * server reported them, without flags that describe that server's own packet (session state changed, more
     * results), which would promise content this packet does not have.
     */
    private int localStatus() {
        return lastStatus & (ServerStatus.SERVER_STATUS_IN_TRANS | ServerStatus.SERVER_STATUS_AUTOCOMMIT
                | ServerStatus.SERVER_STATUS_IN_TRANS_READONLY | ServerStatus.SERVER_STATUS_NO_BACKSLASH_ESCAPES);
    }

    /** The session's mode as the last server reported it: where the text's strings and quoted names end. */
    private SqlMode sqlMode() {
        return SqlMode.of(ServerStatus.has(lastStatus, ServerStatus.SERVER_STATUS_NO_BACKSLASH_ESCAPES),
                ServerStatus.has(lastStatus, ServerStatus.SERVER_STATUS_ANSI_QUOTES));
    }

    private void writeOk(int sequenceId) {
        ByteBuf out = ctx.alloc().buffer(16);
        OkPacket.of(0, 0, localStatus(), 0).encode(out, capabilities);
        ctx.write(new Packet(sequenceId, out));
    }

    private void writeError(int sequenceId, ErrPacket error) {
        ByteBuf out = ctx.alloc().buffer(32 + error.message().length());
        error.encode(out);
        ctx.write(new Packet(sequenceId, out));
    }

    private void sendErrorAndClose(int sequenceId, ErrPacket error) {
        if (phase == Phase.CLOSED) {
            return;
        }
        writeError(sequenceId & 0xFF, error);
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        closeSession();
    }

    /**
     * The error that ends a session: MariaDB's "connection was killed" (1927) with the connection-failure SQLState,
     * so drivers and pools treat the connection as gone. Not the client-side 2013: a server-sent 2xxx code makes
     * libmariadb (the {@code mariadb} CLI) report "malformed packet" instead of the message.
     */
    private static ErrPacket sessionEnded(String message) {
        return ErrPacket.of(1927, "08S01", message);
    }

    private ErrPacket backendError(UpstreamServer server, Throwable cause) {
        if (cause instanceof BackendFailure failure && failure.serverError() != null) {
            return failure.serverError();
        }
        String reason = cause == null ? "unknown error" : cause.getMessage();
        LOG.warn("session {}: closing, backend {} failed: {}", id, server.address(), reason);
        return sessionEnded("Gantry lost the backend " + server.address() + ": " + reason
                + "; this session is closed");
    }

    private void closeSession() {
        if (phase == Phase.CLOSED) {
            return;
        }
        phase = Phase.CLOSED;
        closeAllBackends();
        Packet packet;
        while ((packet = queued.poll()) != null) {
            packet.release();
        }
        if (batch != null) {
            batch.release();
            batch = null;
        }
        clearSecret();
        proxy.unregister(id);
        if (pendingLogin) {
            pendingLogin = false;
            proxy.loginGate().leave(host);
        }
        if (admitted) {
            admitted = false;
            proxy.sessionClosed();
        }
        if (ctx.channel().isActive()) {
            // Let a pending error reach the client first; the write's listener closes the channel.
            ctx.channel().eventLoop().schedule(() -> ctx.close(), 1, TimeUnit.SECONDS);
        }
    }

    /** Closes every backend connection of the session and forgets what it knew about them. */
    private void closeAllBackends() {
        for (BackendConnection connection : connections.values()) {
            connection.close();
        }
        connections.clear();
        backendThreads.clear();
        backendUses.clear();
        prepared.clear();
    }

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

    private static void releaseIfHeld(Packet packet) {
        if (packet.refCnt() > 0) {
            packet.release();
        }
    }

    private void clearSecret() {
        if (secret != null) {
            secret.clear();
            secret = null;
        }
    }

    private String remoteHost() {
        java.net.SocketAddress address = ctx.channel().remoteAddress();
        return address instanceof java.net.InetSocketAddress inet ? inet.getHostString() : String.valueOf(address);
    }

    /** The server a routing decision names (a plain loop: this runs for every statement). */
    private static UpstreamServer serverFor(ServerId id, Upstreams upstreams) {
        for (UpstreamServer server : upstreams.servers()) {
            if (idOf(server).equals(id)) {
                return server;
            }
        }
        throw new IllegalStateException("routing chose " + id + ", which is not in the upstream list");
    }

    private static ServerId idOf(UpstreamServer server) {
        // Routing runs per statement: keep one id per server instead of building strings every time.
        return SERVER_IDS.computeIfAbsent(server, s -> new ServerId(s.address()));
    }

    private static String abbreviate(String sql) {
        String oneLine = sql.replaceAll("\\s+", " ").trim();
        return oneLine.length() <= 120 ? oneLine : oneLine.substring(0, 117) + "...";
    }
}
