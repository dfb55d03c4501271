package io.gantry.sandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A primary and replicas as real {@code mariadbd} processes with GTID replication on loopback ports, each server in
 * its own directory under one topology directory.
 */
public final class MariaDbTopology implements Topology {

    private static final Logger LOG = LoggerFactory.getLogger(MariaDbTopology.class);

    private final MariaDbInstallation installation;
    private final Path directory;
    private final boolean portsMayMove;
    private final List<MariaDbServer> all;
    private volatile MariaDbServer primary;

    private MariaDbTopology(MariaDbInstallation installation, Path directory, boolean portsMayMove,
                            List<MariaDbServer> all) {
        this.installation = installation;
        this.directory = directory;
        this.portsMayMove = portsMayMove;
        this.all = List.copyOf(all);
        this.primary = all.get(0);
    }

    /**
     * Starts a primary and {@code replicaCount} replicas in fresh directories under {@code directory}.
     *
     * @param basePort the primary's port, replicas on the following ones; 0 picks free ports
     */
    public static MariaDbTopology start(MariaDbInstallation installation, Path directory, int replicaCount,
                                        int basePort) {
        return start(installation, directory, replicaCount, basePort, List.of());
    }

    /**
     * Like {@link #start(MariaDbInstallation, Path, int, int)}, with extra {@code my.cnf} lines for every server
     * (they come last and override the sandbox's settings): for tests that need a server set up differently, such
     * as one without GTIDs or with another collation.
     */
    public static MariaDbTopology start(MariaDbInstallation installation, Path directory, int replicaCount,
                                        int basePort, List<String> extraOptions) {
        if (replicaCount < 0 || replicaCount > 9) {
            throw new IllegalArgumentException("replicas must be between 0 and 9, not " + replicaCount);
        }
        long started = System.nanoTime();
        ServerProcesses.sweepOrphans(directory);
        List<Long> stillRunning = ServerProcesses.liveServersUnder(directory);
        if (!stillRunning.isEmpty()) {
            throw new IllegalStateException("mariadbd processes " + stillRunning + " still run on data under "
                    + directory + " for another live process; stop that first or choose another directory");
        }
        deleteRecursively(directory);
        Path template = TemplateDataDirectory.obtain(installation);
        List<MariaDbServer> servers = new ArrayList<>();
        for (int i = 0; i <= replicaCount; i++) {
            String name = i == 0 ? "primary" : "replica" + i;
            int port = basePort == 0 ? MariaDbServer.freePort() : basePort + i;
            Path serverDirectory = directory.resolve(name);
            TemplateDataDirectory.copyTo(template, serverDirectory.resolve("data"));
            servers.add(new MariaDbServer(name, serverDirectory, port, installation, i > 0, extraOptions));
        }
        MariaDbTopology topology = new MariaDbTopology(installation, directory, basePort == 0, servers);
        try {
            // Servers start in parallel: start-up is mostly waiting on InnoDB, not CPU.
            CompletableFuture.allOf(servers.stream()
                    .map(s -> CompletableFuture.runAsync(() -> s.start(topology.portsMayMove)))
                    .toArray(CompletableFuture[]::new)).join();
            for (MariaDbServer replica : servers.subList(1, servers.size())) {
                topology.replicateFromPrimary(replica, false);
            }
            topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        } catch (RuntimeException e) {
            topology.close();
            throw e instanceof CompletionException && e.getCause() instanceof RuntimeException cause ? cause : e;
        }
        LOG.info("sandbox: {} with 1 primary and {} replicas up in {} ms under {}", installation.label(),
                replicaCount, (System.nanoTime() - started) / 1_000_000, directory);
        return topology;
    }

    @Override
    public String flavour() {
        return installation.label();
    }

    @Override
    public String database() {
        return SandboxAccounts.DATABASE;
    }

    @Override
    public Credentials appAccount() {
        return SandboxAccounts.APP;
    }

    /** The install the servers run from (its {@code mariadb} client is handy for tests and the demo). */
    public MariaDbInstallation installation() {
        return installation;
    }

    /** The directory holding one sub-directory per server. */
    public Path directory() {
        return directory;
    }

    @Override
    public DatabaseServer primary() {
        return primary;
    }

    @Override
    public List<DatabaseServer> replicas() {
        MariaDbServer current = primary;
        return all.stream().filter(s -> s != current).map(DatabaseServer.class::cast).toList();
    }

    @Override
    public void stop(DatabaseServer server) {
        LOG.info("sandbox: stopping {}", server);
        own(server).stop();
    }

    @Override
    public void kill(DatabaseServer server) {
        LOG.info("sandbox: kill -9 {}", server);
        own(server).kill();
    }

