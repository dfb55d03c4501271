package io.gantry.proxy.frontend;

import static io.gantry.proxy.session.SessionContext.LOG;
import static io.gantry.proxy.session.LogText.printable;
import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_WITH_DB;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.BackendFailure;
import io.gantry.proxy.execution.SessionBackends;
import io.gantry.proxy.login.ClientAuthentication;
import io.gantry.proxy.login.LoginGate;
import io.gantry.proxy.login.ServerGreetings;
import io.gantry.proxy.session.LoginDoor;
import io.gantry.proxy.session.ProxyServices;
import io.gantry.proxy.session.RateLimitedLog;
import io.gantry.proxy.session.Reply;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.session.SessionErrors;
import io.gantry.route.SessionRouteState;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import io.gantry.wire.ChangeUser;
import io.gantry.wire.ClientHandshake;
import io.gantry.wire.HandshakeResponse41;
import io.gantry.wire.GreetingTemplate;
import io.gantry.wire.NativePassword;
import io.gantry.wire.Packet;
import io.gantry.wire.PacketFrameDecoder;
import io.gantry.wire.ServerStatus;
import io.gantry.wire.SslRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.Future;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The connection phase with the client: admission (the session cap and the login gate), the greeting, TLS, the
 * authentication exchange ({@link ClientAuthentication}), and a first backend login before the client is told it
 * is in, so that what a server would refuse at login is refused here too. COM_CHANGE_USER runs the same exchange
 * on an open session.
 */
final class ClientLogin {

    private static final SecureRandom RANDOM = new SecureRandom();

    private final SessionContext session;
    /** The login's door and limits, the accounts, the servers: a login reaches most of what the proxy shares. */
    private final ProxyServices services;
    private final SessionBackends backends;
    private final ChannelHandlerContext ctx;
    private final byte[] seed = new byte[NativePassword.SEED_LENGTH];
    private int offeredCapabilities;
    private int offeredMariaDbCapabilities;
    /** Whether the greeting sent was a MariaDB server's: Gantry's own login errors are worded as it words them. */
    private boolean mariaDb;
    private ClientAuthentication authentication;
    /** Whether the login waits on Gantry's side (a server, a refusal's delay) rather than on the client. */
    private boolean waitingForServer;
    /**
     * The running deadline (for its turn in the queue, then for the login), cancelled when the login ends: a timer
     * left in the event loop's queue keeps its closed session in memory until it fires (at 1,000 logins a second and
     * the default 10 s, some 10,000 sessions).
     */
    private ScheduledFuture<?> deadline;

    /** @param ctx the client channel: the login greets, upgrades to TLS and replaces the login's framing there */
    ClientLogin(SessionContext session, ProxyServices services, SessionBackends backends, ChannelHandlerContext ctx) {
        this.session = session;
        this.services = services;
        this.backends = backends;
        this.ctx = ctx;
    }

    /**
     * A new connection: refused at once when sessions are full or its host is blocked; greeted when it may log in
     * now; else it waits for its turn (too many connections are logging in, in total or from its host), ungreeted,
     * at most {@code --connect-timeout-secs}. Returns whether it was greeted or waits.
     */
    boolean start() {
        if (services.sessions().full()) {
            services.peerWarnings().warn("full", "session {}: refused {}, --max-client-connections ({}) reached",
                    session.id(), session.host(), services.config().maxClientConnections());
            session.sendErrorAndClose(0, SessionErrors.tooManySessions(services.config().maxClientConnections()));
            return false;
        }
        Runnable turn = () -> ctx.executor().execute(this::turnCame);
        LoginGate.Admission admission = services.login().gate().admitOrQueue(session.host(), turn);
        if (admission.admitted()) {
            greet();
            return true;
        }
        if (!admission.queued()) {
            refuse(admission.refusal());
            return false;
        }
        session.counts().queued(turn);
        // Nothing the peer sends before its greeting is read: a login cannot start before its turn.
        ctx.channel().config().setAutoRead(false);
        Duration timeout = services.config().login().handshakeTimeout();
        deadline = ctx.executor().schedule(() -> {
            if (services.login().gate().withdraw(session.host(), turn) && !session.isClosed()) {
                session.counts().leftQueue();
                refuse(admission.refusal());
            }
        }, timeout.toMillis(), TimeUnit.MILLISECONDS);
        return true;
    }

