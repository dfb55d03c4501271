package io.gantry.proxy;

import io.gantry.admin.AdminSql;
import io.gantry.admin.HostBlocks;
import io.gantry.admin.PoolFigures;
import io.gantry.authority.Event;
import io.gantry.authority.EventKind;
import io.gantry.cache.QueryCaches;
import io.gantry.digest.SlowStatementLog;
import io.gantry.digest.StatementDigests;
import io.gantry.events.EngineEvent;
import io.gantry.events.EventBus;
import io.gantry.gtid.GtidSet;
import io.gantry.proxy.backend.BackendPools;
import io.gantry.proxy.backend.ConnectionSlots;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.proxy.session.ProxyMetrics;
import io.gantry.proxy.session.LiveSession;
import io.gantry.proxy.transport.AdoptedListener;
import io.gantry.topology.GtidSampler;
import io.gantry.topology.KnownAccounts;
import io.gantry.topology.HealthChecker;
import io.gantry.topology.ServerValidator;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.UpstreamUrl;
import io.gantry.topology.Upstreams;
import io.netty.channel.unix.FileDescriptor;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A proxy with its upstream list and health loop, started together and stopped together: what {@code gantry run}
 * and {@code gantry demo} run, and what integration tests start in-process.
 */
public final class RunningProxy implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RunningProxy.class);

    private final Upstreams upstreams;
    private final HealthChecker health;
    private final GtidSampler sampler;
    private final ProxyServer server;
    private final InetSocketAddress address;
    private final EventBus.Subscription greetingRefresh;
    /** The bus this proxy made for itself, closed with it; null when the caller gave one. */
    private final EventBus ownBus;

    private RunningProxy(Upstreams upstreams, HealthChecker health, GtidSampler sampler, ProxyServer server,
                         InetSocketAddress address, EventBus.Subscription greetingRefresh, EventBus ownBus) {
        this.upstreams = upstreams;
        this.health = health;
        this.sampler = sampler;
        this.server = server;
        this.address = address;
        this.greetingRefresh = greetingRefresh;
        this.ownBus = ownBus;
    }

    /** From now on sessions answer SELECTs from these query caches when they can. */
    public void useCaches(QueryCaches caches) {
        server.setCaches(caches);
    }

    /**
     * Checks every server once, then listens. Fails when no server answers at all; servers that do not answer
     * are marked down and the proxy starts without them.
     *
     * @param healthInterval how often the health loop checks every server and re-detects the primary
     */
    public static RunningProxy start(ProxyConfig config, List<UpstreamUrl> urls, Duration healthInterval)
            throws InterruptedException {
        EventBus bus = new EventBus();
        try {
            return start(config, new Upstreams(urls, Clock.systemUTC(), bus), healthInterval, bus, AdminSql.NONE,
                    null, bus);
        } catch (Exception e) {
            bus.close();
            throw e;
        }
    }

    /**
     * @param bus where blocked hosts are published, and where the greeting refresh hears of primary changes; the
     *            caller closes it
     */
    public static RunningProxy start(ProxyConfig config, List<UpstreamUrl> urls, Duration healthInterval,
                                     EventBus bus) throws InterruptedException {
        return start(config, new Upstreams(urls, Clock.systemUTC(), bus), healthInterval, bus, AdminSql.NONE, null,
                null);
    }

    /**
     * @param upstreams the list to serve, publishing to {@code bus} (downs, ups, role changes, health rounds)
     * @param bus       where blocked hosts are published, and where the greeting refresh hears of primary
     *                  changes; the caller closes it
     * @param admin     answers Gantry's own SQL
     * @param adopted   the listening socket taken over from the Gantry running before this one, accepted on instead
     *                  of binding {@code --listen}; null to bind
     */
    public static RunningProxy start(ProxyConfig config, Upstreams upstreams, Duration healthInterval,
                                     EventBus bus, AdminSql admin, AdoptedListener adopted)
            throws InterruptedException {
        return start(config, upstreams, healthInterval, bus, admin, adopted, null);
    }

    private static RunningProxy start(ProxyConfig config, Upstreams upstreams, Duration healthInterval,
                                      EventBus bus, AdminSql admin, AdoptedListener adopted, EventBus ownBus)
            throws InterruptedException {
        List<UpstreamUrl> urls = upstreams.servers().stream().map(UpstreamServer::url).toList();
        ServerValidator.Report report = new ServerValidator(config.connectTimeout(), config.connectRetries())
                .validate(urls);
        String problem = report.fatalProblem();
        if (problem != null) {
            throw new IllegalStateException(problem);
        }
        for (ServerValidator.Unreachable unreachable : report.unreachable()) {
            LOG.atWarn().addKeyValue("server", unreachable.url().address())
                    .log("proxy: {} is unreachable at startup ({}); it starts marked down", unreachable.url().address(),
                            unreachable.reason());
        }
        HealthChecker health = new HealthChecker(upstreams, config.failover().healthCheckTimeout());
        try {
            health.checkNow();
            if (upstreams.servers().stream().noneMatch(UpstreamServer::isReachable)) {
                throw new IllegalStateException("no upstream server answers: " + String.join("; ",
                        upstreams.servers().stream().map(s -> s.address() + ": " + s.lastError()).toList()));
            }
            upstreams.primary().ifPresentOrElse(
                    p -> LOG.atInfo().addKeyValue("server", p.address())
                            .log("proxy: primary is {}; replicas: {}", p.address(),
                                    upstreams.upReplicas().stream().map(UpstreamServer::address).toList()),
                    () -> LOG.warn("proxy: starting without a primary ({}); writes are refused until one appears",
                            upstreams.noPrimaryReason()));
            // Positions are sampled once before the port opens, so the first reads know each replica's.
            GtidSampler sampler = new GtidSampler(upstreams, config.readGuarantees().sampleInterval(),
                    config.connectTimeout(), Clock.systemUTC());
            // The version shown is the primary's, read from its greeting below before the port opens.
            ProxyServer server = new ProxyServer(config, upstreams, "", admin);
            server.setEvents(bus);
            server.setSampler(sampler);
            EventBus.Subscription greetingRefresh = null;
            try {
                sampler.start();
                mirrorGreeting(server, upstreams, config.connectTimeout());
                greetingRefresh = bus.subscribe("greeting", 1000, event -> refreshGreeting(event, server, upstreams));
                InetSocketAddress bound = server.start(adopted);
                health.timeLoginsWith(server::checkLogin);
                health.start(healthInterval);
                return new RunningProxy(upstreams, health, sampler, server, bound, greetingRefresh, ownBus);
            } catch (Exception e) {
                // Any exception: Netty's sync() throws a failed bind's BindException though start() declares none.
                if (greetingRefresh != null) {
                    greetingRefresh.close();
                }
                server.close();
                sampler.close();
                throw e;
            }
        } catch (Exception e) {
            health.close();
            throw e;
        }
    }

    /**
     * Reads the greeting clients will see before the first one connects: the primary's (or the first server's that
     * answers, until there is a primary).
     */
    private static void mirrorGreeting(ProxyServer server, Upstreams upstreams, Duration timeout)
            throws InterruptedException {
        UpstreamServer source = greetingSource(upstreams);
        try {
            server.probeGreeting(source).get(timeout.toMillis() * 2, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
            throw new IllegalStateException("cannot read the greeting of " + source.address() + ": " + cause, cause);
        }
    }

    /** A new greeting probe whenever the primary changes or comes back up. */
    private static void refreshGreeting(EngineEvent event, ProxyServer server, Upstreams upstreams) {
        if (event instanceof EngineEvent.Timeline timeline && timeline.event().server() != null) {
            Event entry = timeline.event();
            if (entry.kind() == EventKind.ROLE_CHANGE || entry.kind() == EventKind.UP) {
                upstreams.primary().filter(p -> p.address().equals(entry.server())).ifPresent(server::refreshGreeting);
            }
        }
    }

    private static UpstreamServer greetingSource(Upstreams upstreams) {
        return upstreams.primary()
                .orElseGet(() -> upstreams.servers().stream().filter(UpstreamServer::isReachable).findFirst()
                        .orElseThrow());
    }

    /** The proxy itself, for tests of this package. */
    ProxyServer server() {
        return server;
    }

    /** The hosts refused for failed handshakes, and lifting their blocks ({@code FLUSH GANTRY HOSTS}). */
    public HostBlocks hostBlocks() {
        return server.loginGate();
    }

    /**
     * The listening socket's descriptor, for a Gantry taking over from this one; empty under NIO, whose channels
     * keep it out of reach.
     */
    public Optional<FileDescriptor> listenerDescriptor() {
        return server.listenerDescriptor();
    }

    /** The address clients connect to. */
    public InetSocketAddress address() {
        return address;
    }

    /** The live upstream list (roles, health). */
    public Upstreams upstreams() {
        return upstreams;
    }

    /** The pools of idle backend connections the sessions share. */
    public BackendPools backendPools() {
        return server.backendPools();
    }

    /** Where every statement of the sessions is counted under its shape. */
    public StatementDigests digests() {
        return server.digests();
    }

    /** Where statements slower than {@code --slow-statement-ms} are written. */
    public SlowStatementLog slowStatements() {
        return server.slowStatements();
    }

    /** The pools as {@code SHOW GANTRY POOLS} shows them, with each server's open session connections. */
    public PoolFigures poolFigures() {
        return () -> {
            List<PoolFigures.Pool> pools = new ArrayList<>();
            ConnectionSlots slots = server.backendPools().slots();
            for (BackendPools.Figures figures : server.backendPools().figures()) {
                Optional<UpstreamServer> upstream = upstreams.find(figures.server());
                int open = upstream.map(UpstreamServer::connections).orElse(0);
                int cap = upstream.map(slots::capOf).orElse(0);
                ConnectionSlots.Use use = slots.use(figures.server());
                pools.add(new PoolFigures.Pool(figures.server(), figures.user(), open, cap, use.waiting(),
                        figures.idle(), figures.created(), figures.reused(), figures.closedIdle(), use.waited(),
                        use.waitP99Millis()));
            }
            return pools;
        };
    }

    /**
     * The accounts known from earlier logins: the change stream must keep them fresh
     * ({@code io.gantry.cdc.AccountEviction}), or logins keep asking the servers.
     */
    public KnownAccounts knownAccounts() {
        return server.knownAccounts();
    }

    /** Client sessions open now. */
    public int openSessions() {
        return server.openSessions();
    }

    /** Counts every statement's route and answer time, and Gantry's own errors, from now on. */
    public void useMetrics(ProxyMetrics metrics) {
        server.setMetrics(metrics);
    }

    /** Client sessions connected now. */
    public int sessionCount() {
        return server.sessionCount();
    }

    /** Where reads went and why, and what sampling positions costs, for {@code SHOW GANTRY STATUS}. */
    public Map<String, String> readStatus() {
        Map<String, String> rows = new LinkedHashMap<>(server.readStatus());
        rows.put("Lag_sample_interval_ms", Long.toString(sampler.interval().toMillis()));
        rows.put("Position_samples_sent", Long.toString(sampler.queriesSent()));
        return rows;
    }

    /** How far {@code position} is behind the primary in ms, -1 when unknown: {@link GtidSampler#lagMillisOf}. */
    public long lagMillisOf(GtidSet position) {
        return sampler.lagMillisOf(position);
    }

    // ---- a take-over (docs/ARCHITECTURE.md, "The path of a take-over") --------------------------------------------

    /** A Gantry taking over listens: accept no new client, the listening socket left open. */
    public void stopAccepting() {
        server.stopAccepting();
    }

    /** The Gantry taking over went away before the hand-over was done: accept again. */
    public void acceptAgain() {
        server.acceptAgain();
    }

    /** The highest session id this proxy gives until it stops accepting: a Gantry taking over gives ids above it. */
    public long sessionIdsUpTo() {
        return server.sessionIds();
    }

    /** Up to {@code max} sessions that can move to a Gantry taking over, held still; empty when none can now. */
    public List<LiveSession.Departure.Moving> nextMovingSessions(int max) throws InterruptedException {
        return server.sessionMoves().next(max);
    }

    /** Sessions this proxy still serves. */
    public int sessionsHeld() {
        return server.sessionMoves().held();
    }

    /** Why the sessions that could not move to a Gantry taking over at the last look could not, in words. */
    public String sessionsWaiting() {
        return server.sessionMoves().waiting();
    }

    /** TLS sessions ended for a take-over, as a drain ends them. */
    public int sessionsEnded() {
        return server.sessionMoves().ended();
    }

    /**
     * Serves a session moved from the Gantry taken over, from its client socket and state; it reads once the task
     * the future completes with runs.
     */
    public CompletableFuture<Runnable> adopt(FileDescriptor descriptor, String state) {
        return server.sessionMoves().adopt(descriptor, state);
    }

    /** Starts the drain before a stop; see {@link ProxyServer#drain}. */
    public CompletableFuture<Void> drain() {
        return server.drain();
    }

    /** Sessions that still hold a transaction or a running command. */
    public long busySessions() {
        return server.busySessions();
    }

    @Override
    public void close() {
        // The health loop first: its checks log in through the proxy's event loops, and a check cut off by their
        // shutdown would mark every server down on the way out (seen in the demo's goodbye).
        greetingRefresh.close();
        health.close();
        sampler.close();
        server.close();
        if (ownBus != null) {
            ownBus.close();
        }
    }
}
