package io.gantry.sandbox;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A primary and replicas as real {@code mariadbd} processes with GTID replication ({@code MASTER_USE_GTID=slave_pos})
 * on loopback ports, each server in its own directory under one topology directory.
 */
public final class MariaDbTopology extends LocalTopology {

    private final MariaDbInstallation installation;

    private MariaDbTopology(MariaDbInstallation installation, Path directory, List<LocalServer> all) {
        super(installation, directory, all);
        this.installation = installation;
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
        return LocalTopology.start(installation, directory, replicaCount, basePort, extraOptions,
                (dir, servers) -> new MariaDbTopology(installation, dir, servers));
    }

    /** The install the servers run from (its {@code mariadb} client is handy for tests and the demo). */
    public MariaDbInstallation installation() {
        return installation;
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
    List<String> forgetSourceStatements() {
        return List.of("STOP SLAVE", "RESET SLAVE ALL");
    }

    @Override
    public void awaitReplicasCaughtUp(Duration timeout) {
        String position = query(primary, "SELECT @@gtid_binlog_pos");
        for (LocalServer replica : all) {
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

    /** A ready-to-paste {@code mariadb} command line that connects to {@code host:port} as the app account. */
    @Override
    public String clientCommand(String host, int port) {
        return installation.client() + " --skip-ssl -h " + host + " -P " + port + " -u " + appAccount().user()
                + " -p" + appAccount().password() + " " + database();
    }

    @Override
    void replicateFromPrimary(LocalServer replica, boolean demotedOrDiverged) {
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

    @Override
    String sourceAddress(LocalServer replica) throws SQLException {
        try (Connection connection = replica.connectAsRoot();
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SHOW SLAVE STATUS")) {
            return rows.next() ? rows.getString("Master_Host") + ":" + rows.getInt("Master_Port") : "";
        }
    }

    @Override
    String replicationStatus(LocalServer replica) {
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
}
