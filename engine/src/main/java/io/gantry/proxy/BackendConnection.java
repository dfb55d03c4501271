package io.gantry.proxy;

import static io.gantry.wire.CapabilityFlags.CLIENT_COMPRESS;
import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_ATTRS;
import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_WITH_DB;
import static io.gantry.wire.CapabilityFlags.CLIENT_DEPRECATE_EOF;
import static io.gantry.wire.CapabilityFlags.CLIENT_MULTI_RESULTS;
import static io.gantry.wire.CapabilityFlags.CLIENT_MYSQL;
import static io.gantry.wire.CapabilityFlags.CLIENT_OPTIONAL_RESULTSET_METADATA;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH;
import static io.gantry.wire.CapabilityFlags.CLIENT_PROTOCOL_41;
import static io.gantry.wire.CapabilityFlags.CLIENT_QUERY_ATTRIBUTES;
import static io.gantry.wire.CapabilityFlags.CLIENT_SECURE_CONNECTION;
import static io.gantry.wire.CapabilityFlags.CLIENT_SESSION_TRACK;
import static io.gantry.wire.CapabilityFlags.CLIENT_SSL;
import static io.gantry.wire.CapabilityFlags.CLIENT_ZSTD_COMPRESSION_ALGORITHM;
import static io.gantry.wire.CapabilityFlags.MARIADB_CLIENT_EXTENDED_METADATA;

import io.gantry.topology.ServerTls;
import io.gantry.topology.TlsTrust;
import io.gantry.topology.UpstreamServer;
import io.gantry.wire.AuthMoreData;
import io.gantry.wire.AuthSwitchRequest;
import io.gantry.wire.CachingSha2Password;
import io.gantry.wire.CapabilityFlags;
import io.gantry.wire.ColumnDefinition;
import io.gantry.wire.CommandType;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.HandshakeResponse41;
import io.gantry.wire.HandshakeV10;
import io.gantry.wire.NativePassword;
import io.gantry.wire.Packet;
import io.gantry.wire.PacketDecodeFailure;
import io.gantry.wire.PacketFrameDecoder;
import io.gantry.wire.PacketFrameEncoder;
import io.gantry.wire.ResponseFraming;
import io.gantry.wire.SslRequest;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Promise;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.Map;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection from Gantry to a backend server on behalf of one client session. It logs in as the session's
 * account, then runs one command at a time, handing each response packet to a {@link ResponseListener} as it
 * arrives (raw, never decoded into rows). It lives on the client channel's event loop, so the session and its
 * backends never need locks.
 *
 * <p>TLS follows the server URL's {@link ServerTls}, as on Gantry's other paths: after the greeting, when TLS is
 * wanted and the server offers it, an SSLRequest, the TLS handshake, then the HandshakeResponse41 encrypted with the
 * next sequence id; a server without TLS is refused when the mode requires it. {@code caching_sha2_password} full
 * authentication sends the password as is over TLS, and RSA-encrypted with the server's key without TLS only when
 * the URL allows asking for that key ({@code get-server-public-key=true}).
 */
final class BackendConnection {

    /** Receives the packets of one command's response. */
    interface ResponseListener {
        /** One packet of the response; the listener owns it (forwards or releases it). */
        void onPacket(Packet packet, ResponseFraming framing);

        /** The end of one burst of reads from the backend: a good moment to flush what was forwarded. */
        void onBatchEnd();

        /** The response is complete; the connection is ready for the next command. */
        void onComplete(ResponseFraming framing);

        /** The connection failed before the response completed. */
        void onFailure(BackendFailure failure);
    }

    /** Hears every greeting a backend sends Gantry (to mirror the primary's to clients). */
    interface GreetingObserver {
        /** {@code server} greeted a new connection; called on the connection's event loop. */
        void greeted(UpstreamServer server, HandshakeV10 greeting);

        /** Hears nothing. */
        GreetingObserver NONE = (server, greeting) -> { };
    }

    private static final Logger LOG = LoggerFactory.getLogger(BackendConnection.class);
    /** Servers already reported as lacking extended metadata: said once per server, not per connection. */
    private static final java.util.Set<String> WITHOUT_EXTENDED_METADATA =
            java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * Capabilities that change what a client sees on the wire but that the proxy does not support on the path
     * client-to-backend: never asked of a backend.
     */
    private static final int NEVER_TO_BACKEND = CLIENT_SSL | CLIENT_COMPRESS | CLIENT_ZSTD_COMPRESSION_ALGORITHM
            | CLIENT_OPTIONAL_RESULTSET_METADATA | CLIENT_QUERY_ATTRIBUTES;

