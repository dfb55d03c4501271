package io.gantry.proxy;

import io.gantry.admin.AdminSql;
import io.gantry.authority.Event;
import io.gantry.authority.EventKind;
import io.gantry.cache.QueryCaches;
import io.gantry.events.EngineEvent;
import io.gantry.events.EventPublisher;
import io.gantry.proxy.backend.BackendChannels;
import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.BackendLogin;
import io.gantry.proxy.backend.BackendSecret;
import io.gantry.proxy.transport.ChannelBuffers;
import io.gantry.proxy.transport.SocketTransport;
import io.gantry.route.Router;
import io.gantry.topology.AccountLookup;
import io.gantry.topology.GtidSampler;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.UpstreamUrl;
import io.gantry.topology.Upstreams;
import io.gantry.wire.HandshakeV10;
import io.gantry.wire.PacketFrameDecoder;
import io.gantry.wire.PacketFrameEncoder;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Promise;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy's listening socket and event loops. Each client connection becomes a {@link ClientSession}; its
 * backend connections share its event loop, so a session never needs a lock.
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
    private final Upstreams upstreams;
    private final ServerGreetings greetings;
    private final Router router = Router.withThreadLocalRandom();
    private final ServerIds serverIds;
    private final ReadCounters readCounters = new ReadCounters();
    private volatile GtidSampler sampler;
    private volatile QueryCaches caches;
    private CacheRefreshWorkers refreshWorkers;
    private final AdminSql adminHandler;
    private final Optional<SslContext> sslContext;
    private final GantryRsaKey rsaKey = GantryRsaKey.generate();
    private final AccountLookup accounts;
    /** Account look-ups are JDBC calls: a few threads of their own, never the event loops. */
    private final ExecutorService accountExecutor = Executors.newFixedThreadPool(2,
            new DefaultThreadFactory("gantry-accounts", true));
    private final AtomicLong connectionIds = new AtomicLong();
    private final AtomicInteger openSessions = new AtomicInteger();
    private final LoginGate loginGate;
    /** Warnings a peer can cause at will: at most 20 of a kind a minute. */
    private final RateLimitedLog peerWarnings = new RateLimitedLog(LoggerFactory.getLogger(ClientSession.class), 20,
            Duration.ofMinutes(1), Clock.systemUTC());
    private volatile EventPublisher events = EventPublisher.NONE;
    private volatile ProxyMetrics metrics = ProxyMetrics.NONE;
    private final Map<Long, ClientSession> sessions = new ConcurrentHashMap<>();
    private final EventLoopGroup boss;
    /**
     * The I/O threads ({@link ProxyConfig#eventLoopThreads}, one per core by default): more only adds context switches,
     * as sessions never block their loop; fewer leave cores to the servers when they share the machine.
     */
    private final EventLoopGroup workers;
    private Channel listener;
    private volatile boolean draining;
    private final CompletableFuture<Void> drained = new CompletableFuture<>();
    private BackendChannels backendChannels;

    /**
     * @param serverVersion  the version string shown to clients until the primary's greeting is known (see
     *                       {@link #probeGreeting})
     */
    public ProxyServer(ProxyConfig config, Upstreams upstreams, String serverVersion) {
        this(config, upstreams, serverVersion, AdminSql.NONE);
    }

    /** @param adminHandler answers Gantry's own SQL on the proxy port */
    public ProxyServer(ProxyConfig config, Upstreams upstreams, String serverVersion,
                       AdminSql adminHandler) {
        this.adminHandler = adminHandler;
        this.config = config;
        SocketTransport transport = config.socketTransport();
        this.boss = transport.newGroup(1, new DefaultThreadFactory("gantry-accept"));
        this.workers = transport.newGroup(config.eventLoopThreads(), new DefaultThreadFactory("gantry-io"));
        this.backendChannels = BackendChannels.tcp(transport);
        this.upstreams = upstreams;
        this.serverIds = new ServerIds(upstreams);
        this.greetings = new ServerGreetings(serverVersion);
        this.sslContext = config.tls().map(ProxyServer::sslContext);
        this.accounts = new AccountLookup(upstreams, config.connectTimeout());
        this.loginGate = new LoginGate(config.login(), Clock.systemUTC());
    }

    /** Where a blocked host is told, for the timeline ({@link EventKind#HOST_BLOCKED}). */
    void setEvents(EventPublisher events) {
        this.events = events;
    }

    /** Where each statement's route, answer time and Gantry's own errors are counted. */
    void setMetrics(ProxyMetrics metrics) {
        this.metrics = metrics;
    }

    ProxyMetrics metrics() {
        return metrics;
    }

    /** Client sessions connected now, logged in or not. */
    public int sessionCount() {
        return sessions.size();
    }

    LoginGate loginGate() {
        return loginGate;
    }

    RateLimitedLog peerWarnings() {
        return peerWarnings;
    }

    /** A host was blocked after failed logins: a log line and an event on the timeline. */
    void hostBlocked(LoginGate.Refusal.Blocked blocked) {
        String reason = blocked.failures() + " malformed or unfinished handshakes in a row; new connections from it "
                + "are refused for " + config.login().blockFor().toSeconds() + " s (--max-handshake-errors-until-block, "
                + "--auth-block-secs; FLUSH GANTRY HOST lifts it)";
        LOG.warn("proxy: blocked host {}: {}", blocked.host(), reason);
        events.publish(new EngineEvent.Timeline(new Event(0, Instant.now(), blocked.host(), EventKind.HOST_BLOCKED,
                reason)));
    }

    /** Whether logged-in sessions already fill {@code --max-client-connections}. */
    boolean sessionsFull() {
        return openSessions.get() >= config.maxClientConnections();
    }

    private static SslContext sslContext(ProxyConfig.TlsFiles files) {
        try {
            return SslContextBuilder.forServer(files.certificate().toFile(), files.key().toFile()).build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException("cannot use --tls-cert " + files.certificate() + " with --tls-key "
                    + files.key() + " (a PEM certificate and a PKCS#8 PEM key are needed): " + e.getMessage(), e);
        }
    }

    /** Binds the listening socket; returns the address actually bound (useful with port 0). */
    public InetSocketAddress start() throws InterruptedException {
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(boss, workers)
                .channel(config.socketTransport().serverChannel())
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOCATOR, ChannelBuffers.ALLOCATOR)
                .childHandler(clientPipeline());
        listener = bootstrap.bind(config.listen()).sync().channel();
        InetSocketAddress bound = (InetSocketAddress) listener.localAddress();
        LOG.info("proxy: listening on {}:{} ({}, {} I/O thread{})", bound.getHostString(), bound.getPort(),
                config.socketTransport().describe(), config.eventLoopThreads(),
                config.eventLoopThreads() == 1 ? "" : "s");
        return bound;
    }

    /** What every client connection's pipeline holds: framing, and a new {@link ClientSession}. */
    ChannelInitializer<Channel> clientPipeline() {
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel channel) {
                channel.pipeline().addLast(
                        // Until login a peer can make Gantry hold no more than a login needs.
                        new PacketFrameDecoder(Math.min(LOGIN_PACKET_LIMIT, config.maxPacketSize())),
                        new PacketFrameEncoder(),
                        new ClientSession(ProxyServer.this, connectionIds.incrementAndGet()));
            }
        };
    }

    /** The listening socket's channel, once started: its class is the transport's. */
    Channel listener() {
        return listener;
    }

    /** How sessions reach their servers: TCP, unless the in-process benchmark says otherwise. */
    BackendChannels backendChannels() {
        return backendChannels;
    }

    void setBackendChannels(BackendChannels channels) {
        this.backendChannels = channels;
    }

    ProxyConfig config() {
        return config;
    }

    Upstreams upstreams() {
        return upstreams;
    }

    /** The greeting for a new client connection: the current primary's, mirrored (see {@link ServerGreetings}). */
    HandshakeV10 clientGreeting(long connectionId, byte[] seed) {
        return greetings.forClient(upstreams.primary(), connectionId, seed, sslContext.isPresent(),
                config.defaultAuthPlugin());
    }

    /** Where every backend connection reports the greeting it got. */
    ServerGreetings greetings() {
        return greetings;
    }

    /**
     * Reads {@code server}'s greeting for the mirror: a login as Gantry's service account (the server's URL) and a
     * COM_QUIT, with Gantry's own protocol code, on an I/O thread. The future completes when the greeting is recorded,
     * or fails with the reason it could not be.
     */
    CompletableFuture<HandshakeV10> probeGreeting(UpstreamServer server) {
        CompletableFuture<HandshakeV10> done = new CompletableFuture<>();
        UpstreamUrl url = server.url();
        BackendLogin login = new BackendLogin(url.user(),
                BackendSecret.password(url.password().getBytes(StandardCharsets.UTF_8)), "", SERVICE_COLLATION,
                ClientSession.SERVER_CAPABILITIES, 0);
        BackendConnection.GreetingObserver observer = (greeted, greeting) -> {
            greetings.greeted(greeted, greeting);
            done.complete(greeting);
        };
        io.netty.channel.EventLoop loop = workers.next();
        loop.execute(() -> {
            Promise<BackendConnection> opened = BackendConnection.open(server, login, loop, config.connectTimeout(),
                    config.maxPacketSize(), observer, backendChannels);
            opened.addListener(future -> {
                if (future.isSuccess()) {
                    ((BackendConnection) future.getNow()).close();
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

    Router router() {
        return router;
    }

    /** Where sessions ask for a fresh position sample (none in a proxy started without one). */
    void setSampler(GtidSampler sampler) {
        this.sampler = sampler;
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
            refreshWorkers = new CacheRefreshWorkers(caches, upstreams, workers, config, backendChannels);
            caches.setRefresher(refreshWorkers);
        }
        this.caches = caches;
    }

    QueryCaches caches() {
        return caches;
    }

    /** A session needs positions sampled soon (it just read or wrote). */
    void nudgeSampler() {
        GtidSampler current = sampler;
        if (current != null) {
            current.nudge();
        }
    }

    ReadCounters readCounters() {
        return readCounters;
    }

    /** Where reads went and why, for {@code SHOW GANTRY STATUS}. */
    public Map<String, String> readStatus() {
        return readCounters.status();
    }

    /** The routing id of each server of the current list. */
    ServerIds serverIds() {
        return serverIds;
    }

    AdminSql adminHandler() {
        return adminHandler;
    }

    Optional<SslContext> sslContext() {
        return sslContext;
    }

    GantryRsaKey rsaKey() {
        return rsaKey;
    }

    /**
     * The account's entries on the primary (on an up replica when the primary cannot answer), looked up off the
     * event loop. Fails with {@link AccountLookup.ServersUnreachableException} when no server can be asked.
     */
    CompletableFuture<List<AccountLookup.AccountEntry>> lookupAccount(String user) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return accounts.entries(user);
            } catch (AccountLookup.ServersUnreachableException e) {
                throw new CompletionException(e);
            }
        }, accountExecutor);
    }

    /** Counts a new session; false when {@code --max-client-connections} is reached (the caller refuses it). */
    boolean admitSession() {
        if (openSessions.incrementAndGet() > config.maxClientConnections()) {
            openSessions.decrementAndGet();
            return false;
        }
        return true;
    }

    void sessionClosed() {
        openSessions.decrementAndGet();
    }

    /** Sessions by Gantry session id (what {@code CONNECTION_ID()} returns and {@code KILL} takes). */
    void register(long id, ClientSession session) {
        sessions.put(id, session);
    }

    void unregister(long id) {
        sessions.remove(id);
    }

    Optional<ClientSession> session(long id) {
        return Optional.ofNullable(sessions.get(id));
    }

    /**
     * Starts the drain before a stop: the port closes (new clients are refused), sessions outside a transaction end
     * with an error saying Gantry is stopping, and sessions inside one go on until it ends. The future completes
     * when no session holds a transaction or a running command any more; the caller decides how long to wait.
     */
    public CompletableFuture<Void> drain() {
        draining = true;
        if (listener != null) {
            listener.close().syncUninterruptibly();
        }
        LOG.info("proxy: draining: no new clients; {} sessions open, each ends when it holds no transaction",
                sessions.size());
        sessions.values().forEach(ClientSession::endOnItsLoopIfIdle);
        sessionReleased();
        return drained;
    }

    boolean isDraining() {
        return draining;
    }

    /** A session ended or let its server side go: the drain is done when every session has. */
    void sessionReleased() {
        if (draining && !drained.isDone() && sessions.values().stream().allMatch(ClientSession::released)) {
            drained.complete(null);
        }
    }

    /** Sessions that still hold a transaction or a running command (during a drain, those it waits for). */
    public long busySessions() {
        return sessions.values().stream().filter(session -> !session.released()).count();
    }

    /** Client sessions open now. */
    public int openSessions() {
        return openSessions.get();
    }

    @Override
    public void close() {
        if (listener != null) {
            listener.close().syncUninterruptibly();
        }
        QueryCaches current = caches;
        if (current != null && refreshWorkers != null) {
            current.setRefresher(QueryCaches.Refresher.NONE);
            refreshWorkers.close();
        }
        boss.shutdownGracefully(0, 2, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
        workers.shutdownGracefully(0, 5, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
        accountExecutor.shutdownNow();
        try {
            accountExecutor.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        accounts.close();
        LOG.info("proxy: stopped");
    }
}
