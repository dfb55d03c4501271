package io.gantry.proxy.backend;

import io.gantry.gtid.Flavour;
import io.gantry.topology.UpstreamServer;
import io.gantry.wire.ColumnDefinition;
import io.gantry.wire.CommandType;
import io.gantry.wire.HandshakeV10;
import io.gantry.wire.Packet;
import io.gantry.wire.PacketDecodeFailure;
import io.gantry.wire.PacketFrameDecoder;
import io.gantry.wire.PacketFrameEncoder;
import io.gantry.wire.ResponseFraming;
import io.gantry.wire.ServerVersion;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.Promise;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection from Gantry to a backend server on behalf of one client session. It logs in as the session's
 * account, then runs one command at a time, handing each response packet to a {@link ResponseListener} as it
 * arrives (raw, never decoded into rows). It lives on the client channel's event loop, so the session and its
 * backends never need locks.
 *
 * <p>The login itself is a {@link BackendAuthentication}: this class only carries out its steps on the channel
 * (writes, and the TLS handshake when it asks for one).
 */
public final class BackendConnection {

    private static final Logger LOG = LoggerFactory.getLogger(BackendConnection.class);

    /** How long a connection closed with COM_QUIT waits for the server to close it before Gantry does. */
    private static final Duration QUIT_WAIT = Duration.ofSeconds(1);

    /** Receives the packets of one command's response. */
    public interface ResponseListener {
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
    public interface GreetingObserver {
        /** {@code server} greeted a new connection; called on the connection's event loop. */
        void greeted(UpstreamServer server, HandshakeV10 greeting);

        /** Hears nothing. */
        GreetingObserver NONE = (server, greeting) -> { };
    }

    private enum State { CONNECTING, TLS_HANDSHAKE, AUTHENTICATING, READY, IN_COMMAND, CLOSED }

    private final UpstreamServer server;
    private final GreetingObserver greetings;
    /** Read from the greeting on first use. */
    private ServerVersion version;
    private final Promise<BackendConnection> ready;
    private Channel channel;
    private State state = State.CONNECTING;
    private final BackendAuthentication authentication;
    private int capabilities;
    private int mariaDbCapabilities;
    /** See {@link BackendAuthentication#addExtendedMetadata()}. */
    private boolean addExtendedMetadata;
    private long serverThreadId = -1;
    private ResponseFraming framing;
    private ResponseListener listener;
    /** Commands written behind the running one ({@link #executeAll}): their responses follow its, in order. */
    private ArrayDeque<Queued> queued;
    private Runnable onIdleClose = () -> { };
    private Runnable writableAgain;
    private boolean countedConnection;
    /** Frees the connection's slot of the per-server cap ({@link ConnectionSlots}) once it is closed; null after. */
    private Runnable releaseSlot;

    private BackendConnection(UpstreamServer server, BackendLogin login, GreetingObserver greetings, EventLoop loop) {
        this.server = server;
        this.authentication = new BackendAuthentication(server, login);
        this.greetings = greetings;
        this.ready = loop.newPromise();
    }

    /**
     * Opens and logs in a connection on {@code loop}, through {@code channels}; the server's greeting goes to
     * {@code greetings}. The promise fails with a {@link BackendFailure} naming the server when it cannot be reached
     * within {@code connectTimeout} or refuses the login.
     */
    public static Promise<BackendConnection> open(UpstreamServer server, BackendLogin login, EventLoop loop,
                                           Duration connectTimeout, int maxPacketSize, GreetingObserver greetings,
                                           BackendChannels channels) {
        return open(server, login, loop, connectTimeout, maxPacketSize, greetings, channels, null);
    }

