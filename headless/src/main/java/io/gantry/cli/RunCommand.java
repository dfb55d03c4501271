package io.gantry.cli;

import io.gantry.Gantry;
import io.gantry.authority.Retention;
import io.gantry.cache.CacheSettings;
import io.gantry.cluster.ClusterSettings;
import io.gantry.handover.Successor;
import io.gantry.handover.TakeOver;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.proxy.transport.SocketTransport;
import io.gantry.topology.UpstreamUrl;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** {@code gantry run}: the proxy in the foreground until SIGTERM or Ctrl-C. */
@Command(name = "run", mixinStandardHelpOptions = true, versionProvider = GantryVersion.class,
        description = "Run the proxy in the foreground: clients connect to --listen, statements go to the primary "
                + "or a replica of --upstream-db-url by the routing rules. On SIGTERM or Ctrl-C it drains (see "
                + "--drain-timeout-secs) and stops.")
final class RunCommand implements Callable<Integer> {

    private static final Logger LOG = LoggerFactory.getLogger(RunCommand.class);
    /** How long each step of a take-over may wait for the running Gantry's answer. */
    private static final Duration HAND_OVER_STEP_TIMEOUT = Duration.ofSeconds(10);
    /** With {@code --detach}: what a new Gantry may take to start and listen, beyond {@code --take-over-timeout}. */
    private static final Duration DETACHED_START_ALLOWANCE = Duration.ofSeconds(120);

    @CommandLine.Mixin
    ProxyOptions proxy = new ProxyOptions();

    @CommandLine.Mixin
    CdcOptions cdc = new CdcOptions();

    @CommandLine.Mixin
    ClusterOptions cluster = new ClusterOptions();

    @Option(names = ConfigDefaults.CONFIG_FLAG, paramLabel = "FILE",
            description = "Settings file: one key = value per line, the keys being these flags without their dashes, "
                    + "# for comments. Flags given here win over GANTRY_* environment variables (GANTRY_LISTEN for "
                    + "--listen), which win over the file.")
    Path config;

    @Option(names = "--upstream-db-url", paramLabel = "URL[,URL...]",
            description = "The servers: mysql://user[:password]@host:port/database, each with an optional |weight "
                    + "(1..100, default 50). Comma separated, or the flag repeated. The first URL's account is "
                    + "Gantry's service account. Stored in --data-dir on the first start; later only the password "
                    + "is taken from here (it is never stored). A URL without a password takes the one of "
                    + "--upstream-password-file or GANTRY_UPSTREAM_PASSWORD.")
    List<String> upstreamUrls = List.of();

    @Option(names = "--upstream-password-file", paramLabel = "FILE",
            description = "The password for --upstream-db-url entries written without one: the file's content "
                    + "(one line end at its end is dropped). It must be readable by its owner only (chmod 600).")
    Path upstreamPasswordFile;

    @Option(names = "--cdc-db-url", paramLabel = "URL[,URL...]",
            description = "The servers the change stream may read from, same form; default: the upstream list.")
    List<String> cdcUrls = List.of();

    @Option(names = "--cdc-password-file", paramLabel = "FILE",
            description = "The password for --cdc-db-url entries written without one (default: "
                    + "GANTRY_CDC_PASSWORD, else the upstream password); owner-only, as --upstream-password-file.")
    Path cdcPasswordFile;

    @Option(names = "--data-dir", paramLabel = "DIR", defaultValue = "gantry-data",
            description = "Where the Authority keeps server lists, health history and events "
                    + "(default: ${DEFAULT-VALUE}).")
    Path dataDir;

    @Option(names = "--admin-socket", paramLabel = "PATH",
            description = "Where the admin socket is made, for gantry admin and the console: a Unix socket only "
                    + "this OS user can open (default: admin.sock in --data-dir).")
    Path adminSocket;

    @Option(names = "--health-retention", paramLabel = "AGE", defaultValue = "7d",
            description = "How long health samples and events are kept: 7d, 12h, 30m, 90s (default: ${DEFAULT-VALUE}).")
    String healthRetention;

