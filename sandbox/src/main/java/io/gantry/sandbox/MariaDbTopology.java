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

    /**
     * {@code my.cnf} lines of a semi-synchronous topology ({@link #startSemiSync}). Every server may be a semi-sync
     * replica. {@code init_rpl_role = SLAVE} (MariaDB 10.6.19, 10.11.9, 11.4.3 on) makes a crashed server's recovery
     * roll back and cut from its binary log what no replica acknowledged: a client never saw it committed, and the
     * new primary does not have it. The first start of each server has nothing to recover; a restart of a crashed
     * primary is, in this topology, always a rejoin as a replica after a {@link #failover}. The timeout is longer
     * than any fault the tests inject: the primary never falls back to asynchronous replication.
     */
    static final List<String> SEMI_SYNC_OPTIONS = List.of("rpl_semi_sync_slave_enabled = ON",
            "rpl_semi_sync_master_wait_point = AFTER_SYNC", "rpl_semi_sync_master_timeout = 60000",
            "init_rpl_role = SLAVE");

    private final MariaDbInstallation installation;
    /** Whether the primary waits for a replica's acknowledgement of each commit (see {@link #startSemiSync}). */
    private volatile boolean semiSync;

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

    /**
     * A topology whose primary commits semi-synchronously (AFTER_SYNC): a commit returns only once a replica has it
     * in its relay log, so promoting the most advanced replica after a kill -9 of the primary loses no acknowledged
     * transaction. {@link #promote} moves the primary's side of semi-sync to the promoted server.
     */
    public static MariaDbTopology startSemiSync(MariaDbInstallation installation, Path directory, int replicaCount) {
        MariaDbTopology topology = start(installation, directory, replicaCount, 0, SEMI_SYNC_OPTIONS);
        try {
            topology.semiSync = true;
            execute(topology.primary, "SET GLOBAL rpl_semi_sync_master_enabled = ON");
            for (LocalServer replica : topology.all) {
                if (replica != topology.primary) {
                    // The replica connected before its primary waited for acknowledgements: reconnect to say it will.
                    execute(replica, "STOP SLAVE IO_THREAD", "START SLAVE IO_THREAD");
                }
            }
        } catch (RuntimeException e) {
            topology.close();
            throw e;
        }
        return topology;
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
        return semiSync ? List.of("STOP SLAVE", "RESET SLAVE ALL", "SET GLOBAL rpl_semi_sync_master_enabled = ON")
                : List.of("STOP SLAVE", "RESET SLAVE ALL");
    }

    /**
     * A manual failover after the primary died, as a DBA does it: every running replica first applies what it had
     * received (its relay log), then the most advanced one is promoted and the others replicate from it. In a
     * {@link #startSemiSync semi-synchronous} topology it holds every transaction a client saw committed.
     *
     * @return the promoted replica
     */
    public synchronized DatabaseServer failover(Duration timeout) {
        if (primary.isRunning()) {
            throw new IllegalStateException(primary.name() + " still runs: a planned switch is promote()");
        }
        LocalServer best = null;
        long bestSequence = -1;
        for (LocalServer replica : all) {
            if (replica == primary || !replica.isRunning()) {
                continue;
            }
            awaitRelayLogApplied(replica, timeout);
            long sequence = sequenceSum(query(replica, "SELECT @@gtid_current_pos"));
            if (sequence > bestSequence) {
                best = replica;
                bestSequence = sequence;
            }
        }
        if (best == null) {
            throw new IllegalStateException("no replica runs: nothing to promote");
        }
        LOG.info("sandbox: failover: {} is the most advanced replica (GTID sequence {})", best, bestSequence);
        promote(best);
        return best;
    }

    private void awaitRelayLogApplied(LocalServer replica, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            try (Connection connection = replica.connectAsRoot();
                 Statement statement = connection.createStatement();
                 ResultSet rows = statement.executeQuery("SHOW SLAVE STATUS")) {
                if (!rows.next()) {
                    return;
                }
                last = rows.getString("Master_Log_File") + ":" + rows.getLong("Read_Master_Log_Pos") + " read, "
                        + rows.getString("Relay_Master_Log_File") + ":" + rows.getLong("Exec_Master_Log_Pos")
                        + " applied";
                if (rows.getString("Master_Log_File").equals(rows.getString("Relay_Master_Log_File"))
                        && rows.getLong("Read_Master_Log_Pos") == rows.getLong("Exec_Master_Log_Pos")) {
                    return;
                }
                Thread.sleep(20);
            } catch (SQLException e) {
                throw new IllegalStateException(replica.name() + ": cannot read its replication status: "
                        + e.getMessage(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while " + replica.name() + " applied its relay log");
            }
        }
        throw new IllegalStateException(replica.name() + " did not apply its relay log within "
                + timeout.toSeconds() + " s (" + last + ")");
    }

    /** The sum of the sequence numbers of a MariaDB GTID position: higher is more advanced along one history. */
    private static long sequenceSum(String position) {
        long sum = 0;
        for (String gtid : position.split(",")) {
            String text = gtid.trim();
            if (!text.isEmpty()) {
                sum += Long.parseLong(text.substring(text.lastIndexOf('-') + 1));
            }
        }
        return sum;
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
        if (semiSync) {
            statements.add("SET GLOBAL rpl_semi_sync_master_enabled = OFF");
        }
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
