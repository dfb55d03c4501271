package io.gantry.admin;

import io.gantry.authority.Authority;
import io.gantry.authority.Event;
import io.gantry.authority.HealthSample;
import io.gantry.authority.LiveServerRow;
import io.gantry.authority.Purpose;
import io.gantry.authority.QueryDigestRow;
import io.gantry.cache.CacheException;
import io.gantry.cache.CacheStatement;
import io.gantry.cache.QueryCaches;
import io.gantry.cdc.CdcStream;
import io.gantry.cluster.ClusterException;
import io.gantry.cluster.ClusterMember;
import io.gantry.cluster.LocalConfiguration;
import io.gantry.cluster.SharedConfiguration;
import io.gantry.digest.RanOn;
import io.gantry.digest.ShapeDigest;
import io.gantry.digest.StatementDigests;
import io.gantry.gtid.GtidSet;
import io.gantry.topology.ServerValidator;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.UpstreamUrl;
import io.gantry.topology.Upstreams;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.BiConsumer;
import java.util.function.UnaryOperator;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin operations over the running engine: queries on {@code gantry.upstream_servers}, {@code gantry.events} and
 * {@code gantry.health_history} (executed by H2 in the Authority, over the live state copied in first), the status,
 * the weights and lists, the change stream's commands, and the live server table. Callers run it off the event
 * loops ({@link AdminSqlRunner} on its executor); changes are serialised, reads are not.
 */
public final class AdminService implements AdminOperations {

    private static final Logger LOG = LoggerFactory.getLogger(AdminService.class);

    private final Upstreams upstreams;
    private final Authority authority;
    private final ServerValidator validator;
    private final Supplier<Map<String, String>> engineStatus;
    private final Optional<CdcStream> cdc;
    private final ToLongFunction<GtidSet> lagBehindPrimary;
    private final ServerLists lists;
    private final LocalCopy local;
    private volatile QueryCaches caches;
    private volatile Optional<ClusterMember> cluster = Optional.empty();
    private volatile HostBlocks hostBlocks = HostBlocks.NONE;
    private volatile PoolFigures poolFigures = PoolFigures.NONE;
    private volatile StatementDigests digests;

    /**
     * @param cdcList      the CDC server list (the upstream list when none was given)
     * @param cdc          the change stream, empty when it is turned off ({@code --no-cdc})
     * @param engineStatus rows for {@code SHOW GANTRY STATUS} that only the engine knows (listen address,
     *                     sessions, uptime), in display order
     * @param lagBehindPrimary how far a GTID set is behind the primary in milliseconds, -1 when unknown (the
     *                     position sampler's measure): the change stream's lag
     */
    public AdminService(Upstreams upstreams, Authority authority, ServerValidator validator,
                        List<UpstreamUrl> cdcList, Optional<CdcStream> cdc,
                        Supplier<Map<String, String>> engineStatus, ToLongFunction<GtidSet> lagBehindPrimary) {
        this.upstreams = upstreams;
        this.authority = authority;
        this.validator = validator;
        this.lists = new ServerLists(upstreams, authority, cdcList, cdc);
        this.local = new LocalCopy(lists);
        this.cdc = cdc;
        this.engineStatus = engineStatus;
        this.lagBehindPrimary = lagBehindPrimary;
    }

    /** The CDC servers as they are now. */
    public List<UpstreamUrl> cdcServers() {
        return lists.cdcList();
    }

    /** {@code stream} (a cluster's feed) hears of every change of the CDC list, with who made it. */
    public void alsoTellCdcChanges(BiConsumer<List<UpstreamUrl>, String> stream) {
        lists.alsoTell(stream);
    }

    /** This instance's lists, the local copy of a cluster's shared configuration. */
    public LocalConfiguration localConfiguration() {
        return local;
    }

    /** The query caches are loaded: from now on their definitions are part of what a cluster shares. */
    public void useCaches(QueryCaches queryCaches) {
        this.caches = queryCaches;
        local.useCaches(queryCaches);
    }

    /**
     * Accounts whose passwords this instance knows besides those of its lists (its {@code --upstream-db-url}), for
     * lists a cluster's other instances set.
     */
    public void knowPasswordsOf(List<UpstreamUrl> urls) {
        lists.learnPasswords(urls);
    }

