package io.gantry.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The shared topology replicates, survives a kill -9 of a replica, and lags on purpose when asked. */
class ReplicationTopologyIT {

    private static final AtomicInteger TABLE_NUMBER = new AtomicInteger();

    @ParameterizedTest
    @MethodSource("io.gantry.sandbox.TopologyKinds#all")
    void rowWrittenOnPrimaryAppearsOnEveryReplicaWithEqualGtidPositions(TopologyKind kind) throws SQLException {
        TopologyKinds.assumeAvailable(kind);
        Topology topology = Sandboxes.shared(kind);
        String table = newTable(topology);

        execute(topology, topology.primary(), "INSERT INTO " + table + " VALUES (1, 'written on the primary')");
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));

        String primaryPosition = topology.executedGtids(topology.primary());
        assertThat(primaryPosition).isNotBlank();
        for (DatabaseServer replica : topology.replicas()) {
            assertThat(queryString(topology, replica, "SELECT note FROM " + table + " WHERE id = 1"))
                    .as("row on %s", replica.name()).isEqualTo("written on the primary");
            assertThat(topology.executedGtids(replica)).as("GTID position of %s", replica.name())
                    .isEqualTo(primaryPosition);
        }
    }

    @ParameterizedTest
    @MethodSource("io.gantry.sandbox.TopologyKinds#all")
    void killedReplicaCatchesUpAfterRestart(TopologyKind kind) throws SQLException {
        TopologyKinds.assumeAvailable(kind);
        Topology topology = Sandboxes.shared(kind);
        String table = newTable(topology);
        DatabaseServer victim = topology.replicas().get(0);

        topology.kill(victim);
        assertThat(victim.isRunning()).isFalse();
        assertThatThrownBy(() -> topology.connectAsApp(victim).close()).isInstanceOf(SQLException.class);
        for (int i = 1; i <= 20; i++) {
            execute(topology, topology.primary(), "INSERT INTO " + table + " VALUES (" + i + ", 'while down')");
        }
        topology.start(victim);
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(60));

        assertThat(queryString(topology, victim, "SELECT COUNT(*) FROM " + table)).isEqualTo("20");
        assertThat(topology.transactionsBehind(victim)).isZero();
        assertThat(topology.executedGtids(victim)).isEqualTo(topology.executedGtids(topology.primary()));
    }

    @ParameterizedTest
    @MethodSource("io.gantry.sandbox.TopologyKinds#all")
    void pausedSqlThreadCreatesLagThatResumingClears(TopologyKind kind) throws SQLException {
        TopologyKinds.assumeAvailable(kind);
        Topology topology = Sandboxes.shared(kind);
        String table = newTable(topology);
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        DatabaseServer lagging = topology.replicas().get(1);
        DatabaseServer other = topology.replicas().get(0);

        topology.pauseReplication(lagging);
        try {
            for (int i = 1; i <= 5; i++) {
                execute(topology, topology.primary(), "INSERT INTO " + table + " VALUES (" + i + ", 'lagging')");
            }
            LocalServer.sleep(300);
            assertThat(topology.transactionsBehind(lagging)).isEqualTo(5);
            assertThat(queryString(topology, lagging, "SELECT COUNT(*) FROM " + table)).isEqualTo("0");
            assertThat(topology.transactionsBehind(other)).isZero();
        } finally {
            topology.resumeReplication(lagging);
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        assertThat(topology.transactionsBehind(lagging)).isZero();
        assertThat(queryString(topology, lagging, "SELECT COUNT(*) FROM " + table)).isEqualTo("5");
    }

    private static String newTable(Topology topology) throws SQLException {
        String table = "rows_" + TABLE_NUMBER.incrementAndGet();
        execute(topology, topology.primary(), "CREATE TABLE " + table + " (id INT PRIMARY KEY, note VARCHAR(100))");
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        return table;
    }

    static void execute(Topology topology, DatabaseServer server, String sql) throws SQLException {
        try (Connection connection = topology.connectAsApp(server); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    static String queryString(Topology topology, DatabaseServer server, String sql) throws SQLException {
        try (Connection connection = topology.connectAsApp(server);
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery(sql)) {
            return rows.next() ? rows.getString(1) : null;
        }
    }
}
