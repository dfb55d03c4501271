package io.gantry;

import io.gantry.admin.AdminService;
import io.gantry.admin.AdminSocket;
import io.gantry.admin.AdminSqlRunner;
import io.gantry.admin.client.AdminClient;
import io.gantry.admin.protocol.AdminProtocol;
import io.gantry.admin.protocol.Reply;
import io.gantry.authority.Authority;
import io.gantry.authority.Event;
import io.gantry.authority.EventKind;
import io.gantry.authority.Pruner;
import io.gantry.authority.Purpose;
import io.gantry.authority.Retention;
import io.gantry.authority.StoredServer;
import io.gantry.cache.CacheInvalidation;
import io.gantry.cdc.AccountEviction;
import io.gantry.cache.CacheSettings;
import io.gantry.cache.QueryCaches;
import io.gantry.cache.TableCatalog;
import io.gantry.cdc.BinlogNameCharset;
import io.gantry.cdc.CdcSettings;
import io.gantry.cdc.CdcStream;
import io.gantry.cdc.TableFilter;
import io.gantry.cluster.ClusterMember;
import io.gantry.cluster.ClusterSettings;
import io.gantry.events.EngineEvent;
import io.gantry.events.EventBus;
import io.gantry.gtid.GtidSet;
import io.gantry.handover.HandOverProtocol;
import io.gantry.handover.HandOverSocket;
import io.gantry.handover.Successor;
import io.gantry.handover.TakeOver;
import io.gantry.metrics.GantryMetrics;
import io.gantry.proxy.RunningProxy;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.proxy.transport.AdoptedListener;
import io.gantry.topology.ServerValidator;
import io.gantry.topology.TlsTrust;
import io.gantry.topology.UpstreamUrl;
import io.gantry.topology.Upstreams;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.Charset;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BiPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole engine, started and stopped together: the Authority, the event bus, the server lists (from the
 * Authority after the first start), validation, the health loop with its history, the change stream, the proxy,
 * the admin SQL and the admin socket.
 */