    @Option(names = "--admin-users", paramLabel = "USER[,USER...]", split = ",",
            description = "Accounts allowed to run Gantry's admin statements (default: the service account).")
    List<String> adminUsers = List.of();

    @Option(names = "--drain-timeout-secs", paramLabel = "SECONDS", defaultValue = "30",
            description = "On SIGTERM, how long open transactions may go on before Gantry stops anyway; new clients "
                    + "are refused and idle sessions closed at once; 0 stops at once (default: ${DEFAULT-VALUE}).")
    long drainTimeoutSeconds;

    @Option(names = ConfigDefaults.TAKE_OVER_FLAG,
            description = "Take over from the Gantry running on the same --data-dir, with the same --listen: its "
                    + "listening socket passes to this process first, so no client is refused, then its data "
                    + "directory, then each client session between two statements, with its state and "
                    + "CONNECTION_ID(); TLS sessions end there, as a drain ends them. It stops when it holds no "
                    + "session, or drains what is left after --take-over-timeout. Runs the proxy on "
                    + "--socket-transport epoll. Command line only.")
    boolean takeOver;

    @Option(names = ConfigDefaults.DETACH_FLAG,
            description = "With --take-over: start the Gantry taking over as a process of its own and return once it "
                    + "serves (exit 0, the take-over done) or has stopped (its exit status; its errors on standard "
                    + "error), leaving the running Gantry serving. What systemctl reload runs in the .deb's unit. "
                    + "Command line only.")
    boolean detach;

    @Option(names = "--take-over-timeout", paramLabel = "SECONDS", defaultValue = "30",
            description = "With --take-over: how long sessions of the running Gantry may take to reach a point "
                    + "where they can move (between two statements, outside a transaction); then the running Gantry "
                    + "drains what it still holds, as on SIGTERM (default: ${DEFAULT-VALUE}).")
    long takeOverTimeoutSeconds;

    @Option(names = "--metrics-listen", paramLabel = "HOST:PORT",
            description = "Serve Prometheus metrics at http://HOST:PORT/metrics (default: off). Give a loopback "
                    + "address unless the scraper runs elsewhere: the metrics need no password.")
    String metricsListen;

    @Option(names = "--cache-max-bytes", paramLabel = "BYTES", defaultValue = "268435456",
            description = "Memory all query-cache entries may take together, by their result bytes (default: "
                    + "${DEFAULT-VALUE}, 256 MiB); 0 caches nothing.")
    long cacheMaxBytes;

    @Option(names = "--cache-max-entry-bytes", paramLabel = "BYTES", defaultValue = "1048576",
            description = "A result larger than this is never cached (default: ${DEFAULT-VALUE}, 1 MiB).")
    long cacheMaxEntryBytes;

    @Option(names = "--cache-max-stream-lag-ms", paramLabel = "MS", defaultValue = "1000",
            description = "When the change stream is stopped, down or further behind the primary than this, query "
                    + "caches live by their TTL alone (default: ${DEFAULT-VALUE}).")
    long cacheMaxStreamLagMs;

    @Option(names = "--cache-refresh-workers", paramLabel = "N", defaultValue = "2",
            description = "How many workers run the queries of cache entries due for refresh-ahead (REFRESH EVERY), "
                    + "each one query at a time, on Gantry's own connections; 1 to 64 (default: ${DEFAULT-VALUE}).")
    int cacheRefreshWorkers;

    @Option(names = "--log-format", paramLabel = "text|json", defaultValue = "text",
            description = "Log lines on standard error as text, or as one JSON object per line (timestamp, level, "
                    + "logger, thread, message) for log shippers (default: ${DEFAULT-VALUE}).")
    String logFormat;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** The environment settings and passwords are read from (the process's own, or a test's). */
    private Map<String, String> environment = System.getenv();
    private ConfigDefaults defaults = new ConfigDefaults(environment);
    private ServiceManager serviceManager = ServiceManager.of(environment);