    /** This instance joined a cluster: from now on its lists change as the cluster's shared configuration. */
    public void inCluster(ClusterMember member) {
        this.cluster = Optional.of(member);
    }

    /** The proxy listens: from now on the blocked hosts are its login gate's. */
    public void useHostBlocks(HostBlocks blocks) {
        this.hostBlocks = blocks;
    }

    /** The proxy listens: from now on the pools are its. */
    public void usePoolFigures(PoolFigures figures) {
        this.poolFigures = figures;
    }

    /** The proxy listens: from now on its statements are counted there. */
    public void useDigests(StatementDigests statementDigests) {
        this.digests = statementDigests;
    }

    @Override
    public List<ShapeDigest> queries() {
        StatementDigests current = digests;
        return current == null ? List.of() : current.snapshot();
    }

    @Override
    public List<ShapeDigest> queryShapes() {
        StatementDigests current = digests;
        return current == null ? List.of() : current.snapshotByShape();
    }

    @Override
    public List<ShapeDigest> topQueries(int limit) {
        StatementDigests current = digests;
        return current == null ? List.of() : current.topByTotalTime(limit);
    }

    @Override
    public AdminResult.Done flushQueries(String by) {
        StatementDigests current = digests;
        if (current != null) {
            current.flush();
        }
        LOG.info("admin: {} flushed the statement digests", by);
        return new AdminResult.Done(0, "the statement digests are empty again");
    }

    @Override
    public List<PoolFigures.Pool> pools() {
        return poolFigures.pools();
    }

    @Override
    public List<HostBlocks.BlockedHost> blockedHosts() {
        return hostBlocks.blockedHosts();
    }

    @Override
    public AdminResult.Done flushHosts(Optional<String> host, String by) {
        if (host.isPresent()) {
            boolean wasBlocked = hostBlocks.unblock(host.get());
            LOG.info("admin: {} flushed host {} ({})", by, host.get(), wasBlocked ? "it was blocked; it may log in "
                    + "again" : "it was not blocked; its failures so far are forgotten");
            return new AdminResult.Done(wasBlocked ? 1 : 0, wasBlocked ? "host " + host.get() + " unblocked"
                    : "host " + host.get() + " was not blocked; its failures so far are forgotten");
        }
        int unblocked = hostBlocks.unblockAll();
        LOG.info("admin: {} flushed every host ({} were blocked)", by, unblocked);
        return new AdminResult.Done(unblocked, unblocked + (unblocked == 1 ? " host" : " hosts")
                + " unblocked; every failure so far is forgotten");
    }

    @Override
    public AdminResult.Rows query(String sql) {
        authority.replaceLiveServers(servers());
        if (sql.toLowerCase(Locale.ROOT).contains("queries")) {
            // Up to --digest-max-shapes rows: copied only for a query that may read them.
            authority.replaceQueryDigests(queries().stream().map(AdminService::row).toList());
        }
        return AdminResult.Rows.of(authority.select(sql));
    }

    private static QueryDigestRow row(ShapeDigest digest) {
        return new QueryDigestRow(digest.shape(), digest.schema(), digest.account(), digest.count(), digest.errors(),
                digest.errorCodesText(), digest.rowsSent(), digest.rowsAffected(), digest.totalMicros(),
                digest.p50Micros(), digest.p95Micros(), digest.p99Micros(), digest.maxMicros(),
                digest.ran(RanOn.PRIMARY), digest.ran(RanOn.REPLICA), digest.ran(RanOn.CACHE),
                digest.ran(RanOn.GANTRY), digest.reasonsText(), digest.firstSeen(), digest.lastSeen(),
                digest.folded());
    }

