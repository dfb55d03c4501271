package io.gantry.proxy.frontend;

import io.gantry.proxy.caching.CachedReads;
import io.gantry.proxy.command.AdminCommand;
import io.gantry.proxy.command.AnswerCorrections;
import io.gantry.proxy.command.KillCommand;
import io.gantry.proxy.command.PreparedStatementCommands;
import io.gantry.proxy.command.QueryCommand;
import io.gantry.proxy.command.SessionCommands;
import io.gantry.proxy.digest.SessionDigest;
import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.execution.ResponseForwarder;
import io.gantry.proxy.execution.SessionBackends;
import io.gantry.proxy.execution.SessionRouting;
import io.gantry.proxy.pipeline.StatementPipeline;
import io.gantry.proxy.session.ClientWriter;
import io.gantry.proxy.session.LiveSession;
import io.gantry.proxy.session.ProxyServices;
import io.gantry.proxy.session.Reply;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.session.SessionErrors;
import io.gantry.wire.CommandType;
import io.gantry.wire.MalformedPacketException;
import io.gantry.wire.Packet;
import io.gantry.wire.PacketDecodeFailure;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import io.gantry.proxy.session.MovedSession;
import io.gantry.wire.PacketFrameDecoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * One client connection, as Netty sees it: packets in, in order, to the session's login while it logs in and then
 * to one handler per command; each handler returns its {@link Reply}, which {@link SessionContext#finish} writes.
 * While a command runs the client's next commands wait in a queue (strict ordering); while the client cannot keep
 * up, the backend is not read ({@link ResponseForwarder}). The parts: {@link SessionContext} (the session's state
 * and its answers), {@link ClientLogin}, {@link SessionBackends}, {@link SessionRouting}, {@link ResponseForwarder},
 * the command handlers ({@link QueryCommand}, {@link KillCommand}, {@link AdminCommand},
 * {@link PreparedStatementCommands}, {@link SessionCommands}) and {@link SessionErrors}.
 */
public final class ClientSession extends ChannelInboundHandlerAdapter implements LiveSession {

    private final ProxyServices services;
    private final long id;
    /** The session as the Gantry taken over passed it, until it is adopted here; null for a new connection. */
    private MovedSession moved;
    private SessionContext session;
    /** The client channel: only this class and the login's channel side ({@link ClientLogin}) touch it. */
    private ChannelHandlerContext ctx;
    private SessionBackends backends;
    private ResponseForwarder forwarder;
    /** The one way out to the client, and its reads ({@link #depart} holds them back for a take-over). */
    private ClientWriter writer;
    private ClientLogin login;
    private QueryCommand queries;
    private PreparedStatementCommands statements;
    private SessionCommands sessionCommands;

    public ClientSession(ProxyServices services, long id) {
        this.services = services;
        this.id = id;
    }

    /**
     * A session moved from the Gantry taken over, logged in already: it keeps {@code moved}'s id and state, and reads
     * nothing until {@link #beginAdopted}.
     */
    public ClientSession(ProxyServices services, MovedSession moved) {
        this(services, moved.id());
        this.moved = moved;
    }

    @Override
    public SessionContext context() {
        return session;
    }

    @Override
    public List<Map.Entry<String, Long>> backendThreads() {
        return backends.threads();
    }

    @Override
    public void closeOnItsLoop() {
        // A KILL ended the session's server threads: none of its connections may go to the pool. The client's
        // connection closes at once, as a killed direct connection does (a pool that checks an idle connection
        // right after the KILL must find it gone; closeSession alone would leave it open a second).
        ctx.channel().eventLoop().execute(() -> {
            backends.closeAll();
            session.closeSession();
            ctx.close();
        });
    }

    @Override
    public void serverDownOnItsLoop(UpstreamServer server, String reason) {
        if (session != null) {
            ctx.channel().eventLoop().execute(() -> {
                if (backends != null) {
                    backends.serverDown(server, reason);
                }
            });
        }
    }

    /** See {@link SessionContext#endIfIdleForDrain}. */
    @Override
    public void endOnItsLoopIfIdle() {
        ctx.channel().eventLoop().execute(session::endIfIdleForDrain);
    }

    @Override
    public boolean released() {
        return session == null || session.released();
    }

    @Override
    public void releaseFromMoveOnItsLoop() {
        if (writer != null) {
            ctx.channel().eventLoop().execute(writer::releaseFromMove);
        }
    }

    @Override
    public CompletableFuture<Departure> departOnItsLoop() {
        CompletableFuture<Departure> departure = new CompletableFuture<>();
        ctx.channel().eventLoop().execute(() -> {
            try {
                departure.complete(depart());
            } catch (RuntimeException e) {
                departure.completeExceptionally(e);
            }
        });
        return departure;
    }

    /**
     * What this session makes of a take-over's look, on its loop. One held back at an earlier look that cannot move
     * now for another reason than a running statement reads again.
     */
    private Departure depart() {
        Departure departure = departNow();
        if (departure instanceof Departure.NotNow notNow && !notNow.heldBack() && writer != null) {
            writer.releaseFromMove();
        }
        return departure;
    }

    private Departure departNow() {
        if (session == null) {
            return new Departure.NotNow("it logs in", false);
        }
        String notNow = session.whyNotMovable();
        if (notNow != null) {
            boolean holdBack = session.onlyRunsAStatement() && !forwarder.awaitsClientData()
                    && !session.client().tlsActive() && ctx.channel() instanceof EpollSocketChannel;
            if (holdBack) {
                // A busy client would have its next command read before the next look: held back, the session is
                // between two statements once this one is answered, and is looked at again first.
                writer.holdForMove();
            }
            return new Departure.NotNow(notNow, holdBack);
        }
        BackendConnection holding = backends.holding(false);
        if (holding != null) {
            return new Departure.NotNow("its connection to " + holding.server().address() + " holds "
                    + backends.describeHeld(holding), false);
        }
        if (session.client().tlsActive()) {
            SessionContext.LOG.info("session {}: ending it between two statements for the take-over: its TLS keys "
                    + "cannot move to another process", id);
            session.endIfIdleForDrain();
            return new Departure.Ended(id);
        }
        if (!(ctx.channel() instanceof EpollSocketChannel epoll)) {
            // Only an epoll channel's descriptor can be passed and given up cleanly.
            return new Departure.NotNow("its socket is not on epoll", false);
        }
        // Nothing is read from now on; what was read of the next command goes with the state, as it arrived.
        epoll.config().setAutoRead(false);
        Optional<ByteBuf> undecoded = ctx.pipeline().get(PacketFrameDecoder.class).takeUnemittedBytes(ctx.alloc());
        if (undecoded.isEmpty()) {
            epoll.config().setAutoRead(true);
            return new Departure.NotNow("a command larger than 16 MiB is arriving", false);
        }
        byte[] unread = ByteBufUtil.getBytes(undecoded.get());
        undecoded.get().release();
        backends.releaseForMove();
        String state = session.moving(unread).toJson();
        EventLoop loop = ctx.channel().eventLoop();
        return new Departure.Moving(id, epoll.fd(), state, () -> loop.execute(() -> {
            session.movedAway();
            ctx.channel().close();
        }), () -> loop.execute(() -> {
            session.stays();
            writer.releaseFromMove();
            epoll.config().setAutoRead(true);
            if (unread.length > 0) {
                ctx.pipeline().fireChannelRead(Unpooled.wrappedBuffer(unread));
            }
        }), epoll::isOpen);
    }

    /**
     * Starts reading a session adopted from the Gantry taken over, on its event loop: first the bytes it had read of
     * the client's next command, then the socket. Until now the Gantry taken over held its copy still.
     */
    public void beginAdopted() {
        byte[] unread = moved.unread();
        moved = null;
        ctx.channel().config().setAutoRead(true);
        if (unread.length > 0) {
            ctx.pipeline().fireChannelRead(Unpooled.wrappedBuffer(unread));
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext context) {
        java.net.SocketAddress address = context.channel().remoteAddress();
        String host = address instanceof java.net.InetSocketAddress inet ? inet.getHostString()
                : String.valueOf(address);
        ctx = context;
        EventLoop loop = context.channel().eventLoop();
        ByteBufAllocator alloc = context.alloc();
        ClientWriter client = new ClientWriter(context);
        writer = client;
        session = new SessionContext(services, id, client, loop, alloc, host);
        // Each part gets the services it uses. The caches, the metrics, the sampler and the backend channels are set
        // after the listener starts, so a part gets a way to read the current one (services::...), not its value.
        Upstreams upstreams = services.upstreams();
        backends = new SessionBackends(session, loop, alloc, services.config(), upstreams, services.backendPools(),
                services.backendOpener(), services.clock(), services::nudgeSampler);
        forwarder = new ResponseForwarder(session, backends, client, alloc, upstreams, services::metrics);
        SessionRouting routing = new SessionRouting(session, backends, upstreams, services.router(),
                services.serverIds(), services.readCounters(), services::metrics, services.login().greetings(),
                services.clock(), services::nudgeSampler);
        login = new ClientLogin(session, services, backends, context);
        CachedReads cachedReads = new CachedReads(session, client, upstreams, services.serverIds(), services::caches,
                services.clock());
        StatementPipeline pipeline = new StatementPipeline(session, backends, routing, forwarder, cachedReads,
                upstreams, services.readCounters(), services.config().failover(), services.replayCounts(),
                services.inDoubtCommits(), loop);
        AnswerCorrections answers = new AnswerCorrections(session, services.sessions(), services.login(),
                upstreams, client, alloc);
        SessionDigest digest = services.config().digests().enabled()
                ? new SessionDigest(session, services.digests(), services.slowStatements()) : SessionDigest.off();
        queries = new QueryCommand(session, backends, routing, pipeline, cachedReads, digest, answers,
                services.adminSql(), services.sessions(), upstreams, client, loop, alloc);
        statements = new PreparedStatementCommands(session, backends, routing, forwarder, pipeline, cachedReads,
                digest, answers, upstreams, alloc);
        sessionCommands = new SessionCommands(session, backends, forwarder, upstreams);
        session.wire(this::dispatch, () -> {
            login.cancelDeadline();
            backends.releaseAll();
            forwarder.discard();
        });
        if (moved != null) {
            session.adopt(moved);
            services.sessions().register(id, this);
        } else if (login.start()) {
            services.sessions().register(id, this);
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext context, Object message) {
        if (message instanceof PacketDecodeFailure failure) {
            badFrame(failure);
            return;
        }
        Packet packet = (Packet) message;
        SessionContext.Phase before = session.phase();
        try {
            switch (before) {
                case GREETING_SENT -> login.onHandshakeResponse(packet);
                case AUTHENTICATING -> login.onAuthPacket(packet);
                case READY -> dispatch(packet);
                case OPENING_BACKEND, RUNNING -> {
                    if (forwarder.awaitsClientData()) {
                        forwarder.forwardClientData(packet);
                    } else {
                        session.queue(packet);
                    }
                }
                case CLOSED -> packet.release();
            }
        } catch (MalformedPacketException e) {
            malformed(packet, before, e);
        } catch (RuntimeException e) {
            SessionContext.releaseIfHeld(packet);
            SessionContext.LOG.atError().addKeyValue("session", id)
                    .log("session {}: closing after an unexpected error: {}", id, e.toString(), e);
            session.sendErrorAndClose(packet.sequenceId() + 1, SessionErrors.internalError(e));
        }
    }

    /** A frame the decoder refused (too large, or not a packet at all): the session cannot go on. */
    private void badFrame(PacketDecodeFailure failure) {
        services.peerWarnings().warn("bad-packet", "session {}: closing, bad packet from {}: {}", id, session.host(),
                failure.message());
        boolean beforeLogin = session.counts().isPending();
        if (beforeLogin) {
            login.handshakeFailed("sent a bad packet (" + failure.message() + ")");
        }
        session.sendErrorAndClose(failure.sequenceId() + 1,
                failure.reason() == PacketDecodeFailure.Reason.TOO_LARGE
                        ? SessionErrors.packetTooLarge(failure.sizeFound(), failure.cap(), beforeLogin)
                        : SessionErrors.malformedPacket(failure.message()));
    }

    /**
     * A packet that could not be read. A command refused before it changed anything is answered as the server
     * answers it, and the session goes on; during login, or once a command started, the session closes.
     */
    private void malformed(Packet packet, SessionContext.Phase before, MalformedPacketException e) {
        if (before == SessionContext.Phase.READY && session.phase() == SessionContext.Phase.READY) {
            boolean readable = packet.refCnt() > 0;
            CommandType command = readable ? CommandType.of(packet.payload()) : CommandType.COM_QUERY;
            boolean idCutOff = readable && packet.payload().readableBytes() < 5;
            SessionContext.releaseIfHeld(packet);
            SessionContext.LOG.debug("session {}: malformed {} from client: {}", id, command, e.getMessage());
            session.finish(SessionErrors.malformedCommand(command, idCutOff).map(Reply::error).orElse(Reply.DONE));
            return;
        }
        // The handler may have released the packet already: releasing twice would log a stack trace per packet.
        SessionContext.releaseIfHeld(packet);
        if (session.counts().isPending()) {
            login.handshakeFailed("sent a malformed packet (" + e.getMessage() + ")");
        }
        services.peerWarnings().warn("malformed", "session {}: closing, malformed packet from {}: {}", id,
                session.host(), e.getMessage());
        session.sendErrorAndClose(packet.sequenceId() + 1, SessionErrors.malformedPacket(e.getMessage()));
    }

    /** One command of the client's, to its handler; the handler's reply ends it (or it ends later). */
    private void dispatch(Packet packet) {
        if (packet.sequenceId() != 0) {
            // Every command starts a new exchange at sequence 0; anything else means client and proxy disagree.
            packet.release();
            SessionContext.LOG.atWarn().addKeyValue("session", id)
                    .log("session {}: closing, command packet with sequence id {} instead of 0", id,
                            packet.sequenceId());
            session.sendErrorAndClose(packet.sequenceId() + 1, SessionErrors.packetsOutOfOrder());
            return;
        }
        if (services.sessions().isDraining()) {
            // A command read before the drain's own task reached this session's loop is refused as well.
            session.endIfIdleForDrain();
        }
        if (session.sessionLost() != null) {
            packet.release();
            session.sendErrorAndClose(1, session.sessionLost());
            return;
        }
        CommandType command = CommandType.of(packet.payload());
        session.commandArrived();
        session.finish(switch (command) {
            case COM_QUIT -> {
                packet.release();
                session.quit();
                yield Reply.LATER;
            }
            case COM_PING -> sessionCommands.ping(packet);
            case COM_QUERY -> queries.run(packet);
            case COM_INIT_DB, COM_SET_OPTION -> sessionCommands.onPrimary(packet, true);
            case COM_FIELD_LIST, COM_STATISTICS -> sessionCommands.onPrimary(packet, false);
            case COM_RESET_CONNECTION -> sessionCommands.resetConnection(packet);
            case COM_STMT_PREPARE -> statements.prepare(packet);
            case COM_STMT_EXECUTE -> statements.execute(packet);
            case COM_STMT_SEND_LONG_DATA -> statements.sendLongData(packet);
            case COM_STMT_RESET -> statements.reset(packet);
            case COM_STMT_CLOSE -> statements.close(packet);
            case COM_STMT_FETCH -> statements.fetch(packet);
            case COM_CHANGE_USER -> login.changeUser(packet);
            default -> {
                packet.release();
                yield Reply.error(SessionErrors.unknownCommand(command));
            }
        });
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext context) {
        if (context.channel().isWritable()) {
            forwarder.clientWritable();
        }
        context.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext context) {
        if (session != null) {
            session.clientClosed();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext context, Throwable cause) {
        SessionContext.LOG.debug("session {}: connection error: {}", id, cause.toString());
        if (session != null) {
            session.closeSession();
        }
    }
}
