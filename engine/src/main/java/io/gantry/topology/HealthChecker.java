package io.gantry.topology;

import io.gantry.authority.HealthSample;
import io.gantry.events.EngineEvent;
import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The health loop: every interval it checks each server with the service account (JDBC, on its own small executor,
 * never on a Netty event loop), reads {@code read_only} and whom a replica replicates from, and updates
 * {@link Upstreams}: health, role, and which server is the primary. Between rounds anyone who sees a sign that the
 * topology changed (the primary refused a write as read-only, a server was lost) asks for a round at once
 * ({@link Upstreams#requestCheck}); such requests coalesce, and while no primary is known rounds come more often
 * ({@link RoundSchedule}), so a promotion or a server coming back is seen within a second.
 *
 * <p>Each check opens a new connection and times it (connect and login: {@code connect_ms}, what a client's first
 * statement waits for when Gantry connects for it; once the proxy runs, with the proxy's own login code and TLS
 * engine, {@link #timeLoginsWith}), and pings the server on a connection kept from round to round,
 * the round trip ({@code rtt_ms}): a ping on a connection that is already logged in is what a statement costs on the
 * wire, while a new connection's login costs many round trips and the server's authentication work. Every check is
 * bounded by the check timeout in all (connect, TLS, login; then each answer on the kept connection), so a server
 * that stopped answering (SIGSTOP, a hung host) is down within one interval and one timeout. The kept connection
 * is replaced by the new one when it does not answer (the server restarted or killed it), so only a server that
 * answers neither is down.
 *
 * <p>A refusal is not a death: a server that refuses the new connection for being full ({@code 1040}, {@code 1203})
 * or refuses the service account is checked on its kept connection, and without one keeps what was known of it; it
 * is never marked down for that, which would cost every session on it.
 *
 * <p>Primary rule: the one writable server. Several writable servers at once are never guessed between: there is no
 * primary (writes wait, then fail with an error naming them) until all but one are read-only, and none of them is
 * shown as the primary.
 */
public final class HealthChecker implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(HealthChecker.class);

    private final Upstreams upstreams;
    private final Duration checkTimeout;
    private final RoundSchedule schedule;
    /** Set as Gantry stops: a round cut short by it (its checks interrupted) says nothing about the servers. */
    private volatile boolean closing;
    private final ExecutorService probes;
    /** Each server's connection for pings and the check's queries, kept across rounds. */
    private final KeptConnections<Connection> kept = new KeptConnections<>(HealthChecker::closeQuietly);
    /** How a round's new connection is opened and timed while a kept one exists; null: a JDBC connection. */
    private volatile LoginCheck logins;

    /**
     * @param checkTimeout bound on each check's new connection, connect and login together, and on each answer on
     *                     the kept connection
     */
    public HealthChecker(Upstreams upstreams, Duration checkTimeout) {
        this.upstreams = upstreams;
        this.checkTimeout = checkTimeout;
        this.schedule = new RoundSchedule(this::checkNow, () -> upstreams.primaryOrNull() != null);
        this.probes = Executors.newFixedThreadPool(8, named("gantry-probe"));
        upstreams.setListReplacer(this::replaceList);
        upstreams.setHealthRounds(schedule);
    }

    /**
     * From now on, a round's new connection to a server that has a kept one is {@code check}'s: the proxy's own login
     * code and TLS engine, so {@code connect_ms} is what a session's new backend connection costs, and the checks
     * leave the JDK's TLS handshake (a full one every round: TLS 1.3 sessions are not resumed by MariaDB) to the kept
     * connections, opened once. Null: JDBC connections again (the proxy stopped).
     */
    public void timeLoginsWith(LoginCheck check) {
        this.logins = check;
    }

    /** Runs a round every {@code interval} from now on, and more often when needed ({@link RoundSchedule}). */
    public void start(Duration interval) {
        schedule.start(interval);
    }

    /** One health round over every server, in parallel; returns when all checks are done. */
    public synchronized void checkNow() {
        schedule.roundStarted();
        try {
            Map<UpstreamServer, Probe> results = probeAll(upstreams.servers());
            if (closing) {
                return;
            }
            Upstreams.PrimaryChoice choice = choosePrimary(results);
            recordChecks(results, choice);
            upstreams.setPrimary(choice.primary(), choice.reasonWhenNone());
            afterRound(results);
        } finally {
            schedule.roundFinished();
        }
    }

    /**
     * Applies a new upstream list ({@code ALTER GANTRY CHANGE UPSTREAM}) as one health round: every server of the
     * new list is checked and the primary chosen among them first, and only then does the list take effect, with
     * that primary. Runs between rounds (never at the same time as one), so a round of the old list cannot undo it.
     */
    synchronized void replaceList(List<UpstreamUrl> urls, String reason) {
        schedule.roundStarted();
        try {
            List<UpstreamServer> next = upstreams.prepare(urls);
            Map<UpstreamServer, Probe> results = probeAll(next);
            Upstreams.PrimaryChoice choice = choosePrimary(results);
            recordChecks(results, choice);
            upstreams.install(next, choice, reason);
            afterRound(results);
        } finally {
            schedule.roundFinished();
        }
    }

    private Map<UpstreamServer, Probe> probeAll(List<UpstreamServer> servers) {
        List<CompletableFuture<Optional<Probe>>> checks = new ArrayList<>();
        for (UpstreamServer server : servers) {
            checks.add(CompletableFuture.supplyAsync(() -> probe(server), probes));
        }
        Map<UpstreamServer, Probe> results = new HashMap<>();
        for (CompletableFuture<Optional<Probe>> check : checks) {
            check.join().ifPresent(p -> results.put(p.server(), p));
        }
        return results;
    }

    /**
     * Records each good check with the role the round gave it: the chosen primary, a replica, or writable without
     * being the primary. A refused check changes nothing of what was known.
     */
    private void recordChecks(Map<UpstreamServer, Probe> results, Upstreams.PrimaryChoice choice) {
        for (Probe probe : results.values()) {
            if (probe.refused()) {
                continue;
            }
            Role role = !probe.writable() ? Role.REPLICA
                    : probe.server() == choice.primary() ? Role.PRIMARY : Role.WRITABLE;
            upstreams.markChecked(probe.server(), role, probe.rttMicros(), probe.connectMicros());
        }
    }

    private void afterRound(Map<UpstreamServer, Probe> results) {
        kept.retain(upstreams.servers());
        checkReplication(results);
        upstreams.events().publish(new EngineEvent.HealthRound(samples(upstreams.servers())));
    }

    /** What the round found about each server, for the health history; broken and diverged replicas are events. */
    private List<HealthSample> samples(List<UpstreamServer> servers) {
        Instant at = upstreams.clock().instant();
        List<HealthSample> samples = new ArrayList<>(servers.size());
        for (UpstreamServer server : servers) {
            boolean answered = server.isReachable();
            samples.add(new HealthSample(at, server.address(), answered ? HealthSample.UP : HealthSample.DOWN,
                    server.role().name().toLowerCase(Locale.ROOT), answered ? server.rttMillis() : null,
                    answered && server.lagMillis() >= 0 ? server.lagMillis() : null,
                    answered ? server.connectMillis() : null));
        }
        return samples;
    }

    private Optional<Probe> probe(UpstreamServer server) {
        long started = System.nanoTime();
        Connection fresh = null;
        SQLException refusal = null;
        LoginCheck check = kept.get(server) == null ? null : logins;
        try {
            if (check != null) {
                try {
                    check.login(server, checkTimeout);
                } catch (RejectedExecutionException stopping) {
                    // The proxy is stopping under this round: a JDBC connection times the login instead.
                    fresh = ServiceConnections.openWithin(server.url(), checkTimeout);
                }
            } else {
                fresh = ServiceConnections.openWithin(server.url(), checkTimeout);
            }
        } catch (SQLException e) {
            if (!isRefusal(e)) {
                return down(server, e);
            }
            refusal = e;
        }
        long connectMicros = refusal != null ? server.connectMicros() : (System.nanoTime() - started) / 1000;
        try {
            Ping ping = refusal != null ? pingKept(server, refusal) : ping(server, fresh);
            if (ping == null) {
                return refused(server, refusal);
            }
            try (Statement statement = ping.connection().createStatement()) {
                boolean readOnly;
                Flavour flavour;
                String version;
                try (ResultSet rows = statement.executeQuery(
                        "SELECT @@GLOBAL.read_only, VERSION(), @@GLOBAL.max_connections")) {
                    rows.next();
                    readOnly = rows.getInt(1) != 0;
                    version = rows.getString(2);
                    server.maxConnectionsRead(rows.getInt(3));
                    flavour = version.contains("MariaDB") ? Flavour.MARIADB : Flavour.MYSQL;
                }
                GtidSet position = position(statement, flavour, server);
                ReplicaStatus replication = ReplicaStatus.read(statement, ReplicaStatusQuery.forVersion(version));
                return Optional.of(new Probe(server, !readOnly, replication.source(), position,
                        replication.brokenBecause(), ping.micros(), connectMicros, false));
            }
        } catch (SQLException e) {
            if (refusal != null) {
                // It refused the new connection and the kept one failed: it answers, so it is not down.
                kept.drop(server);
                return refused(server, refusal);
            }
            return down(server, e);
        }
    }

    /**
     * A refusal, not an outage: too many connections ({@code 1040}), the account's {@code max_user_connections}
     * ({@code 1203}) or its hourly limits ({@code 1226}), or the service account refused ({@code 1044}, {@code 1045}).
     */
    static boolean isRefusal(SQLException e) {
        int code = e.getErrorCode();
        return AccountLookup.isFull(e) || code == 1226 || code == 1044 || code == 1045;
    }

    /** The kept connection of a server that refused a new one, pinged; null when there is none. */
    private Ping pingKept(UpstreamServer server, SQLException refusal) throws SQLException {
        Connection held = kept.get(server);
        if (held == null) {
            return null;
        }
        LOG.atWarn().addKeyValue("server", server.address())
                .log("topology: {} refused the health check's new connection ({}); checked on the kept one",
                        server.address(), describe(refusal));
        return new Ping(held, ping(held));
    }

    /** A server that refused the check and could not be checked otherwise keeps what was known of it. */
    private Optional<Probe> refused(UpstreamServer server, SQLException refusal) {
        Role known = server.role();
        LOG.atWarn().addKeyValue("server", server.address())
                .log("topology: {} refused the health check ({}); it answers, so it is not marked down, and keeps "
                        + "what was known of it ({})", server.address(), describe(refusal), server);
        if (known == Role.UNKNOWN || !server.isReachable()) {
            return Optional.empty();
        }
        return Optional.of(new Probe(server, known != Role.REPLICA, "", null, null, -1, -1, true));
    }

    private Optional<Probe> down(UpstreamServer server, SQLException e) {
        kept.drop(server);
        if (!closing) {
            upstreams.confirmDown(server, "health check failed: " + describe(e));
        }
        return Optional.empty();
    }

    /** A ping's round trip in microseconds, on the connection the rest of the check then uses. */
    private record Ping(Connection connection, long micros) {
    }

    /**
     * Pings the server on its kept connection, and closes the JDBC connection the round just opened, if it opened one
     * ({@code fresh}; null when the login was {@link LoginCheck}'s). A new JDBC connection takes the kept one's
     * place when there is none (the first round, or the last check failed) or when the kept one does not answer (the
     * server restarted, or killed it): a server that accepts new connections is not down for the loss of an old one.
     *
     * @throws SQLException when the new connection does not answer either; it is then the kept one, dropped with it
     */
    private Ping ping(UpstreamServer server, Connection fresh) throws SQLException {
        Connection held = kept.get(server);
        if (held != null) {
            try {
                long micros = ping(held);
                if (fresh != null) {
                    closeQuietly(fresh);
                }
                return new Ping(held, micros);
            } catch (SQLException e) {
                LOG.debug("topology: the kept health-check connection to {} does not answer ({}); a new one takes "
                        + "its place", server.address(), e.toString());
            }
        }
        if (fresh == null) {
            fresh = ServiceConnections.openWithin(server.url(), checkTimeout);
        }
        kept.keep(server, fresh);
        fresh.setNetworkTimeout(Runnable::run, Math.toIntExact(checkTimeout.toMillis()));
        return new Ping(fresh, ping(fresh));
    }

    /** Times a {@code COM_PING}: mysql-connector-j sends one for a statement that starts with its ping marker. */
    private static long ping(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            long started = System.nanoTime();
            statement.execute("/* ping */ SELECT 1");
            return (System.nanoTime() - started) / 1000;
        }
    }

    private static void closeQuietly(Connection connection) {
        try {
            connection.close();
        } catch (SQLException e) {
            // a connection that fails on closing is gone anyway
        }
    }

    /**
     * One line an operator can act on: the driver's "Communications link failure" and its paragraph say less than
     * the socket error underneath ("Connection refused", "connect timed out").
     */
    static String describe(SQLException e) {
        Throwable deepest = e;
        while (deepest.getCause() != null && deepest.getCause() != deepest) {
            deepest = deepest.getCause();
        }
        String message = deepest == e || deepest.getMessage() == null
                ? e.getMessage()
                : firstLine(e.getMessage()) + " (" + deepest.getMessage() + ")";
        return firstLine(message);
    }

    static String firstLine(String text) {
        if (text == null) {
            return "unknown error";
        }
        int newline = text.indexOf('\n');
        return (newline < 0 ? text : text.substring(0, newline)).trim();
    }

    /**
     * The executed GTID set, or null if it cannot be read (the check still counts; divergence is then not judged).
     * Lag comes from the {@link GtidSampler}, which reads positions far more often.
     */
    static GtidSet position(Statement statement, Flavour flavour, UpstreamServer server) {
        String sql = flavour == Flavour.MARIADB ? "SELECT @@GLOBAL.gtid_current_pos" : "SELECT @@GLOBAL.gtid_executed";
        try (ResultSet rows = statement.executeQuery(sql)) {
            rows.next();
            String text = rows.getString(1);
            return GtidSet.parse(text == null ? "" : text, flavour);
        } catch (SQLException | IllegalArgumentException e) {
            LOG.debug("topology: cannot read the GTID position of {}: {}", server.address(), e.toString());
            return null;
        }
    }

    /**
     * Marks each replica broken, diverged or sound. Divergence is judged against a primary sample taken after the
     * replica's: the round's own primary sample may be older than a replica's (they are read in parallel, and a
     * replica can apply a write the primary made in between), so a replica it does not contain is compared again
     * with a fresh sample of the primary, read after every probe of the round has finished. Only a replica the
     * fresh sample does not contain holds transactions the primary lacks.
     */
    private void checkReplication(Map<UpstreamServer, Probe> results) {
        UpstreamServer primary = upstreams.primary().orElse(null);
        Probe primaryProbe = primary == null ? null : results.get(primary);
        FreshPrimary fresh = new FreshPrimary(primary, primaryProbe);
        for (Probe probe : results.values()) {
            UpstreamServer server = probe.server();
            if (server == primary || probe.writable() || probe.refused()) {
                upstreams.replicationChecked(server, null);
                continue;
            }
            if (probe.brokenBecause() != null) {
                upstreams.replicationChecked(server, new ReplicationProblem(Health.BROKEN, probe.brokenBecause()));
                continue;
            }
            upstreams.replicationChecked(server, divergence(probe, primaryProbe, fresh));
        }
    }

    /**
     * {@link Health#DIVERGED} when the replica holds transactions the primary lacks, null when it does not. When it
     * cannot be told (no primary, a position that cannot be read), a replica known diverged stays so until it is
     * shown sound, and any other is taken as sound.
     */
    private static ReplicationProblem divergence(Probe replica, Probe primaryProbe, FreshPrimary fresh) {
        ReplicationProblem known = replica.server().replicationProblem();
        ReplicationProblem unknown = known != null && known.health() == Health.DIVERGED ? known : null;
        if (primaryProbe == null || primaryProbe.position() == null || replica.position() == null
                || replica.position().flavour() != primaryProbe.position().flavour()) {
            return unknown;
        }
        if (primaryProbe.position().contains(replica.position())) {
            return null;
        }
        GtidSet later = fresh.get();
        if (later == null) {
            return unknown;
        }
        if (later.contains(replica.position())) {
            return null;
        }
        return new ReplicationProblem(Health.DIVERGED, "it has executed transactions the primary "
                + primaryProbe.server().address() + " lacks (errant GTIDs; the replica is at " + replica.position()
                + ", the primary at " + later + ")");
    }

    /** The primary's executed set read once, lazily, after the round's probes; null if it cannot be read. */
    private final class FreshPrimary {
        private final UpstreamServer primary;
        private final Probe probe;
        private boolean read;
        private GtidSet position;

        FreshPrimary(UpstreamServer primary, Probe probe) {
            this.primary = primary;
            this.probe = probe;
        }

        GtidSet get() {
            if (!read) {
                read = true;
                // The probes of the round are done: the primary's kept connection is free.
                Connection connection = kept.get(primary);
                if (connection != null) {
                    try (Statement statement = connection.createStatement()) {
                        position = position(statement, probe.position().flavour(), primary);
                    } catch (SQLException e) {
                        LOG.debug("topology: cannot sample the primary {} again: {}", primary.address(),
                                e.toString());
                    }
                }
            }
            return position;
        }
    }

    /**
     * The one writable server, or none with the reason: none answers, none is writable, or several are (never
     * guessed between: one of them may be an old primary still taking writes that the others will never see).
     */
    static Upstreams.PrimaryChoice choosePrimary(Map<UpstreamServer, Probe> results) {
        List<UpstreamServer> writable = results.values().stream()
                .filter(Probe::writable).map(Probe::server).toList();
        if (writable.size() == 1) {
            return new Upstreams.PrimaryChoice(writable.get(0), "");
        }
        if (writable.isEmpty()) {
            return new Upstreams.PrimaryChoice(null, results.isEmpty()
                    ? "no server answers the health check"
                    : "no writable server (every server that answers has read_only=ON)");
        }
        return new Upstreams.PrimaryChoice(null, "several servers are writable at once (" + String.join(" and ",
                writable.stream().map(UpstreamServer::address).sorted().toList())
                + "); Gantry sends writes to neither until all but one have read_only=ON");
    }

    /**
     * Stops the loop and closes the kept connections, after the round that runs now if it ends within the check
     * timeout: closing a connection a check still uses would mark its server down as Gantry stops.
     */
    @Override
    public void close() {
        closing = true;
        schedule.close();
        probes.shutdownNow();
        try {
            probes.awaitTermination(checkTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        kept.close();
    }

    private static ThreadFactory named(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, prefix + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /**
     * What one check found.
     *
     * @param refused the server refused the check (full, or the account): {@code writable} is what was known of
     *                it before, and nothing else is known
     */
    record Probe(UpstreamServer server, boolean writable, String source, GtidSet position, String brokenBecause,
                 long rttMicros, long connectMicros, boolean refused) {
    }
}