    /**
     * As {@link #open(UpstreamServer, BackendLogin, EventLoop, Duration, int, GreetingObserver, BackendChannels)},
     * for a connection that holds a slot of the per-server cap: {@code releaseSlot} runs once it is closed, or its
     * opening failed.
     */
    public static Promise<BackendConnection> open(UpstreamServer server, BackendLogin login, EventLoop loop,
                                           Duration connectTimeout, int maxPacketSize, GreetingObserver greetings,
                                           BackendChannels channels, Runnable releaseSlot) {
        BackendConnection connection = new BackendConnection(server, login, greetings, loop);
        connection.releaseSlot = releaseSlot;
        ChannelInitializer<Channel> pipeline = new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                ch.pipeline().addLast(new PacketFrameDecoder(maxPacketSize), new PacketFrameEncoder(),
                        connection.new Handler());
            }
        };
        channels.connect(server, loop, connectTimeout, pipeline).addListener((ChannelFutureListener) future -> {
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

    public UpstreamServer server() {
        return server;
    }

    /** The server's id of this connection (what {@code KILL} takes there), or -1 before the greeting. */
    public long serverThreadId() {
        return serverThreadId;
    }

    /** The capabilities in effect on this connection. */
    public int capabilities() {
        return capabilities;
    }

    /** The server's product, from its greeting's version string ({@code 5.5.5-11.4.5-MariaDB}, {@code 8.0.15}). */
    public Flavour flavour() {
        return serverVersion().mariaDb() ? Flavour.MARIADB : Flavour.MYSQL;
    }

    /** The server's product and release, from its greeting (a MySQL of unknown release before the greeting). */
    public ServerVersion serverVersion() {
        if (version == null) {
            HandshakeV10 greeting = authentication.greeting();
            if (greeting == null) {
                return new ServerVersion(false, ServerVersion.UNKNOWN_RELEASE);
            }
            version = ServerVersion.parse(greeting.serverVersion());
        }
        return version;
    }

    /** The MariaDB extended capabilities in effect on this connection (0 with MySQL). */
    int mariaDbCapabilities() {
        return mariaDbCapabilities;
    }

    public boolean isUsable() {
        return state == State.READY && channel.isActive();
    }

    /** Whether the connection was closed (by Gantry, or after a failure): it runs nothing any more. */
    public boolean isClosed() {
        return state == State.CLOSED;
    }

    public boolean isBusy() {
        return state == State.IN_COMMAND;
    }

    /** Called when the connection closes while no command runs (the server went away or timed it out). */
    public void onIdleClose(Runnable action) {
        this.onIdleClose = action;
    }

    /** Sends a command (its sequence id must be 0) and streams its response to {@code responseListener}. */
    public void execute(Packet command, ResponseListener responseListener) {
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
        // No promise per command: a failed write reaches Handler.exceptionCaught, which fails the command.
        channel.writeAndFlush(command, channel.voidPromise());
    }

    /**
     * Sends several commands at once, in one write (pipelining: the server runs them in order and answers each, so
     * all of them cost one round trip), and streams each response to its listener in turn. Each command must be
     * one the server answers, and only the last listener may use the connection again once its response is
     * complete. A connection failure fails the running command's listener and every one behind it.
     */
    public void executeAll(List<Packet> commands, List<? extends ResponseListener> listeners) {
        if (commands.size() != listeners.size() || commands.isEmpty()) {
            throw new IllegalArgumentException("one listener per command, at least one command");
        }
        if (state != State.READY) {
            commands.forEach(Packet::release);
            BackendFailure notReady = new BackendFailure(server.address(),
                    "the connection to " + server.address() + " is not ready (" + state + ")", null);
            listeners.forEach(each -> each.onFailure(notReady));
            return;
        }
        List<ResponseFraming> framings = new ArrayList<>(commands.size());
        for (Packet command : commands) {
            ResponseFraming commandFraming = ResponseFraming.forCommand(CommandType.of(command.payload()),
                    capabilities, mariaDbCapabilities);
            if (commandFraming.isComplete()) {
                commands.forEach(Packet::release);
                throw new IllegalArgumentException("a command without a response cannot be pipelined");
            }
            framings.add(commandFraming);
        }
        framing = framings.get(0);
        listener = listeners.get(0);
        if (commands.size() > 1 && queued == null) {
            queued = new ArrayDeque<>(commands.size());
        }
        for (int i = 1; i < commands.size(); i++) {
            queued.add(new Queued(framings.get(i), listeners.get(i)));
        }
        for (Packet command : commands) {
            channel.write(command, channel.voidPromise());
        }
        state = State.IN_COMMAND;
        channel.flush();
    }

    private record Queued(ResponseFraming framing, ResponseListener listener) {
    }

    /** Passes a client packet through while the server waits for the client (LOCAL INFILE contents). */
    public void forwardFromClient(Packet packet) {
        channel.writeAndFlush(packet);
    }

    /** Whether the server keeps up with what is written to it. */
    public boolean isWritable() {
        return channel.isWritable();
    }

    /** Runs {@code action} once, when the connection becomes writable again. */
    public void whenWritable(Runnable action) {
        this.writableAgain = action;
    }

    /** Stops or resumes reading from the backend, to follow the client's pace (back-pressure). */
    public void setAutoRead(boolean autoRead) {
        if (channel != null) {
            channel.config().setAutoRead(autoRead);
        }
    }

    /**
     * Closes the connection politely (COM_QUIT) when idle, at once otherwise. After a COM_QUIT it still counts, and
     * holds its slot of the per-server cap, until the server has closed it (at most {@link #QUIT_WAIT}): until then
     * the server counts it against its {@code max_connections}, and a slot given on at once would let a storm of
     * sessions hold more connections there than the cap.
     */
    public void close() {
        if (state == State.CLOSED) {
            return;
        }
        boolean idle = state == State.READY;
        state = State.CLOSED;
        if (queued != null) {
            queued.clear(); // closed on purpose: those waiting for a pipelined response are not told
        }
        if (channel == null || !idle || !channel.isActive()) {
            closeAtOnce();
            return;
        }
        Channel quitting = channel;
        ScheduledFuture<?> bound;
        try {
            bound = quitting.eventLoop().schedule((Runnable) quitting::close, QUIT_WAIT.toMillis(),
                    TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopping) {
            closeAtOnce(); // the I/O thread is stopping (Gantry stops): no waiting for the server then
            return;
        }
        quitting.closeFuture().addListener(closed -> {
            bound.cancel(false);
            releaseCount();
        });
        ByteBuf quit = quitting.alloc().buffer(1).writeByte(CommandType.COM_QUIT.code());
        quitting.writeAndFlush(new Packet(0, quit)).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    }

    private void closeAtOnce() {
        releaseCount();
        if (channel != null) {
            channel.close();
        }
    }

    /**
     * Gives the connection up without a word to its server, which stopped answering: the command it runs fails with
     * {@code failure}, and an idle connection closes as if the server had closed it.
     */
    public void abandon(BackendFailure failure) {
        if (state != State.CLOSED) {
            fail(failure);
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
            for (Queued behind; queued != null && (behind = queued.poll()) != null; ) {
                behind.listener().onFailure(failure);
            }
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
        Runnable slot = releaseSlot;
        if (slot != null) {
            releaseSlot = null;
            slot.run();
        }
    }

    // ---- login: the steps of the BackendAuthentication, carried out -------------------------------------------

    private void onGreeting(Packet packet) {
        BackendAuthentication.Step step = authentication.onGreeting(packet.payload(), packet.sequenceId());
        HandshakeV10 greeting = authentication.greeting();
        if (greeting != null) {
            greetings.greeted(server, greeting);
            serverThreadId = greeting.connectionId();
        }
        take(step);
    }

    private void take(BackendAuthentication.Step step) {
        if (step instanceof BackendAuthentication.Step.Send send) {
            state = State.AUTHENTICATING;
            ByteBuf out = channel.alloc().buffer(send.payload().length).writeBytes(send.payload());
            Arrays.fill(send.payload(), (byte) 0); // it may hold the password
            channel.writeAndFlush(new Packet(send.sequenceId(), out));
        } else if (step instanceof BackendAuthentication.Step.StartTls tls) {
            startTls(tls);
        } else if (step instanceof BackendAuthentication.Step.LoggedIn) {
            capabilities = authentication.capabilities();
            mariaDbCapabilities = authentication.mariaDbCapabilities();
            addExtendedMetadata = authentication.addExtendedMetadata();
            state = State.READY;
            server.connectionOpened();
            countedConnection = true;
            ready.trySuccess(this);
        } else if (step instanceof BackendAuthentication.Step.Failed failed) {
            fail(failed.failure());
        }
        // Step.Wait: the server's next packet follows
    }

    /** The TLS handler goes in front of the framing only once the SSLRequest has left in plain text. */
    private void startTls(BackendAuthentication.Step.StartTls tls) {
        ByteBuf request = channel.alloc().buffer(tls.sslRequest().length).writeBytes(tls.sslRequest());
        state = State.TLS_HANDSHAKE;
        channel.writeAndFlush(new Packet(tls.sequenceId(), request)).addListener((ChannelFutureListener) written -> {
            if (!written.isSuccess()) {
                fail(new BackendFailure(server.address(), "cannot send to " + server.address() + ": "
                        + describe(written.cause()), written.cause()));
                return;
            }
            if (state != State.TLS_HANDSHAKE) {
                return;
            }
            SslHandler handler = tls.handler();
            channel.pipeline().addFirst("tls", handler);
            handler.handshakeFuture().addListener(handshake -> {
                if (state != State.TLS_HANDSHAKE) {
                    return;
                }
                if (!handshake.isSuccess()) {
                    fail(new BackendFailure(server.address(), "the TLS handshake with " + server.address()
                            + " failed (" + server.url().tls().describe() + "): " + describe(handshake.cause()),
                            handshake.cause()));
                    return;
                }
                take(authentication.afterTls());
            });
        });
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
                            take(authentication.onPacket(packet.payload(), packet.sequenceId()));
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
                // Logged whole: a fault of Gantry's own handling would otherwise show only as a lost connection.
                LOG.warn("{}: closing the connection after an error handling its answer", server.address(), e);
                if (packet.refCnt() > 0) { // a listener that failed may have let it go already
                    packet.release();
                }
                failCommand("protocol error with " + server.address() + ": " + describe(e));
            }
        }

        private void onResponsePacket(Packet received) {
            ResponseFraming.Progress progress = framing.accept(received.payload());
            Packet packet = addExtendedMetadata ? withExtendedMetadata(received) : received;
            ResponseListener current = listener;
            if (progress == ResponseFraming.Progress.COMPLETE) {
                ResponseFraming completed = framing;
                Queued next = queued == null ? null : queued.poll();
                if (next == null) {
                    state = State.READY;
                    listener = null;
                } else {
                    framing = next.framing();
                    listener = next.listener();
                }
                current.onPacket(packet, completed);
                current.onComplete(completed);
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