    /** The login gate admitted this waiting connection: it is greeted now, unless it went away meanwhile. */
    private void turnCame() {
        cancelDeadline();
        session.counts().leftQueue();
        if (session.isClosed()) {
            services.login().gate().leave(session.host());
            return;
        }
        greet();
    }

    /** Sends the greeting; the peer has {@code --connect-timeout-secs} from now to log in. */
    private void greet() {
        ctx.channel().config().setAutoRead(true);
        session.counts().pending();
        Duration timeout = services.config().login().handshakeTimeout();
        deadline = ctx.executor().schedule(() -> {
            if (session.counts().isPending() && !session.isClosed()) {
                loginTimedOut(timeout);
            }
        }, timeout.toMillis(), TimeUnit.MILLISECONDS);
        RANDOM.nextBytes(seed);
        for (int i = 0; i < seed.length; i++) {
            // Seed bytes are NUL-terminated on the wire; keep them printable like servers do.
            seed[i] = (byte) (seed[i] & 0x7F);
            if (seed[i] == 0 || seed[i] == '$') {
                seed[i] = 'G';
            }
        }
        // The primary's version, capabilities, MariaDB extended capabilities and collation (see ServerGreetings).
        GreetingTemplate greeting = services.login().clientGreeting();
        offeredCapabilities = greeting.greeting().capabilities();
        offeredMariaDbCapabilities = greeting.greeting().mariaDbCapabilities();
        mariaDb = greeting.mariaDb();
        ByteBuf out = ctx.alloc().buffer(greeting.size());
        session.client().greeted(seed, mariaDb);
        greeting.writeTo(out, session.id() & 0xFFFF_FFFFL, seed);
        ctx.writeAndFlush(new Packet(0, out));
    }

    /**
     * The login outlasted {@code --connect-timeout-secs}. Only a peer that left its own part unfinished counts
     * against its host: a login that waits on a server (the account look-up, the first backend) is Gantry's wait.
     */
    private void loginTimedOut(Duration timeout) {
        boolean peersTurn = !waitingForServer && (session.phase() == SessionContext.Phase.GREETING_SENT
                || session.phase() == SessionContext.Phase.AUTHENTICATING);
        services.peerWarnings().warn("login-timeout", "session {}: closing, {} did not log in within {} s "
                + "(--connect-timeout-secs){}", session.id(), session.host(), timeout.toSeconds(),
                peersTurn ? "" : ", waiting for a server");
        if (peersTurn) {
            handshakeFailed("left unfinished past --connect-timeout-secs");
        }
        session.closeSession();
    }

    /** A new connection the login gate refused: the server's own errors for the two cases, and one log line. */
    private void refuse(LoginGate.Refusal refusal) {
        RateLimitedLog warnings = services.peerWarnings();
        if (refusal instanceof LoginGate.Refusal.Blocked blocked) {
            long seconds = Math.max(1, blocked.left().toSeconds());
            warnings.warn("blocked", "session {}: refused {}, blocked after failed handshakes for {} more s",
                    session.id(), session.host(), seconds);
            session.sendErrorAndClose(0, SessionErrors.hostBlocked(session.host(), seconds));
        } else {
            LoginGate.Refusal.TooManyPending pending = (LoginGate.Refusal.TooManyPending) refusal;
            warnings.warn("pending", "session {}: refused {}, {} connections are logging in ({} {})", session.id(),
                    session.host(), pending.pending(), SessionErrors.pendingLoginFlag(pending), pending.limit());
            session.sendErrorAndClose(0, SessionErrors.tooManyPendingLogins(pending, session.host()));
        }
    }

    /** The client's first packet: a HandshakeResponse41, or an SSLRequest to go on over TLS. */
    void onHandshakeResponse(Packet packet) {
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
        int capabilities = response.capabilities() & ServerGreetings.OFFERED & offeredCapabilities;
        session.client().handshakeReceived(capabilities, response.mariaDbCapabilities() & offeredMariaDbCapabilities,
                response.characterSet(), response.username(),
                (capabilities & CLIENT_CONNECT_WITH_DB) != 0 ? response.database() : "");
        authentication = newAuthentication();
        apply(authentication.onHandshakeResponse(session.client().user(), response.authPluginName(),
                        response.authResponse()),
                packet.sequenceId() + 1);
    }

    private ClientAuthentication newAuthentication() {
        // The greeting's: on a session taken over, the one the Gantry that greeted the client gave it (a
        // COM_CHANGE_USER answers it).
        return new ClientAuthentication(session.client().scramble(), session.client().tlsActive(),
                services.login().rsaKey(), session.host(), session.client().greetedAsMariaDb());
    }

