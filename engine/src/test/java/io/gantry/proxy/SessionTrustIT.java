package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static io.gantry.proxy.ProxyHarness.queryString;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.proxy.ProxyFailureIT.RawClient;
import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The promises a proxy cannot break, each checked against what a direct connection to the same server does: an
 * acknowledged COMMIT is never lost, session state that cannot be rebuilt is never silently dropped, settings are
 * replayed as values (so an expression with side effects never runs on a replica), writes never escape a read-only
 * transaction, and what the client sees (column names, answers to malformed packets) is what the server would
 * send.
 */
class SessionTrustIT {

    /** Long enough past a one-second {@code wait_timeout} for the server to have closed an idle connection. */
    private static final long IDLE_PAST_TIMEOUT_MS = 3_000;

    private static Topology topology;
    private static ProxyHarness gantry;

    @BeforeAll
    static void startProxy() throws SQLException {
        topology = Sandboxes.shared(TopologyKind.MARIADB);
        gantry = ProxyHarness.start(topology);
        try (Connection connection = topology.connectAsApp(topology.primary())) {
            execute(connection, "CREATE TABLE IF NOT EXISTS trust_rows (id INT PRIMARY KEY, what VARCHAR(40))");
            execute(connection, "CREATE TABLE IF NOT EXISTS trust_side_effects (id INT AUTO_INCREMENT PRIMARY KEY)");
            execute(connection, "CREATE OR REPLACE FUNCTION trust_bump() RETURNS INT DETERMINISTIC MODIFIES SQL DATA "
                    + "BEGIN INSERT INTO trust_side_effects VALUES (NULL); RETURN 1; END");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
    }

    @AfterAll
    static void stopProxy() {
        gantry.close();
    }

    // ---- item 1: state that replay cannot rebuild is never silently dropped --------------------------------------

    @ParameterizedTest
    @EnumSource(value = Driver.class, names = {"MYSQL_CONNECTOR_J", "MARIADB_CONNECTOR_J"})
    void commitAfterTheServerClosedTheIdleConnectionFailsAndNothingIsCommitted(Driver driver) throws Exception {
        int id = 1000 + driver.ordinal();
        try (Connection direct = topology.connectAsApp(topology.primary())) {
            execute(direct, "DELETE FROM trust_rows WHERE id IN (" + id + ", " + (id + 100) + ")");
        }
        // Direct first, to state what the server does.
        try (Connection direct = topology.connectAsApp(topology.primary())) {
            assertThatThrownBy(() -> idleTransaction(direct, id + 100)).isInstanceOf(SQLException.class);
        }
        try (Connection connection = gantry.connect(driver)) {
            assertThatThrownBy(() -> idleTransaction(connection, id)).isInstanceOf(SQLException.class);
        }
        try (Connection direct = topology.connectAsApp(topology.primary())) {
            assertThat(queryString(direct, "SELECT COUNT(*) FROM trust_rows WHERE id IN (" + id + ", " + (id + 100)
                    + ")")).as("no row of either uncommitted transaction").isEqualTo("0");
        }
    }

    private static void idleTransaction(Connection connection, int id) throws Exception {
        execute(connection, "SET SESSION wait_timeout = 1");
        execute(connection, "START TRANSACTION");
        execute(connection, "INSERT INTO trust_rows VALUES (" + id + ", 'must not survive')");
        Thread.sleep(IDLE_PAST_TIMEOUT_MS);
        execute(connection, "COMMIT");
    }

    @Test
    void userVariablesAreNotSilentlyLostWhenTheServerClosesTheConnection() throws Exception {
        try (Connection connection = gantry.connect(Driver.MYSQL_CONNECTOR_J)) {
            execute(connection, "SET @kept := 42");
            execute(connection, "SET SESSION wait_timeout = 1");
            Thread.sleep(IDLE_PAST_TIMEOUT_MS);
            // Direct, the server has closed the session: the client gets an error, never a NULL.
            assertThatThrownBy(() -> queryString(connection, "SELECT @kept")).isInstanceOf(SQLException.class);
        }
    }

    @Test
    void temporaryTablesAreNotSilentlyLostWhenTheServerClosesTheConnection() throws Exception {
        try (Connection connection = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            execute(connection, "CREATE TEMPORARY TABLE trust_scratch (n INT)");
            execute(connection, "INSERT INTO trust_scratch VALUES (7)");
            execute(connection, "SET SESSION wait_timeout = 1");
            Thread.sleep(IDLE_PAST_TIMEOUT_MS);
            assertThatThrownBy(() -> queryString(connection, "SELECT n FROM trust_scratch"))
                    .isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getErrorCode())
                            .as("a lost connection, not 'table doesn't exist'").isNotEqualTo(1146));
        }
    }

    @Test
    void theClientsWaitTimeoutClosesTheSessionAsItWouldDirect() throws Exception {
        try (Connection connection = gantry.connect(Driver.MYSQL_CONNECTOR_J)) {
            execute(connection, "SET SESSION wait_timeout = 1");
            assertThat(queryString(connection, "SELECT 'still here'")).isEqualTo("still here");
            Thread.sleep(IDLE_PAST_TIMEOUT_MS);
            assertThatThrownBy(() -> queryString(connection, "SELECT 1")).isInstanceOf(SQLException.class);
        }
    }

    @Test
    void aReplicaConnectionThatHeldOnlySettingsIsReopenedWithThem() throws Exception {
        try (Connection connection = gantry.connect(Driver.MYSQL_CONNECTOR_J)) {
            execute(connection, "SET time_zone = '+03:00'");
            DatabaseServer replica = gantry.whereRuns(connection, "SELECT @@server_id");
            assertThat(topology.replicas()).contains(replica);
            // The session's next command runs on the primary; then its idle replica connection is killed.
            assertThat(queryString(connection, "/*#mode=READWRITE*/ SELECT 'on the primary'"))
                    .isEqualTo("on the primary");
            killGantryConnectionsOn(replica);
            // After the primary read, reads go to a replica again once a sample settles it (read guarantees): over
            // a new connection, which must carry the setting.
            assertThat(topology.replicas()).contains(gantry.whereRunsOnceSettled(connection, "SELECT @@server_id"));
            assertThat(queryString(connection, "SELECT @@time_zone")).isEqualTo("+03:00");
        }
    }

    private static void killGantryConnectionsOn(DatabaseServer server) throws SQLException {
        try (Connection admin = topology.connectAsAdmin(server);
             Statement statement = admin.createStatement();
             ResultSet rows = statement.executeQuery(
                     "SELECT id FROM information_schema.PROCESSLIST WHERE user = 'app' AND command = 'Sleep'")) {
            List<Long> ids = new ArrayList<>();
            while (rows.next()) {
                ids.add(rows.getLong(1));
            }
            for (long id : ids) {
                try (Statement kill = admin.createStatement()) {
                    kill.execute("KILL " + id);
                } catch (SQLException gone) {
                    // it ended on its own meanwhile
                }
            }
        }
    }

    // ---- item 2: settings are replayed as values ------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(Driver.class)
    void aSettingWithSideEffectsRunsOnceOnThePrimaryAndItsValueReachesTheReplicas(Driver driver) throws Exception {
        long before = sideEffectsOnPrimary();
        try (Connection connection = gantry.connect(driver)) {
            execute(connection, "SET @@session.sql_mode = (SELECT IF(trust_bump() = 1, "
                    + "'ANSI_QUOTES,NO_ENGINE_SUBSTITUTION', @@sql_mode))");
            // Reads on every replica: each needed the setting, as a value.
            for (int i = 0; i < 6; i++) {
                assertThat(queryString(connection, "SELECT @@sql_mode")).isEqualTo("ANSI_QUOTES,NO_ENGINE_SUBSTITUTION");
                assertThat(queryString(connection, "SELECT COUNT(*) FROM trust_rows")).isNotNull();
            }
            // The function's row is the session's own write: the replicas serve it once they have applied it.
            assertThat(topology.replicas()).contains(gantry.whereRunsOnceSettled(connection, "SELECT @@server_id"));
        }
        assertThat(sideEffectsOnPrimary()).as("the function ran once, on the primary").isEqualTo(before + 1);
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        for (DatabaseServer replica : topology.replicas()) {
            try (Connection admin = topology.connectAsAdmin(replica)) {
                assertThat(queryString(admin, "SELECT @@gtid_binlog_pos"))
                        .as("no transaction of the replica's own (server id %d)", replica.port())
                        .doesNotContain("-" + replica.port() + "-");
                assertThat(queryString(admin, "SELECT COUNT(*) FROM " + topology.database()
                        + ".trust_side_effects")).isEqualTo(String.valueOf(before + 1));
            }
        }
    }

    private static long sideEffectsOnPrimary() throws SQLException {
        try (Connection direct = topology.connectAsApp(topology.primary())) {
            return Long.parseLong(queryString(direct, "SELECT COUNT(*) FROM trust_side_effects"));
        }
    }

    // ---- item 3: writes never escape a read-only transaction -----------------------------------------------------

    @ParameterizedTest
    @EnumSource(Driver.class)
    void aWriteInsideAReadOnlyTransactionGets1792AndIsNotApplied(Driver driver) throws Exception {
        int id = 2000 + driver.ordinal();
        try (Connection connection = gantry.connect(driver)) {
            execute(connection, "START TRANSACTION READ ONLY");
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO trust_rows VALUES (?, ?)")) {
                insert.setInt(1, id);
                insert.setString(2, "escaped a read-only transaction");
                assertThatThrownBy(insert::executeUpdate).isInstanceOf(SQLException.class)
                        .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1792));
            }
            assertThatThrownBy(() -> execute(connection, "INSERT INTO trust_rows VALUES (" + (id + 100) + ", 'x')"))
                    .isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1792));
            execute(connection, "ROLLBACK");
        }
        try (Connection direct = topology.connectAsApp(topology.primary())) {
            assertThat(queryString(direct, "SELECT COUNT(*) FROM trust_rows WHERE id IN (" + id + ", " + (id + 100)
                    + ")")).isEqualTo("0");
        }
    }

    // ---- item 8: column names and types as direct ---------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(Driver.class)
    void connectionIdComesBackWithTheColumnADirectConnectionGives(Driver driver) throws Exception {
        for (String select : List.of("SELECT CONNECTION_ID()", "SELECT connection_id ( ) AS me, 'x'",
                "select 1, connection_id() `me too`", "select connection_id() + 0")) {
            // A driver that prepares on the server is asked the prepared form (binary rows), the others the text.
            boolean prepared = driver.name().endsWith("SERVER_PREPARED");
            ColumnShape direct;
            try (Connection connection = gantry.connectDirect(driver, topology.primary())) {
                direct = shapeOf(connection, select, prepared);
            }
            try (Connection connection = gantry.connect(driver)) {
                ColumnShape through = shapeOf(connection, select, prepared);
                if (select.endsWith("+ 0")) {
                    // Inside an expression the id is a number literal: same name, the expression's own type.
                    assertThat(through.label()).isEqualTo(direct.label());
                } else {
                    assertThat(through.withoutValue()).as(select).isEqualTo(direct.withoutValue());
                }
                assertThat(through.value()).as("the Gantry session id").isEqualTo(
                        queryString(connection, "SELECT CONNECTION_ID()"));
            }
        }
    }

    private record ColumnShape(String label, String name, int type, String typeName, int precision, String value) {
        ColumnShape withoutValue() {
            return new ColumnShape(label, name, type, typeName, precision, "");
        }
    }

    /** The shape of the column that holds the connection id: the first one that does not hold a constant. */
    private static ColumnShape shapeOf(Connection connection, String select, boolean prepared) throws SQLException {
        try (Statement statement = prepared ? connection.prepareStatement(select) : connection.createStatement();
             ResultSet rows = prepared ? ((java.sql.PreparedStatement) statement).executeQuery()
                     : statement.executeQuery(select)) {
            rows.next();
            ResultSetMetaData meta = rows.getMetaData();
            int column = select.startsWith("select 1") ? 2 : 1;
            return new ColumnShape(meta.getColumnLabel(column), meta.getColumnName(column), meta.getColumnType(column),
                    meta.getColumnTypeName(column), meta.getPrecision(column), rows.getString(column));
        }
    }

    // ---- item 9: a malformed command is answered, and the session goes on -------------------------------------

    @Test
    void aTruncatedExecuteIsAnsweredLikeTheServerAndTheSessionGoesOn() throws Exception {
        int directCode;
        try (RawClient direct = RawClient.login(topology.primary().port())) {
            directCode = truncatedExecute(direct);
        }
        try (RawClient raw = RawClient.login(gantry)) {
            assertThat(truncatedExecute(raw)).isEqualTo(directCode);
            raw.sendPacket(0, new byte[] {0x0E}); // COM_PING
            assertThat(raw.readPacket()[0]).as("the session still answers").isEqualTo((byte) 0);
            raw.sendPacket(0, "\u0003SELECT 'alive'".getBytes(StandardCharsets.ISO_8859_1));
            assertThat(raw.readPacket()[0]).as("a result set follows").isEqualTo((byte) 1);
        }
    }

    @Test
    void preparedStatementCommandsCutShortAreAnsweredAsTheServerDoes() throws Exception {
        // execute, send long data, close, reset, fetch: cut inside the statement id
        byte[] commands = {0x17, 0x18, 0x19, 0x1A, 0x1C};
        for (byte command : commands) {
            for (int length = 1; length <= 4; length++) {
                byte[] payload = new byte[length];
                payload[0] = command;
                List<Integer> direct = answersBeforePing(RawClient.login(topology.primary().port()), payload);
                List<Integer> through = answersBeforePing(RawClient.login(gantry), payload);
                assertThat(through).as("command 0x%02x cut to %d bytes", command, length).isEqualTo(direct);
            }
        }
    }

    /** Sends a payload and then a COM_PING; the error codes of what came back before the ping's OK. */
    private static List<Integer> answersBeforePing(RawClient client, byte[] payload) throws Exception {
        try (client) {
            client.sendPacket(0, payload);
            client.sendPacket(0, new byte[] {0x0E});
            List<Integer> errors = new ArrayList<>();
            while (true) {
                byte[] answer = client.readPacket();
                if (answer[0] == 0) {
                    return errors;
                }
                errors.add((answer[1] & 0xFF) | (answer[2] & 0xFF) << 8);
            }
        }
    }

    /** Prepares a two-parameter statement, then executes it with the parameter block cut off; the error code. */
    private static int truncatedExecute(RawClient client) throws Exception {
        client.sendPacket(0, "\u0016SELECT ?, ?".getBytes(StandardCharsets.ISO_8859_1));
        byte[] ok = client.readPacket();
        assertThat(ok[0]).as("prepare OK").isEqualTo((byte) 0);
        int columns = (ok[5] & 0xFF) | (ok[6] & 0xFF) << 8;
        int params = (ok[7] & 0xFF) | (ok[8] & 0xFF) << 8;
        for (int i = 0; i < params + 1 + columns + 1; i++) {
            client.readPacket(); // parameter definitions, EOF, column definitions, EOF
        }
        // COM_STMT_EXECUTE, statement id, no cursor, iteration count 1, and then nothing where the NULL bitmap
        // and the parameter types belong.
        client.sendPacket(0, new byte[] {0x17, ok[1], ok[2], ok[3], ok[4], 0x00, 1, 0, 0, 0});
        byte[] answer = client.readPacket();
        assertThat(answer[0] & 0xFF).as("an error packet").isEqualTo(0xFF);
        return (answer[1] & 0xFF) | (answer[2] & 0xFF) << 8;
    }
}