public final class Gantry implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Gantry.class);

    /**
     * How to run.
     *
     * @param proxy           the proxy's settings
     * @param upstreamFlags   {@code --upstream-db-url}: stored on the first start, then ignored (with a warning) except
     *                        for the service account's password, which is never stored
     * @param cdcFlags        {@code --cdc-db-url}, empty to use the upstream list
     * @param dataDir         {@code --data-dir}: where the Authority lives
     * @param healthInterval  {@code --upstream-health-interval-secs}
     * @param retention       {@code --health-retention} of health samples and events
     * @param adminUsers      accounts allowed to run admin statements; empty means the service account
     * @param cdc             how the change stream runs; empty turns it off ({@code --no-cdc})
     * @param adminSocket     {@code --admin-socket}: where the admin socket is; empty for {@value
     *                        AdminClient#SOCKET_FILE} in the data directory
     * @param adminSocketSettings how the admin socket treats its clients
     * @param metricsListen   {@code --metrics-listen}: where Prometheus scrapes {@code /metrics}; empty for none
     * @param caches          how the query caches run ({@code --cache-max-bytes} and the rest)
     * @param cluster         the cluster whose configuration this instance shares ({@code --cluster}); empty for none
     */
    public record Options(ProxyConfig proxy, List<UpstreamUrl> upstreamFlags, List<UpstreamUrl> cdcFlags,
                          Path dataDir, Duration healthInterval, Retention retention, Set<String> adminUsers,
                          Optional<CdcSettings> cdc, Optional<Path> adminSocket,
                          AdminSocket.Settings adminSocketSettings, Optional<InetSocketAddress> metricsListen,
                          CacheSettings caches, Optional<ClusterSettings> cluster) {

        /** Not in a cluster. */
        public Options(ProxyConfig proxy, List<UpstreamUrl> upstreamFlags, List<UpstreamUrl> cdcFlags, Path dataDir,
                       Duration healthInterval, Retention retention, Set<String> adminUsers,
                       Optional<CdcSettings> cdc, Optional<Path> adminSocket, AdminSocket.Settings adminSocketSettings,
                       Optional<InetSocketAddress> metricsListen, CacheSettings caches) {
            this(proxy, upstreamFlags, cdcFlags, dataDir, healthInterval, retention, adminUsers, cdc, adminSocket,
                    adminSocketSettings, metricsListen, caches, Optional.empty());
        }

        /** With the default cache settings. */
        public Options(ProxyConfig proxy, List<UpstreamUrl> upstreamFlags, List<UpstreamUrl> cdcFlags, Path dataDir,
                       Duration healthInterval, Retention retention, Set<String> adminUsers,
                       Optional<CdcSettings> cdc, Optional<Path> adminSocket, AdminSocket.Settings adminSocketSettings,
                       Optional<InetSocketAddress> metricsListen) {
            this(proxy, upstreamFlags, cdcFlags, dataDir, healthInterval, retention, adminUsers, cdc, adminSocket,
                    adminSocketSettings, metricsListen, CacheSettings.DEFAULTS);
        }

        /** Without {@code --metrics-listen}. */
        public Options(ProxyConfig proxy, List<UpstreamUrl> upstreamFlags, List<UpstreamUrl> cdcFlags, Path dataDir,
                       Duration healthInterval, Retention retention, Set<String> adminUsers,
                       Optional<CdcSettings> cdc, Optional<Path> adminSocket, AdminSocket.Settings adminSocketSettings) {
            this(proxy, upstreamFlags, cdcFlags, dataDir, healthInterval, retention, adminUsers, cdc, adminSocket,
                    adminSocketSettings, Optional.empty());
        }

        /** With the admin socket in the data directory, with its default settings. */
        public Options(ProxyConfig proxy, List<UpstreamUrl> upstreamFlags, List<UpstreamUrl> cdcFlags, Path dataDir,
                       Duration healthInterval, Retention retention, Set<String> adminUsers,
                       Optional<CdcSettings> cdc) {
            this(proxy, upstreamFlags, cdcFlags, dataDir, healthInterval, retention, adminUsers, cdc,
                    Optional.empty(), AdminSocket.Settings.DEFAULTS);
        }

        /** @param path {@code --admin-socket}, or null for the socket in the data directory */
        public Options withAdminSocket(Path path) {
            return new Options(proxy, upstreamFlags, cdcFlags, dataDir, healthInterval, retention, adminUsers, cdc,
                    Optional.ofNullable(path), adminSocketSettings, metricsListen, caches, cluster);
        }

        public Options withAdminSocketSettings(AdminSocket.Settings settings) {
            return new Options(proxy, upstreamFlags, cdcFlags, dataDir, healthInterval, retention, adminUsers, cdc,
                    adminSocket, settings, metricsListen, caches, cluster);
        }

        /** @param listen {@code --metrics-listen}, or null for no metrics */
        public Options withMetricsListen(InetSocketAddress listen) {
            return new Options(proxy, upstreamFlags, cdcFlags, dataDir, healthInterval, retention, adminUsers, cdc,
                    adminSocket, adminSocketSettings, Optional.ofNullable(listen), caches, cluster);
        }

        public Options withCaches(CacheSettings settings) {
            return new Options(proxy, upstreamFlags, cdcFlags, dataDir, healthInterval, retention, adminUsers, cdc,
                    adminSocket, adminSocketSettings, metricsListen, settings, cluster);
        }

        /** In the cluster {@code settings} ({@code --cluster}), or in none (null). */
        public Options withCluster(ClusterSettings settings) {
            return new Options(proxy, upstreamFlags, cdcFlags, dataDir, healthInterval, retention, adminUsers, cdc,
                    adminSocket, adminSocketSettings, metricsListen, caches, Optional.ofNullable(settings));
        }

        /** Where the admin socket is made. */
        public Path adminSocketPath() {
            return adminSocket.orElseGet(() -> AdminClient.socketIn(dataDir));
        }
    }

    private final Startup parts;
    private final Authority authority;
    private final RunningProxy proxy;
    private final Optional<CdcStream> cdc;
    private final Path adminSocket;
    private final Optional<Restartable<GantryMetrics>> metrics;
    private final QueryCaches caches;
    private final DataDirectoryLoan loan;
    private final EventBus bus;
    /** Starts the change stream of a Gantry that took over, once the sessions moved; null once started. */
    private Runnable streamAfterTakeOver;

    private Gantry(Startup parts, Authority authority, RunningProxy proxy, Optional<CdcStream> cdc,
                   Path adminSocket, Optional<Restartable<GantryMetrics>> metrics, QueryCaches caches,
                   DataDirectoryLoan loan, EventBus bus, Runnable streamAfterTakeOver) {
        this.bus = bus;
        this.streamAfterTakeOver = streamAfterTakeOver;
        this.caches = caches;
        this.metrics = metrics;
        this.parts = parts;
        this.authority = authority;
        this.proxy = proxy;
        this.cdc = cdc;
        this.adminSocket = adminSocket;
        this.loan = loan;
    }

    /**
     * The listening socket this Gantry took over, and the Gantry it took it from, which is told once this one
     * listens.
     */
    private record Adoption(AdoptedListener listener, TakeOver from) {
    }

    private static AdminSocket adminSocket(Options options, AdminSqlRunner sql, AdminService admin, EventBus bus,
                                           ExecutorService work, Reply.Welcome welcome) {
        try {
            return AdminSocket.start(options.adminSocketPath(), sql, admin, bus, work, () -> welcome,
                    options.adminSocketSettings());
        } catch (IOException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    /**
     * The hand-over socket, or none when it cannot be made (a data directory whose path is too long for a Unix
     * socket): Gantry then runs as before, only no Gantry can take over from it.
     */
    private static Optional<HandOverSocket> handOverSocket(Path dataDir, DataDirectoryLoan loan) {
        try {
            return HandOverSocket.start(HandOverProtocol.socketIn(dataDir), loan);
        } catch (IOException e) {
            LOG.warn("gantry: no hand-over socket, so no Gantry can take over from this one (--take-over): {}",
                    e.getMessage());
            return Optional.empty();
        }
    }

    /**
     * Starts every part in order. A part that fails to start stops those already started, last first, and the
     * failure is thrown: nothing is left running, listening or holding the data directory. The listen addresses
     * are checked first, so a taken port is said at once and with its address.
     */
    public static Gantry start(Options options) throws InterruptedException {
        return start(options, null);
    }

    /**
     * Starts as {@link #start(Options)} does, taking over from the Gantry running on the same data directory
     * ({@code --take-over}): its listening socket first (it keeps accepting), then, once it has let go of the data
     * directory, everything else; once this one listens, the other stops accepting and its sessions move with
     * {@link #moveSessionsFrom}, which starts the change stream from the position the other saved. A failure closes
     * what started, as a start's does; the caller then closes {@code from}, and the other Gantry takes back what it
     * lent. Sessions of this one take ids above every id the other gave.
     *
     * @throws io.gantry.handover.HandOverException when the other Gantry refuses or the options do not fit it
     *                                              (another --listen)
     */
    public static Gantry takeOver(Options options, TakeOver from) throws InterruptedException {
        AdoptedListener listener = from.takeListener(options.proxy().listen());
        try {
            listener.sessionIdsAfter(from.release());
            return start(options, new Adoption(listener, from));
        } finally {
            // Once the proxy has made a channel of it, the channel owns it; until then it is closed here.
            listener.closeUnadopted();
        }
    }

    /**
     * After {@link #takeOver}: takes the sessions of the Gantry taken over, each between two statements, with their
     * ids and state, for up to {@code within} ({@code --take-over-timeout}); what it still holds then, it drains as
     * on SIGTERM. Says what moved in the log and on the timeline ({@link EventKind#TAKE_OVER}). The change stream
     * starts then, from the position the Gantry taken over saved.
     */
    public TakeOver.Moved moveSessionsFrom(TakeOver from, Duration within) throws InterruptedException {
        long pid = from.greeting().pid();
        LOG.info("gantry: taking over the sessions of the Gantry taken over (pid {}), each between two statements, "
                + "for up to {} s (--take-over-timeout)", pid, within.toSeconds());
        TakeOver.Moved moved;
        try {
            moved = from.moveSessions(proxy::adopt, within);
        } finally {
            if (streamAfterTakeOver != null) {
                streamAfterTakeOver.run();
                streamAfterTakeOver = null;
            }
        }
        String summary = String.format(Locale.ROOT, "taken over from pid %d: %d sessions moved with their state "
                        + "and CONNECTION_ID(), %d TLS sessions ended between two statements, %d left to its drain%s%s, "
                        + "in %.2f s", pid, moved.moved(), moved.ended(), moved.drained(),
                moved.drained() == 0 ? "" : " (--take-over-timeout passed with them in a transaction or a statement)",
                moved.failed() == 0 ? "" : ", " + moved.failed() + " it served on (this one could not take them)",
                moved.took().toNanos() / 1e9);
        if (!moved.completed()) {
            summary += "; it went away before the end, ending what it still held";
        }
        if (moved.completed() && moved.drained() == 0 && moved.failed() == 0) {
            LOG.info("gantry: {}", summary);
        } else {
            LOG.warn("gantry: {}", summary);
        }
        bus.publish(new EngineEvent.Timeline(new Event(0, Instant.now(), null, EventKind.TAKE_OVER, summary)));
        return moved;
    }

    private static Gantry start(Options options, Adoption adoption) throws InterruptedException {
        if (adoption == null) {
            ListenAddresses.requireFree("--listen", options.proxy().listen());
        }
        if (options.cdc().isPresent()) {
            BinlogNameCharset.requireUtf8(Charset.defaultCharset());
        }
        options.metricsListen().ifPresent(listen -> ListenAddresses.requireFree("--metrics-listen", listen));
        Startup parts = new Startup();
        try {
            Authority authority = parts.add(Authority.open(options.dataDir()));
            options.cluster().ifPresent(settings -> authority.recordEventsAs(settings.instance()));
            EventBus bus = parts.add(new EventBus());
            authority.publishStoredEventsTo(event -> bus.publish(new EngineEvent.Timeline(event)));
            Restartable<AuthorityRecorder> recorder = parts.add(new Restartable<>("the Authority's recorder",
                    () -> new AuthorityRecorder(authority, bus)));
            List<UpstreamUrl> upstream = serverList(authority, Purpose.PROXY, options.upstreamFlags(),
                    options.upstreamFlags());
            List<UpstreamUrl> cdcList = serverList(authority, Purpose.CDC,
                    options.cdcFlags().isEmpty() ? options.upstreamFlags() : options.cdcFlags(), options.upstreamFlags());
            Set<String> adminUsers = options.adminUsers().isEmpty() ? Set.of(upstream.get(0).user())
                    : options.adminUsers();
            // Admin statements run here, one at a time, never on an event loop.
            ExecutorService adminWork = Executors.newSingleThreadExecutor(runnable -> {
                Thread thread = new Thread(runnable, "gantry-admin");
                thread.setDaemon(true);
                return thread;
            });
            parts.add(adminWork::shutdownNow);
            // Opened (sink recovered) now, so admin statements can see it; streaming starts once the proxy's
            // startup checks have marked unreachable servers down.
            // With a cluster's shared sink, this instance's own stream writes no sink: the feed's lease holder does.
            boolean sharedFeed = options.cluster().isPresent()
                    && options.cdc().flatMap(CdcSettings::sink).isPresent();
            Optional<CdcStream> cdc = options.cdc().map(settings -> parts.add(CdcStream.open(authority, cdcList,
                    ownStream(settings, options.cluster(), sharedFeed), Clock.systemUTC(), bus)));
            Upstreams upstreams = new Upstreams(upstream, Clock.systemUTC(), bus);
            EngineStatus status = new EngineStatus(Instant.now());
            AdminService admin = new AdminService(upstreams, authority, new ServerValidator(
                    options.proxy().connectTimeout(), options.proxy().connectRetries()), cdcList, cdc, status::rows,
                    status::lagMillisOf);
            admin.knowPasswordsOf(options.upstreamFlags());
            admin.knowPasswordsOf(options.cdcFlags());
            Optional<ClusterMember> cluster = options.cluster().map(settings -> parts.add(new ClusterMember(settings,
                    upstreams, authority, admin.localConfiguration(), options.healthInterval(),
                    options.proxy().connectTimeout(), options.retention(), version())));
            cluster.ifPresent(member -> authority.whenOwnEventStored(member::shareOwnEvents));
            cluster.ifPresent(member -> cdc.ifPresent(stream -> stream.addListener(transaction -> {
                if (transaction.transaction().changesWatched()) {
                    member.poke();
                }
            })));
            QueryCaches caches = parts.add(new QueryCaches(options.caches(), authority, upstream.get(0).database(),
                    TableCatalog.of(upstreams, options.proxy().connectTimeout()),
                    options.cdc().map(settings -> (BiPredicate<String, String>) settings.tables()::selects)
                            .orElse(null), upstreams, Clock.systemUTC()));
            cdc.ifPresent(stream -> stream.addListener(new CacheInvalidation(caches, stream::positionText)));
            AdminSqlRunner sql = new AdminSqlRunner(admin, adminUsers, adminWork, caches);
            RunningProxy proxy;
            try {
                // The slow-statement log, when asked for, is in the data directory unless a file was named.
                ProxyConfig proxyConfig = options.proxy().withDigests(options.proxy().digests()
                        .inDirectory(options.dataDir()));
                proxy = parts.add(RunningProxy.start(proxyConfig, upstreams, options.healthInterval(), bus, sql,
                        adoption == null ? null : adoption.listener()));
            } catch (Exception e) {
                // Any exception: Netty's sync() throws a failed bind's exception though no signature declares it.
                if (adoption == null) {
                    ListenAddresses.requireFreeAfter(e, "--listen", options.proxy().listen());
                }
                throw e;
            }
            status.listening(proxy);
            cdc.ifPresent(stream -> stream.addListener(new AccountEviction(proxy.knownAccounts(),
                    stream::positionText)));
            admin.useHostBlocks(proxy.hostBlocks());
            admin.usePoolFigures(proxy.poolFigures());
            admin.useDigests(proxy.digests());
            // After the proxy's first health round: the catalogue checks need a known primary.
            caches.load();
            proxy.useCaches(caches);
            admin.useCaches(caches);
            // After the caches: the cluster's configuration (on the primary) holds their definitions too.
            cluster.ifPresent(member -> {
                member.join();
                admin.inCluster(member);
            });
            // Lent in a take-over: its lease let go, so that the feed goes on from another instance or the new one.
            Optional<Restartable<ClusterFeed>> feed = Optional.empty();
            if (sharedFeed) {
                ClusterSettings settings = options.cluster().get();
                Restartable<ClusterFeed> shared = parts.add(new Restartable<>("the cluster's change feed", () -> {
                    ClusterFeed started = new ClusterFeed(settings, options.cdc().get(), admin::cdcServers,
                            upstreams, settings.feedLease(), options.dataDir(), Clock.systemUTC(), bus);
                    started.start();
                    return started;
                }));
                admin.alsoTellCdcChanges((servers, by) -> shared.current()
                        .ifPresent(running -> running.changeServers(servers, by)));
                feed = Optional.of(shared);
            }
            Optional<Restartable<GantryMetrics>> metrics = options.metricsListen().map(listen -> parts.add(
                    new Restartable<>("the metrics port", () -> GantryMetrics.start(listen, proxy, upstreams, cdc,
                            caches, cluster))));
            Restartable<Pruner> pruner = parts.add(new Restartable<>("the Authority's pruning",
                    () -> Pruner.start(authority, options.retention(), Clock.systemUTC())));
            Reply.Welcome welcome = new Reply.Welcome(AdminProtocol.VERSION, version(), describe(proxy.address()),
                    authority.dataDir().toAbsolutePath().toString());
            Restartable<AdminSocket> socket = parts.add(new Restartable<>("the admin socket",
                    () -> adminSocket(options, sql, admin, bus, adminWork, welcome)));
            List<Restartable<?>> lent = new ArrayList<>(List.of(recorder, pruner));
            feed.ifPresent(lent::add);
            metrics.ifPresent(lent::add);
            lent.add(socket);
            DataDirectoryLoan loan = new DataDirectoryLoan(proxy, authority, cdc, lent,
                    options.proxy().socketTransport().flagValue(), version(), cluster);
            handOverSocket(authority.dataDir(), loan).ifPresent(parts::add);
            if (adoption != null && !adoption.from().listening()) {
                LOG.warn("gantry: no session moves: the Gantry taken over is not there to pass them");
            }
            Runnable startStream = () -> cdc.ifPresent(stream -> stream.start(address -> upstreams.find(address)
                    .map(server -> !server.isUp()).orElse(false)));
            // Taking over, the stream starts once the sessions have moved (moveSessionsFrom): until then the Gantry
            // taken over may take everything back, its stream going on from the position it saved, and no
            // transaction may reach the sink from both.
            if (adoption == null) {
                startStream.run();
            }
            bus.publish(new EngineEvent.Timeline(new Event(0, Instant.now(), null, EventKind.STARTUP,
                    "Gantry started, listening on " + describe(proxy.address()) + (adoption == null ? ""
                            : ", taken over from pid " + adoption.from().greeting().pid()))));
            return new Gantry(parts, authority, proxy, cdc, socket.current().orElseThrow().path(), metrics, caches,
                    loan, bus, adoption == null ? null : startStream);
        } catch (Exception e) {
            // Any exception: a part may throw what its signature does not declare (Netty's sync() does).
            parts.close();
            throw e;
        }
    }

    /**
     * What started so far, closed last first: by a start that fails part-way, and by {@link #close()}. Each close is
     * isolated, so one that fails does not keep the others from closing.
     */
    private static final class Startup implements AutoCloseable {

        private final Deque<AutoCloseable> started = new ArrayDeque<>();

        <T extends AutoCloseable> T add(T part) {
            started.push(part);
            return part;
        }

        @Override
        public void close() {
            while (!started.isEmpty()) {
                AutoCloseable part = started.pop();
                try {
                    part.close();
                } catch (Exception e) {
                    LOG.error("gantry: stopping {} failed: {}", part.getClass().getSimpleName(), e.toString(), e);
                }
            }
        }
    }

    /**
     * The rows of {@code SHOW GANTRY STATUS} only the engine knows. The proxy's rows (its address, sessions, read
     * counters) come from the proxy once it listens: the admin statements it answers are made before it, so it is
     * told of the proxy afterwards. No admin statement can run before then: the proxy port is not open yet.
     */
    private static final class EngineStatus {

        private final Instant started;
        private volatile RunningProxy proxy;

        EngineStatus(Instant started) {
            this.started = started;
        }

        void listening(RunningProxy running) {
            this.proxy = running;
        }

        /** See {@link RunningProxy#lagMillisOf}; unknown (-1) until the proxy runs. */
        long lagMillisOf(GtidSet position) {
            RunningProxy running = proxy;
            return running == null ? -1 : running.lagMillisOf(position);
        }

        Map<String, String> rows() {
            Map<String, String> status = new LinkedHashMap<>();
            status.put("Version", version());
            RunningProxy running = proxy;
            if (running != null) {
                status.put("Listening", describe(running.address()));
                status.put("Client Sessions", Integer.toString(running.openSessions()));
                status.putAll(running.readStatus());
            }
            status.put("Started", started.truncatedTo(java.time.temporal.ChronoUnit.MILLIS).toString());
            status.put("Uptime Seconds", Long.toString(Duration.between(started, Instant.now()).toSeconds()));
            status.put("TLS Implementation", TlsTrust.implementation());
            return status;
        }
    }

    /**
     * This instance's own change stream: in a cluster it also watches the versions and events tables, and without a
     * sink when the sink is the cluster's shared feed ({@link ClusterFeed}).
     */
    private static CdcSettings ownStream(CdcSettings settings, Optional<ClusterSettings> cluster, boolean sharedFeed) {
        if (cluster.isEmpty()) {
            return settings;
        }
        TableFilter tables = settings.tables()
                .watching(new TableFilter.Table(cluster.get().schema(), ClusterSettings.VERSIONS_TABLE))
                .watching(new TableFilter.Table(cluster.get().schema(), ClusterSettings.EVENTS_TABLE));
        return new CdcSettings(settings.connectTimeout(), settings.connectRetries(),
                sharedFeed ? Optional.empty() : settings.sink(), settings.sinkRotateBytes(), tables,
                settings.snapshot());
    }

    /** Gantry's version, or {@code development build} outside a packaged jar. */
    static String version() {
        String version = Gantry.class.getPackage().getImplementationVersion();
        return version == null ? "development build" : version;
    }

    /**
     * The list to use: the one stored in the Authority if there is one (the flags are then ignored, with a
     * warning), else the flags' list, which is stored. Passwords are never stored: they come from the flags.
     */
    private static List<UpstreamUrl> serverList(Authority authority, Purpose purpose, List<UpstreamUrl> flags,
                                                List<UpstreamUrl> passwordSource) {
        Optional<List<StoredServer>> stored = authority.serverList(purpose);
        if (stored.isEmpty()) {
            if (flags.isEmpty()) {
                throw new IllegalArgumentException("no " + purpose.sqlName() + " server list: give --upstream-db-url "
                        + "on the first start");
            }
            authority.replaceServerList(purpose, flags.stream().map(u -> new StoredServer(u.host(), u.port(),
                    u.database(), u.user(), u.weight(), Optional.of(u.tls().query()))).toList(),
                    "first start: list from --upstream-db-url/--cdc-db-url");
            return flags;
        }
        LOG.warn("gantry: using the {} server list stored in {} ({} servers); the --upstream-db-url and "
                        + "--cdc-db-url lists (flags, variables or --config file) are ignored after the first start; "
                        + "change it online with ALTER GANTRY CHANGE {} TO '...'",
                purpose.sqlName(), authority.dataDir(), stored.get().size(),
                purpose == Purpose.PROXY ? "UPSTREAM" : "CDC");
        return stored.get().stream().map(s -> new UpstreamUrl(s.host(), s.port(), s.database(), s.user(),
                password(s.user(), passwordSource), s.weight(), tls(s, flags, passwordSource))).toList();
    }

    /**
     * A stored server's TLS settings as stored with the list. A list stored by a Gantry that kept none takes those
     * of the command-line entry for the same server, else those of the first command-line URL (the service
     * account's), else the defaults.
     */
    private static io.gantry.topology.ServerTls tls(StoredServer stored, List<UpstreamUrl> flags,
                                                   List<UpstreamUrl> passwordSource) {
        if (stored.tls().isPresent()) {
            return UpstreamUrl.parseTls(stored.tls().get());
        }
        return java.util.stream.Stream.concat(flags.stream(), passwordSource.stream())
                .filter(u -> u.address().equalsIgnoreCase(stored.address())).map(UpstreamUrl::tls).findFirst()
                .orElseGet(() -> passwordSource.isEmpty() ? io.gantry.topology.ServerTls.DEFAULT
                        : passwordSource.get(0).tls());
    }

    private static String password(String user, List<UpstreamUrl> source) {
        return source.stream().filter(u -> u.user().equals(user)).map(UpstreamUrl::password).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("the stored server list uses the account '" + user
                        + "', whose password is never stored: give it in --upstream-db-url"));
    }

    private static String describe(InetSocketAddress address) {
        return address.getHostString() + ":" + address.getPort();
    }

    public InetSocketAddress address() {
        return proxy.address();
    }

    public Upstreams upstreams() {
        return proxy.upstreams();
    }

    public Authority authority() {
        return authority;
    }

    /** Where the admin socket listens. */
    public Path adminSocket() {
        return adminSocket;
    }

    /** Where {@code /metrics} is served, empty without {@code --metrics-listen} (and while lent to a take-over). */
    public Optional<InetSocketAddress> metricsAddress() {
        return metrics.flatMap(Restartable::current).map(GantryMetrics::address);
    }

    /**
     * Completes, with the new Gantry, when the hand-over to it is done (it listens, and this one will not take back
     * what it lent): this one should then {@link #drain} and {@link #close}, as on SIGTERM.
     */
    public CompletableFuture<Successor> takenOver() {
        return loan.handedOver();
    }

    /** The query caches. */
    public QueryCaches caches() {
        return caches;
    }

    /** The change stream, empty when it is off. */
    public Optional<CdcStream> cdc() {
        return cdc;
    }

    /**
     * Starts the drain before a stop (SIGTERM): new clients are refused, sessions outside a transaction end with an
     * error saying Gantry is stopping, sessions inside one may finish it. The future completes when none holds one
     * any more; {@link #close} then stops the rest and saves the change stream's position, whether or not it did.
     */
    public CompletableFuture<Void> drain() {
        return proxy.drain();
    }

    /** Sessions that still hold a transaction or a running command (what a drain waits for). */
    public long busySessions() {
        return proxy.busySessions();
    }

    /** Stops every part, last started first. */
    @Override
    public void close() {
        parts.close();
    }
}
