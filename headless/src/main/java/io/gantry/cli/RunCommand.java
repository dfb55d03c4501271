package io.gantry.cli;

import io.gantry.Gantry;
import io.gantry.authority.Retention;
import io.gantry.proxy.ProxyConfig;
import io.gantry.route.ReadBalance;
import io.gantry.route.ReadGuarantees;
import io.gantry.route.RoutingConfig;
import io.gantry.topology.UpstreamUrl;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code gantry run}: the proxy in the foreground until SIGTERM or Ctrl-C. */
@Command(name = "run", mixinStandardHelpOptions = true, versionProvider = GantryVersion.class,
        description = "Run the proxy in the foreground: clients connect to --listen, statements go to the primary "
                + "or a replica of --upstream-db-url by the routing rules. Stops on Ctrl-C or SIGTERM.")
final class RunCommand implements Callable<Integer> {

    @CommandLine.Mixin
    ProxyOptions proxy = new ProxyOptions();

    @CommandLine.Mixin
    CdcOptions cdc = new CdcOptions();

    @Option(names = "--upstream-db-url", paramLabel = "URL[,URL...]",
            description = "The servers: mysql://user:password@host:port/database, each with an optional |weight "
                    + "(1..100, default 50). Comma separated, or the flag repeated. The first URL's account is "
                    + "Gantry's service account. Stored in --data-dir on the first start; later only the password "
                    + "is taken from here (it is never stored).")
    List<String> upstreamUrls = List.of();

    @Option(names = "--cdc-db-url", paramLabel = "URL[,URL...]",
            description = "The servers the change stream may read from, same form; default: the upstream list.")
    List<String> cdcUrls = List.of();

    @Option(names = "--data-dir", paramLabel = "DIR", defaultValue = "gantry-data",
            description = "Where the Authority keeps server lists, health history and events "
                    + "(default: ${DEFAULT-VALUE}).")
    Path dataDir;

    @Option(names = "--admin-socket", paramLabel = "PATH",
            description = "Where the admin socket is made, for gantry admin and the console: a Unix socket only "
                    + "this OS user can open (default: admin.sock in --data-dir).")
    Path adminSocket;

    @Option(names = "--health-retention", paramLabel = "AGE", defaultValue = "7d",
            description = "How long health samples and events are kept: 7d, 12h, 30m ... (default: ${DEFAULT-VALUE}).")
    String healthRetention;

    @Option(names = "--admin-users", paramLabel = "USER[,USER...]", split = ",",
            description = "Accounts allowed to run Gantry's admin statements (default: the service account).")
    List<String> adminUsers = List.of();

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws InterruptedException {
        ProxyConfig config = proxy.toConfig(spec.commandLine());
        List<UpstreamUrl> upstream = parse("--upstream-db-url", upstreamUrls);
        List<UpstreamUrl> cdcList = parse("--cdc-db-url", cdcUrls);
        String database = (cdcList.isEmpty() ? upstream : cdcList).stream().findFirst().map(UpstreamUrl::database)
                .orElse("");
        Gantry.Options options = new Gantry.Options(config, upstream, cdcList, dataDir, proxy.healthInterval(),
                retention(), Set.copyOf(adminUsers), cdc.toSettings(spec.commandLine(), config, database))
                .withAdminSocket(adminSocket);
        Gantry gantry = Gantry.start(options);
        awaitShutdown(gantry);
        return 0;
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

    /** Blocks until the JVM is asked to stop, then closes the proxy. */
    static void awaitShutdown(AutoCloseable... resources) throws InterruptedException {
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            for (AutoCloseable resource : resources) {
                try {
                    resource.close();
                } catch (Exception e) {
                    System.err.println("gantry: error while stopping: " + e.getMessage());
                }
            }
            stopped.countDown();
        }, "gantry-stop"));
        stopped.await();
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
                description = "With --read-balance=statement, how long an idle replica connection is kept for "
                        + "the next statement (default: ${DEFAULT-VALUE}).")
        long connectionRetentionMs;

        @Option(names = "--max-client-connections", paramLabel = "N", defaultValue = "1000",
                description = "Client sessions at once; the excess is refused with MySQL error 1040 "
                        + "(default: ${DEFAULT-VALUE}).")
        int maxClientConnections;

        @Option(names = "--upstream-connect-timeout", paramLabel = "SECONDS", defaultValue = "5",
                description = "Bound on connecting to a server (default: ${DEFAULT-VALUE}).")
        double connectTimeoutSeconds;

        @Option(names = "--upstream-connect-retries", paramLabel = "N", defaultValue = "3",
                description = "How many more times Gantry's own connection attempts (startup checks, online list "
                        + "changes, the change stream) try a server that does not answer before giving up or, for "
                        + "the change stream, moving to the next CDC server (default: ${DEFAULT-VALUE}).")
        int connectRetries;

        @Option(names = "--upstream-health-interval-secs", paramLabel = "SECONDS", defaultValue = "10",
                description = "How often every server is checked and the primary re-detected "
                        + "(default: ${DEFAULT-VALUE}).")
        double healthIntervalSeconds;

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

        @Option(names = "--max-auth-errors-until-block", paramLabel = "N", defaultValue = "10",
                description = "Failed logins in a row after which a host is refused for --auth-block-secs; 0 turns "
                        + "blocking off (default: ${DEFAULT-VALUE}).")
        int maxAuthErrors;

        @Option(names = "--auth-block-secs", paramLabel = "SECONDS", defaultValue = "60",
                description = "How long a host stays blocked after failed logins (default: ${DEFAULT-VALUE}).")
        long authBlockSeconds;

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
                        Duration.ofMillis(lagSampleIntervalMs));
                if (connectTimeoutSeconds <= 0 || healthIntervalSeconds <= 0) {
                    throw new IllegalArgumentException("--upstream-connect-timeout and "
                            + "--upstream-health-interval-secs must be positive");
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
                        .withMaxPacketSize(maxAllowedPacket)
                        .withTls(tlsCertificate == null ? null : new ProxyConfig.TlsFiles(tlsCertificate, tlsKey))
                        .withDefaultAuthPlugin(defaultAuthPlugin)
                        .withConnectRetries(connectRetries)
                        .withReadGuarantees(guarantees)
                        .withLogin(new ProxyConfig.LoginLimits(Duration.ofSeconds(handshakeTimeoutSeconds),
                                maxPendingLogins, maxPendingLoginsPerHost, maxAuthErrors,
                                Duration.ofSeconds(authBlockSeconds)));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(commandLine, e.getMessage());
            }
        }

        Duration healthInterval() {
            return Duration.ofMillis((long) (healthIntervalSeconds * 1000));
        }

        InetSocketAddress listenAddress() {
            int colon = listen.lastIndexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException("--listen must be HOST:PORT, not '" + listen + "'");
            }
            String host = listen.substring(0, colon).replace("[", "").replace("]", "");
            try {
                int port = Integer.parseInt(listen.substring(colon + 1));
                if (port < 0 || port > 65535) {
                    throw new NumberFormatException();
                }
                return new InetSocketAddress(host, port);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--listen: '" + listen.substring(colon + 1)
                        + "' is not a port number (0..65535)");
            }
        }
    }
}