    @Override
    public void freeze(DatabaseServer server) {
        LOG.info("sandbox: freezing {} (SIGSTOP)", server);
        own(server).signal("STOP");
    }

    @Override
    public void thaw(DatabaseServer server) {
        LOG.info("sandbox: thawing {} (SIGCONT)", server);
        own(server).signal("CONT");
    }

    @Override
    public void start(DatabaseServer server) {
        MariaDbServer own = own(server);
        LOG.info("sandbox: starting {}", server);
        own.setReadOnly(own != primary);
        own.start(false);
        if (own != primary) {
            // A replica remembers its primary and resumes by itself, unless the primary moved while it was down.
            try {
                if (!primary.address().equals(masterAddress(own))) {
                    replicateFromPrimary(own, true);
                }
            } catch (SQLException e) {
                throw new IllegalStateException(server.name() + ": cannot check its replication after restart: "
                        + e.getMessage(), e);
            }
        }
    }

    @Override
    public void pauseReplication(DatabaseServer replica) {
        execute(own(replica), "STOP SLAVE SQL_THREAD");
    }

    @Override
    public void resumeReplication(DatabaseServer replica) {
        execute(own(replica), "START SLAVE SQL_THREAD");
    }

    @Override
    public void writeOnReplica(DatabaseServer replica, boolean logged, String... statements) {
        MariaDbServer server = own(replica);
        if (server == primary) {
            throw new IllegalArgumentException(replica.name() + " is the primary, not a replica");
        }
        LOG.info("sandbox: writing on replica {} directly ({}): {}", replica, logged ? "binlogged" : "sql_log_bin=0",
                String.join("; ", statements));
        List<String> all = new ArrayList<>();
        all.add("SET SESSION sql_log_bin = " + (logged ? 1 : 0));
        all.add("USE " + database());
        all.addAll(List.of(statements));
        execute(server, all.toArray(String[]::new));
    }

    @Override
    public String replicationSqlError(DatabaseServer replica) {
        try (Connection connection = own(replica).connectAsRoot();
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SHOW SLAVE STATUS")) {
            if (!rows.next() || rows.getInt("Last_SQL_Errno") == 0) {
                return "";
            }
            return rows.getInt("Last_SQL_Errno") + ": " + rows.getString("Last_SQL_Error");
        } catch (SQLException e) {
            throw new IllegalStateException(replica.name() + ": cannot read its replication status: "
                    + e.getMessage(), e);
        }
    }

    @Override
    public synchronized void promote(DatabaseServer replica) {
        MariaDbServer promoted = own(replica);
        MariaDbServer old = primary;
        if (promoted == old) {
            throw new IllegalArgumentException(replica.name() + " is already the primary");
        }
        LOG.info("sandbox: promoting {} (primary was {})", promoted, old);
        if (old.isRunning()) {
            // A planned switch: stop writes on the old primary and let everyone catch up, so nothing is lost.
            execute(old, "SET GLOBAL read_only = ON");
            old.setReadOnly(true);
            awaitReplicasCaughtUp(Duration.ofSeconds(60));
        }
        execute(promoted, "STOP SLAVE", "RESET SLAVE ALL", "SET GLOBAL read_only = OFF");
        promoted.setReadOnly(false);
        primary = promoted;
        for (MariaDbServer server : all) {
            if (server != promoted && server.isRunning()) {
                replicateFromPrimary(server, server == old);
            }
        }
    }

    @Override
    public void awaitReplicasCaughtUp(Duration timeout) {
        String position = query(primary, "SELECT @@gtid_binlog_pos");
        for (MariaDbServer replica : all) {
            if (replica == primary || !replica.isRunning()) {
                continue;
            }
            String result = query(replica, "SELECT MASTER_GTID_WAIT('" + position + "', " + timeout.toSeconds() + ")");
            if (!"0".equals(result)) {
                throw new IllegalStateException(replica.name() + " did not reach the primary's position " + position
                        + " within " + timeout.toSeconds() + " s; it is at " + executedGtids(replica)
                        + "; " + replicationStatus(replica));
            }
        }
    }

    @Override
    public String executedGtids(DatabaseServer server) {
        return query(own(server), "SELECT @@gtid_current_pos");
    }

    @Override
    public long transactionsBehind(DatabaseServer replica) {
        Map<Long, Long> primaryPosition = sequenceByDomain(query(primary, "SELECT @@gtid_binlog_pos"));
        Map<Long, Long> replicaPosition = sequenceByDomain(executedGtids(replica));
        long behind = 0;
        for (Map.Entry<Long, Long> domain : primaryPosition.entrySet()) {
            behind += Math.max(0, domain.getValue() - replicaPosition.getOrDefault(domain.getKey(), 0L));
        }
        return behind;
    }

