package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static io.gantry.proxy.ProxyHarness.queryString;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.gantry.sandbox.DatabaseServer;
import io.gantry.TopologyKinds;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Test;
import org.mariadb.jdbc.MariaDbPoolDataSource;

/** Every client logs in as its own account, and the servers see that account: grants apply unchanged. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClientIdentityIT {

    private Topology topology;
    private ProxyHarness gantry;

    /** The flavour this class runs against; a subclass runs the same tests on another. */
    TopologyKind kind() {
        return TopologyKind.MARIADB;
    }

    @BeforeAll
    void accounts() throws SQLException {
        topology = TopologyKinds.shared(kind());
        try (Connection root = topology.connectAsAdmin(topology.primary())) {
            execute(root, "CREATE TABLE IF NOT EXISTS app.identity_rows (id INT PRIMARY KEY)");
            execute(root, "DROP USER IF EXISTS 'reader'@'%'");
            execute(root, "CREATE USER 'reader'@'%' IDENTIFIED BY 'reader-pw'");
            execute(root, "GRANT SELECT ON app.* TO 'reader'@'%'");
            execute(root, "DROP USER IF EXISTS 'writer'@'%'");
            execute(root, "CREATE USER 'writer'@'%' IDENTIFIED BY 'writer-pw'");
            execute(root, "GRANT SELECT, INSERT, UPDATE, DELETE ON app.* TO 'writer'@'%'");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        gantry = ProxyHarness.start(topology);
    }

    @AfterAll
    void stopProxy() {
        if (gantry != null) { // null when the class was skipped: its kind of server cannot run here
            gantry.close();
        }
    }

    @Test
    void readOnlyAccountReadsFromAReplicaAndGetsTheServersOwnErrorOnWrites() throws SQLException {
        try (Connection reader = viaGantry("reader", "reader-pw");
             Connection direct = direct(topology.primary(), "reader", "reader-pw")) {
            assertThat(queryString(reader, "SELECT CURRENT_USER()")).isEqualTo("reader@%");
            assertThat(topology.replicas()).contains(gantry.whereRuns(reader, "SELECT @@server_id"));
            SQLException throughGantry = catchThrowableOfType(
                    () -> execute(reader, "INSERT INTO identity_rows VALUES (1)"), SQLException.class);
            SQLException directly = catchThrowableOfType(
                    () -> execute(direct, "INSERT INTO identity_rows VALUES (1)"), SQLException.class);
            assertThat(throughGantry.getErrorCode()).isEqualTo(directly.getErrorCode()).isEqualTo(1142);
            assertThat(throughGantry.getSQLState()).isEqualTo(directly.getSQLState());
            assertThat(throughGantry.getMessage()).isEqualTo(directly.getMessage());

            // A read the account may not do, served by a replica through Gantry: the replica's own refusal.
            SQLException readThroughGantry = catchThrowableOfType(
                    () -> queryString(reader, "SELECT COUNT(*) FROM mysql.user"), SQLException.class);
            SQLException readDirectly = catchThrowableOfType(
                    () -> queryString(direct, "SELECT COUNT(*) FROM mysql.user"), SQLException.class);
            assertThat(readThroughGantry.getErrorCode()).isEqualTo(readDirectly.getErrorCode()).isEqualTo(1142);
            assertThat(readThroughGantry.getMessage()).isEqualTo(readDirectly.getMessage());
        }
    }

    @Test
    void fullAccountWrites() throws SQLException {
        try (Connection writer = viaGantry("writer", "writer-pw")) {
            execute(writer, "REPLACE INTO identity_rows VALUES (2)");
            assertThat(queryString(writer, "/*#mode=READWRITE*/ SELECT COUNT(*) FROM identity_rows WHERE id = 2"))
                    .isEqualTo("1");
        }
    }

    @Test
    void wrongPasswordAndUnknownAccountGetTheSameErrorAsDirectly() {
        for (String[] login : new String[][] {{"reader", "not-it"}, {"nobody", "x"}}) {
            SQLException throughGantry = catchThrowableOfType(() -> viaGantry(login[0], login[1]).close(),
                    SQLException.class);
            SQLException directly = catchThrowableOfType(() -> direct(topology.primary(), login[0], login[1]).close(),
                    SQLException.class);
            assertThat(throughGantry.getErrorCode()).as(login[0]).isEqualTo(directly.getErrorCode()).isEqualTo(1045);
            assertThat(throughGantry.getSQLState()).isEqualTo(directly.getSQLState());
        }
    }

    @Test
    void accountCreatedWhileGantryRunsLogsInAtOnceAndDroppingItStopsLogins() throws SQLException {
        try (Connection root = topology.connectAsAdmin(topology.primary())) {
            execute(root, "DROP USER IF EXISTS 'newcomer'@'%'");
            execute(root, "CREATE USER 'newcomer'@'%' IDENTIFIED BY 'fresh'");
            execute(root, "GRANT SELECT ON app.* TO 'newcomer'@'%'");
            topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
            try (Connection newcomer = viaGantry("newcomer", "fresh")) {
                assertThat(queryString(newcomer, "SELECT CURRENT_USER()")).isEqualTo("newcomer@%");
            }
            execute(root, "DROP USER 'newcomer'@'%'");
        }
        assertThat(catchThrowableOfType(() -> viaGantry("newcomer", "fresh").close(), SQLException.class)
                .getErrorCode()).isEqualTo(1045);
    }

    @Test
    void changeUserSwitchesPrivilegesOnEveryBackend() throws SQLException {
        try (Connection connection = viaGantry("writer", "writer-pw")) {
            execute(connection, "REPLACE INTO identity_rows VALUES (3)");
            assertThat(topology.replicas()).contains(gantry.whereRunsOnceSettled(connection, "SELECT @@server_id"));
            connection.unwrap(com.mysql.cj.jdbc.JdbcConnection.class).changeUser("reader", "reader-pw");
            assertThat(queryString(connection, "SELECT CURRENT_USER()")).isEqualTo("reader@%");
            assertThat(catchThrowableOfType(() -> execute(connection, "REPLACE INTO identity_rows VALUES (4)"),
                    SQLException.class).getErrorCode()).isEqualTo(1142);
        }
    }

    @Test
    void connectionPoolsOfTwoAccountsInterleave() throws SQLException {
        // allowPublicKeyRetrieval: on MySQL the accounts are caching_sha2_password, and these logins have no TLS.
        String url = "jdbc:mariadb://127.0.0.1:" + gantry.port()
                + "/app?sslMode=disable&allowPublicKeyRetrieval=true&maxPoolSize=3";
        try (MariaDbPoolDataSource readers = new MariaDbPoolDataSource(url + "&user=reader&password=reader-pw");
             MariaDbPoolDataSource writers = new MariaDbPoolDataSource(url + "&user=writer&password=writer-pw")) {
            for (int i = 0; i < 20; i++) {
                MariaDbPoolDataSource pool = i % 2 == 0 ? readers : writers;
                try (Connection connection = pool.getConnection()) {
                    assertThat(queryString(connection, "SELECT CURRENT_USER()"))
                            .isEqualTo(i % 2 == 0 ? "reader@%" : "writer@%");
                }
            }
        }
    }

    @Test
    void connectionIdIsTheGantrySessionIdOnEveryBackend() throws SQLException {
        try (Connection first = viaGantry("writer", "writer-pw"); Connection second = viaGantry("writer", "writer-pw")) {
            String onReplica = queryString(first, "SELECT CONNECTION_ID()");
            String onPrimary = queryString(first, "/*#mode=READWRITE*/ SELECT CONNECTION_ID()");
            assertThat(onReplica).isEqualTo(onPrimary);
            assertThat(queryString(second, "SELECT CONNECTION_ID()")).isNotEqualTo(onReplica);
        }
    }

    @Test
    void killQueryFromASecondClientInterruptsALongSelect() throws Exception {
        try (Connection sleeper = viaGantry("writer", "writer-pw"); Connection killer = viaGantry("writer", "writer-pw")) {
            String sessionId = queryString(sleeper, "SELECT CONNECTION_ID()");
            java.util.concurrent.CompletableFuture<String> sleeping = java.util.concurrent.CompletableFuture
                    .supplyAsync(() -> {
                        try {
                            return queryString(sleeper, "SELECT SLEEP(30)");
                        } catch (SQLException e) {
                            return "error " + e.getErrorCode();
                        }
                    });
            // Wait until the SLEEP really runs on a server, so the KILL interrupts it rather than racing it.
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> anyServerRuns("SELECT SLEEP(30)"));
            long started = System.nanoTime();
            execute(killer, "KILL QUERY " + sessionId);
            String outcome = sleeping.get(10, java.util.concurrent.TimeUnit.SECONDS);
            // MariaDB ends an interrupted SLEEP() with 1 (or error 1317 when interrupted elsewhere).
            assertThat(outcome).isIn("1", "error 1317");
            assertThat((System.nanoTime() - started) / 1_000_000).isLessThan(5_000);
            assertThat(queryString(sleeper, "SELECT 'still connected'")).isEqualTo("still connected");
        }
    }

    @Test
    void killNeedsThePrivilegesTheServerWouldRequireAndKillConnectionEndsTheSession() throws SQLException {
        try (Connection victim = viaGantry("writer", "writer-pw"); Connection stranger = viaGantry("reader", "reader-pw");
             Connection owner = viaGantry("writer", "writer-pw")) {
            String victimId = queryString(victim, "SELECT CONNECTION_ID()");
            SQLException refused = catchThrowableOfType(() -> execute(stranger, "KILL " + victimId), SQLException.class);
            assertThat(refused.getErrorCode()).isEqualTo(1095);
            assertThat(refused.getMessage()).contains("thread " + victimId);
            assertThat(catchThrowableOfType(() -> execute(owner, "KILL 999999"), SQLException.class).getErrorCode())
                    .isEqualTo(1094);
            execute(owner, "KILL CONNECTION " + victimId);
            assertThatThrownBy(() -> queryString(victim, "SELECT 1")).isInstanceOf(SQLException.class);
        }
    }

    private Connection viaGantry(String user, String password) throws SQLException {
        return DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + gantry.port()
                + "/app?sslMode=DISABLED&allowPublicKeyRetrieval=true", user, password);
    }

    private Connection direct(DatabaseServer server, String user, String password) throws SQLException {
        return DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + server.port()
                + "/app?sslMode=DISABLED&allowPublicKeyRetrieval=true", user, password);
    }

    /** Whether some server of the topology is running this statement text now. */
    private boolean anyServerRuns(String statement) throws SQLException {
        for (DatabaseServer server : topology.servers()) {
            try (Connection admin = topology.connectAsAdmin(server)) {
                String count = queryString(admin, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE info = '"
                        + statement + "'");
                if (!"0".equals(count)) {
                    return true;
                }
            }
        }
        return false;
    }
}
