package io.gantry.proxy;

import io.gantry.admin.AdminSql;
import io.gantry.cache.QueryCaches;
import io.gantry.digest.SlowStatementLog;
import io.gantry.digest.StatementDigests;
import io.gantry.events.EventPublisher;
import io.gantry.proxy.backend.BackendChannels;
import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.BackendFailure;
import io.gantry.proxy.backend.BackendLogin;
import io.gantry.proxy.backend.BackendPools;
import io.gantry.proxy.backend.BackendSecret;
import io.gantry.proxy.caching.CacheRefreshWorkers;
import io.gantry.proxy.frontend.ClientSession;
import io.gantry.proxy.login.LoginGate;
import io.gantry.proxy.login.ServerGreetings;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.proxy.session.ProxyMetrics;
import io.gantry.proxy.session.ProxyServices;
import io.gantry.proxy.transport.AdoptedListener;
import io.gantry.proxy.transport.ChannelBuffers;
import io.gantry.proxy.transport.SocketTransport;
import io.gantry.route.CausalScopes;
import io.gantry.topology.GtidSampler;
import io.gantry.topology.KnownAccounts;
import io.gantry.topology.TlsTrust;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.UpstreamUrl;
import io.gantry.topology.Upstreams;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.HandshakeV10;
import io.gantry.wire.PacketFrameDecoder;
import io.gantry.wire.PacketFrameEncoder;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFactory;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.unix.FileDescriptor;
import io.netty.channel.unix.UnixChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.util.concurrent.Promise;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy's listening socket and event loops, and nothing more: each client connection becomes a
 * {@link ClientSession} given the proxy's {@link ProxyServices}; its backend connections share its event loop, so a
 * session never needs a lock.
 */
