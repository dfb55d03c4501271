package io.gantry.proxy;

import io.gantry.admin.AdminSql;
import io.gantry.cache.QueryCaches;
import io.gantry.digest.SlowStatementLog;
import io.gantry.digest.StatementDigests;
import io.gantry.proxy.backend.BackendChannels;
import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.BackendLogin;
import io.gantry.proxy.backend.BackendPools;
import io.gantry.proxy.routing.ReadCounters;
import io.gantry.proxy.routing.ServerIds;
import io.gantry.proxy.session.InDoubtCommits;
import io.gantry.proxy.session.LoginDoor;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.proxy.session.ProxyMetrics;
import io.gantry.proxy.session.ProxyServices;
import io.gantry.proxy.session.RateLimitedLog;
import io.gantry.proxy.session.ReplayCounts;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.session.SessionRegistry;
import io.gantry.route.CausalScopes;
import io.gantry.route.Router;
import io.gantry.topology.GtidSampler;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import java.time.Clock;
import java.time.Duration;

/**
 * The {@link ProxyServices} of one proxy. What is started after the listener (the caches, the metrics, the
 * position sampler) is set here once it exists; sessions read it each time, so they see it from then on.
 */
final class SharedServices implements ProxyServices {

    private final ProxyConfig config;
    private final Upstreams upstreams;
    private final Router router = Router.withThreadLocalRandom();
    private final ServerIds serverIds;
    private final ReadCounters readCounters = new ReadCounters();
    private final StatementDigests digests;
    private final CausalScopes causalScopes = new CausalScopes(CausalScopes.MAX_SCOPES);
    private final SlowStatementLog slowStatements;
    private final ReplayCounts replayCounts;
    private final InDoubtCommits inDoubtCommits = new InDoubtCommits();
    private final AdminSql adminSql;
    private final Clock clock;
    private final RateLimitedLog peerWarnings;
    private final SessionRegistry sessions;
    private final LoginDoor login;
    private volatile BackendChannels backendChannels;
    private final BackendPools backendPools;
    private volatile ProxyMetrics metrics = ProxyMetrics.NONE;
    private volatile QueryCaches caches;
    private volatile GtidSampler sampler;

    SharedServices(ProxyConfig config, Upstreams upstreams, AdminSql adminSql, String serverVersion,
                   BackendChannels backendChannels, Clock clock) {
        this.config = config;
        this.upstreams = upstreams;
        this.adminSql = adminSql;
        this.clock = clock;
        this.replayCounts = new ReplayCounts(clock, config.failover().replay().timeout());
        this.backendChannels = backendChannels;
        this.backendPools = new BackendPools(config.pool());
        this.serverIds = new ServerIds(upstreams);
        this.peerWarnings = new RateLimitedLog(SessionContext.LOG, 20,
                Duration.ofMinutes(1), clock);
        this.sessions = new SessionRegistry(config.maxClientConnections());
        this.digests = new StatementDigests(config.digests().maxShapes(), clock);
        this.slowStatements = SlowStatementLog.of(config.digests());
        this.login = new LoginDoor(config, upstreams, serverVersion, clock);
        backendPools.onWarming(this::openBackend);
    }

    /** See {@link #backendOpener()}: the channels are read at each open, so {@link #setBackendChannels} counts. */
    private Future<BackendConnection> openBackend(UpstreamServer server, BackendLogin account, EventLoop loop,
                                                  Runnable releaseSlot) {
        return BackendConnection.open(server, account, loop, config.connectTimeout(), config.maxPacketSize(),
                login.greetings(), backendChannels, releaseSlot);
    }

    @Override
    public BackendPools backendPools() {
        return backendPools;
    }

    @Override
    public ProxyConfig config() {
        return config;
    }

    @Override
    public Upstreams upstreams() {
        return upstreams;
    }

    @Override
    public Router router() {
        return router;
    }

    @Override
    public ServerIds serverIds() {
        return serverIds;
    }

    @Override
    public ReadCounters readCounters() {
        return readCounters;
    }

    @Override
    public CausalScopes causalScopes() {
        return causalScopes;
    }

    @Override
    public StatementDigests digests() {
        return digests;
    }

    @Override
    public SlowStatementLog slowStatements() {
        return slowStatements;
    }

    @Override
    public ReplayCounts replayCounts() {
        return replayCounts;
    }

    @Override
    public InDoubtCommits inDoubtCommits() {
        return inDoubtCommits;
    }

    @Override
    public ProxyMetrics metrics() {
        return metrics;
    }

    void setMetrics(ProxyMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public QueryCaches caches() {
        return caches;
    }

    void setCaches(QueryCaches caches) {
        this.caches = caches;
    }

    @Override
    public AdminSql adminSql() {
        return adminSql;
    }

    @Override
    public BackendPools.Opener backendOpener() {
        return this::openBackend;
    }

    BackendChannels backendChannels() {
        return backendChannels;
    }

    void setBackendChannels(BackendChannels channels) {
        this.backendChannels = channels;
    }

    @Override
    public RateLimitedLog peerWarnings() {
        return peerWarnings;
    }

    @Override
    public Clock clock() {
        return clock;
    }

    @Override
    public void nudgeSampler() {
        GtidSampler current = sampler;
        if (current != null) {
            current.nudge();
        }
    }

    /** Where sessions ask for a fresh position sample (none in a proxy started without one). */
    void setSampler(GtidSampler sampler) {
        this.sampler = sampler;
    }

    @Override
    public SessionRegistry sessions() {
        return sessions;
    }

    @Override
    public LoginDoor login() {
        return login;
    }
}