    @Override
    public List<StatusVariable> status() {
        Map<String, String> values = new LinkedHashMap<>(engineStatus.get());
        values.put("Primary", upstreams.primary().map(UpstreamServer::address)
                .orElse("none (" + upstreams.noPrimaryReason() + ")"));
        List<UpstreamServer> servers = upstreams.servers();
        values.put("Upstream Servers", servers.size() + " (" + servers.stream().filter(UpstreamServer::isUp).count()
                + " up)");
        values.put("Replicas Up", String.join(", ", upstreams.upReplicas().stream()
                .map(UpstreamServer::address).toList()));
        values.putAll(cdcStatus());
        values.put("CDC Servers", UpstreamUrl.addressesAndWeights(lists.cdcList()));
        cluster.ifPresent(member -> member.statusRows().forEach(row -> values.put(row[0], row[1])));
        values.put("Data Directory", authority.dataDir().toAbsolutePath().toString());
        List<StatusVariable> rows = new ArrayList<>();
        values.forEach((name, value) -> rows.add(new StatusVariable(name, value == null ? "" : value)));
        return rows;
    }

    private Map<String, String> cdcStatus() {
        Map<String, String> values = new LinkedHashMap<>();
        if (cdc.isEmpty()) {
            values.put("CDC Server", "none (the change stream is off: --no-cdc)");
            values.put("CDC Status", "off");
            return values;
        }
        CdcStream.Status status = cdc.get().status();
        values.put("CDC Server", status.server().orElse("none"));
        values.put("CDC Status", status.state().displayName());
        values.put("CDC Position", status.position());
        long lag = cdc.get().position().map(lagBehindPrimary::applyAsLong).orElse(-1L);
        values.put("CDC Lag ms", lag < 0 ? "unknown" : Long.toString(lag));
        values.put("Snapshot Status", status.snapshot());
        values.put("CDC Events/s", String.format(Locale.ROOT, "%.1f", status.rowsPerSecond()));
        values.put("CDC Transactions/s", String.format(Locale.ROOT, "%.1f", status.transactionsPerSecond()));
        values.put("Last CDC Error", status.lastError());
        return values;
    }

    @Override
    public AdminResult.Done startReplication(String by) {
        CdcStream stream = changeStream("start");
        return stream.startReplication(by)
                ? new AdminResult.Done(0, "the change stream starts from the highest-weight CDC server")
                : new AdminResult.Done(0, "the change stream is already running");
    }

    @Override
    public AdminResult.Done stopReplication(String by) {
        CdcStream stream = changeStream("stop");
        return stream.stopReplication(by)
                ? new AdminResult.Done(0, "the change stream is stopped at " + stream.positionText())
                : new AdminResult.Done(0, "the change stream was already stopped");
    }

    private CdcStream changeStream(String command) {
        return cdc.orElseThrow(() -> new AdminException(AdminResult.Failure.REFUSED, "the change stream is off in "
                + "this Gantry (--no-cdc), so there is no replication to " + command));
    }

    /**
     * The weight applies to every list that has the server: read shares on the proxy list, preference for CDC. The
     * weight it has already is no change: 0 rows, no event, and the message says so. In a cluster it is a new version
     * of the shared configuration, which every instance applies.
     */
    @Override
    public AdminResult.Done setWeight(String hostPort, int weight, String by) {
        if (upstreams.find(hostPort).isEmpty() && !lists.onCdcList(hostPort)) {
            throw new AdminException(AdminResult.Failure.REFUSED, "no server " + hostPort + " in the upstream or "
                    + "CDC list (see SELECT host, port FROM gantry.upstream_servers)");
        }
        if (weight < AdminStatement.SetWeight.MIN_WEIGHT || weight > AdminStatement.SetWeight.MAX_WEIGHT) {
            throw new IllegalArgumentException("weight must be between " + AdminStatement.SetWeight.MIN_WEIGHT
                    + " and " + AdminStatement.SetWeight.MAX_WEIGHT + ", not " + weight);
        }
        String already = "weight of " + hostPort + " is already " + weight;
        if (cluster.isPresent()) {
            OptionalLong version = changeShared("ALTER GANTRY SET WEIGHT " + hostPort + " TO " + weight + " by '"
                    + by + "'", shared -> shared.withWeight(hostPort, weight));
            return version.isEmpty() ? new AdminResult.Done(0, already)
                    : new AdminResult.Done(1, "weight of " + hostPort + " is now " + weight + version(version));
        }
        if (!lists.setWeight(hostPort, weight, null)) {
            LOG.info("admin: '{}' set the weight of {} to {}, which it already is; nothing changed", by, hostPort,
                    weight);
            return new AdminResult.Done(0, already);
        }
        LOG.info("admin: '{}' set the weight of {} to {}", by, hostPort, weight);
        return new AdminResult.Done(1, "weight of " + hostPort + " is now " + weight);
    }