    /**
     * MariaDB extended capabilities asked of a backend when the client negotiated them: only extended metadata (see
     * {@code ServerGreetings#FORWARDABLE_MARIADB}).
     */
    private static final int MARIADB_TO_BACKEND = MARIADB_CLIENT_EXTENDED_METADATA;

    /** Capabilities whose absence on the backend would make its responses differ from what the client expects. */
    private static final int MUST_MATCH = CLIENT_PROTOCOL_41 | CLIENT_DEPRECATE_EOF | CLIENT_SESSION_TRACK
            | CLIENT_MULTI_RESULTS;

    private enum State { CONNECTING, TLS_HANDSHAKE, AUTHENTICATING, READY, IN_COMMAND, CLOSED }

    private final UpstreamServer server;
    private final BackendLogin login;
    private final GreetingObserver greetings;
    private final Promise<BackendConnection> ready;
    private Channel channel;
    private State state = State.CONNECTING;
    private int capabilities;
    private int mariaDbCapabilities;
    /**
     * The client negotiated extended metadata but this backend does not offer it: its column definitions get the
     * empty extended-metadata field the client expects (its JSON columns then look as they would on a server
     * without extended metadata: plain text).
     */
    private boolean addExtendedMetadata;
    private long serverThreadId = -1;
    private byte[] seed;
    /** Whether the login (and everything after it) runs over TLS. */
    private boolean encrypted;
    private String authPlugin = "";
    private ResponseFraming framing;
    private ResponseListener listener;
    private Runnable onIdleClose = () -> { };
    private Runnable writableAgain;
    private boolean countedConnection;

    private BackendConnection(UpstreamServer server, BackendLogin login, GreetingObserver greetings, EventLoop loop) {
        this.server = server;
        this.login = login;
        this.greetings = greetings;
        this.ready = loop.newPromise();
    }

    /**
     * Opens and logs in a connection on {@code loop}. The promise fails with a {@link BackendFailure} naming the
     * server when it cannot be reached within {@code connectTimeout} or refuses the login.
     */
    static Promise<BackendConnection> open(UpstreamServer server, BackendLogin login, EventLoop loop,
                                           Duration connectTimeout, int maxPacketSize) {
        return open(server, login, loop, connectTimeout, maxPacketSize, GreetingObserver.NONE);
    }