    /** {@code domain-server-seq,...} to the sequence number per domain. */
    static Map<Long, Long> sequenceByDomain(String position) {
        Map<Long, Long> sequences = new HashMap<>();
        if (position == null || position.isBlank()) {
            return sequences;
        }
        for (String gtid : position.split(",")) {
            String[] parts = gtid.trim().split("-");
            if (parts.length != 3) {
                throw new IllegalArgumentException("not a MariaDB GTID: '" + gtid + "' in '" + position + "'");
            }
            sequences.merge(Long.parseLong(parts[0]), Long.parseLong(parts[2]), Math::max);
        }
        return sequences;
    }

    @Override
    public Connection connectAsAdmin(DatabaseServer server) throws SQLException {
        return own(server).connectAsRoot();
    }

    @Override
    public Connection connectAsApp(DatabaseServer server) throws SQLException {
        return own(server).connect(database(), appAccount());
    }

    @Override
    public String jdbcUrl(DatabaseServer server) {
        return own(server).jdbcUrl(database());
    }

    /** A ready-to-paste {@code mariadb} command line that connects to a server as the app account. */
    public String clientCommand(DatabaseServer server) {
        return installation.client() + " --skip-ssl -h " + server.host() + " -P " + server.port() + " -u "
                + appAccount().user() + " -p" + appAccount().password() + " " + database();
    }

    @Override
    public void close() {
        List<MariaDbServer> running = all.stream().filter(MariaDbServer::isRunning).toList();
        CompletableFuture.allOf(running.stream()
                .map(s -> CompletableFuture.runAsync(s::stop))
                .toArray(CompletableFuture[]::new)).join();
        if (!running.isEmpty()) {
            LOG.info("sandbox: stopped {} servers under {}", running.size(), directory);
        }
    }

    private void replicateFromPrimary(MariaDbServer replica, boolean demotedOrDiverged) {
        List<String> statements = new ArrayList<>();
        statements.add("STOP SLAVE");
        if (demotedOrDiverged) {
            // A former primary has its own writes in its binary log but an empty slave position: start from what it
            // has executed, or it would ask the new primary for everything again.
            statements.add("SET GLOBAL gtid_slave_pos = @@gtid_current_pos");
        }
        statements.add("CHANGE MASTER TO MASTER_HOST='" + primary.host() + "', MASTER_PORT=" + primary.port()
                + ", MASTER_USER='" + SandboxAccounts.REPLICATION.user() + "', MASTER_PASSWORD='"
                + SandboxAccounts.REPLICATION.password() + "', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1"
                + ", MASTER_SSL=0");
        statements.add("START SLAVE");
        execute(replica, statements.toArray(String[]::new));
    }

    private String masterAddress(MariaDbServer replica) throws SQLException {
        try (Connection connection = replica.connectAsRoot();
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SHOW SLAVE STATUS")) {
            return rows.next() ? rows.getString("Master_Host") + ":" + rows.getInt("Master_Port") : "";
        }
    }

    private String replicationStatus(MariaDbServer replica) {
        try (Connection connection = replica.connectAsRoot();
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SHOW SLAVE STATUS")) {
            if (!rows.next()) {
                return "it is not replicating";
            }
            return "IO thread " + rows.getString("Slave_IO_Running") + ", SQL thread "
                    + rows.getString("Slave_SQL_Running") + ", last IO error '" + rows.getString("Last_IO_Error")
                    + "', last SQL error '" + rows.getString("Last_SQL_Error") + "'";
        } catch (SQLException e) {
            return "replication status unavailable: " + e.getMessage();
        }
    }

    private MariaDbServer own(DatabaseServer server) {
        for (MariaDbServer candidate : all) {
            if (candidate == server) {
                return candidate;
            }
        }
        throw new IllegalArgumentException(server + " is not a server of this topology");
    }

    private static void execute(MariaDbServer server, String... statements) {
        try (Connection connection = server.connectAsRoot(); Statement statement = connection.createStatement()) {
            for (String sql : statements) {
                statement.execute(sql);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(server.name() + ": " + e.getMessage(), e);
        }
    }

    private static String query(MariaDbServer server, String sql) {
        try (Connection connection = server.connectAsRoot();
             PreparedStatement statement = connection.prepareStatement(sql);
             ResultSet rows = statement.executeQuery()) {
            rows.next();
            return rows.getString(1);
        } catch (SQLException e) {
            throw new IllegalStateException(server.name() + ": " + sql + ": " + e.getMessage(), e);
        }
    }

    private static void deleteRecursively(Path directory) {
        if (!Files.exists(directory)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(directory)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot clear " + directory, e);
        }
    }
}