    @Override
    public AdminResult.Done changeUpstream(String urls, String by) {
        return changeList(Purpose.PROXY, urls, by);
    }

    @Override
    public AdminResult.Done changeCdc(String urls, String by) {
        return changeList(Purpose.CDC, urls, by);
    }

    /** Validates first: a list that fails any check is refused, and the old one stays. */
    private AdminResult.Done changeList(Purpose purpose, String text, String by) {
        List<UpstreamUrl> urls = UpstreamUrl.parseList(List.of(text));
        ServerValidator.Report report = validator.validate(urls);
        String problem = report.fatalProblem();
        if (problem != null) {
            LOG.warn("admin: '{}' tried to change the {} list; refused: {}", by, purpose.sqlName(), problem);
            throw new AdminException(AdminResult.Failure.REFUSED, "the new list was refused and the old one stays: "
                    + problem);
        }
        String reason = "ALTER GANTRY CHANGE " + (purpose == Purpose.PROXY ? "UPSTREAM" : "CDC") + " by '" + by
                + "'";
        String version = "";
        if (cluster.isPresent()) {
            lists.learnPasswords(urls);
            version = version(changeShared(reason, shared -> shared.withList(purpose, ServerLists.shared(urls))));
        } else {
            lists.replace(purpose, urls, reason);
        }
        String unreachable = String.join(", ", report.unreachable().stream().map(u -> u.url().address()).toList());
        return new AdminResult.Done(urls.size(), urls.size() + " servers in the " + purpose.sqlName() + " list"
                + version + (unreachable.isEmpty() ? "" : "; unreachable now: " + unreachable));
    }

    /** A change of the cluster's shared configuration; its failures as the admin statement's. */
    private OptionalLong changeShared(String description, UnaryOperator<SharedConfiguration> edit) {
        try {
            return cluster.get().change(description, edit);
        } catch (ClusterException e) {
            LOG.warn("admin: {}: refused: {}", description, e.getMessage());
            throw new AdminException(AdminResult.Failure.REFUSED, e.getMessage());
        }
    }

    /**
     * {@code CREATE CACHE}; in a cluster the definition is checked here first, then added to the shared configuration,
     * and every instance creates it.
     */
    @Override
    public AdminResult.Done createCache(CacheStatement.Create create, String by) {
        QueryCaches known = knownCaches();
        if (cluster.isEmpty()) {
            return new AdminResult.Done(1, known.create(create, by));
        }
        SharedConfiguration.Cache cache = LocalCopy.shared(known.define(create));
        OptionalLong version = changeShared("CREATE CACHE " + cache.name() + " by '" + by + "'",
                shared -> shared.withCache(cache));
        return new AdminResult.Done(1, "cache " + cache.name() + " created" + version(version));
    }

    @Override
    public AdminResult.Done dropCache(String name, String by) {
        QueryCaches known = knownCaches();
        if (cluster.isEmpty()) {
            return new AdminResult.Done(1, known.drop(name, by));
        }
        if (known.snapshot().stream().noneMatch(cache -> cache.name().equals(name))) {
            throw new CacheException("no cache named " + name + " (SHOW CACHES lists them)");
        }
        OptionalLong version = changeShared("DROP CACHE " + name + " by '" + by + "'",
                shared -> shared.withoutCache(name));
        return new AdminResult.Done(1, "cache " + name + " dropped" + version(version));
    }

    @Override
    public AdminResult.Done dropAllCaches(String by) {
        QueryCaches known = knownCaches();
        int count = known.snapshot().size();
        if (cluster.isEmpty()) {
            return new AdminResult.Done(count, known.dropAll(by));
        }
        OptionalLong version = changeShared("DROP ALL CACHES by '" + by + "'", SharedConfiguration::withoutCaches);
        return new AdminResult.Done(count, count + " caches dropped" + version(version));
    }

