package io.gantry.gtid;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Gantry's GTID set algebra agrees with the servers' own: MySQL's {@code GTID_SUBSET} and {@code GTID_SUBTRACT}
 * on sets built from a real {@code gtid_executed}, and MariaDB's {@code MASTER_GTID_WAIT} on a replica (which
 * answers at once exactly when the replica's position contains the one asked for). Printing reproduces the
 * servers' text.
 */
class GtidServerAgreementIT {

    @Test
    void mariaDbContainmentIsWhatMasterGtidWaitSays() throws Exception {
        try (Topology topology = Sandboxes.startPrivate(TopologyKind.MARIADB, "gtid-agreement", 1);
             Connection primary = topology.connectAsApp(topology.primary());
             Connection replica = topology.connectAsApp(topology.replicas().get(0))) {
            DatabaseServer replicaServer = topology.replicas().get(0);
            execute(primary, "CREATE TABLE gtid_rows (id INT PRIMARY KEY)");
            for (int i = 1; i <= 5; i++) {
                execute(primary, "INSERT INTO gtid_rows VALUES (" + i + ")");
            }
            topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
            topology.pauseReplication(replicaServer);
            for (int i = 6; i <= 10; i++) {
                execute(primary, "INSERT INTO gtid_rows VALUES (" + i + ")");
            }
            String primaryPos = single(primary, "SELECT @@GLOBAL.gtid_binlog_pos");
            String replicaPos = single(replica, "SELECT @@GLOBAL.gtid_slave_pos");
            MariaDbGtidSet ahead = MariaDbGtidSet.parse(primaryPos);
            MariaDbGtidSet behind = MariaDbGtidSet.parse(replicaPos);
            MariaDbGtid newest = ahead.gtids().get(ahead.gtids().size() - 1);
            List<MariaDbGtidSet> probes = new ArrayList<>(List.of(ahead, behind, MariaDbGtidSet.EMPTY));
            for (long back = 1; back <= 8; back++) {
                probes.add(MariaDbGtidSet.of(new MariaDbGtid(newest.domain(), newest.server(),
                        newest.sequence() - back)));
            }
            probes.add(MariaDbGtidSet.of(new MariaDbGtid(newest.domain() + 1, newest.server(), 1)));
            for (MariaDbGtidSet probe : probes) {
                boolean serverSays = masterGtidWaitAnswersAtOnce(replica, probe.toString());
                assertThat(behind.contains(probe)).as("replica at %s contains %s", behind, probe)
                        .isEqualTo(serverSays);
            }
            assertThat(ahead.contains(behind)).isTrue();
            assertThat(behind.contains(ahead)).isFalse();
            // The server's own text comes back unchanged.
            String state = single(primary, "SELECT @@GLOBAL.gtid_binlog_state");
            assertThat(MariaDbGtidSet.parse(state).toString()).isEqualTo(state);
            assertThat(ahead.toString()).isEqualTo(primaryPos);
            topology.resumeReplication(replicaServer);
        }
    }

    @Test
    void mySqlSubsetAndSubtractAreWhatTheServerComputes() throws Exception {
        Optional<String> unavailable = TopologyKind.MYSQL.skipReason();
        assumeTrue(unavailable.isEmpty(), () -> "skipped: " + unavailable.orElse(""));
        try (Topology topology = Sandboxes.startPrivate(TopologyKind.MYSQL, "gtid-agreement-mysql", 0);
             Connection primary = topology.connectAsApp(topology.primary())) {
            execute(primary, "CREATE TABLE gtid_rows (id INT PRIMARY KEY)");
            for (int i = 1; i <= 20; i++) {
                execute(primary, "INSERT INTO gtid_rows VALUES (" + i + ")");
            }
            String executed = single(primary, "SELECT @@GLOBAL.gtid_executed");
            MySqlGtidSet all = MySqlGtidSet.parse(executed);
            assertThat(all.toString()).isEqualToIgnoringWhitespace(executed.toLowerCase());
            MySqlGtid last = lastOf(all);
            Random random = new Random(42);
            List<MySqlGtidSet> sets = new ArrayList<>(List.of(all, MySqlGtidSet.EMPTY));
            for (int i = 0; i < 30; i++) {
                MySqlGtidSet set = MySqlGtidSet.EMPTY;
                for (int n = 0; n < 1 + random.nextInt(6); n++) {
                    set = set.with(new MySqlGtid(last.source(), 1 + random.nextInt((int) last.transaction() + 3)));
                }
                sets.add(set);
            }
            for (MySqlGtidSet a : sets) {
                for (MySqlGtidSet b : sets) {
                    try (PreparedStatement query = primary.prepareStatement(
                            "SELECT GTID_SUBSET(?, ?), GTID_SUBTRACT(?, ?)")) {
                        query.setString(1, a.toString());
                        query.setString(2, b.toString());
                        query.setString(3, a.toString());
                        query.setString(4, b.toString());
                        try (ResultSet row = query.executeQuery()) {
                            row.next();
                            assertThat(b.contains(a)).as("%s within %s", a, b).isEqualTo(row.getInt(1) == 1);
                            assertThat(a.subtract(b)).as("%s minus %s", a, b)
                                    .isEqualTo(MySqlGtidSet.parse(row.getString(2)));
                        }
                    }
                }
            }
        }
    }

    private static MySqlGtid lastOf(MySqlGtidSet set) {
        String text = set.toString();
        String firstSource = text.split(",")[0];
        String uuid = firstSource.substring(0, firstSource.indexOf(':'));
        String last = firstSource.substring(firstSource.lastIndexOf(':') + 1);
        long to = Long.parseLong(last.contains("-") ? last.substring(last.indexOf('-') + 1) : last);
        return MySqlGtid.parse(uuid + ":" + to);
    }

    /** {@code MASTER_GTID_WAIT(pos, 0)} is 0 when the replica already has {@code pos}, -1 when it would wait. */
    private static boolean masterGtidWaitAnswersAtOnce(Connection replica, String position) throws SQLException {
        try (PreparedStatement wait = replica.prepareStatement("SELECT MASTER_GTID_WAIT(?, 0)")) {
            wait.setString(1, position);
            try (ResultSet row = wait.executeQuery()) {
                row.next();
                return row.getInt(1) == 0;
            }
        }
    }

    private static void execute(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    private static String single(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet row = statement.executeQuery(sql)) {
            row.next();
            return row.getString(1);
        }
    }
}
