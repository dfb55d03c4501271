package io.gantry.cli;

import io.gantry.digest.DigestSettings;
import io.gantry.proxy.login.LoginLimits;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.proxy.transport.SocketTransport;
import io.gantry.route.ReadBalance;
import io.gantry.route.ReadGuarantees;
import io.gantry.route.ReadYourWritesScope;
import io.gantry.route.ReplicaPreference;
import io.gantry.route.RoutingConfig;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** The proxy flags shared by {@code run} and {@code demo}. */
final class ProxyOptions {

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

    @Option(names = "--follower-reads-prefer", paramLabel = "closest|weight", defaultValue = "weight",
            description = "How a read picks among the replicas that qualify: weight, by their weights; closest, "
                    + "the lowest round trip the health loop measures (smoothed) first, then by weight among "
                    + "those within --follower-reads-closest-tolerance-ms; a session changes it with SET "
                    + "gantry_follower_reads_prefer (default: ${DEFAULT-VALUE}).")
    String followerReadsPrefer;

    @Option(names = "--follower-reads-closest-tolerance-ms", paramLabel = "MS", defaultValue = "1",
            description = "With --follower-reads-prefer=closest, replicas whose smoothed round trip is within this "
                    + "of the closest one's, or within " + ReplicaPreference.RELATIVE_TOLERANCE_PERCENT
                    + " %% of it when that is more, count as close too (default: ${DEFAULT-VALUE}).")
    double closestToleranceMs;

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

    @Option(names = "--digest-max-shapes", paramLabel = "N", defaultValue = "10000",
            description = "Rows of the statement digests (SHOW GANTRY QUERIES) kept at most; past it the least "
                    + "used shapes are folded into one 'other' row that keeps their counts (default: "
                    + "${DEFAULT-VALUE}).")
    int digestMaxShapes;

    @Option(names = "--digests", paramLabel = "on|off", defaultValue = "on",
            description = "Count every statement under its shape (SHOW GANTRY QUERIES, the metrics' top shapes, the "
                    + "console's Queries tab); off counts nothing and allows no slow-statement log (default: "
                    + "${DEFAULT-VALUE}).")
    String digests;

    @Option(names = "--slow-statement-ms", paramLabel = "MS",
            description = "Write every statement at least this slow (from its arrival to the end of its answer) to "
                    + "the slow-statement log, one JSON object per line; 0 writes every statement (default: no "
                    + "log).")
    Long slowStatementMs;

    @Option(names = "--slow-statement-literals",
            description = "Keep the statements' literal values in the slow-statement log (by default each is "
                    + "written as ?).")
    boolean slowStatementLiterals;

    @Option(names = "--slow-statement-log", paramLabel = "FILE",
            description = "The slow-statement log's file, owner-only, rotated past 64 MiB with four older files "
                    + "kept (default: " + DigestSettings.SLOW_LOG_FILE + " in --data-dir).")
    Path slowStatementLog;

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

    /** Null when not given: then derived from {@code --connect-timeout-secs} ({@link LoginLimits#defaultMaxDelay}). */
    @Option(names = "--login-max-delay-ms", paramLabel = "MS",
            description = "The longest delay of a refused login; less than --connect-timeout-secs (default: "
                    + LoginLimits.DEFAULT_MAX_DELAY_MS + ", or half of --connect-timeout-secs when that is less).")
    Long loginMaxDelayMs;

    @Option(names = "--read-from-followers", paramLabel = "true|false", defaultValue = "true", arity = "1",
            description = "Whether reads may go to replicas at all; a session changes it with SET "
                    + "gantry_read_from_followers (default: ${DEFAULT-VALUE}).")
    boolean readFromFollowers;

    @Option(names = "--read-your-writes", paramLabel = "true|false", defaultValue = "true", arity = "1",
            description = "After a session writes, its reads go only to servers known to hold the write; a "
                    + "session changes it with SET gantry_read_your_writes (default: ${DEFAULT-VALUE}).")
    boolean readYourWrites;

    @Option(names = "--read-your-writes-scope", paramLabel = "session|account|token", defaultValue = "session",
            description = "Whose writes a session's reads must find: its own (session), those of every session of "
                    + "its account through this Gantry (account: a write on one pooled connection, a read on "
                    + "another), or those of every session that names the same SET gantry_causal_token (token). "
                    + "A session changes it with SET gantry_read_your_writes_scope (default: ${DEFAULT-VALUE}).")
    String readYourWritesScope;

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
            Boolean closest = ReplicaPreference.prefersClosest(followerReadsPrefer);
            if (closest == null) {
                throw new IllegalArgumentException("--follower-reads-prefer must be 'closest' or 'weight', got '"
                        + followerReadsPrefer + "'");
            }
            RoutingConfig routing = new RoutingConfig(masterPreferred, readMasterPercentage, balance,
                    readFromFollowers, new ReplicaPreference(closest, Math.round(closestToleranceMs * 1000)));
            ReadYourWritesScope scope = ReadYourWritesScope.named(readYourWritesScope);
            if (scope == null) {
                throw new IllegalArgumentException("--read-your-writes-scope must be 'session', 'account' or "
                        + "'token', got '" + readYourWritesScope + "'");
            }
            ReadGuarantees guarantees = new ReadGuarantees(readYourWrites,
                    Duration.ofMillis(followerReadStalenessMs), Duration.ofMillis(maxStaleReadBoundMs),
                    Duration.ofMillis(lagSampleIntervalMs), followerReadsAvoidWaiting,
                    Duration.ofMillis(causalWaitTimeoutMs), scope, null);
            if (connectTimeoutSeconds <= 0) {
                throw new IllegalArgumentException("--upstream-connect-timeout must be positive, not "
                        + connectTimeoutSeconds);
            }
            if (maxAllowedPacket < 1024) {
                throw new IllegalArgumentException("--max-allowed-packet must be at least 1024, not "
                        + maxAllowedPacket);
            }
            if ((tlsCertificate == null) != (tlsKey == null)) {
                throw new IllegalArgumentException(tlsKey == null
                        ? "--tls-cert " + tlsCertificate + " needs --tls-key, the certificate's private key"
                        : "--tls-key " + tlsKey + " needs --tls-cert, the certificate it is the key of");
            }
            return ProxyConfig.defaults(listenAddress())
                    .withRouting(routing)
                    .withMaxClientConnections(maxClientConnections)
                    .withDigests(new DigestSettings(OnOff.parse("--digests", digests), digestMaxShapes,
                            Optional.ofNullable(slowStatementMs).map(Duration::ofMillis), slowStatementLiterals,
                            Optional.ofNullable(slowStatementLog)))
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
                    .withLogin(loginLimits());
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(commandLine, e.getMessage());
        }
    }

    private LoginLimits loginLimits() {
        Duration handshakeTimeout = Duration.ofSeconds(handshakeTimeoutSeconds);
        Duration maxDelay = loginMaxDelayMs != null ? Duration.ofMillis(loginMaxDelayMs)
                : LoginLimits.defaultMaxDelay(handshakeTimeout);
        return new LoginLimits(handshakeTimeout, maxPendingLogins, maxPendingLoginsPerHost, maxHandshakeErrors,
                Duration.ofSeconds(authBlockSeconds), loginDelayAfter, maxDelay);
    }

    Duration healthInterval() {
        return failover.healthInterval();
    }

    InetSocketAddress listenAddress() {
        return RunCommand.hostAndPort("--listen", listen);
    }
}