    private QueryCaches knownCaches() {
        QueryCaches known = caches;
        if (known == null) {
            throw new AdminException(AdminResult.Failure.REFUSED, "this Gantry has no query caches");
        }
        return known;
    }

    private static String version(OptionalLong version) {
        return version.isEmpty() ? " (unchanged)" : " (cluster version " + version.getAsLong() + ")";
    }

    @Override
    public ClusterMember.View cluster() {
        ClusterMember member = cluster.orElseThrow(() -> new AdminException(AdminResult.Failure.REFUSED,
                "this Gantry is not in a cluster: start it with --cluster NAME to share its configuration with "
                        + "other instances"));
        try {
            return member.view();
        } catch (ClusterException e) {
            throw new AdminException(AdminResult.Failure.FAILED, e.getMessage());
        }
    }

    @Override
    public List<LiveServerRow> servers() {
        Map<String, LiveServerRow> rows = new LinkedHashMap<>();
        List<UpstreamUrl> cdc = lists.cdcList();
        String activeCdc = this.cdc.flatMap(CdcStream::activeServer).orElse(null);
        for (UpstreamServer server : upstreams.servers()) {
            EnumSet<Purpose> purposes = EnumSet.of(Purpose.PROXY);
            if (cdc.stream().anyMatch(u -> u.address().equals(server.address()))) {
                purposes.add(Purpose.CDC);
            }
            UpstreamUrl url = server.url();
            rows.put(server.address(), new LiveServerRow(url.host(), url.port(), url.database(), url.user(),
                    server.weight(), Purpose.describe(purposes), server.address().equals(activeCdc),
                    server.health().sqlName(),
                    server.downSince(), server.lastOk(), server.connections(), server.role().name().toLowerCase(),
                    server.lagMillis() < 0 ? null : server.lagMillis(), server.rttMillis(),
                    server.connectMillis(), server.smoothedRttMillis()));
        }
        // Servers only on the CDC list are not health-checked until CDC runs: their health says so.
        for (UpstreamUrl url : cdc) {
            rows.putIfAbsent(url.address(), new LiveServerRow(url.host(), url.port(), url.database(), url.user(),
                    url.weight(), Purpose.describe(EnumSet.of(Purpose.CDC)), url.address().equals(activeCdc),
                    url.address().equals(activeCdc) ? "streaming" : "unchecked", null, null, 0,
                    "unknown", null, null, null, null));
        }
        return new ArrayList<>(rows.values());
    }

    @Override
    public HealthPage healthHistory(Instant from, Instant until, Optional<String> server, int limit) {
        if (limit < 1 || limit > MAX_HEALTH_PAGE) {
            throw new AdminException(AdminResult.Failure.INVALID_STATEMENT, "limit must be 1.." + MAX_HEALTH_PAGE
                    + ", not " + limit);
        }
        // One sample more than asked tells whether there is a next page, and where it starts.
        List<HealthSample> samples = authority.healthHistory(from, until, server, limit + 1);
        if (samples.size() <= limit) {
            return new HealthPage(samples, Optional.empty());
        }
        Instant next = samples.get(limit).at();
        int end = limit;
        while (end > 0 && samples.get(end - 1).at().equals(next)) {
            end--;
        }
        if (end == 0) {
            // One instant holds more samples than a page (more servers than the limit): give them all.
            List<HealthSample> instant = authority.healthHistory(next, next.plusMillis(1), server, MAX_HEALTH_PAGE);
            Optional<Instant> after = authority.healthHistory(next.plusMillis(1), until, server, 1).stream()
                    .findFirst().map(HealthSample::at);
            return new HealthPage(instant, after);
        }
        return new HealthPage(samples.subList(0, end), Optional.of(next));
    }

    @Override
    public List<Event> events(Instant since, int limit) {
        if (limit < 1 || limit > MAX_EVENTS) {
            throw new AdminException(AdminResult.Failure.INVALID_STATEMENT, "limit must be 1.." + MAX_EVENTS
                    + ", not " + limit);
        }
        return authority.events(since, limit);
    }

    @Override
    public String eventsInstance() {
        return authority.eventsInstance();
    }
}
