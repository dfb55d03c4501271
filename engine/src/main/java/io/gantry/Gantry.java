package io.gantry;

import io.gantry.admin.AdminService;
import io.gantry.admin.AdminSqlRunner;
import io.gantry.authority.Authority;
import io.gantry.authority.Event;
import io.gantry.authority.EventKind;
import io.gantry.authority.Pruner;
import io.gantry.authority.Purpose;
import io.gantry.authority.Retention;
import io.gantry.authority.StoredServer;
import io.gantry.cdc.CdcSettings;
import io.gantry.cdc.CdcStream;
import io.gantry.events.EngineEvent;
import io.gantry.events.EventBus;
import io.gantry.proxy.ProxyConfig;
import io.gantry.proxy.RunningProxy;
import io.gantry.topology.ServerValidator;
import io.gantry.topology.UpstreamUrl;
import io.gantry.topology.Upstreams;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole engine, started and stopped together: the Authority, the server lists (from the Authority after the
 * first start), validation, the health loop with its history, the change stream, the proxy and the admin SQL.
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
     */
    public record Options(ProxyConfig proxy, List<UpstreamUrl> upstreamFlags, List<UpstreamUrl> cdcFlags,
                          Path dataDir, Duration healthInterval, Retention retention, Set<String> adminUsers,
                          Optional<CdcSettings> cdc) {
    }

    private final Authority authority;
    private final EventBus bus;
    private final AuthorityRecorder recorder;
    private final Pruner pruner;
    private final RunningProxy proxy;
    private final ExecutorService admin;
    private final Optional<CdcStream> cdc;

    private Gantry(Authority authority, EventBus bus, AuthorityRecorder recorder, Pruner pruner, RunningProxy proxy,
                   ExecutorService admin, Optional<CdcStream> cdc) {
        this.cdc = cdc;
        this.authority = authority;
        this.bus = bus;
        this.recorder = recorder;
        this.pruner = pruner;
        this.proxy = proxy;
        this.admin = admin;
    }

    public static Gantry start(Options options) throws InterruptedException {
        Authority authority = Authority.open(options.dataDir());
        EventBus bus = new EventBus();
        authority.publishStoredEventsTo(event -> bus.publish(new EngineEvent.Timeline(event)));
        AuthorityRecorder recorder = new AuthorityRecorder(authority, bus);
        Pruner pruner = null;
        Optional<CdcStream> cdcStream = Optional.empty();
        // Admin statements run here, one at a time, never on an event loop.
        ExecutorService adminWork = Executors.newSingleThreadExecutor(runnable -> {
            Thread thread = new Thread(runnable, "gantry-admin");
            thread.setDaemon(true);
            return thread;
        });
        try {
            List<UpstreamUrl> upstream = serverList(authority, Purpose.PROXY, options.upstreamFlags(),
                    options.upstreamFlags());
            List<UpstreamUrl> cdc = serverList(authority, Purpose.CDC,
                    options.cdcFlags().isEmpty() ? options.upstreamFlags() : options.cdcFlags(), options.upstreamFlags());
            Set<String> adminUsers = options.adminUsers().isEmpty() ? Set.of(upstream.get(0).user())
                    : options.adminUsers();
            Instant started = Instant.now();
            RunningProxy[] proxyHolder = new RunningProxy[1];
            ServerValidator validator = new ServerValidator(options.proxy().connectTimeout(),
                    options.proxy().connectRetries());
            // Opened (sink recovered) now, so admin statements can see it; streaming starts once the proxy's
            // startup checks have marked unreachable servers down.
            cdcStream = options.cdc().map(settings -> CdcStream.open(authority, cdc, settings, Clock.systemUTC(),
                    bus));
            Optional<CdcStream> stream = cdcStream;
            RunningProxy proxy = RunningProxy.start(options.proxy(), upstream, options.healthInterval(), bus,
                    upstreams -> new AdminSqlRunner(new AdminService(upstreams, authority, validator, cdc, stream,
                            () -> engineStatus(proxyHolder[0], started)), adminUsers, adminWork));
            proxyHolder[0] = proxy;
            cdcStream.ifPresent(changes -> changes.start(address -> proxy.upstreams().find(address)
                    .map(server -> !server.isUp()).orElse(false)));
            pruner = Pruner.start(authority, options.retention(), Clock.systemUTC());
            bus.publish(new EngineEvent.Timeline(new Event(0, Instant.now(), null, EventKind.STARTUP,
                    "Gantry started, listening on " + describe(proxy.address()))));
            return new Gantry(authority, bus, recorder, pruner, proxy, adminWork, cdcStream);
        } catch (RuntimeException | InterruptedException e) {
            cdcStream.ifPresent(CdcStream::close);
            adminWork.shutdownNow();
            if (pruner != null) {
                pruner.close();
            }
            recorder.close();
            bus.close();
            authority.close();
            throw e;
        }
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
                    "first start: list from the command line");
            return flags;
        }
        LOG.warn("gantry: using the {} server list stored in {} ({} servers); the command-line list is ignored "
                        + "after the first start; change it online with ALTER GANTRY CHANGE {} TO '...'",
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

    private static Map<String, String> engineStatus(RunningProxy proxy, Instant started) {
        Map<String, String> status = new LinkedHashMap<>();
        String version = Gantry.class.getPackage().getImplementationVersion();
        status.put("Version", version == null ? "development build" : version);
        if (proxy != null) {
            status.put("Listening", describe(proxy.address()));
            status.put("Client Sessions", Integer.toString(proxy.openSessions()));
            status.putAll(proxy.readStatus());
        }
        status.put("Started", started.truncatedTo(java.time.temporal.ChronoUnit.MILLIS).toString());
        status.put("Uptime Seconds", Long.toString(Duration.between(started, Instant.now()).toSeconds()));
        return status;
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

    /** The change stream, empty when it is off. */
    public Optional<CdcStream> cdc() {
        return cdc;
    }

    @Override
    public void close() {
        proxy.close();
        cdc.ifPresent(CdcStream::close);
        admin.shutdownNow();
        pruner.close();
        recorder.close();
        bus.close();
        authority.close();
    }
}
