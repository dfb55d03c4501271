package io.gantry.cli;

import io.gantry.Gantry;
import io.gantry.authority.Retention;
import io.gantry.cache.CacheSettings;
import io.gantry.cluster.ClusterSettings;
import io.gantry.proxy.login.LoginLimits;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.proxy.transport.SocketTransport;
import io.gantry.route.ReadBalance;
import io.gantry.route.ReadGuarantees;
import io.gantry.route.RoutingConfig;
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

    /**
     * Makes {@code run} take settings the command line does not give from {@code environment} and the
     * {@code --config} file.
     */
    static void useEnvironment(CommandLine runCommandLine, Map<String, String> environment) {
        RunCommand run = runCommandLine.getCommand();
        run.environment = Map.copyOf(environment);
        run.defaults = new ConfigDefaults(run.environment);
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
        Gantry gantry = Gantry.start(options);
        StopSignals signals = StopSignals.install();
        String signal = signals.awaitFirst();
        drainThenClose(gantry, signal, signals);
        return 0;
    }

    private Gantry.Options options() {
        if (drainTimeoutSeconds < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--drain-timeout-secs must be 0 or more, not "
                    + drainTimeoutSeconds);
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
        return new Gantry.Options(config, upstream, cdcList, dataDir, proxy.healthInterval(),
                retention(), Set.copyOf(adminUsers), cdc.toSettings(spec.commandLine(), config, database))
                .withAdminSocket(adminSocket)
                .withMetricsListen(metricsListen())
                .withCaches(cacheSettings())
                .withCluster(clusterSettings(config));
    }

    private ClusterSettings clusterSettings(ProxyConfig config) {
        try {
            return cluster.toSettings(config.listen());
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
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
     * Waits for the open transactions, up to {@code --drain-timeout-secs} or a second stop signal, then stops
     * everything (the change stream saves its position on the way).
     */
    private void drainThenClose(Gantry gantry, String signal, StopSignals signals) throws InterruptedException {
        long started = System.nanoTime();
        LOG.info("gantry: {} received: draining for up to {} s (--drain-timeout-secs); a second signal stops at once",
                signal, drainTimeoutSeconds);
        CompletableFuture<Void> drained = gantry.drain();
        CompletableFuture<Object> stopNow = CompletableFuture.anyOf(drained, signals.second());
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
                    signals.second().isDone() ? "a second stop signal" : "--drain-timeout-secs " + drainTimeoutSeconds
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

    /** The proxy flags shared by {@code run} and {@code demo}. */
    static final class ProxyOptions {

        @Option(names = "--listen", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:3307",
                description = "Where clients connect (default: ${DEFAULT-VALUE}).")
        String listen;

        @Option(names = "--master-preferred", description = "Send reads to the primary too (hints still apply).")
        boolean masterPreferred;

        @Option(names = "--read-master-percentage", paramLabel = "0..100", defaultValue = "0",
                description = "Share of reads sent to the primary anyway (default: ${DEFAULT-VALUE}).")
        int readMasterPercentage;

        @Option(names = "--read-balance", paramLabel = "session|statement", defaultValue = "session",
                description = "session: one replica per client session; statement: a replica per statement "
                        + "(default: ${DEFAULT-VALUE}).")
        String readBalance;

        @Option(names = "--connection-retention-ms", paramLabel = "MS", defaultValue = "256",
                description = "How long a session keeps an idle backend connection for its next statement before "
                        + "it goes to the pool (--multiplex on), or, with --multiplex off and "
                        + "--read-balance=statement, is closed (replicas only) (default: ${DEFAULT-VALUE}).")
        long connectionRetentionMs;

        @CommandLine.Mixin
        PoolOptions pool = new PoolOptions();

        @Option(names = "--max-client-connections", paramLabel = "N", defaultValue = "1000",
                description = "Client sessions at once; the excess is refused with MySQL error 1040 "
                        + "(default: ${DEFAULT-VALUE}).")
        int maxClientConnections;

        @Option(names = "--event-loop-threads", paramLabel = "N",
                description = "I/O threads carrying the client sessions and their server connections, 1 to "
                        + ProxyConfig.MAX_EVENT_LOOP_THREADS + " (default: one per core). Fewer leave cores to "
                        + "servers or clients on the same machine (as HAProxy's nbthread).")
        Integer eventLoopThreads;

        @Option(names = "--socket-transport", paramLabel = "NAME", defaultValue = SocketTransport.AUTO,
                description = "The sockets' I/O interface: auto (default: io_uring where the kernel allows it, else "
                        + "epoll, else nio), io_uring, epoll or nio (the JDK's, on any system).")
        String socketTransport;

        @Option(names = "--upstream-connect-timeout", paramLabel = "SECONDS", defaultValue = "5",
                description = "Bound on connecting to a server (default: ${DEFAULT-VALUE}).")
        double connectTimeoutSeconds;

        @Option(names = "--upstream-connect-retries", paramLabel = "N", defaultValue = "3",
                description = "How many more times Gantry's own connection attempts (startup checks, online list "
                        + "changes, the change stream) try a server that does not answer before giving up or, for "
                        + "the change stream, moving to the next CDC server (default: ${DEFAULT-VALUE}).")
        int connectRetries;

        @CommandLine.Mixin
        FailoverOptions failover = new FailoverOptions();

        @Option(names = "--tls-cert", paramLabel = "PEM",
                description = "Certificate chain (PEM) offered to clients that ask for TLS; needs --tls-key.")
        Path tlsCertificate;

        @Option(names = "--tls-key", paramLabel = "PEM",
                description = "Private key of --tls-cert, PKCS#8 PEM (BEGIN PRIVATE KEY).")
        Path tlsKey;

        @Option(names = "--default-auth-plugin", paramLabel = "PLUGIN", defaultValue = "mysql_native_password",
                description = "Authentication plugin proposed to clients: mysql_native_password or "
                        + "caching_sha2_password (default: ${DEFAULT-VALUE}). Clients may answer with either.")
        String defaultAuthPlugin;

        @Option(names = "--max-allowed-packet", paramLabel = "BYTES", defaultValue = "67108864",
                description = "Largest packet accepted from a client or server; a larger one closes that "
                        + "session with an error (default: ${DEFAULT-VALUE}).")
        int maxAllowedPacket;

        @Option(names = "--connect-timeout-secs", paramLabel = "SECONDS", defaultValue = "10",
                description = "Time a client has to log in, as MariaDB's connect_timeout; past it the connection "
                        + "is closed (default: ${DEFAULT-VALUE}).")
        long handshakeTimeoutSeconds;

        @Option(names = "--max-pending-logins", paramLabel = "N", defaultValue = "256",
                description = "Connections logging in at once, from all hosts; they do not count toward "
                        + "--max-client-connections (default: ${DEFAULT-VALUE}).")
        int maxPendingLogins;

        @Option(names = "--max-pending-logins-per-host", paramLabel = "N", defaultValue = "64",
                description = "Connections logging in at once from one host (default: ${DEFAULT-VALUE}).")
        int maxPendingLoginsPerHost;

        @Option(names = "--max-handshake-errors-until-block", paramLabel = "N", defaultValue = "10",
                description = "Malformed or unfinished handshakes in a row after which a host is refused for "
                        + "--auth-block-secs; refused passwords never block a host; 0 turns blocking off "
                        + "(default: ${DEFAULT-VALUE}).")
        int maxHandshakeErrors;

        @Option(names = "--auth-block-secs", paramLabel = "SECONDS", defaultValue = "60",
                description = "How long a host stays blocked after failed handshakes; FLUSH GANTRY HOSTS lifts it "
                        + "early (default: ${DEFAULT-VALUE}).")
        long authBlockSeconds;

        @Option(names = "--login-delay-after", paramLabel = "N", defaultValue = "3",
                description = "Refused logins in a row of one account from one host after which each refusal is "
                        + "answered after a delay that doubles from 1 s; the right password is never delayed; 0 "
                        + "turns it off (default: ${DEFAULT-VALUE}).")
        int loginDelayAfter;

        @Option(names = "--login-max-delay-ms", paramLabel = "MS", defaultValue = "5000",
                description = "The longest delay of a refused login; less than --connect-timeout-secs "
                        + "(default: ${DEFAULT-VALUE}).")
        long loginMaxDelayMs;

        @Option(names = "--read-from-followers", paramLabel = "true|false", defaultValue = "true", arity = "1",
                description = "Whether reads may go to replicas at all; a session changes it with SET "
                        + "gantry_read_from_followers (default: ${DEFAULT-VALUE}).")
        boolean readFromFollowers;

        @Option(names = "--read-your-writes", paramLabel = "true|false", defaultValue = "true", arity = "1",
                description = "After a session writes, its reads go only to servers known to hold the write; a "
                        + "session changes it with SET gantry_read_your_writes (default: ${DEFAULT-VALUE}).")
        boolean readYourWrites;

        @Option(names = "--follower-read-staleness-ms", paramLabel = "MS", defaultValue = "0",
                description = "A replica serves a read only if it holds everything the primary had this long ago; "
                        + "0 for no such bound, else at least twice --lag-sample-interval-ms; a session changes "
                        + "it with SET gantry_follower_read_staleness_ms (default: ${DEFAULT-VALUE}).")
        long followerReadStalenessMs;

        @Option(names = "--follower-reads-avoid-waiting", paramLabel = "true|false", defaultValue = "true",
                arity = "1", description = "When no replica is known to hold what a session needs, its read goes to "
                        + "the primary; false: it first waits on a replica up to --causal-wait-timeout-ms "
                        + "(default: ${DEFAULT-VALUE}).")
        boolean followerReadsAvoidWaiting;

        @Option(names = "--causal-wait-timeout-ms", paramLabel = "MS", defaultValue = "1000",
                description = "With --follower-reads-avoid-waiting=false, how long a read waits on a replica "
                        + "before it goes to the primary (default: ${DEFAULT-VALUE}).")
        long causalWaitTimeoutMs;

        @Option(names = "--max-stale-read-bound-ms", paramLabel = "MS", defaultValue = "60000",
                description = "No replica lagging more than this serves a read, whatever a session set; 0 turns "
                        + "the check off (default: ${DEFAULT-VALUE}).")
        long maxStaleReadBoundMs;

        @Option(names = "--lag-sample-interval-ms", paramLabel = "MS", defaultValue = "250",
                description = "How often every server's GTID position is sampled for lag and read guarantees "
                        + "(default: ${DEFAULT-VALUE}).")
        long lagSampleIntervalMs;

        ProxyConfig toConfig(CommandLine commandLine) {
            try {
                ReadBalance balance = ReadBalance.fromFlag(readBalance);
                RoutingConfig routing = new RoutingConfig(masterPreferred, readMasterPercentage, balance,
                        readFromFollowers);
                ReadGuarantees guarantees = new ReadGuarantees(readYourWrites,
                        Duration.ofMillis(followerReadStalenessMs), Duration.ofMillis(maxStaleReadBoundMs),
                        Duration.ofMillis(lagSampleIntervalMs), followerReadsAvoidWaiting,
                        Duration.ofMillis(causalWaitTimeoutMs));
                if (connectTimeoutSeconds <= 0) {
                    throw new IllegalArgumentException("--upstream-connect-timeout must be positive, not "
                            + connectTimeoutSeconds);
                }
                if (maxAllowedPacket < 1024) {
                    throw new IllegalArgumentException("--max-allowed-packet must be at least 1024, not "
                            + maxAllowedPacket);
                }
                if ((tlsCertificate == null) != (tlsKey == null)) {
                    throw new IllegalArgumentException("--tls-cert and --tls-key go together");
                }
                return ProxyConfig.defaults(listenAddress())
                        .withRouting(routing)
                        .withMaxClientConnections(maxClientConnections)
                        .withConnectTimeout(Duration.ofMillis((long) (connectTimeoutSeconds * 1000)))
                        .withConnectionRetention(Duration.ofMillis(connectionRetentionMs))
                        .withPool(pool.toSettings())
                        .withMaxPacketSize(maxAllowedPacket)
                        .withTls(tlsCertificate == null ? null : new ProxyConfig.TlsFiles(tlsCertificate, tlsKey))
                        .withDefaultAuthPlugin(defaultAuthPlugin)
                        .withConnectRetries(connectRetries)
                        .withReadGuarantees(guarantees)
                        .withEventLoopThreads(eventLoopThreads == null ? Runtime.getRuntime().availableProcessors()
                                : eventLoopThreads)
                        .withSocketTransport(SocketTransport.parse(socketTransport))
                        .withFailover(failover.toSettings())
                        .withLogin(new LoginLimits(Duration.ofSeconds(handshakeTimeoutSeconds),
                                maxPendingLogins, maxPendingLoginsPerHost, maxHandshakeErrors,
                                Duration.ofSeconds(authBlockSeconds), loginDelayAfter,
                                Duration.ofMillis(loginMaxDelayMs)));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(commandLine, e.getMessage());
            }
        }

        Duration healthInterval() {
            return failover.healthInterval();
        }

        InetSocketAddress listenAddress() {
            return hostAndPort("--listen", listen);
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