    /** Opens a connection like {@link #open(UpstreamServer, BackendLogin, EventLoop, Duration, int)}; the server's
     *  greeting goes to {@code greetings}. */
    static Promise<BackendConnection> open(UpstreamServer server, BackendLogin login, EventLoop loop,
                                           Duration connectTimeout, int maxPacketSize, GreetingObserver greetings) {
        BackendConnection connection = new BackendConnection(server, login, greetings, loop);
        Bootstrap bootstrap = new Bootstrap()
                .group(loop)
                .channel(NioSocketChannel.class)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) connectTimeout.toMillis())
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(new PacketFrameDecoder(maxPacketSize), new PacketFrameEncoder(),
                                connection.new Handler());
                    }
                });
        bootstrap.connect(server.url().host(), server.url().port()).addListener((ChannelFutureListener) future -> {
            if (!future.isSuccess()) {
                connection.fail(new BackendFailure(server.address(), "cannot connect to " + server.address() + ": "
                        + describe(future.cause()), future.cause()));
                return;
            }
            connection.channel = future.channel();
            // A server that accepts TCP but never greets must not hang the session either.
            loop.schedule(() -> {
                if (connection.state == State.CONNECTING || connection.state == State.TLS_HANDSHAKE
                        || connection.state == State.AUTHENTICATING) {
                    connection.fail(new BackendFailure(server.address(), "no login answer from " + server.address()
                            + " within " + connectTimeout.toMillis() + " ms", null));
                }
            }, connectTimeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        });
        return connection.ready;
    }

    UpstreamServer server() {
        return server;
    }

    /** The server's id of this connection (what {@code KILL} takes there), or -1 before the greeting. */
    long serverThreadId() {
        return serverThreadId;
    }

    /** The capabilities in effect on this connection. */
    int capabilities() {
        return capabilities;
    }

    /** Whether the connection runs over TLS. */
    boolean isEncrypted() {
        return encrypted;
    }

    /** The MariaDB extended capabilities in effect on this connection (0 with MySQL). */
    int mariaDbCapabilities() {
        return mariaDbCapabilities;
    }

    boolean isUsable() {
        return state == State.READY && channel.isActive();
    }

    boolean isBusy() {
        return state == State.IN_COMMAND;
    }

    /** Called when the connection closes while no command runs (the server went away or timed it out). */
    void onIdleClose(Runnable action) {
        this.onIdleClose = action;
    }

    /** Sends a command (its sequence id must be 0) and streams its response to {@code responseListener}. */
    void execute(Packet command, ResponseListener responseListener) {
        if (state != State.READY) {
            command.release();
            responseListener.onFailure(new BackendFailure(server.address(),
                    "the connection to " + server.address() + " is not ready (" + state + ")", null));
            return;
        }
        CommandType type = CommandType.of(command.payload());
        this.framing = ResponseFraming.forCommand(type, capabilities, mariaDbCapabilities);
        this.listener = responseListener;
        if (framing.isComplete()) {
            // Commands without a response (COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA) complete once written.
            channel.writeAndFlush(command);
            this.listener = null;
            responseListener.onComplete(framing);
            return;
        }
        state = State.IN_COMMAND;
        channel.writeAndFlush(command).addListener(future -> {
            if (!future.isSuccess()) {
                failCommand("cannot send to " + server.address() + ": " + describe(future.cause()));
            }
        });
    }

    /** Passes a client packet through while the server waits for the client (LOCAL INFILE contents). */
    void forwardFromClient(Packet packet) {
        channel.writeAndFlush(packet);
    }

    /** Whether the server keeps up with what is written to it. */
    boolean isWritable() {
        return channel.isWritable();
    }

    /** Runs {@code action} once, when the connection becomes writable again. */
    void whenWritable(Runnable action) {
        this.writableAgain = action;
    }

    /** Stops or resumes reading from the backend, to follow the client's pace (back-pressure). */
    void setAutoRead(boolean autoRead) {
        if (channel != null) {
            channel.config().setAutoRead(autoRead);
        }
    }

    /** Closes the connection politely (COM_QUIT) when idle, at once otherwise. */
    void close() {
        if (state == State.CLOSED) {
            return;
        }
        boolean idle = state == State.READY;
        state = State.CLOSED;
        releaseCount();
        if (channel == null) {
            return;
        }
        if (idle && channel.isActive()) {
            ByteBuf quit = channel.alloc().buffer(1).writeByte(CommandType.COM_QUIT.code());
            channel.writeAndFlush(new Packet(0, quit)).addListener(ChannelFutureListener.CLOSE);
        } else {
            channel.close();
        }
    }

    private void fail(BackendFailure failure) {
        State before = state;
        state = State.CLOSED;
        releaseCount();
        if (channel != null) {
            channel.close();
        }
        if (!ready.isDone()) {
            ready.tryFailure(failure);
        } else if (before == State.IN_COMMAND && listener != null) {
            ResponseListener current = listener;
            listener = null;
            current.onFailure(failure);
        } else if (before == State.READY) {
            onIdleClose.run();
        }
    }

    private void failCommand(String message) {
        fail(new BackendFailure(server.address(), message, null));
    }

    private void releaseCount() {
        if (countedConnection) {
            countedConnection = false;
            server.connectionClosed();
        }
    }

    // ---- login -------------------------------------------------------------------------------------------------

    private void onGreeting(Packet packet) {
        ByteBuf payload = packet.payload();
        if (payload.isReadable() && (payload.getByte(payload.readerIndex()) & 0xFF) == ErrPacket.HEADER) {
            // e.g. "Too many connections" or "Host is blocked", sent instead of a greeting.
            fail(new BackendFailure(server.address(), ErrPacket.decode(payload)));
            return;
        }
        HandshakeV10 greeting = HandshakeV10.decode(payload);
        greetings.greeted(server, greeting);
        serverThreadId = greeting.connectionId();
        int wanted = login.capabilities() & ~NEVER_TO_BACKEND;
        int missing = wanted & MUST_MATCH & ~greeting.capabilities();
        if (missing != 0) {
            fail(new BackendFailure(server.address(), server.address() + " lacks protocol capabilities the client "
                    + "negotiated (0x" + Integer.toHexString(missing) + "); it is too old for Gantry", null));
            return;
        }
        capabilities = (wanted & greeting.capabilities()) | CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION
                | CLIENT_PLUGIN_AUTH;
        if (login.database().isEmpty()) {
            capabilities &= ~CLIENT_CONNECT_WITH_DB;
        } else {
            capabilities |= CLIENT_CONNECT_WITH_DB;
        }
        capabilities &= ~CLIENT_CONNECT_ATTRS;
        // The extended word is sent only with CLIENT_MYSQL clear, i.e. to a MariaDB server that cleared it too.
        mariaDbCapabilities = CapabilityFlags.has(capabilities, CLIENT_MYSQL)
                ? 0
                : login.mariaDbCapabilities() & MARIADB_TO_BACKEND & greeting.mariaDbCapabilities();
        addExtendedMetadata = CapabilityFlags.has(login.mariaDbCapabilities(), MARIADB_CLIENT_EXTENDED_METADATA)
                && !CapabilityFlags.has(mariaDbCapabilities, MARIADB_CLIENT_EXTENDED_METADATA);
        if (addExtendedMetadata && WITHOUT_EXTENDED_METADATA.add(server.address())) {
            LOG.warn("backend {}: no extended column metadata (MariaDB 10.5+ only) though the client negotiated it; "
                    + "its column definitions are forwarded with an empty extended-metadata field", server.address());
        }
        seed = greeting.authPluginData();
        authPlugin = greeting.authPluginName().isEmpty() ? NativePassword.PLUGIN_NAME : greeting.authPluginName();
        String plugin = supported(authPlugin) ? authPlugin : NativePassword.PLUGIN_NAME;
        if (plugin.equals(CachingSha2Password.PLUGIN_NAME) && login.secret().plaintext().isEmpty()) {
            // Without the password itself only a native scramble can be made; a server whose account needs
            // caching_sha2_password will ask for it with an auth switch, answered below with a clear error.
            plugin = NativePassword.PLUGIN_NAME;
        }
        ServerTls tls = server.url().tls();
        boolean offered = CapabilityFlags.has(greeting.capabilities(), CLIENT_SSL);
        if (tls.mode().required() && !offered) {
            fail(new BackendFailure(server.address(), server.address() + " does not offer TLS, but its URL asks for "
                    + "ssl-mode=" + tls.mode() + "; turn TLS on at the server or change the URL", null));
            return;
        }
        int nextSequenceId = packet.sequenceId() + 1;
        if (tls.mode().attempts() && offered) {
            startTls(tls, nextSequenceId, plugin);
        } else {
            sendHandshakeResponse(nextSequenceId, plugin);
        }
    }

    /**
     * SSLRequest, then the TLS handshake; the HandshakeResponse41 follows over TLS with the next sequence id. The
     * TLS handler goes in front of the framing only once the SSLRequest has left in plain text.
     */
    private void startTls(ServerTls tls, int sequenceId, String plugin) {
        SSLEngine engine;
        try {
            engine = TlsTrust.sslContext(tls).createSSLEngine(server.url().host(), server.url().port());
        } catch (TlsTrust.TlsConfigurationException e) {
            fail(new BackendFailure(server.address(), "TLS to " + server.address() + ": " + e.getMessage(), e));
            return;
        }
        engine.setUseClientMode(true);
        if (tls.mode().verifiesIdentity()) {
            // The certificate must name the URL's host (a DNS name or an IP address in its subjectAltName).
            SSLParameters parameters = engine.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            engine.setSSLParameters(parameters);
        }
        capabilities |= CLIENT_SSL;
        ByteBuf request = channel.alloc().buffer(SslRequest.PAYLOAD_LENGTH);
        new SslRequest(capabilities, 1L << 30, login.collationId(), mariaDbCapabilities).encode(request);
        state = State.TLS_HANDSHAKE;
        channel.writeAndFlush(new Packet(sequenceId, request)).addListener((ChannelFutureListener) written -> {
            if (!written.isSuccess()) {
                fail(new BackendFailure(server.address(), "cannot send to " + server.address() + ": "
                        + describe(written.cause()), written.cause()));
                return;
            }
            if (state != State.TLS_HANDSHAKE) {
                return;
            }
            SslHandler handler = new SslHandler(engine);
            channel.pipeline().addFirst("tls", handler);
            handler.handshakeFuture().addListener(handshake -> {
                if (state != State.TLS_HANDSHAKE) {
                    return;
                }
                if (!handshake.isSuccess()) {
                    fail(new BackendFailure(server.address(), "the TLS handshake with " + server.address()
                            + " failed (" + tls.describe() + "): " + describe(handshake.cause()),
                            handshake.cause()));
                    return;
                }
                encrypted = true;
                sendHandshakeResponse(sequenceId + 1, plugin);
            });
        });
    }

    private void sendHandshakeResponse(int sequenceId, String plugin) {
        HandshakeResponse41 response = new HandshakeResponse41(capabilities, 1L << 30, login.collationId(),
                mariaDbCapabilities, login.user(), authResponse(plugin, trimSeed(seed)), login.database(), plugin, Map.of(), 0);
        ByteBuf out = channel.alloc().buffer();
        response.encode(out);
        state = State.AUTHENTICATING;
        channel.writeAndFlush(new Packet(sequenceId, out));
    }

    private void onAuthPacket(Packet packet) {
        ByteBuf payload = packet.payload();
        int header = payload.getByte(payload.readerIndex()) & 0xFF;
        switch (header) {
            case 0x00 -> {
                state = State.READY;
                server.connectionOpened();
                countedConnection = true;
                ready.trySuccess(this);
            }
            case ErrPacket.HEADER -> fail(new BackendFailure(server.address(), ErrPacket.decode(payload)));
            case AuthSwitchRequest.HEADER -> {
                AuthSwitchRequest request = AuthSwitchRequest.decode(payload);
                if (!supported(request.pluginName())) {
                    fail(new BackendFailure(server.address(), server.address() + " asks for the authentication "
                            + "plugin '" + request.pluginName() + "', which Gantry does not support", null));
                    return;
                }
                if (request.pluginName().equals(CachingSha2Password.PLUGIN_NAME)
                        && login.secret().plaintext().isEmpty() && !login.secret().isEmpty()) {
                    fail(new BackendFailure(server.address(), ErrPacket.of(1045, "28000", "the account '"
                            + login.user() + "' uses caching_sha2_password on " + server.address() + ", but its "
                            + "client logged in to Gantry with mysql_native_password, which does not reveal the "
                            + "password Gantry needs for it; connect with caching_sha2_password")));
                    return;
                }
                authPlugin = request.pluginName();
                seed = request.seed();
                reply(packet, authResponse(authPlugin, trimSeed(seed)));
            }
            case AuthMoreData.HEADER -> onAuthMoreData(packet, AuthMoreData.decode(payload));
            default -> fail(new BackendFailure(server.address(), "unexpected packet 0x"
                    + Integer.toHexString(header) + " from " + server.address() + " during login", null));
        }
    }

    private void onAuthMoreData(Packet packet, AuthMoreData more) {
        if (!CachingSha2Password.PLUGIN_NAME.equals(authPlugin)) {
            fail(new BackendFailure(server.address(), "unexpected auth-more-data from " + server.address()
                    + " for plugin " + authPlugin, null));
            return;
        }
        if (more.isFastAuthSuccess()) {
            return; // the OK follows
        }
        if (more.isPerformFullAuthentication()) {
            if (encrypted) {
                // Over TLS the password goes as is, NUL-terminated, as every MySQL client sends it.
                byte[] password = login.secret().plaintext().orElseThrow();
                byte[] data = java.util.Arrays.copyOf(password, password.length + 1);
                java.util.Arrays.fill(password, (byte) 0);
                reply(packet, data);
                java.util.Arrays.fill(data, (byte) 0);
                return;
            }
            if (!server.url().tls().getServerPublicKey()) {
                // Without TLS nothing proves that a key the server sends is its own: a man in the middle could
                // hand out its own key and read the password. Only the URL can allow the risk.
                fail(new BackendFailure(server.address(), ErrPacket.of(1045, "28000", server.address() + " asks "
                        + "for a caching_sha2_password full authentication of '" + login.user() + "' on a "
                        + "connection without TLS; Gantry would have to ask the server for its RSA public key, "
                        + "which the server's URL does not allow (use TLS: ssl-mode=REQUIRED or stricter, or "
                        + "accept the risk with get-server-public-key=true)")));
                return;
            }
            // Without TLS the password travels RSA-encrypted with the server's public key; ask for it.
            reply(packet, new byte[] {CachingSha2Password.REQUEST_PUBLIC_KEY});
            return;
        }
        RSAPublicKey key = CachingSha2Password.parsePublicKey(more.data());
        reply(packet, CachingSha2Password.encryptPassword(login.secret().plaintext().orElseThrow(), trimSeed(seed),
                key));
    }

    private void reply(Packet request, byte[] data) {
        ByteBuf out = channel.alloc().buffer(data.length).writeBytes(data);
        channel.writeAndFlush(new Packet(request.sequenceId() + 1, out));
    }

    private byte[] authResponse(String plugin, byte[] scrambleSeed) {
        if (login.secret().isEmpty()) {
            return new byte[0];
        }
        return CachingSha2Password.PLUGIN_NAME.equals(plugin)
                ? CachingSha2Password.scramble(login.secret().plaintext().orElseThrow(), scrambleSeed)
                : login.secret().nativeScramble(scrambleSeed);
    }

    private static boolean supported(String plugin) {
        return NativePassword.PLUGIN_NAME.equals(plugin) || CachingSha2Password.PLUGIN_NAME.equals(plugin);
    }

    /** Servers send the 20-byte seed followed by a NUL in auth-switch and greeting; scrambles use 20 bytes. */
    private static byte[] trimSeed(byte[] raw) {
        if (raw.length > 20) {
            byte[] trimmed = new byte[20];
            System.arraycopy(raw, 0, trimmed, 0, 20);
            return trimmed;
        }
        return raw;
    }

    private static String describe(Throwable cause) {
        if (cause == null) {
            return "unknown error";
        }
        String message = cause.getMessage();
        return message == null ? cause.getClass().getSimpleName() : message;
    }

    // ---- the channel handler -----------------------------------------------------------------------------------

    private final class Handler extends SimpleChannelInboundHandler<Object> {

        Handler() {
            super(false);
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Object message) {
            if (message instanceof PacketDecodeFailure failure) {
                failCommand(server.address() + " sent a malformed packet: " + failure.message());
                return;
            }
            Packet packet = (Packet) message;
            try {
                switch (state) {
                    case TLS_HANDSHAKE -> {
                        packet.release();
                        failCommand(server.address() + " sent a packet before the TLS handshake finished");
                    }
                    case CONNECTING -> {
                        try {
                            onGreeting(packet);
                        } finally {
                            packet.release();
                        }
                    }
                    case AUTHENTICATING -> {
                        try {
                            onAuthPacket(packet);
                        } finally {
                            packet.release();
                        }
                    }
                    case IN_COMMAND -> onResponsePacket(packet);
                    default -> {
                        packet.release();
                        failCommand(server.address() + " sent a packet while no command was running");
                    }
                }
            } catch (RuntimeException e) {
                ReferenceCountUtil.safeRelease(packet);
                failCommand("protocol error with " + server.address() + ": " + describe(e));
            }
        }

        private void onResponsePacket(Packet received) {
            ResponseFraming.Progress progress = framing.accept(received.payload());
            Packet packet = addExtendedMetadata ? withExtendedMetadata(received) : received;
            ResponseListener current = listener;
            if (progress == ResponseFraming.Progress.COMPLETE) {
                state = State.READY;
                listener = null;
                current.onPacket(packet, framing);
                current.onComplete(framing);
            } else {
                current.onPacket(packet, framing);
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ResponseListener current = listener;
            if (current != null) {
                current.onBatchEnd();
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            Runnable action = writableAgain;
            if (ctx.channel().isWritable() && action != null) {
                writableAgain = null;
                action.run();
            }
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (state != State.CLOSED) {
                failCommand("the connection to " + server.address() + " was closed by the server");
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (state == State.TLS_HANDSHAKE) {
                Throwable tlsCause = cause instanceof io.netty.handler.codec.DecoderException && cause.getCause() != null
                        ? cause.getCause() : cause;
                fail(new BackendFailure(server.address(), "the TLS handshake with " + server.address() + " failed ("
                        + server.url().tls().describe() + "): " + describe(tlsCause), tlsCause));
                return;
            }
            failCommand("connection to " + server.address() + " failed: " + describe(cause));
        }
    }

    /** A column or parameter definition in the layout the client negotiated (see {@link #addExtendedMetadata}). */
    private Packet withExtendedMetadata(Packet packet) {
        ResponseFraming.PacketKind kind = framing.lastPacketKind();
        if (kind != ResponseFraming.PacketKind.COLUMN_DEFINITION && kind != ResponseFraming.PacketKind.PARAMETER_DEFINITION) {
            return packet;
        }
        ByteBuf rewritten = ColumnDefinition.insertEmptyExtendedMetadata(packet.payload(), channel.alloc());
        packet.release();
        return new Packet(packet.sequenceId(), rewritten);
    }

    @Override
    public String toString() {
        return "backend " + server.address() + " (" + state + ")";
    }
}
