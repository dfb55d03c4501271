package io.gantry.topology;

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
 * The health loop: every interval it connects to each server with the service account (JDBC, on its own small
 * executor, never on a Netty event loop), reads {@code read_only} and whom a replica replicates from, measures the
 * round trip, and updates {@link Upstreams}: health, role, and which server is the primary.
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
    /** Touched only by the health thread (rounds run one at a time). */
    private final ReplicationLag lag = new ReplicationLag(Duration.ofMinutes(15));

    /**
     * @param connectTimeout bound on each connection attempt and query of a check
     */
    public HealthChecker(Upstreams upstreams, Duration connectTimeout) {
        this.upstreams = upstreams;
        this.connectTimeout = connectTimeout;
        this.scheduler = Executors.newSingleThreadScheduledExecutor(named("gantry-health"));
        this.probes = Executors.newFixedThreadPool(Math.min(8, upstreams.servers().size()), named("gantry-probe"));
    }

    /** Runs one round now and then every {@code interval}. */
    public void start(Duration interval) {
        scheduler.scheduleWithFixedDelay(this::roundSafely, interval.toMillis(), interval.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    /** One health round over every server, in parallel; returns when all checks are done. */
    public synchronized void checkNow() {
        List<CompletableFuture<Optional<Probe>>> checks = new ArrayList<>();
        for (UpstreamServer server : upstreams.servers()) {
            checks.add(CompletableFuture.supplyAsync(() -> probe(server), probes));
        }
        Map<UpstreamServer, Probe> results = new HashMap<>();
        for (int i = 0; i < checks.size(); i++) {
            checks.get(i).join().ifPresent(p -> results.put(p.server(), p));
        }
        choosePrimary(results);
        measureLag(results, Instant.now());
        upstreams.listener().onHealthRound(upstreams.servers());
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
        try (Connection connection = ServiceConnections.open(server.url(), connectTimeout);
             Statement statement = connection.createStatement()) {
            boolean readOnly;
            Flavour flavour;
            try (ResultSet rows = statement.executeQuery("SELECT @@GLOBAL.read_only, VERSION()")) {
                rows.next();
                readOnly = rows.getInt(1) != 0;
                flavour = rows.getString(2).contains("MariaDB") ? Flavour.MARIADB : Flavour.MYSQL;
            }
            long rtt = (System.nanoTime() - started) / 1000;
            GtidSet position = position(statement, flavour, server);
            String source = replicationSource(statement);
            Role role = readOnly ? Role.REPLICA : Role.PRIMARY;
            upstreams.markChecked(server, role, rtt);
            return Optional.of(new Probe(server, role, source, position));
        } catch (SQLException e) {
            upstreams.markDown(server, "health check failed: " + describe(e));
            return Optional.empty();
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

    /** The executed GTID set, or null if it cannot be read (the check still counts; lag is then unknown). */
    private static GtidSet position(Statement statement, Flavour flavour, UpstreamServer server) {
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

    /** Samples the primary's position and derives each replica's lag from it. */
    private void measureLag(Map<UpstreamServer, Probe> results, Instant at) {
        Probe primary = upstreams.primary().map(results::get).orElse(null);
        if (primary != null && primary.position() != null) {
            lag.sample(at, primary.position());
        }
        for (Probe probe : results.values()) {
            if (probe.position() == null) {
                probe.server().replicationChecked("", -1);
            } else if (primary != null && probe == primary) {
                probe.server().replicationChecked(probe.position().toString(), 0);
            } else {
                probe.server().replicationChecked(probe.position().toString(),
                        lag.lagOf(probe.position(), at).millis());
            }
        }
    }

    /** {@code host:port} this server replicates from, or "" if it does not replicate. */
    private static String replicationSource(Statement statement) {
        try (ResultSet rows = statement.executeQuery("SHOW SLAVE STATUS")) {
            if (rows.next()) {
                return rows.getString("Master_Host") + ":" + rows.getInt("Master_Port");
            }
            return "";
        } catch (SQLException e) {
            // MySQL 8.4 dropped SHOW SLAVE STATUS; the account may also lack the privilege. Then we cannot tell.
            try (ResultSet rows = statement.executeQuery("SHOW REPLICA STATUS")) {
                return rows.next() ? rows.getString("Source_Host") + ":" + rows.getInt("Source_Port") : "";
            } catch (SQLException ignored) {
                return "";
            }
        }
    }

    private void choosePrimary(Map<UpstreamServer, Probe> results) {
        List<UpstreamServer> writable = results.values().stream()
                .filter(p -> p.role() == Role.PRIMARY).map(Probe::server).toList();
        if (writable.size() == 1) {
            upstreams.setPrimary(writable.get(0), "");
            return;
        }
        if (writable.isEmpty()) {
            upstreams.setPrimary(null, results.isEmpty()
                    ? "no server answers the health check"
                    : "no writable server (every server that answers has read_only=ON)");
            return;
        }
        // Several writable servers: the primary is the one the replicas replicate from, if that is unambiguous.
        List<UpstreamServer> sources = writable.stream()
                .filter(w -> results.values().stream().anyMatch(p -> p.source().equals(w.address())))
                .toList();
        if (sources.size() == 1) {
            upstreams.setPrimary(sources.get(0), "");
        } else {
            upstreams.setPrimary(null, "several servers are writable (" + String.join(", ",
                    writable.stream().map(UpstreamServer::address).toList())
                    + ") and the replicas do not single one out");
        }
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        probes.shutdownNow();
    }

    private static ThreadFactory named(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, prefix + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    private record Probe(UpstreamServer server, Role role, String source, GtidSet position) {
    }
}
