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
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The health loop: every interval it checks each server with the service account (JDBC, on its own small executor,
 * never on a Netty event loop), reads {@code read_only} and whom a replica replicates from, and updates
 * {@link Upstreams}: health, role, and which server is the primary.
 *
 * <p>Each check opens a new connection and times it (connect and login: {@code connect_ms}, what a client's first
 * statement waits for when Gantry connects for it), and pings the server on a connection kept from round to round,
 * the round trip ({@code rtt_ms}): a ping on a connection that is already logged in is what a statement costs on the
 * wire, while a new connection's login costs many round trips and the server's authentication work. The new
 * connection has the bounds of every service connection, and a server that cannot be connected to, or that accepts
 * no login, is down. The kept connection waits at most the connect timeout for an answer; it is replaced by the new
 * one when it does not answer (the server restarted or killed it), so only a server that answers neither is down.
 *
 * <p>Primary rule: the one writable server. If several are writable, the one the replicas replicate from; if that
 * is still ambiguous there is no primary and writes are refused, rather than sent to the wrong server.
 */
public final class HealthChecker implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(HealthChecker.class);

    private final Upstreams upstreams;
    private final Duration connectTimeout;
    private final ScheduledExecutorService scheduler;
    private final ExecutorService probes;
    /** Each server's connection for pings and the check's queries, kept across rounds. */
    private final KeptConnections<Connection> kept = new KeptConnections<>(HealthChecker::closeQuietly);

    /**
     * @param connectTimeout bound on each connection attempt of a check (each read of its login may take twice
     *                       that), and on each answer on the kept connection
     */
    public HealthChecker(Upstreams upstreams, Duration connectTimeout) {
        this.upstreams = upstreams;
        this.connectTimeout = connectTimeout;
        this.scheduler = Executors.newSingleThreadScheduledExecutor(named("gantry-health"));
        this.probes = Executors.newFixedThreadPool(8, named("gantry-probe"));
        upstreams.setListReplacer(this::replaceList);
    }

    /** Runs one round now and then every {@code interval}. */
    public void start(Duration interval) {
        scheduler.scheduleWithFixedDelay(this::roundSafely, interval.toMillis(), interval.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    /** One health round over every server, in parallel; returns when all checks are done. */
    public synchronized void checkNow() {
        Map<UpstreamServer, Probe> results = probeAll(upstreams.servers());
        Upstreams.PrimaryChoice choice = choosePrimary(results);
        upstreams.setPrimary(choice.primary(), choice.reasonWhenNone());
        afterRound(results);
    }

    /**
     * Applies a new upstream list ({@code ALTER GANTRY CHANGE UPSTREAM}) as one health round: every server of the
     * new list is checked and the primary chosen among them first, and only then does the list take effect, with
     * that primary. Runs between rounds (never at the same time as one), so a round of the old list cannot undo it.
     */
    synchronized void replaceList(List<UpstreamUrl> urls, String reason) {
        List<UpstreamServer> next = upstreams.prepare(urls);
        Map<UpstreamServer, Probe> results = probeAll(next);
        upstreams.install(next, choosePrimary(results), reason);
        afterRound(results);
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

    private void roundSafely() {
        try {
            checkNow();
        } catch (RuntimeException e) {
            // One bad round must not end the schedule.
            LOG.error("topology: health round failed: {}", e.toString(), e);
        }
    }

    private Optional<Probe> probe(UpstreamServer server) {
        long started = System.nanoTime();
        Connection fresh;
        try {
            fresh = ServiceConnections.open(server.url(), connectTimeout);
        } catch (SQLException e) {
            return down(server, e);
        }
        long connectMicros = (System.nanoTime() - started) / 1000;
        try {
            Ping ping = ping(server, fresh);
            try (Statement statement = ping.connection().createStatement()) {
                boolean readOnly;
                Flavour flavour;
                String version;
                try (ResultSet rows = statement.executeQuery("SELECT @@GLOBAL.read_only, VERSION()")) {
                    rows.next();
                    readOnly = rows.getInt(1) != 0;
                    version = rows.getString(2);
                    flavour = version.contains("MariaDB") ? Flavour.MARIADB : Flavour.MYSQL;
                }
                GtidSet position = position(statement, flavour, server);
                ReplicaStatus replication = replicaStatus(statement, ReplicaStatusQuery.forVersion(version));
                Role role = readOnly ? Role.REPLICA : Role.PRIMARY;
                upstreams.markChecked(server, role, ping.micros(), connectMicros);
                return Optional.of(new Probe(server, role, replication.source(), position,
                        replication.brokenBecause()));
            }
        } catch (SQLException e) {
            return down(server, e);
        }
    }

    private Optional<Probe> down(UpstreamServer server, SQLException e) {
        kept.drop(server);
        upstreams.markDown(server, "health check failed: " + describe(e));
        return Optional.empty();
    }

    /** A ping's round trip in microseconds, on the connection the rest of the check then uses. */
    private record Ping(Connection connection, long micros) {
    }

    /**
     * Pings the server on its kept connection, and closes the connection the round just opened. That one takes the
     * kept one's place when there is none (the first round, or the last check failed) or when the kept one does not
     * answer (the server restarted, or killed it): a server that accepts new connections is not down for the loss
     * of an old one.
     *
     * @throws SQLException when the new connection does not answer either; it is then the kept one, dropped with it
     */
    private Ping ping(UpstreamServer server, Connection fresh) throws SQLException {
        Connection held = kept.get(server);
        if (held != null) {
            try {
                long micros = ping(held);
                closeQuietly(fresh);
                return new Ping(held, micros);
            } catch (SQLException e) {
                LOG.debug("topology: the kept health-check connection to {} does not answer ({}); a new one takes "
                        + "its place", server.address(), e.toString());
            }
        }
        kept.keep(server, fresh);
        // Its login had twice the connect timeout per read, as every check's has; each answer now has one.
        fresh.setNetworkTimeout(Runnable::run, Math.toIntExact(connectTimeout.toMillis()));
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

    private static String firstLine(String text) {
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
     * Whom a server replicates from and whether its replication stopped with an error.
     *
     * @param source        {@code host:port} it replicates from, or "" if it does not replicate
     * @param brokenBecause why its replication is broken, or null when it is not: its SQL thread stopped with an
     *                      error, or its IO thread stopped (gave up) with an error. A thread stopped without an error
     *                      ({@code STOP SLAVE}) is a pause, which shows as lag; an IO thread still trying to
     *                      connect (a primary that is down) is not broken either.
     */
    private record ReplicaStatus(String source, String brokenBecause) {
        static final ReplicaStatus NONE = new ReplicaStatus("", null);
    }

    private static ReplicaStatus replicaStatus(Statement statement, ReplicaStatusQuery query) {
        try (ResultSet rows = statement.executeQuery(query.sql())) {
            return rows.next() ? replicaStatus(rows, query.sourcePrefix(), query.threadPrefix()) : ReplicaStatus.NONE;
        } catch (SQLException e) {
            // The account may lack the privilege (REPLICATION CLIENT / SLAVE MONITOR): then we cannot tell.
            LOG.debug("topology: {} failed: {}", query.sql(), e.toString());
            return ReplicaStatus.NONE;
        }
    }

    private static ReplicaStatus replicaStatus(ResultSet rows, String source, String thread) throws SQLException {
        String address = rows.getString(source + "Host") + ":" + rows.getInt(source + "Port");
        String broken = null;
        int sqlErrno = rows.getInt("Last_SQL_Errno");
        if (!"Yes".equalsIgnoreCase(rows.getString(thread + "SQL_Running")) && sqlErrno != 0) {
            broken = "its SQL thread stopped with error " + sqlErrno + ": " + oneLine(rows.getString("Last_SQL_Error"));
        } else {
            int ioErrno = rows.getInt("Last_IO_Errno");
            if ("No".equalsIgnoreCase(rows.getString(thread + "IO_Running")) && ioErrno != 0) {
                broken = "its IO thread stopped with error " + ioErrno + ": " + oneLine(rows.getString("Last_IO_Error"));
            }
        }
        return new ReplicaStatus(address, broken);
    }

    private static String oneLine(String text) {
        String line = firstLine(text).replaceAll("\\s+", " ");
        return line.length() > 600 ? line.substring(0, 600) + "..." : line;
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
            if (server == primary || probe.role() != Role.REPLICA) {
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

    private static Upstreams.PrimaryChoice choosePrimary(Map<UpstreamServer, Probe> results) {
        List<UpstreamServer> writable = results.values().stream()
                .filter(p -> p.role() == Role.PRIMARY).map(Probe::server).toList();
        if (writable.size() == 1) {
            return new Upstreams.PrimaryChoice(writable.get(0), "");
        }
        if (writable.isEmpty()) {
            return new Upstreams.PrimaryChoice(null, results.isEmpty()
                    ? "no server answers the health check"
                    : "no writable server (every server that answers has read_only=ON)");
        }
        // Several writable servers: the primary is the one the replicas replicate from, if that is unambiguous.
        List<UpstreamServer> sources = writable.stream()
                .filter(w -> results.values().stream().anyMatch(p -> p.source().equals(w.address())))
                .toList();
        if (sources.size() == 1) {
            return new Upstreams.PrimaryChoice(sources.get(0), "");
        }
        return new Upstreams.PrimaryChoice(null, "several servers are writable (" + String.join(", ",
                    writable.stream().map(UpstreamServer::address).toList())
                    + ") and the replicas do not single one out");
    }

    /**
     * Stops the loop and closes the kept connections, after the round that runs now if it ends within the connect
     * timeout: closing a connection a check still uses would mark its server down as Gantry stops.
     */
    @Override
    public void close() {
        scheduler.shutdownNow();
        probes.shutdownNow();
        try {
            probes.awaitTermination(connectTimeout.toMillis(), TimeUnit.MILLISECONDS);
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

    private record Probe(UpstreamServer server, Role role, String source, GtidSet position, String brokenBecause) {
    }
}