    /**
     * SSLRequest: the rest of the exchange runs over TLS. The client sends its TLS ClientHello right behind the
     * request, so bytes already read past it are handed to the TLS handler rather than decoded as packets.
     */
    private void startTls(int sequenceId) {
        if (services.login().sslContext().isEmpty() || session.client().tlsActive()) {
            session.sendErrorAndClose(sequenceId + 1, SessionErrors.tlsNotEnabled());
            return;
        }
        session.client().tlsStarted();
        PacketFrameDecoder decoder = ctx.pipeline().get(PacketFrameDecoder.class);
        ByteBuf alreadyRead = decoder.takeUndecodedBytes();
        ctx.pipeline().addFirst("tls", services.login().sslContext().get().newHandler(ctx.alloc()));
        // Synchronously: the rest of the ClientHello may be in this same read burst and must come after it. The
        // TLS handler only answers a ClientHello, it passes nothing on, so the decoder is not re-entered.
        if (alreadyRead.isReadable()) {
            ctx.pipeline().fireChannelRead(alreadyRead);
        } else {
            alreadyRead.release();
        }
    }

    /** A later packet of the authentication exchange (an auth-switch answer, a password, a key request). */
    void onAuthPacket(Packet packet) {
        byte[] data = ByteBufUtil.getBytes(packet.payload());
        packet.release();
        apply(authentication.onClientPacket(data), packet.sequenceId() + 1);
    }

    /** COM_CHANGE_USER: everything of the old session goes, and the login runs as at connect time. */
    Reply changeUser(Packet packet) {
        ChangeUser change;
        try {
            change = ChangeUser.decode(packet.payload(), session.client().capabilities());
        } finally {
            packet.release();
        }
        backends.closeAll();
        session.changedUser(change.username(), change.database(), change.characterSet());
        authentication = newAuthentication();
        session.markOpeningBackend();
        apply(authentication.onHandshakeResponse(session.client().user(), change.authPluginName(),
                change.authResponse()), 1);
        return Reply.LATER;
    }

    private void apply(ClientAuthentication.Step step, int firstSequence) {
        int sequence = firstSequence;
        for (byte[] payload : step.packets()) {
            ctx.write(new Packet(sequence++ & 0xFF, ctx.alloc().buffer(payload.length).writeBytes(payload)));
        }
        int next = sequence;
        switch (step.outcome()) {
            case CONTINUE -> {
                session.markAuthenticating();
                ctx.flush();
            }
            case LOOKUP -> {
                Optional<ClientAuthentication.Step> known = services.login()
                        .acceptKnown(session.client().user(), authentication);
                if (known.isPresent()) {
                    apply(known.get(), next);
                    return;
                }
                waitingForServer = true;
                services.login().lookupAccount(session.client().user()).whenComplete((entries, failure) ->
                    ctx.executor().execute(() -> {
                        waitingForServer = false;
                        if (session.isClosed()) {
                            return;
                        }
                        if (failure != null) {
                            Throwable cause = failure.getCause() == null ? failure : failure.getCause();
                            LOG.atError().addKeyValue("session", session.id())
                                    .log("session {}: cannot look up the account '{}': {}", session.id(),
                                            printable(session.client().user()), cause.getMessage());
                            session.sendErrorAndClose(next,
                                    SessionErrors.accountLookupFailed(session.client().user(), cause));
                            return;
                        }
                        apply(authentication.onAccounts(entries), next);
                    }));
            }
            case ACCEPT -> {
                session.client().keepSecret(step.secret());
                openFirstBackend(sequence);
            }
            case DENY -> refused(step, sequence);
        }
    }