public final class ProxyServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ProxyServer.class);
    /** utf8mb4_general_ci, for Gantry's own greeting probes. */
    private static final int SERVICE_COLLATION = 45;
    /**
     * Largest packet accepted before login: a handshake response with connection attributes, an RSA-encrypted or
     * TLS-borne password, a COM_CHANGE_USER fit in well under this.
     */
    static final int LOGIN_PACKET_LIMIT = 16 * 1024;

    private final ProxyConfig config;
    private final SharedServices services;
    private CacheRefreshWorkers refreshWorkers;
    private final EventLoopGroup boss;
    /**
     * The I/O threads ({@link ProxyConfig#eventLoopThreads}, one per core by default): more only adds context switches,
     * as sessions never block their loop; fewer leave cores to the servers when they share the machine.
     */
    private final EventLoopGroup workers;
    private Channel listener;
    private final SessionMoves moves;
    /** Every client and backend channel open now; each leaves the group as it closes. */
    private final ChannelGroup openChannels = new DefaultChannelGroup("gantry-sockets", GlobalEventExecutor.INSTANCE);
    /** Sessions and pools leave a server as soon as a health check finds it down; closed with the proxy. */
    private final Upstreams.Listening leaveDownServers;

    /**
     * @param serverVersion  the version string shown to clients until the primary's greeting is known (see
     *                       {@link #probeGreeting})
     */
    public ProxyServer(ProxyConfig config, Upstreams upstreams, String serverVersion) {
        this(config, upstreams, serverVersion, AdminSql.NONE);
    }

    /** @param adminSql answers Gantry's own SQL on the proxy port */
    public ProxyServer(ProxyConfig config, Upstreams upstreams, String serverVersion, AdminSql adminSql) {
        this.config = config;
        SocketTransport transport = config.socketTransport();
        this.boss = transport.newGroup(1, new DefaultThreadFactory("gantry-accept"));
        this.workers = transport.newGroup(config.eventLoopThreads(), new DefaultThreadFactory("gantry-io"));
        this.services = new SharedServices(config, upstreams, adminSql, serverVersion,
                tracked(BackendChannels.tcp(transport)),
                Clock.systemUTC());
        this.moves = new SessionMoves(services, config, workers, openChannels);
        this.leaveDownServers = upstreams.onDown((server, reason) -> {
            services.sessions().serverDown(server, reason);
            services.backendPools().closeServer(server.address(), reason);
        });
    }

    /** Where a blocked host is told, for the timeline. */
    void setEvents(EventPublisher events) {
        services.login().setEvents(events);
        services.replayCounts().setEvents(events);
    }

    /** Where each statement's route, answer time and Gantry's own errors are counted. */
    void setMetrics(ProxyMetrics metrics) {
        services.setMetrics(metrics);
    }

    /** Where sessions ask for a fresh position sample (none in a proxy started without one). */
    void setSampler(GtidSampler sampler) {
        services.setSampler(sampler);
    }

    /** How sessions reach their servers: TCP, unless the in-process session says otherwise. */
    void setBackendChannels(BackendChannels channels) {
        services.setBackendChannels(tracked(channels));
    }

    /** {@code channels}, with each channel it opens kept in {@link #openChannels} until it closes. */
    private BackendChannels tracked(BackendChannels channels) {
        return (server, loop, connectTimeout, handler) -> {
            ChannelFuture connecting = channels.connect(server, loop, connectTimeout, handler);
            openChannels.add(connecting.channel());
            return connecting;
        };
    }

    /**
     * The query caches sessions look statements up in; null for none. Their refresh-ahead runs on workers of the
     * proxy's own, on its event loops.
     */
    public void setCaches(QueryCaches caches) {
        if (refreshWorkers != null) {
            refreshWorkers.close();
            refreshWorkers = null;
        }
        if (caches != null) {
            refreshWorkers = new CacheRefreshWorkers(caches, services.upstreams(), workers, config,
                    services.backendChannels());
            caches.setRefresher(refreshWorkers);
        }
        services.setCaches(caches);
    }

    /** The hosts refused for failed handshakes, and lifting their blocks. */
    LoginGate loginGate() {
        return services.login().gate();
    }

    /** The accounts known from earlier logins; see {@link io.gantry.proxy.session.LoginDoor#acceptKnown}. */
    KnownAccounts knownAccounts() {
        return services.login().knownAccounts();
    }

    /** Binds the listening socket; returns the address actually bound (useful with port 0). */
    public InetSocketAddress start() throws InterruptedException {
        return start(null);
    }

    /**
     * Binds the listening socket, or accepts on {@code adopted} (taken over from the Gantry running before; the
     * transport must then be epoll, see {@link AdoptedListener}); returns the address it listens on.
     */
    public InetSocketAddress start(AdoptedListener adopted) throws InterruptedException {
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(boss, workers)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOCATOR, ChannelBuffers.ALLOCATOR)
                .childHandler(clientPipeline());
        if (adopted == null) {
            listener = bootstrap.channel(config.socketTransport().serverChannel()).bind(config.listen()).sync()
                    .channel();
        } else {
            if (config.socketTransport() != SocketTransport.EPOLL) {
                adopted.closeUnadopted();
                throw new IllegalArgumentException("an adopted listener needs --socket-transport epoll, not "
                        + config.socketTransport().flagValue());
            }
            // Already bound and listening: registering it starts the accepting.
            services.sessions().idsAfter(adopted.sessionIdsAfter());
            ServerSocketChannel channel = adopted.channel();
            ChannelFactory<ServerSocketChannel> theAdoptedOne = () -> channel;
            listener = bootstrap.channelFactory(theAdoptedOne).register().sync().channel();
        }
        InetSocketAddress bound = (InetSocketAddress) listener.localAddress();
        LOG.info("proxy: listening on {}:{} ({}{}, {} I/O thread{})", bound.getHostString(), bound.getPort(),
                adopted == null ? "" : "the socket taken over, ", config.socketTransport().describe(), config.eventLoopThreads(),
                config.eventLoopThreads() == 1 ? "" : "s");
        LOG.info("proxy: TLS, where a server or client uses it, runs on {}", TlsTrust.implementation());
        return bound;
    }

    /** What every client connection's pipeline holds: framing, and a new {@link ClientSession}. */
    ChannelInitializer<Channel> clientPipeline() {
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel channel) {
                openChannels.add(channel);
                channel.pipeline().addLast(
                        // Until login a peer can make Gantry hold no more than a login needs.
                        new PacketFrameDecoder(Math.min(LOGIN_PACKET_LIMIT, config.maxPacketSize())),
                        new PacketFrameEncoder(),
                        new ClientSession(services, services.sessions().nextId()));
            }
        };
    }

    /** A Gantry taking over listens: this one accepts no new client, its listening socket left open. */
    void stopAccepting() {
        listener.config().setAutoRead(false);
    }

    /** The Gantry taking over went away in the middle: this one accepts again. */
    void acceptAgain() {
        moves.releaseAll();
        listener.config().setAutoRead(true);
    }

    /** The highest session id given until this proxy stops accepting, for a Gantry taking over. */
    long sessionIds() {
        return services.sessions().idsUpToForTakeOver();
    }

    /** Sessions moving to or from another Gantry process (a take-over). */
    SessionMoves sessionMoves() {
        return moves;
    }

    /** The listening socket's channel, once started: its class is the transport's. */
    Channel listener() {
        return listener;
    }

    /**
     * The listening socket's descriptor, for a Gantry taking over; empty under NIO, whose channels keep it out of
     * reach.
     */
    Optional<FileDescriptor> listenerDescriptor() {
        return listener instanceof UnixChannel unix ? Optional.of(unix.fd()) : Optional.empty();
    }

    /**
     * Reads {@code server}'s greeting for the mirror: a login as Gantry's service account (the server's URL) and a
     * COM_QUIT, with Gantry's own protocol code, on an I/O thread. The future completes when the greeting is recorded,
     * or fails with the reason it could not be.
     */
    CompletableFuture<HandshakeV10> probeGreeting(UpstreamServer server) {
        CompletableFuture<HandshakeV10> done = new CompletableFuture<>();
        BackendConnection.GreetingObserver observer = (greeted, greeting) -> {
            services.login().greetings().greeted(greeted, greeting);
            done.complete(greeting);
        };
        loginAsServiceAccount(server, workers.next(), config.connectTimeout(), observer)
                .whenComplete((connection, failure) -> {
                    if (failure != null) {
                        done.completeExceptionally(failure);
                    }
                });
        return done;
    }

    /**
     * The health check's timed login ({@link io.gantry.topology.HealthChecker#timeLoginsWith}): a new connection to
     * {@code server} logged in as the service account with the proxy's own code and TLS engine, closed at once.
     * Blocks its caller (a health-check thread, never an I/O thread) for at most {@code timeout}. It runs on the
     * accepting thread, not on the sessions' I/O threads: a handshake every round there cost the sessions
     * throughput (BENCHMARKS.md).
     *
     * @throws SQLException with the server's error code when it refused the login, or naming why it could not be
     *                      reached
     */
    void checkLogin(UpstreamServer server, Duration timeout) throws SQLException {
        if (boss.isShuttingDown()) {
            throw new RejectedExecutionException("the proxy is stopping");
        }
        try {
            loginAsServiceAccount(server, boss.next(), timeout, (greeted, greeting) -> { }).get(timeout.toMillis(),
                    TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof BackendFailure failure && failure.serverError() != null) {
                ErrPacket error = failure.serverError();
                throw new SQLException(server.address() + " refused the login: " + error.message(), error.sqlState(),
                        error.errorCode());
            }
            throw new SQLException(e.getCause().getMessage(), "08001", e.getCause());
        } catch (TimeoutException e) {
            throw new SQLException("no login answer from " + server.address() + " within " + timeout.toMillis()
                    + " ms", "08001", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException("interrupted while logging in to " + server.address(), "08001", e);
        }
    }

    /**
     * Opens a connection to {@code server} as Gantry's service account (the server's URL) on {@code loop} and closes
     * it once logged in; completes then, or with the {@link BackendFailure} that stopped it.
     */
    private CompletableFuture<Void> loginAsServiceAccount(UpstreamServer server, EventLoop loop, Duration timeout,
                                                          BackendConnection.GreetingObserver observer) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        UpstreamUrl url = server.url();
        BackendLogin login = new BackendLogin(url.user(),
                BackendSecret.password(url.password().getBytes(StandardCharsets.UTF_8)), "", SERVICE_COLLATION,
                ServerGreetings.OFFERED, 0);
        loop.execute(() -> {
            Promise<BackendConnection> opened = BackendConnection.open(server, login, loop, timeout,
                    config.maxPacketSize(), observer, services.backendChannels());
            opened.addListener(future -> {
                if (future.isSuccess()) {
                    ((BackendConnection) future.getNow()).close();
                    done.complete(null);
                } else {
                    done.completeExceptionally(future.cause());
                }
            });
        });
        return done;
    }

    /**
     * Keeps the mirrored greeting current: a new primary, or a primary back up (perhaps upgraded), is probed once,
     * in the background. Safe to call from any thread; never blocks.
     */
    void refreshGreeting(UpstreamServer server) {
        probeGreeting(server).whenComplete((greeting, failure) -> {
            if (failure != null) {
                LOG.atWarn().addKeyValue("server", server.address())
                        .log("proxy: cannot read the greeting of {} for clients ({}); they keep seeing the last one",
                                server.address(), failure.getMessage());
            } else {
                LOG.atInfo().addKeyValue("server", server.address())
                        .log("proxy: clients now see the greeting of {}: version {}", server.address(),
                                greeting.serverVersion());
            }
        });
    }

    /**
     * Where reads went and why, what logins cost the servers, the causal scopes kept, and how transactions lost with a
     * primary ended, for {@code SHOW GANTRY STATUS}.
     */
    public Map<String, String> readStatus() {
        Map<String, String> rows = new LinkedHashMap<>(services.readCounters().status());
        rows.putAll(services.login().accountStatus());
        rows.put("Causal_scopes_kept", Long.toString(services.causalScopes().size()));
        rows.put("Causal_scopes_forgotten", Long.toString(services.causalScopes().forgottenCount()));
        rows.putAll(services.replayCounts().status());
        rows.putAll(services.inDoubtCommits().status());
        return rows;
    }

    /**
     * Starts the drain before a stop: the port closes (new clients are refused), sessions outside a transaction end
     * with an error saying Gantry is stopping, and sessions inside one go on until it ends. The future completes
     * when no session holds a transaction or a running command any more; the caller decides how long to wait.
     */
    public CompletableFuture<Void> drain() {
        if (listener != null) {
            listener.close().syncUninterruptibly();
        }
        LOG.info("proxy: draining: no new clients; {} sessions open, each ends when it holds no transaction",
                services.sessions().connected());
        return services.sessions().drain();
    }

    /** Client sessions connected now, logged in or not. */
    public int sessionCount() {
        return services.sessions().connected();
    }

    /** Sessions that still hold a transaction or a running command (during a drain, those it waits for). */
    public long busySessions() {
        return services.sessions().busy();
    }

    /** The causal scopes wider than a session that its sessions share. */
    public CausalScopes causalScopes() {
        return services.causalScopes();
    }

    /** Where every statement of the sessions is counted under its shape. */
    public StatementDigests digests() {
        return services.digests();
    }

    /** Where statements slower than {@code --slow-statement-ms} are written. */
    public SlowStatementLog slowStatements() {
        return services.slowStatements();
    }

    /** The pools of idle backend connections the sessions share. */
    public BackendPools backendPools() {
        return services.backendPools();
    }

    /** Client sessions open now. */
    public int openSessions() {
        return services.sessions().loggedIn();
    }

    @Override
    public void close() {
        if (listener != null) {
            listener.close().syncUninterruptibly();
        }
        leaveDownServers.close();
        QueryCaches current = services.caches();
        if (current != null && refreshWorkers != null) {
            current.setRefresher(QueryCaches.Refresher.NONE);
            refreshWorkers.close();
        }
        services.backendPools().closeAll();
        // Every socket closed while its event loop still runs: a channel left open when its loop stops is closed by
        // the loop's teardown, which io_uring's cannot do without a warning and a stack trace in the log.
        openChannels.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
        boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        workers.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
        services.login().close();
        // After the event loops: no statement is offered to it any more.
        services.slowStatements().close();
        services.inDoubtCommits().close();
        LOG.info("proxy: stopped");
    }
}
