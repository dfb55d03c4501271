package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static io.gantry.proxy.ProxyHarness.queryString;
import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.route.ReadBalance;
import io.gantry.route.RoutingConfig;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.TopologyKinds;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.io.ByteArrayInputStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Server-side prepared statements: prepared once by the client, executed wherever each execution is routed, with
 * Gantry preparing lazily on each backend and mapping statement ids.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PreparedStatementIT {

    private Topology topology;
    private ProxyHarness gantry;

    /** The flavour this class runs against; a subclass runs the same tests on another. */
    TopologyKind kind() {
        return TopologyKind.MARIADB;
    }

    @BeforeAll
    void startProxy() throws SQLException {
        topology = TopologyKinds.shared(kind());
        gantry = ProxyHarness.start(topology,
                c -> c.withRouting(new RoutingConfig(false, 0, ReadBalance.STATEMENT, true)), l -> l);
        try (Connection connection = topology.connectAsApp(topology.primary())) {
            execute(connection, "CREATE TABLE IF NOT EXISTS ps_rows (id INT PRIMARY KEY, body LONGBLOB)");
            execute(connection, "CREATE TABLE IF NOT EXISTS ps_many (n INT PRIMARY KEY)");
            execute(connection, "INSERT IGNORE INTO ps_many VALUES " + String.join(", ",
                    java.util.stream.IntStream.rangeClosed(1, 100).mapToObj(i -> "(" + i + ")").toList()));
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
    }

    @AfterAll
    void stopProxy() {
        if (gantry != null) { // null when the class was skipped: its kind of server cannot run here
            gantry.close();
        }
    }

    @ParameterizedTest
    @EnumSource(value = Driver.class, names = {"MYSQL_CONNECTOR_J_SERVER_PREPARED", "MARIADB_CONNECTOR_J_SERVER_PREPARED"})
    void oneStatementExecutesOnEveryReplicaWithItsParameters(Driver driver) throws Exception {
        long executesBefore = replicaStatementExecutions();
        Set<DatabaseServer> seen = new HashSet<>();
        try (Connection connection = gantry.connect(driver);
             PreparedStatement statement = connection.prepareStatement("SELECT @@server_id, ? * 2, ?")) {
            for (int i = 0; i < 40; i++) {
                statement.setInt(1, i);
                statement.setString(2, "text " + i);
                try (ResultSet rows = statement.executeQuery()) {
                    rows.next();
                    seen.add(gantry.serverOf(rows.getLong(1)));
                    assertThat(rows.getInt(2)).isEqualTo(i * 2);
                    assertThat(rows.getString(3)).isEqualTo("text " + i);
                }
                // Monotonic reads keep the session on the replica it just read from until the next position
                // sample (a few ms): executions further apart than that are each a new weighted pick.
                Thread.sleep(15);
            }
        }
        assertThat(seen).containsExactlyInAnyOrderElementsOf(topology.replicas());
        assertThat(replicaStatementExecutions() - executesBefore).as("binary-protocol executions on replicas")
                .isGreaterThanOrEqualTo(40);
    }

    @ParameterizedTest
    @EnumSource(value = Driver.class, names = {"MYSQL_CONNECTOR_J_SERVER_PREPARED", "MARIADB_CONNECTOR_J_SERVER_PREPARED"})
    void preparedWritesGoToThePrimaryAndLongDataArrivesWhole(Driver driver) throws SQLException {
        int id = driver.ordinal() + 1;
        byte[] body = new byte[300_000];
        for (int i = 0; i < body.length; i++) {
            body[i] = (byte) (i * 31);
        }
        try (Connection connection = gantry.connect(driver)) {
            try (PreparedStatement insert = connection.prepareStatement(
                    "REPLACE INTO ps_rows (id, body) VALUES (?, ?)")) {
                insert.setInt(1, id);
                insert.setBinaryStream(2, new ByteArrayInputStream(body), body.length);
                assertThat(insert.executeUpdate()).isPositive();
            }
            try (PreparedStatement select = connection.prepareStatement(
                    "/*#mode=READWRITE*/ SELECT body, @@server_id FROM ps_rows WHERE id = ?")) {
                select.setInt(1, id);
                try (ResultSet rows = select.executeQuery()) {
                    rows.next();
                    assertThat(rows.getBytes(1)).isEqualTo(body);
                    assertThat(gantry.serverOf(rows.getLong(2))).isEqualTo(topology.primary());
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = Driver.class, names = {"MYSQL_CONNECTOR_J_SERVER_PREPARED", "MARIADB_CONNECTOR_J_SERVER_PREPARED"})
    void closedStatementsCanBePreparedAgainAndTheSessionGoesOn(Driver driver) throws SQLException {
        try (Connection connection = gantry.connect(driver)) {
            for (int round = 0; round < 5; round++) {
                try (PreparedStatement statement = connection.prepareStatement("SELECT COUNT(*) FROM ps_many WHERE n <= ?")) {
                    statement.setInt(1, 10 * (round + 1));
                    try (ResultSet rows = statement.executeQuery()) {
                        rows.next();
                        assertThat(rows.getInt(1)).isEqualTo(10 * (round + 1));
                    }
                }
            }
            assertThat(queryString(connection, "SELECT 'after'")).isEqualTo("after");
        }
    }

    @ParameterizedTest
    @EnumSource(value = Driver.class, names = {"MYSQL_CONNECTOR_J_SERVER_PREPARED"})
    void cursorFetchReadsEveryRowFromTheServerThatExecuted(Driver driver) throws SQLException {
        long fetchesBefore = statusTotal("COM_STMT_FETCH");
        try (Connection connection = gantry.connect(driver, "useCursorFetch=true");
             PreparedStatement statement = connection.prepareStatement("SELECT n FROM ps_many ORDER BY n")) {
            statement.setFetchSize(7);
            int count = 0;
            int sum = 0;
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    count++;
                    sum += rows.getInt(1);
                }
            }
            assertThat(count).isEqualTo(100);
            assertThat(sum).isEqualTo(5050);
        }
        assertThat(statusTotal("COM_STMT_FETCH") - fetchesBefore).as("COM_STMT_FETCH round trips").isGreaterThan(10);
    }

    private long replicaStatementExecutions() throws SQLException {
        long total = 0;
        for (DatabaseServer replica : topology.replicas()) {
            total += status(replica, "COM_STMT_EXECUTE");
        }
        return total;
    }

    private long statusTotal(String name) throws SQLException {
        long total = 0;
        for (DatabaseServer server : topology.servers()) {
            total += status(server, name);
        }
        return total;
    }

    private long status(DatabaseServer server, String name) throws SQLException {
        // SHOW GLOBAL STATUS: MySQL 8 has no information_schema.GLOBAL_STATUS.
        try (Connection connection = topology.connectAsAdmin(server);
             java.sql.Statement statement = connection.createStatement();
             java.sql.ResultSet rows = statement.executeQuery("SHOW GLOBAL STATUS LIKE '" + name + "'")) {
            rows.next();
            return rows.getLong(2);
        }
    }
}