    /**
     * Makes {@code run} take settings the command line does not give from {@code environment} and the
     * {@code --config} file.
     */
    static void useEnvironment(CommandLine runCommandLine, Map<String, String> environment) {
        RunCommand run = runCommandLine.getCommand();
        run.environment = Map.copyOf(environment);
        run.defaults = new ConfigDefaults(run.environment);
        run.serviceManager = ServiceManager.of(run.environment);
        runCommandLine.setDefaultValueProvider(run.defaults);
    }

    @Override
    public Integer call() throws InterruptedException {
        try {
            LogFormat.fromFlag(logFormat).apply();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), defaults.withOrigins(spec, e.getMessage()));
        }
        Gantry.Options options;
        try {
            options = options();
        } catch (CommandLine.ParameterException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), defaults.withOrigins(spec, e.getMessage()));
        }
        if (detach) {
            return DetachedTakeOver.start(ConfigDefaults.DETACH_FLAG,
                    Duration.ofSeconds(takeOverTimeoutSeconds).plus(DETACHED_START_ALLOWANCE));
        }
        StopSignals signals = StopSignals.install();
        Gantry gantry = takeOver ? takeOver(options) : Gantry.start(options);
        signals.serving();
        LOG.info("gantry: serving; SIGTERM or Ctrl-C drains for up to {} s (--drain-timeout-secs), a second signal "
                + "stops at once", drainTimeoutSeconds);
        if (takeOver) {
            // Not the service's main process yet: the Gantry it took over from names it so as it lets go.
            DetachedTakeOver.reportServing(environment);
        } else {
            InetSocketAddress listening = gantry.address();
            serviceManager.tell("READY=1", "STATUS=serving on " + listening.getHostString() + ":"
                    + listening.getPort());
        }
        String why = awaitStop(signals, gantry);
        // After a signal, a second one stops at once; after a take-over, the first one does.
        if (signals.first().isDone()) {
            serviceManager.tell("STOPPING=1", "STATUS=draining: " + why);
            drainThenClose(gantry, why, signals.second(), "a second stop signal");
        } else {
            handOverTheService(gantry.takenOver().join());
            drainThenClose(gantry, why, signals.first(), "a stop signal");
        }
        return 0;
    }

    /**
     * Under systemd the Gantry taking over becomes the service's main process now, before this one can exit: the
     * hand-over is done, so this one will not take anything back, and systemd would count the service stopped when
     * its main process exits. Told by this process, which is still the main one, as {@code NotifyAccess=main} allows.
     */
    private void handOverTheService(Successor successor) {
        if (!serviceManager.present()) {
            return;
        }
        if (successor.pid().isEmpty()) {
            LOG.warn("systemd: the kernel did not name {}, so systemd still has this process as the service's main "
                    + "one and counts the service stopped when it exits", successor.name());
            return;
        }
        serviceManager.tell("MAINPID=" + successor.pid().getAsLong(),
                "STATUS=serving in process " + successor.pid().getAsLong() + " (taken over)");
        LOG.info("systemd: told it that {} is the service's main process from now on", successor.name());
    }

    /**
     * Starts by taking over from the Gantry running on {@code --data-dir}. Closing the hand-over connection before
     * this one listens (a failed start) makes the running one take back what it lent and serve on.
     */
    private Gantry takeOver(Gantry.Options options) throws InterruptedException {
        try (TakeOver from = TakeOver.connect(dataDir, HAND_OVER_STEP_TIMEOUT)) {
            Gantry gantry = Gantry.takeOver(options, from);
            try {
                gantry.moveSessionsFrom(from, Duration.ofSeconds(takeOverTimeoutSeconds));
            } catch (InterruptedException | RuntimeException e) {
                gantry.close();
                throw e;
            }
            return gantry;
        }
    }

    /** Waits for what ends this Gantry: a stop signal, or a Gantry that took over from it; says which. */
    private static String awaitStop(StopSignals signals, Gantry gantry) throws InterruptedException {
        try {
            return (String) CompletableFuture.anyOf(signals.first().thenApply(signal -> signal + " received"),
                    gantry.takenOver().thenApply(by -> "taken over by " + by.name())).get();
        } catch (ExecutionException e) {
            throw new IllegalStateException(e);
        }
    }

    private Gantry.Options options() {
        if (drainTimeoutSeconds < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--drain-timeout-secs must be 0 or more, not "
                    + drainTimeoutSeconds);
        }
        if (detach && !takeOver) {
            throw new CommandLine.ParameterException(spec.commandLine(), ConfigDefaults.DETACH_FLAG + " goes with "
                    + ConfigDefaults.TAKE_OVER_FLAG + ": it starts the Gantry taking over as a process of its own");
        }
        if (takeOverTimeoutSeconds < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--take-over-timeout must be 0 or more, not "
                    + takeOverTimeoutSeconds);
        }
        ProxyConfig config = proxy.toConfig(spec.commandLine());
        List<UpstreamUrl> upstream = parse("--upstream-db-url", upstreamUrls);
        if (upstream.isEmpty()) {
            throw missingUpstreams();
        }
        List<UpstreamUrl> cdcList = parse("--cdc-db-url", cdcUrls);
        warnOfWrittenPasswords("--upstream-db-url", upstream, "--upstream-password-file", "GANTRY_UPSTREAM_PASSWORD");
        warnOfWrittenPasswords("--cdc-db-url", cdcList, "--cdc-password-file", "GANTRY_CDC_PASSWORD");
        Optional<String> upstreamPassword = password("--upstream-password-file", upstreamPasswordFile,
                Secrets.UPSTREAM_PASSWORD_VARIABLE);
        Optional<String> cdcPassword = password("--cdc-password-file", cdcPasswordFile, Secrets.CDC_PASSWORD_VARIABLE);
        upstream = Secrets.fillIn(upstream, upstreamPassword);
        cdcList = Secrets.fillIn(cdcList, cdcPassword.or(() -> upstreamPassword));
        String database = (cdcList.isEmpty() ? upstream : cdcList).stream().findFirst().map(UpstreamUrl::database)
                .orElse("");
        ClusterSettings clusterSettings = cluster.toSettings(spec.commandLine(), config.listen());
        if (takeOver) {
            config = takeOverConfig(config);
        }
        return new Gantry.Options(config, upstream, cdcList, dataDir, proxy.healthInterval(),
                retention(), Set.copyOf(adminUsers), cdc.toSettings(spec.commandLine(), config, database))
                .withAdminSocket(adminSocket)
                .withMetricsListen(metricsListen())
                .withCaches(cacheSettings())
                .withCluster(clusterSettings);
    }

    /**
     * The proxy's settings for {@code --take-over}: the adopted listening socket becomes a channel only under
     * epoll (Netty's io_uring and NIO channels cannot be made from a descriptor), and the proxy's client and backend
     * sockets share its event loops, so the whole proxy runs on epoll.
     */
    private ProxyConfig takeOverConfig(ProxyConfig config) {
        if (!proxy.socketTransport.strip().equalsIgnoreCase(SocketTransport.AUTO)
                && SocketTransport.parse(proxy.socketTransport) != SocketTransport.EPOLL) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--take-over runs the proxy on "
                    + "--socket-transport epoll, the one transport that can accept on a listening socket passed from "
                    + "another process; give epoll or auto, not " + proxy.socketTransport);
        }
        try {
            return config.withSocketTransport(SocketTransport.EPOLL);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--take-over: " + e.getMessage());
        }
    }

    /**
     * Said before anything else is checked: without the servers every later complaint (the change stream's missing
     * database, an empty list) would be about a consequence.
     */
    private CommandLine.ParameterException missingUpstreams() {
        CommandLine.Model.OptionSpec option = spec.findOption("--upstream-db-url");
        return new CommandLine.ParameterException(spec.commandLine(), "--upstream-db-url is missing: give the servers "
                + "as mysql://user@host:port/database (comma separated, or the flag repeated) on the command line, as "
                + ConfigDefaults.key(option) + " = ... in the " + ConfigDefaults.CONFIG_FLAG + " file, or in "
                + ConfigDefaults.variable(option) + ". Every start needs it: the first stores the list in --data-dir, "
                + "later ones take the service account's password from it (it is never stored)");
    }

    private CacheSettings cacheSettings() {
        try {
            return new CacheSettings(cacheMaxBytes, cacheMaxEntryBytes, Duration.ofMillis(cacheMaxStreamLagMs),
                    cacheRefreshWorkers);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    private InetSocketAddress metricsListen() {
        try {
            return metricsListen == null ? null : hostAndPort("--metrics-listen", metricsListen);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    /**
     * Waits for the open transactions, up to {@code --drain-timeout-secs} or {@code stopSignal}, then stops
     * everything (the change stream saves its position on the way, unless it was handed to a Gantry taking over).
     *
     * @param why what started the drain, for the log ("SIGTERM received", "taken over by ...")
     */
    private void drainThenClose(Gantry gantry, String why, CompletableFuture<?> stopSignal, String stopSignalName)
            throws InterruptedException {
        long started = System.nanoTime();
        LOG.info("gantry: {}: draining for up to {} s (--drain-timeout-secs); {} stops at once", why,
                drainTimeoutSeconds, stopSignalName);
        CompletableFuture<Void> drained = gantry.drain();
        CompletableFuture<Object> stopNow = CompletableFuture.anyOf(drained, stopSignal);
        try {
            stopNow.get(drainTimeoutSeconds, TimeUnit.SECONDS);
        } catch (TimeoutException | ExecutionException e) {
            // timed out: the sessions still in a transaction are cut below
        }
        double seconds = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started) / 1000.0;
        if (drained.isDone()) {
            LOG.info("gantry: drained in {} s: no transaction was open any more; stopping",
                    String.format(java.util.Locale.ROOT, "%.1f", seconds));
        } else {
            LOG.warn("gantry: stopping with {} sessions still inside a transaction ({}); they are cut and their "
                    + "transactions rolled back by the servers", gantry.busySessions(),
                    stopSignal.isDone() ? stopSignalName : "--drain-timeout-secs " + drainTimeoutSeconds
                            + " passed");
        }
        gantry.close();
        LOG.info("gantry: stopped");
    }

    private Optional<String> password(String flag, Path file, String variable) {
        try {
            return Secrets.password(flag, file, variable, environment);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    /** A password written in a URL on the command line is visible to every local user in {@code ps}. */
    private void warnOfWrittenPasswords(String flag, List<UpstreamUrl> urls, String fileFlag, String variable) {
        if (Secrets.anyWrittenPassword(urls) && spec.commandLine().getParseResult().hasMatchedOption(flag)) {
            LOG.warn("gantry: {} holds a password on the command line, where every local user sees it (ps, "
                    + "/proc/PID/cmdline); write the URL without it and use {} or {}, or the --config file", flag,
                    fileFlag, variable);
        }
    }

    private List<UpstreamUrl> parse(String flag, List<String> values) {
        if (values.isEmpty()) {
            return List.of();
        }
        try {
            return UpstreamUrl.parseList(values);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), flag + ": " + e.getMessage());
        }
    }

    private Retention retention() {
        try {
            return Retention.parse(healthRetention);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--health-retention: " + e.getMessage());
        }
    }

    /** {@code HOST:PORT} ({@code [v6]:PORT} too) of a flag, or an error naming the flag and what was wrong. */
    static InetSocketAddress hostAndPort(String flag, String value) {
        int colon = value.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException(flag + " must be HOST:PORT, not '" + value + "'");
        }
        String host = value.substring(0, colon).replace("[", "").replace("]", "");
        try {
            int port = Integer.parseInt(value.substring(colon + 1));
            if (port < 0 || port > 65535) {
                throw new NumberFormatException();
            }
            return new InetSocketAddress(host, port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + ": '" + value.substring(colon + 1)
                    + "' is not a port number (0..65535)");
        }
    }
}
