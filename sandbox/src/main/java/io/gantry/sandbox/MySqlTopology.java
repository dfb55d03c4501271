package io.gantry.sandbox;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;

/**
 * A primary and replicas as real {@code mysqld} processes ({@code gtid_mode=ON}, GTID auto-positioning) on loopback
 * ports, each server in its own directory under one topology directory. The replication statements take the form
 * the server's version knows ({@link MySqlReplicationSql}). The servers offer TLS with the certificates
 * {@code mysqld --initialize} made for the template, as a MySQL 8 server does out of the box; the accounts use
 * {@code caching_sha2_password}.
 */
public final class MySqlTopology extends LocalTopology {

    private final MySqlInstallation installation;
    private final MySqlReplicationSql sql;

    private MySqlTopology(MySqlInstallation installation, Path directory, List<LocalServer> all) {
        super(installation, directory, all);
        this.installation = installation;
        this.sql = installation.replicationSql();
    }

    /**
     * Starts a primary and {@code replicaCount} replicas in fresh directories under {@code directory}.
     *
     * @param basePort the primary's port, replicas on the following ones; 0 picks free ports
     */
    public static MySqlTopology start(MySqlInstallation installation, Path directory, int replicaCount, int basePort) {
        return start(installation, directory, replicaCount, basePort, List.of());
    }

    /** Like {@link #start(MySqlInstallation, Path, int, int)}, with extra {@code my.cnf} lines for every server. */
    public static MySqlTopology start(MySqlInstallation installation, Path directory, int replicaCount, int basePort,
                                      List<String> extraOptions) {
        return LocalTopology.start(installation, directory, replicaCount, basePort, extraOptions,
                (dir, servers) -> new MySqlTopology(installation, dir, servers));
    }

    /** The install the servers run from. */
    public MySqlInstallation installation() {
        return installation;
    }

    @Override
    public void pauseReplication(DatabaseServer replica) {
        execute(own(replica), sql.stopSqlThread());
    }

    @Override
    public void resumeReplication(DatabaseServer replica) {
        execute(own(replica), sql.startSqlThread());
    }

    @Override
    public String replicationSqlError(DatabaseServer replica) {
        try (Connection connection = own(replica).connectAsRoot();
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery(sql.showStatus())) {
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
        return List.of(sql.stop(), sql.resetAll());
    }

    @Override
    public void awaitReplicasCaughtUp(Duration timeout) {
        String executed = query(primary, "SELECT @@GLOBAL.gtid_executed");
        for (LocalServer replica : all) {
            if (replica == primary || !replica.isRunning()) {
                continue;
            }
            String result = query(replica, MySqlReplicationSql.awaitExecuted(executed, timeout));
            if (!"0".equals(result)) {
                throw new IllegalStateException(replica.name() + " did not reach the primary's GTID set " + executed
                        + " within " + timeout.toSeconds() + " s; it has " + executedGtids(replica) + "; "
                        + replicationStatus(replica));
            }
        }
    }

    @Override
    public String executedGtids(DatabaseServer server) {
        return query(own(server), "SELECT @@GLOBAL.gtid_executed");
    }

    @Override
    public long transactionsBehind(DatabaseServer replica) {
        String missing = query(primary, MySqlReplicationSql.subtract(executedGtids(primary), executedGtids(replica)));
        return MySqlReplicationSql.countTransactions(missing);
    }

    /**
     * A ready-to-paste {@code mysql} command line (the bundled server comes without clients: any MySQL 8 client
     * will do; MariaDB's needs its {@code caching_sha2_password} plugin).
     */
    @Override
    public String clientCommand(String host, int port) {
        return "mysql -h " + host + " -P " + port + " -u " + appAccount().user() + " -p" + appAccount().password()
                + " " + database();
    }

    @Override
    void replicateFromPrimary(LocalServer replica, boolean demotedOrDiverged) {
        // Auto-positioning needs nothing more for a former primary: it sends its gtid_executed, own writes included.
        execute(replica, sql.stop(),
                sql.changeSource(primary.host(), primary.port(), SandboxAccounts.REPLICATION),
                sql.start());
    }

    @Override
    String sourceAddress(LocalServer replica) throws SQLException {
        try (Connection connection = replica.connectAsRoot();
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery(sql.showStatus())) {
            return rows.next() ? rows.getString(sql.sourceHostColumn()) + ":" + rows.getInt(sql.sourcePortColumn())
                    : "";
        }
    }

    @Override
    String replicationStatus(LocalServer replica) {
        try (Connection connection = replica.connectAsRoot();
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery(sql.showStatus())) {
            if (!rows.next()) {
                return "it is not replicating";
            }
            return "IO thread " + rows.getString(sql.ioRunningColumn()) + ", SQL thread "
                    + rows.getString(sql.sqlRunningColumn()) + ", last IO error '" + rows.getString("Last_IO_Error")
                    + "', last SQL error '" + rows.getString("Last_SQL_Error") + "'";
        } catch (SQLException e) {
            return "replication status unavailable: " + e.getMessage();
        }
    }
}