    /**
     * The servers' accounts refuse this login: the client hears the server's own error, after the delay the login
     * gate gives this account on this host (none until it has been refused several times in a row).
     */
    private void refused(ClientAuthentication.Step step, int sequence) {
        Duration delay = services.login().gate().loginRefused(session.host(), session.client().user());
        services.peerWarnings().warn("denied", "session {}: access denied for '{}'@'{}' ({}, {}){}",
                session.id(), printable(session.client().user()), session.host(), authentication.plugin(),
                step.reason(),
                delay.isZero() ? "" : "; answered after " + delay.toMillis() + " ms (--login-delay-after)");
        if (delay.isZero()) {
            session.sendErrorAndClose(sequence, step.error());
            return;
        }
        waitingForServer = true; // the delay is Gantry's, not the peer's
        ctx.executor().schedule(() -> {
            if (!session.isClosed()) {
                session.sendErrorAndClose(sequence, step.error());
            }
        }, delay.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Logs in to one backend before telling the client it is in, so that what a server would refuse at login
     * (an unknown database, an account it does not know) is refused here too, with the server's own error.
     */
    private void openFirstBackend(int okSequence) {
        openFirstBackend(okSequence, true);
    }

    /** @param mayTryAnother whether a server that turns out unreachable (and is marked down) may be replaced, once */
    private void openFirstBackend(int okSequence, boolean mayTryAnother) {
        session.markOpeningBackend();
        Upstreams upstreams = services.upstreams();
        Optional<UpstreamServer> first = upstreams.primary().or(() -> upstreams.upReplicas().stream().findFirst());
        if (first.isEmpty()) {
            session.sendErrorAndClose(okSequence, SessionErrors.noServerForLogin(upstreams.noPrimaryReason()));
            return;
        }
        Future<BackendConnection> opening = backends.obtain(first.get());
        opening.addListener(future -> {
            if (!future.isSuccess()) {
                if (mayTryAnother && future.cause() instanceof BackendFailure failure && failure.serverUnreachable()
                        && !first.get().isReachable() && !session.isClosed()) {
                    // The server stopped answering (it is marked down now): the login goes on with another.
                    LOG.atInfo().addKeyValue("session", session.id()).addKeyValue("server", first.get().address())
                            .log("session {}: {}; logging in through another server", session.id(),
                                    failure.getMessage());
                    openFirstBackend(okSequence, false);
                    return;
                }
                session.backendFailed(okSequence, first.get(), future.cause());
                return;
            }
            if (!finishLogin(okSequence)) {
                return;
            }
            LOG.debug("session {}: '{}'@'{}' logged in", session.id(), printable(session.client().user()),
                    session.host());
            session.writeOk(okSequence);
            ctx.flush();
            session.commandDone();
            backends.loginDone(opening.getNow());
        });
    }

    /**
     * The client logged in: it stops counting as a pending login and starts counting as a session (a
     * COM_CHANGE_USER keeps its slot), and the packet size cap goes from the login bound to
     * {@code --max-allowed-packet}. Returns false after refusing the session when sessions are full.
     */
    private boolean finishLogin(int okSequence) {
        if (session.counts().leavePending()) {
            cancelDeadline();
            services.login().gate().leave(session.host());
            raisePacketCap();
        }
        services.login().gate().succeeded(session.host(), session.client().user());
        if (!session.counts().isAdmitted()) {
            if (!services.sessions().admit()) {
                services.peerWarnings().warn("full", "session {}: refused '{}'@'{}', --max-client-connections ({}) "
                        + "reached", session.id(), printable(session.client().user()), session.host(),
                        services.config().maxClientConnections());
                session.sendErrorAndClose(okSequence, SessionErrors.tooManySessions(
                        services.config().maxClientConnections()));
                return false;
            }
            session.counts().admitted();
        }
        return true;
    }

    /** Swaps the login-sized frame decoder for one capped at {@code --max-allowed-packet}. */
    private void raisePacketCap() {
        PacketFrameDecoder login = ctx.pipeline().get(PacketFrameDecoder.class);
        ByteBuf early = login.takeUndecodedBytes();
        PacketFrameDecoder full = new PacketFrameDecoder(services.config().maxPacketSize());
        ctx.pipeline().replace(login, "frames", full);
        if (early.isReadable()) {
            try {
                full.channelRead(ctx.pipeline().context(full), early); // (rare: clients wait for the OK)
            } catch (Exception e) {
                throw new IllegalStateException("session " + session.id() + ": cannot hand early bytes to the decoder",
                        e);
            }
        } else {
            early.release();
        }
    }

    /** The login ended (in, refused, or the session closed): its deadline has nothing left to watch. */
    void cancelDeadline() {
        if (deadline != null) {
            deadline.cancel(false);
            deadline = null;
        }
    }

    /** A malformed or unfinished handshake from this host; blocks the host when it is one too many. */
    void handshakeFailed(String what) {
        LoginDoor door = services.login();
        door.gate().handshakeFailed(session.host(), what).ifPresent(door::hostBlocked);
    }
}
