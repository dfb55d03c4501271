package io.gantry.proxy;

import io.gantry.route.Router;
import io.gantry.topology.AccountLookup;
import io.gantry.topology.Upstreams;
import io.gantry.wire.PacketFrameDecoder;
import io.gantry.wire.PacketFrameEncoder;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
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

    private final ProxyConfig config;
    private final Upstreams upstreams;
    private final String serverVersion;
    private final Router router = Router.withThreadLocalRandom();
    private final AdminHandler adminHandler;
    private final Optional<SslContext> sslContext;
    private final GantryRsaKey rsaKey = GantryRsaKey.generate();
    private final AccountLookup accounts;
    /** Account look-ups are JDBC calls: a few threads of their own, never the event loops. */
    private final ExecutorService accountExecutor = Executors.newFixedThreadPool(2,
            new DefaultThreadFactory("gantry-accounts", true));
    private final AtomicLong connectionIds = new AtomicLong();
    private final AtomicInteger openSessions = new AtomicInteger();
    private final Map<Long, ClientSession> sessions = new ConcurrentHashMap<>();
    private final EventLoopGroup boss = new NioEventLoopGroup(1, new DefaultThreadFactory("gantry-accept"));
    /** One I/O thread per core: more only adds context switches, as sessions never block their loop. */
    private final EventLoopGroup workers = new NioEventLoopGroup(Runtime.getRuntime().availableProcessors(),
            new DefaultThreadFactory("gantry-io"));
    private Channel listener;

    /**
     * @param serverVersion  the version string shown to clients (the primary's own)
     */
    public ProxyServer(ProxyConfig config, Upstreams upstreams, String serverVersion) {
        this(config, upstreams, serverVersion, AdminHandler.NONE);
    }

    /** @param adminHandler answers Gantry's own SQL on the proxy port */
    public ProxyServer(ProxyConfig config, Upstreams upstreams, String serverVersion,
                       AdminHandler adminHandler) {
        this.adminHandler = adminHandler;
        this.config = config;
        this.upstreams = upstreams;
        this.serverVersion = serverVersion;
        this.sslContext = config.tls().map(ProxyServer::sslContext);
        this.accounts = new AccountLookup(upstreams, config.connectTimeout());
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
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                        channel.pipeline().addLast(
                                new PacketFrameDecoder(config.maxPacketSize()),
                                new PacketFrameEncoder(),
                                new ClientSession(ProxyServer.this, connectionIds.incrementAndGet()));
                    }
                });
        listener = bootstrap.bind(config.listen()).sync().channel();
        InetSocketAddress bound = (InetSocketAddress) listener.localAddress();
        LOG.info("proxy: listening on {}:{}", bound.getHostString(), bound.getPort());
        return bound;
    }

    ProxyConfig config() {
        return config;
    }

    Upstreams upstreams() {
        return upstreams;
    }

    String serverVersion() {
        return serverVersion;
    }

    Router router() {
        return router;
    }

    AdminHandler adminHandler() {
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

    /** Client sessions open now. */
    public int openSessions() {
        return openSessions.get();
    }

    @Override
    public void close() {
        if (listener != null) {
            listener.close().syncUninterruptibly();
        }
        boss.shutdownGracefully(0, 2, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
        workers.shutdownGracefully(0, 5, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
        accountExecutor.shutdownNow();
        LOG.info("proxy: stopped");
    }
}
