package io.gantry.metrics;

import com.sun.net.httpserver.HttpServer;
import io.gantry.cache.QueryCache;
import io.gantry.cache.QueryCaches;
import io.gantry.cdc.CdcStream;
import io.gantry.cluster.ClusterMember;
import io.gantry.proxy.RunningProxy;
import io.gantry.proxy.backend.ConnectionSlots;
import io.gantry.proxy.session.ProxyMetrics;
import io.gantry.proxy.session.InDoubtCommits;
import io.gantry.proxy.session.ReplayCounts;
import io.gantry.route.ReplicaRefusal;
import io.gantry.route.RouteReason;
import io.gantry.route.RouteTarget;
import io.gantry.topology.Role;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gantry's Prometheus metrics ({@code --metrics-listen}): Micrometer meters, scraped at {@code /metrics} in the
 * Prometheus text format. The data path only adds to counters and histograms made here in advance
 * ({@link ProxyMetrics}); everything else (servers, sessions, reads, the change stream) is read when scraped.
 */
public final class GantryMetrics implements ProxyMetrics, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(GantryMetrics.class);
    /** Statement latency buckets: from a fast point select to a slow report. */
    private static final Duration[] LATENCY_SLOS = {Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofMillis(5),
        Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100),
        Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(5)};

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Map<RouteTarget, Map<RouteReason, Counter>> routed = new EnumMap<>(RouteTarget.class);
    private final Map<RouteTarget, Timer> answered = new EnumMap<>(RouteTarget.class);
    private final Map<Integer, Counter> errors = new ConcurrentHashMap<>();
    private final Upstreams upstreams;
    /** One gauge per server for each of these; the rows follow the server list at each scrape. */
    private final List<ServerGauge> serverGauges = new ArrayList<>();
    private final QueryCaches caches;
    /** The refresh counters of each cache, by the cache they count; they follow the caches at each scrape. */
    private final Map<QueryCache, List<Meter>> refreshCounters = new IdentityHashMap<>();
    private final ShapeMeters shapes;
    private final HttpServer http;

    private GantryMetrics(InetSocketAddress listen, RunningProxy proxy, Upstreams upstreams,
                          Optional<CdcStream> cdc, QueryCaches caches, Optional<ClusterMember> cluster)
            throws IOException {
        this.upstreams = upstreams;
        this.caches = caches;
        // Every series of a cluster's instance says which: Prometheus's own `instance` label is the scrape target.
        cluster.ifPresent(member -> registry.config().commonTags("cluster", member.settings().name(),
                "cluster_instance", member.settings().instance()));
        cluster.ifPresent(member -> Gauge.builder("gantry.cluster.config.version", member,
                        ClusterMember::appliedVersion)
                .description("The version of the cluster's shared configuration this instance serves with")
                .register(registry));
        for (RouteTarget target : RouteTarget.values()) {
            Map<RouteReason, Counter> byReason = new EnumMap<>(RouteReason.class);
            for (RouteReason reason : RouteReason.values()) {
                byReason.put(reason, Counter.builder("gantry.statements.routed")
                        .description("Statements routed, by where they went and why")
                        .tags("target", name(target), "reason", name(reason)).register(registry));
            }
            routed.put(target, byReason);
            answered.put(target, Timer.builder("gantry.statement.latency")
                    .description("Time from sending a command to a server to the end of its answer")
                    .tags("target", name(target)).serviceLevelObjectives(LATENCY_SLOS).register(registry));
        }
        Gauge.builder("gantry.client.sessions", proxy, RunningProxy::sessionCount)
                .description("Client sessions connected now").register(registry);
        readCounters(proxy);
        transactionReplays(proxy);
        serverGauges.add(serverGauge("gantry.upstream.up", "1 when the server is up (health checks pass)",
                server -> server.isUp() ? 1 : 0));
        serverGauges.add(serverGauge("gantry.upstream.primary", "1 for the primary, 0 for a replica",
                server -> server.role() == Role.PRIMARY ? 1 : 0));
        serverGauges.add(serverGauge("gantry.upstream.lag.seconds", "Replication lag from the position samples",
                server -> server.lagMillis() / 1000.0));
        serverGauges.add(serverGauge("gantry.upstream.rtt.seconds",
                "Round trip of the last health check's ping, on a connection kept logged in",
                server -> server.rttMicros() / 1_000_000.0));
        serverGauges.add(serverGauge("gantry.upstream.connect.seconds",
                "How long the last health check took to open and log in a new connection",
                server -> server.connectMicros() / 1_000_000.0));
        serverGauges.add(serverGauge("gantry.upstream.weight", "Share of reads (weight 1..100)",
                UpstreamServer::weight));
        serverGauges.add(serverGauge("gantry.backend.connections", "Gantry's open connections to the server",
                UpstreamServer::connections));
        ConnectionSlots slots = proxy.backendPools().slots();
        serverGauges.add(serverGauge("gantry.backend.connections.cap",
                "The most connections the sessions may hold to the server (--max-backend-connections-per-server); "
                        + "0 while not known", slots::capOf));
        serverGauges.add(serverGauge("gantry.backend.waiting",
                "Sessions waiting for a connection to the server, at its cap",
                server -> slots.use(server.address()).waiting()));
        serverGauges.add(serverGauge("gantry.backend.wait.p99.seconds",
                "99th percentile of how long a new connection to the server waited for room under its cap, over "
                        + "about the last two minutes (0 when there was room)",
                server -> slots.use(server.address()).waitP99Millis() / 1000.0));
        cdc.ifPresent(stream -> changeStream(stream, proxy));
        queryCaches(caches);
        shapes = new ShapeMeters(registry, proxy.digests(), proxy.slowStatements());
        http = HttpServer.create(listen, 16);
        http.createContext("/metrics", exchange -> {
            try (exchange) {
                refreshServers();
                refreshCaches();
                shapes.refresh();
                byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
                exchange.sendResponseHeaders(200, body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            }
        });
        http.setExecutor(Executors.newSingleThreadExecutor(runnable -> {
            Thread thread = new Thread(runnable, "gantry-metrics");
            thread.setDaemon(true);
            return thread;
        }));
        http.start();
    }

    /**
     * Serves the metrics on {@code listen} ({@code /metrics}) and counts the proxy's statements from now on.
     *
     * @throws IllegalStateException naming the address when it cannot be bound
     */
    public static GantryMetrics start(InetSocketAddress listen, RunningProxy proxy, Upstreams upstreams,
                                      Optional<CdcStream> cdc, QueryCaches caches) {
        return start(listen, proxy, upstreams, cdc, caches, Optional.empty());
    }

    /**
     * {@link #start(InetSocketAddress, RunningProxy, Upstreams, Optional, QueryCaches)} for an instance of a cluster:
     * every series is labelled {@code cluster} and {@code cluster_instance}, and
     * {@code gantry_cluster_config_version} is the version it serves with.
     */
    public static GantryMetrics start(InetSocketAddress listen, RunningProxy proxy, Upstreams upstreams,
                                      Optional<CdcStream> cdc, QueryCaches caches, Optional<ClusterMember> cluster) {
        try {
            GantryMetrics metrics = new GantryMetrics(listen, proxy, upstreams, cdc, caches, cluster);
            proxy.useMetrics(metrics);
            LOG.info("metrics: serving Prometheus metrics on http://{}:{}/metrics", listen.getHostString(),
                    metrics.address().getPort());
            return metrics;
        } catch (IOException e) {
            throw new IllegalStateException("--metrics-listen " + listen.getHostString() + ":" + listen.getPort()
                    + ": cannot listen there: " + e.getMessage(), e);
        }
    }

    /** Where {@code /metrics} is served (the port chosen when 0 was asked for). */
    public InetSocketAddress address() {
        return http.getAddress();
    }

    @Override
    public void routed(RouteTarget target, RouteReason reason) {
        routed.get(target).get(reason).increment();
    }

    @Override
    public void answered(RouteTarget target, long nanos) {
        answered.get(target).record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void gantryError(int code) {
        errors.computeIfAbsent(code, c -> Counter.builder("gantry.errors")
                .description("Errors Gantry answered itself, by MySQL error code")
                .tags("code", Integer.toString(c)).register(registry)).increment();
    }

    /** {@code SHOW GANTRY STATUS}'s read counters, as Prometheus counters. */
    private void readCounters(RunningProxy proxy) {
        readCounter(proxy, "gantry.reads", "Reads_served_by_replicas", Tags.of("served_by", "replica"),
                "Autocommit reads, by the server that served them");
        readCounter(proxy, "gantry.reads", "Reads_served_by_primary", Tags.of("served_by", "primary"),
                "Autocommit reads, by the server that served them");
        for (ReplicaRefusal refusal : ReplicaRefusal.values()) {
            readCounter(proxy, "gantry.consistent.prefix.failed.reads",
                    "Consistent_prefix_failed_reads_" + refusal.counterName(), Tags.of("reason", refusal.counterName()),
                    "Reads sent to the primary because no replica met the session's read guarantees");
        }
        readCounter(proxy, "gantry.causal.waits", "Causal_waits", Tags.empty(), "Reads that waited on a replica");
        FunctionCounter.builder("gantry.causal.wait.seconds", proxy,
                        p -> Double.parseDouble(p.readStatus().get("Causal_wait_time_ms")) / 1000.0)
                .description("Time reads spent waiting on replicas").register(registry);
        FunctionCounter.builder("gantry.position.samples", proxy,
                        p -> Double.parseDouble(p.readStatus().get("Position_samples_sent")))
                .description("GTID position samples sent to the servers").register(registry);
        FunctionCounter.builder("gantry.account.lookups", proxy,
                        p -> Double.parseDouble(p.readStatus().get("Account_lookups")))
                .description("Logins whose account was looked up on a server").register(registry);
        FunctionCounter.builder("gantry.account.cache.hits", proxy,
                        p -> Double.parseDouble(p.readStatus().get("Account_cache_hits")))
                .description("Logins let in on known accounts, without asking a server").register(registry);
    }

    /** How the transactions lost with a primary ended, as {@code SHOW GANTRY STATUS} counts them. */
    private void transactionReplays(RunningProxy proxy) {
        for (ReplayCounts.Outcome outcome : ReplayCounts.Outcome.values()) {
            readCounter(proxy, "gantry.transaction.replays", outcome.statusRow(),
                    Tags.of("outcome", outcome.name().toLowerCase(Locale.ROOT)),
                    "Transactions whose primary was lost while they were open, by how they ended");
        }
        for (InDoubtCommits.Found found : InDoubtCommits.Found.values()) {
            readCounter(proxy, "gantry.commits.in.doubt", found.statusRow(),
                    Tags.of("found", found.name().toLowerCase(Locale.ROOT)),
                    "Commits and autocommit writes on their way when the primary was lost, by what Gantry found");
        }
    }

    private void readCounter(RunningProxy proxy, String name, String row, Tags tags, String description) {
        FunctionCounter.builder(name, proxy, p -> Double.parseDouble(p.readStatus().get(row)))
                .tags(tags).description(description).register(registry);
    }

    /** The query caches' counters, summed over every cache (SHOW CACHES has them per cache). */
    private void queryCaches(QueryCaches caches) {
        FunctionCounter.builder("gantry.cache.hits", caches, c -> c.total(QueryCaches.Counter.HITS))
                .description("Statements answered from a query cache").register(registry);
        FunctionCounter.builder("gantry.cache.misses", caches, c -> c.total(QueryCaches.Counter.MISSES))
                .description("Statements of a cached shape that a server answered").register(registry);
        for (QueryCaches.Counter cause : List.of(QueryCaches.Counter.EVICTED_BY_CHANGE,
                QueryCaches.Counter.EVICTED_BY_TTL, QueryCaches.Counter.EVICTED_BY_MEMORY)) {
            FunctionCounter.builder("gantry.cache.evictions", caches, c -> c.total(cause))
                    .tags("cause", name(cause).substring("evicted_by_".length()))
                    .description("Cache entries removed, by why").register(registry);
        }
        Gauge.builder("gantry.cache.entries", caches, c -> c.total(QueryCaches.Counter.ENTRIES))
                .description("Entries in the query caches now").register(registry);
        Gauge.builder("gantry.cache.bytes", caches, c -> c.total(QueryCaches.Counter.BYTES))
                .description("Result bytes held by the query caches now").register(registry);
        Gauge.builder("gantry.cache.stream.fresh", caches, c -> c.freshness().live() ? 1 : 0)
                .description("1 while the change stream keeps the caches fresh, 0 while they live by TTL")
                .register(registry);
    }

    private void changeStream(CdcStream stream, RunningProxy proxy) {
        for (CdcStream.State state : CdcStream.State.values()) {
            Gauge.builder("gantry.cdc.state", stream, s -> s.status().state() == state ? 1 : 0)
                    .tags("state", state.displayName()).description("1 for the change stream's state now")
                    .register(registry);
        }
        Gauge.builder("gantry.cdc.rows.per.second", stream, s -> s.status().rowsPerSecond())
                .description("Row changes applied per second, over the last ten seconds").register(registry);
        Gauge.builder("gantry.cdc.transactions.per.second", stream, s -> s.status().transactionsPerSecond())
                .description("Transactions applied per second, over the last ten seconds").register(registry);
        Gauge.builder("gantry.cdc.lag.seconds", stream, s -> lagSeconds(s, proxy))
                .description("How far the change stream's applied position is behind the primary (NaN: unknown)")
                .register(registry);
    }

    /** By the replicas' measure (the position samples); NaN before the first position or the first sample. */
    private static double lagSeconds(CdcStream stream, RunningProxy proxy) {
        long millis = stream.position().map(proxy::lagMillisOf).orElse(-1L);
        return millis < 0 ? Double.NaN : millis / 1000.0;
    }

    private record ServerGauge(MultiGauge gauge, ToDoubleFunction<UpstreamServer> value) {
    }

    private ServerGauge serverGauge(String name, String description, ToDoubleFunction<UpstreamServer> value) {
        MultiGauge gauge = MultiGauge.builder(name).description(description).register(registry);
        gauge.register(rows(value), true);
        return new ServerGauge(gauge, value);
    }

    /** The server list may change (ALTER GANTRY CHANGE UPSTREAM): the per-server gauges follow it at each scrape. */
    private void refreshServers() {
        for (ServerGauge serverGauge : serverGauges) {
            serverGauge.gauge().register(rows(serverGauge.value()), true);
        }
    }

    /** Caches come and go (CREATE CACHE, DROP CACHE): their refresh counters follow them at each scrape. */
    private synchronized void refreshCaches() {
        List<QueryCache> snapshot = caches.snapshot();
        Set<QueryCache> live = Collections.newSetFromMap(new IdentityHashMap<>());
        live.addAll(snapshot);
        // The dropped ones first: a cache made again under the same name gets counters of its own.
        for (Iterator<Map.Entry<QueryCache, List<Meter>>> it = refreshCounters.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<QueryCache, List<Meter>> counted = it.next();
            if (!live.contains(counted.getKey())) {
                counted.getValue().forEach(registry::remove);
                it.remove();
            }
        }
        for (QueryCache cache : snapshot) {
            refreshCounters.computeIfAbsent(cache, c -> List.of(refreshCounter(c, true), refreshCounter(c, false)));
        }
    }

    private Meter refreshCounter(QueryCache cache, boolean stored) {
        return FunctionCounter.builder("gantry.cache.refreshes", cache, c -> c.refreshes(stored))
                .tags("cache", cache.name(), "outcome", stored ? "refreshed" : "failed")
                .description("Refresh-ahead runs of the refresh workers, by cache and whether the answer replaced "
                        + "the entry").register(registry);
    }

    private List<MultiGauge.Row<?>> rows(ToDoubleFunction<UpstreamServer> value) {
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        for (UpstreamServer server : upstreams.servers()) {
            rows.add(MultiGauge.Row.of(Tags.of("server", server.address()), server, value));
        }
        return rows;
    }

    private static String name(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }

    @Override
    public void close() {
        http.stop(0);
        registry.close();
    }
}
