package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static io.gantry.proxy.ProxyHarness.queryString;
import static io.gantry.proxy.ProxyHarness.sessionRow;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.gantry.TopologyKinds;
import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.proxy.backend.BackendPool;
import io.gantry.proxy.backend.BackendPools;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Connection multiplexing against real servers: idle and ended sessions leave their backend connections to the pool,
 * other sessions of the same account take them, and each session still sees only its own state.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MultiplexingIT {

    private static final Duration RETENTION = Duration.ofMillis(100);

    private Topology topology;
    private ProxyHarness gantry;

    TopologyKind kind() {
        return TopologyKind.MARIADB;
    }

    @BeforeAll
    void startProxy() throws SQLException {
        topology = TopologyKinds.shared(kind());
        // One I/O thread: the pools are per thread, and these tests follow one connection from session to session.
        gantry = ProxyHarness.start(topology, config -> config.withConnectionRetention(RETENTION).withEventLoopThreads(1)
                .withPool(new BackendPool.Settings(true, Duration.ofSeconds(60), 64)), servers -> servers);
        try (Connection connection = topology.connectAsApp(topology.primary())) {
            execute(connection, "CREATE TABLE IF NOT EXISTS multiplexed (id INT AUTO_INCREMENT PRIMARY KEY, "
                    + "what VARCHAR(20))");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
    }

    @AfterAll
    void stopProxy() {
        gantry.close();
    }

    /** The app account's connections on the primary, as the server counts them (the admin's own not included). */
    private long appConnectionsOnPrimary() throws SQLException {
        try (Connection admin = topology.connectAsAdmin(topology.primary());
             Statement statement = admin.createStatement();
             ResultSet rows = statement.executeQuery("SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                     + "WHERE USER = '" + topology.appAccount().user() + "'")) {
            rows.next();
            return rows.getLong(1);
        }
    }

    private BackendPools.Figures figures() {
        return gantry.proxy.backendPools().figures().stream()
                .filter(f -> f.server().equals(topology.primary().address())
                        && f.user().equals(topology.appAccount().user()))
                .findFirst().orElse(new BackendPools.Figures("", "", 0, 0, 0, 0, 0));
    }

    @Test
    void manyIdleSessionsShareAFewConnections() throws Exception {
        long before = appConnectionsOnPrimary();
        List<Connection> idle = new ArrayList<>();
        try {
            for (int i = 0; i < 30; i++) {
                Connection connection = gantry.connect(Driver.MARIADB_CONNECTOR_J);
                idle.add(connection);
                // Each login opens (or takes) a connection; once idle, it goes back for the next one.
                Thread.sleep(RETENTION.toMillis() * 3);
            }
            long during = appConnectionsOnPrimary() - before;
            assertThat(during).as("connections on the primary for 30 idle sessions logged in one after another")
                    .isLessThanOrEqualTo(3);
            assertThat(figures().reused()).isGreaterThanOrEqualTo(25);
            // Every idle session still works, on whichever connection it is given now.
            for (Connection connection : idle) {
                assertThat(queryString(connection, "/*#mode=READWRITE*/ SELECT 1")).isEqualTo("1");
            }
        } finally {
            for (Connection connection : idle) {
                connection.close();
            }
        }
    }

    /**
     * A session that only reads never runs a statement on the primary connection it logged in with (sysbench and
     * libmysqlclient clients send nothing at login): that connection goes to the pool one retention after the
     * login, as after a statement, instead of staying with the session for its whole life.
     */
    @Test
    void aSessionThatOnlyReadsGivesItsLoginConnectionToThePool() throws Exception {
        long before = appConnectionsOnPrimary();
        List<Connection> readers = new ArrayList<>();
        try {
            for (int i = 0; i < 10; i++) {
                Connection connection = gantry.connect(Driver.MYSQL_CONNECTOR_J);
                readers.add(connection);
                assertThat(queryString(connection, "SELECT 1")).isEqualTo("1");
                Thread.sleep(RETENTION.toMillis() * 3);
            }
            assertThat(appConnectionsOnPrimary() - before)
                    .as("connections on the primary for 10 sessions that logged in one after another and only read")
                    .isLessThanOrEqualTo(3);
        } finally {
            for (Connection connection : readers) {
                connection.close();
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = Driver.class, names = {"MARIADB_CONNECTOR_J", "MYSQL_CONNECTOR_J"})
    void aPooledConnectionCarriesNothingOfTheSessionBefore(Driver driver) throws Exception {
        try (Connection first = gantry.connect(driver)) {
            execute(first, "SET sql_mode = 'ANSI_QUOTES'");
            execute(first, "SET time_zone = '+03:00'");
            execute(first, "INSERT INTO multiplexed (what) VALUES ('first')");
            assertThat(Long.parseLong(queryString(first, "SELECT LAST_INSERT_ID()"))).isPositive();
        }
        long reusedBefore = figures().reused();
        try (Connection second = gantry.connect(driver)) {
            await().atMost(Duration.ofSeconds(5)).until(() -> figures().reused() > reusedBefore);
            String defaultMode;
            try (Connection direct = gantry.connectDirect(driver, topology.primary())) {
                defaultMode = queryString(direct, "SELECT @@session.sql_mode");
            }
            assertThat(queryString(second, "/*#mode=READWRITE*/ SELECT @@session.sql_mode")).isEqualTo(defaultMode);
            assertThat(queryString(second, "/*#mode=READWRITE*/ SELECT @@session.time_zone")).isEqualTo("SYSTEM");
            assertThat(queryString(second, "SELECT LAST_INSERT_ID()")).isEqualTo("0");
        }
    }

    /**
     * A connection reset for another session (COM_RESET_CONNECTION) loses what the server derived from the client's
     * login (CLIENT_IGNORE_SPACE puts IGNORE_SPACE in sql_mode): a session that logs in on it still has the
     * sql_mode (and character set, database, ...) a direct login with the same driver gets.
     */
    /** What a login sets from the client's handshake, as one text. */
    private static final String LOGIN_STATE = "SELECT CONCAT_WS(' | ', @@session.sql_mode, @@character_set_client, "
            + "@@character_set_results, @@collation_connection, @@autocommit, @@session.time_zone, DATABASE())";

    @ParameterizedTest
    @EnumSource(value = Driver.class, names = {"MARIADB_CONNECTOR_J", "MYSQL_CONNECTOR_J"})
    void aLoginOnAResetConnectionHasTheSqlModeOfADirectLogin(Driver driver) throws Exception {
        String direct;
        try (Connection connection = gantry.connectDirect(driver, topology.primary())) {
            direct = queryString(connection, LOGIN_STATE);
        }
        for (int round = 0; round < 3; round++) {
            try (Connection first = gantry.connect(driver)) {
                execute(first, "SET time_zone = '+0" + (round + 1) + ":00'");
                execute(first, "/*#mode=READWRITE*/ SELECT 1");
            }
            long reusedBefore = figures().reused();
            try (Connection second = gantry.connect(driver)) {
                assertThat(figures().reused()).as("the login took the pooled connection").isGreaterThan(reusedBefore);
                assertThat(queryString(second, "/*#mode=READWRITE*/ " + LOGIN_STATE)).isEqualTo(direct);
            }
        }
    }

    @Test
    void lastInsertIdFollowsTheSessionAcrossConnections() throws Exception {
        try (Connection connection = gantry.connect(Driver.MARIADB_CONNECTOR_J);
             Connection other = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            execute(connection, "INSERT INTO multiplexed (what) VALUES ('mine')");
            String mine = queryString(connection, "SELECT LAST_INSERT_ID()");
            Thread.sleep(RETENTION.toMillis() * 4); // the connection goes to the pool
            execute(other, "INSERT INTO multiplexed (what) VALUES ('theirs')");
            String theirs = queryString(other, "SELECT LAST_INSERT_ID()");
            Thread.sleep(RETENTION.toMillis() * 4);
            assertThat(queryString(connection, "SELECT LAST_INSERT_ID()")).isEqualTo(mine);
            assertThat(queryString(other, "SELECT LAST_INSERT_ID()")).isEqualTo(theirs);
            assertThat(mine).isNotEqualTo(theirs);
        }
    }

    @Test
    void stateThatCannotTravelKeepsTheSessionOnItsConnection() throws Exception {
        try (Connection connection = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            execute(connection, "SET @mine = 'kept'");
            execute(connection, "CREATE TEMPORARY TABLE scratch (v INT)"); // what pins: a temporary table
            execute(connection, "INSERT INTO scratch VALUES (7)");
            String thread = queryString(connection, "SELECT @@pseudo_thread_id");
            Thread.sleep(RETENTION.toMillis() * 4);
            // Another session of the same account meanwhile: it must not get this connection.
            try (Connection other = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
                assertThat(queryString(other, "/*#mode=READWRITE*/ SELECT @mine")).isNull();
                assertThat(queryString(other, "/*#mode=READWRITE*/ SELECT @@pseudo_thread_id")).isNotEqualTo(thread);
            }
            assertThat(queryString(connection, "SELECT @mine")).isEqualTo("kept");
            assertThat(queryString(connection, "SELECT v FROM scratch")).isEqualTo("7");
            assertThat(queryString(connection, "SELECT @@pseudo_thread_id")).isEqualTo(thread);
        }
    }

    /**
     * A statement prepared by name ({@code PREPARE st FROM ...}) lives on one connection: the session keeps that
     * connection, and no other session ever finds the statement, neither meanwhile nor after the session ended.
     */
    @Test
    void aStatementPreparedByNameKeepsItsConnectionAndNeverReachesAnotherSession() throws Exception {
        try (Connection other = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            try (Connection connection = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
                execute(connection, "PREPARE named_here FROM 'SELECT 42'");
                Thread.sleep(RETENTION.toMillis() * 4);
                assertThat(sessionRow(connection, "connections"))
                        .contains("pinned: it holds statements prepared with PREPARE");
                assertThatUnknownHere(other);
                assertThat(queryString(connection, "EXECUTE named_here")).isEqualTo("42");
            }
            Thread.sleep(RETENTION.toMillis() * 4);
            assertThatUnknownHere(other);
        }
    }

    private static void assertThatUnknownHere(Connection connection) {
        assertThatThrownBy(() -> queryString(connection, "EXECUTE named_here"))
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1243));
    }

    /**
     * User variables travel by value: a session that sets them does not keep its connection; each is read back and
     * replayed wherever the session goes next with its type, bytes and collation, as a direct connection keeps it.
     */
    @Test
    void userVariablesTravelByValue() throws Exception {
        List<String> setup = List.of(
                "SET @s = _utf8mb4 'naïve \\ ''quoted'' ü' COLLATE utf8mb4_unicode_ci, @i = -42, @d = 3.140, "
                        + "@r = 1.5E0 / 3, @n = NULL, @u = 18446744073709551615",
                "SELECT X'00FF61' INTO @b",
                "SET @i = @i + 1");
        String view = "SELECT @s, COLLATION(@s), @i, @i / 3, @d, @d * 2, @r, @r * 3, @n, @u, HEX(@b), LENGTH(@b)";
        String direct;
        try (Connection connection = gantry.connectDirect(Driver.MARIADB_CONNECTOR_J, topology.primary())) {
            for (String statement : setup) {
                execute(connection, statement);
            }
            direct = row(connection, view);
        }
        try (Connection connection = gantry.connect(Driver.MARIADB_CONNECTOR_J);
             Connection other = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            for (String statement : setup) {
                execute(connection, statement);
            }
            Thread.sleep(RETENTION.toMillis() * 4);
            assertThat(sessionRow(connection, "connections")).startsWith("none");
            // Another session takes the pooled connection: the variables are not there for it.
            assertThat(queryString(other, "/*#mode=READWRITE*/ SELECT @s")).isNull();
            assertThat(row(connection, view)).isEqualTo(direct);
        }
    }

    /** The first row's values, tab-separated. */
    private static String row(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
            rows.next();
            StringBuilder values = new StringBuilder();
            for (int i = 1; i <= rows.getMetaData().getColumnCount(); i++) {
                values.append(i == 1 ? "" : "\t").append(rows.getString(i));
            }
            return values.toString();
        }
    }

    /**
     * Warnings or an error of a session's statement stay readable by {@code SHOW WARNINGS} however long the session
     * waits before asking (as a person at the {@code mariadb} prompt does): the connection that has them stays with
     * the session until its next statement, then goes to the pool.
     */
    @Test
    void warningsAndErrorsWaitForTheSessionsNextStatement() throws Exception {
        try (Connection connection = gantry.connect(Driver.MARIADB_CONNECTOR_J);
             Connection other = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            queryString(connection, "/*#mode=READWRITE*/ SELECT 1/0");
            Thread.sleep(RETENTION.toMillis() * 4);
            // Another session on the same server meanwhile: a connection it took would have lost the warning.
            queryString(other, "/*#mode=READWRITE*/ SELECT 2");
            assertThat(sessionRow(connection, "connections")).contains("kept until the next statement");
            assertThat(warningCodes(connection)).containsExactly(1365); // Division by 0
            Thread.sleep(RETENTION.toMillis() * 4);
            // SHOW WARNINGS leaves them: still kept, until a statement that replaces them (one that reads a table).
            assertThat(sessionRow(connection, "connections")).contains("kept until the next statement");
            queryString(connection, "/*#mode=READWRITE*/ SELECT COUNT(*) FROM multiplexed");
            Thread.sleep(RETENTION.toMillis() * 4);
            assertThat(sessionRow(connection, "connections")).startsWith("none");

            try (Statement statement = connection.createStatement()) {
                statement.execute("/*#mode=READWRITE*/ SELECT * FROM no_such_table_here");
            } catch (SQLException expected) {
                assertThat(expected.getErrorCode()).isEqualTo(1146);
            }
            Thread.sleep(RETENTION.toMillis() * 4);
            queryString(other, "/*#mode=READWRITE*/ SELECT 3");
            assertThat(warningCodes(connection)).containsExactly(1146);
        }
    }

    /**
     * Sessions that use server-side prepared statements share connections too: a connection a session leaves has
     * the session's statements closed on it first (the server's Prepared_stmt_count comes back to where it was),
     * and the session's next execution prepares its statement again on whichever connection it is given.
     */
    @ParameterizedTest
    @EnumSource(value = Driver.class, names = {"MARIADB_CONNECTOR_J_SERVER_PREPARED", "MYSQL_CONNECTOR_J_SERVER_PREPARED"})
    void sessionsWithPreparedStatementsShareConnections(Driver driver) throws Exception {
        long preparedBefore = preparedOnPrimary();
        try (Connection first = gantry.connect(driver); Connection second = gantry.connect(driver)) {
            String sql = "/*#mode=READWRITE*/ SELECT CONCAT(?, @@pseudo_thread_id)";
            try (PreparedStatement mine = first.prepareStatement(sql);
                 PreparedStatement theirs = second.prepareStatement(sql)) {
                executeWith(mine, "first ");
                executeWith(theirs, "second ");
                assertThat(preparedOnPrimary()).isGreaterThan(preparedBefore);
                await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
                    assertThat(sessionRow(first, "connections")).startsWith("none");
                    assertThat(sessionRow(second, "connections")).startsWith("none");
                });
                // Both sessions left their connections: their statements were closed there.
                assertThat(preparedOnPrimary()).isEqualTo(preparedBefore);
                long reusedBefore = figures().reused();
                for (int round = 0; round < 3; round++) {
                    assertThat(executeWith(theirs, "second ")).startsWith("second ");
                    assertThat(executeWith(mine, "first ")).startsWith("first ");
                    Thread.sleep(RETENTION.toMillis() * 3);
                }
                assertThat(figures().reused()).isGreaterThan(reusedBefore);
            }
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> preparedOnPrimary() == preparedBefore);
    }

    private static String executeWith(PreparedStatement statement, String parameter) throws SQLException {
        statement.setString(1, parameter);
        try (ResultSet rows = statement.executeQuery()) {
            rows.next();
            return rows.getString(1);
        }
    }

    /** The server's count of prepared statements open, of every session. */
    private long preparedOnPrimary() throws SQLException {
        try (Connection admin = topology.connectAsAdmin(topology.primary());
             Statement statement = admin.createStatement();
             ResultSet rows = statement.executeQuery("SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'")) {
            rows.next();
            return rows.getLong(2);
        }
    }

    /**
     * ROW_COUNT() and FOUND_ROWS() asked long after the statement they are about, when the connection that ran it went
     * to the pool and another session ran a statement there meanwhile: the same values, column names and types as on
     * a direct connection. After SQL_CALC_FOUND_ROWS the connection stays with the session until its next statement.
     */
    @Test
    void rowCountAndFoundRowsAreTheSessionsOwnAfterItsConnectionWentToThePool() throws Exception {
        try (Connection setup = topology.connectAsApp(topology.primary())) {
            execute(setup, "CREATE OR REPLACE TABLE counted (id INT PRIMARY KEY, v INT)");
            execute(setup, "INSERT INTO counted VALUES (1, 1), (2, 2), (3, 3), (4, 4), (5, 5)");
            execute(setup, "CREATE OR REPLACE PROCEDURE counted_touch() BEGIN "
                    + "SELECT id FROM counted WHERE id < 4; UPDATE counted SET v = v + 1 WHERE id < 3; END");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        List<String> statements = List.of(
                "/*#mode=READWRITE*/ SELECT id FROM counted LIMIT 2",
                "INSERT INTO counted VALUES (6, 6), (7, 7), (8, 8)",
                "UPDATE counted SET v = v WHERE id = 1",
                "SET @@session.sql_select_limit = DEFAULT",
                "/*#mode=READWRITE*/ SELECT id FROM counted WHERE id > 100",
                "DELETE FROM counted WHERE id > 5",
                "CALL counted_touch()",
                "/*#mode=READWRITE*/ SELECT SQL_CALC_FOUND_ROWS id FROM counted LIMIT 1");
        String ask = "SELECT ROW_COUNT(), FOUND_ROWS(), ROW_COUNT() * 2 doubled, -FOUND_ROWS() AS negated, "
                + "CAST(ROW_COUNT() AS CHAR)";
        List<String> direct = new ArrayList<>();
        try (Connection connection = gantry.connectDirect(Driver.MARIADB_CONNECTOR_J, topology.primary())) {
            for (String statement : statements) {
                execute(connection, statement);
                direct.add(statement + " -> " + counts(connection, ask));
            }
        }
        try (Connection setup = topology.connectAsApp(topology.primary())) {
            execute(setup, "DELETE FROM counted WHERE id > 5");
            execute(setup, "UPDATE counted SET v = id");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        List<String> through = new ArrayList<>();
        try (Connection connection = gantry.connect(Driver.MARIADB_CONNECTOR_J);
             Connection other = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            for (String statement : statements) {
                execute(connection, statement);
                Thread.sleep(RETENTION.toMillis() * 4);
                // Another session takes the pooled connection and leaves its own counts on it.
                execute(other, "/*#mode=READWRITE*/ SELECT id FROM counted");
                through.add(statement + " -> " + counts(connection, ask));
            }
            Thread.sleep(RETENTION.toMillis() * 4);
            assertThat(sessionRow(connection, "connections")).startsWith("none");
            execute(connection, "/*#mode=READWRITE*/ SELECT SQL_CALC_FOUND_ROWS id FROM counted LIMIT 1");
            Thread.sleep(RETENTION.toMillis() * 4);
            assertThat(sessionRow(connection, "connections")).contains("kept until a result set replaces it: "
                    + "FOUND_ROWS() of an earlier SQL_CALC_FOUND_ROWS");
        }
        assertThat(through).containsExactlyElementsOf(direct);

        // SQL_CALC_FOUND_ROWS, then statements without a result set, then FOUND_ROWS(): still the count.
        List<String> calcThenWrite = List.of("/*#mode=READWRITE*/ SELECT SQL_CALC_FOUND_ROWS id FROM counted LIMIT 1",
                "DO 1", "UPDATE counted SET v = v WHERE id = 1");
        String directCount;
        try (Connection connection = gantry.connectDirect(Driver.MARIADB_CONNECTOR_J, topology.primary())) {
            for (String statement : calcThenWrite) {
                execute(connection, statement);
            }
            directCount = counts(connection, ask);
        }
        try (Connection connection = gantry.connect(Driver.MARIADB_CONNECTOR_J);
             Connection other = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            for (String statement : calcThenWrite) {
                execute(connection, statement);
                Thread.sleep(RETENTION.toMillis() * 4);
                execute(other, "/*#mode=READWRITE*/ SELECT id FROM counted");
            }
            assertThat(sessionRow(connection, "connections")).contains("FOUND_ROWS() of an earlier SQL_CALC_FOUND_ROWS");
            assertThat(counts(connection, ask)).isEqualTo(directCount);
        }
    }

    /**
     * A statement that reads the previous statement's diagnostics ({@code SHOW WARNINGS}, which Connector/J sends by
     * itself for {@code getWarnings()}, {@code SHOW COUNT(*) WARNINGS}, {@code GET DIAGNOSTICS}) leaves them, and
     * what {@code ROW_COUNT()} reads, as they were, so the connection that has them stays with the session for the
     * next statement; {@code GET DIAGNOSTICS ... ROW_COUNT} after that connection went to the pool is the session's
     * own count, and so are the counts the SQL of {@code EXECUTE IMMEDIATE} reads. Each answer as a direct connection gives it, with another session using the pooled connection
     * between the statements.
     */
    @Test
    void diagnosticStatementsLeaveThePreviousStatementsDiagnostics() throws Exception {
        try (Connection setup = topology.connectAsApp(topology.primary())) {
            execute(setup, "CREATE OR REPLACE TABLE diagnosed (v TINYINT)");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        List<String> statements = List.of(
                "INSERT IGNORE INTO diagnosed VALUES (300)",
                "SHOW WARNINGS",
                "SHOW COUNT(*) WARNINGS",
                "GET DIAGNOSTICS CONDITION 1 @code = MYSQL_ERRNO",
                "SHOW WARNINGS",
                "SELECT ROW_COUNT()",
                "INSERT INTO diagnosed VALUES (1), (2), (3)",
                "GET DIAGNOSTICS @rows = ROW_COUNT, @conditions = NUMBER",
                "SELECT @rows, @conditions, ROW_COUNT(), @code",
                "INSERT INTO diagnosed VALUES (4), (5)",
                "EXECUTE IMMEDIATE 'SELECT ROW_COUNT(), FOUND_ROWS()'");
        List<String> direct = new ArrayList<>();
        try (Connection connection = gantry.connectDirect(Driver.MARIADB_CONNECTOR_J, topology.primary())) {
            for (String statement : statements) {
                direct.add(statement + " -> " + answer(connection, statement));
            }
        }
        List<String> through = new ArrayList<>();
        try (Connection connection = gantry.connect(Driver.MARIADB_CONNECTOR_J);
             Connection other = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            for (String statement : statements) {
                through.add(statement + " -> " + answer(connection, statement));
                Thread.sleep(RETENTION.toMillis() * 4);
                // Another session takes a pooled connection: a statement that reads a table clears its warnings.
                execute(other, "/*#mode=READWRITE*/ SELECT v FROM diagnosed");
            }
        }
        assertThat(through).containsExactlyElementsOf(direct);
    }

    /** The rows of a statement's result ("a b; c d"), or its update count, and its warnings' codes. */
    private static String answer(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            StringBuilder text = new StringBuilder();
            if (statement.execute(sql)) {
                try (ResultSet rows = statement.getResultSet()) {
                    int columns = rows.getMetaData().getColumnCount();
                    while (rows.next()) {
                        for (int i = 1; i <= columns; i++) {
                            text.append(rows.getString(i)).append(i < columns ? " " : "; ");
                        }
                    }
                }
            } else {
                text.append("updated ").append(statement.getUpdateCount());
            }
            for (SQLWarning warning = statement.getWarnings(); warning != null; warning = warning.getNextWarning()) {
                text.append(" warning ").append(warning.getErrorCode());
            }
            return text.toString();
        }
    }

    /**
     * A server-side prepared statement cannot be given the counts in its text: a session that has one reading them
     * keeps the connection of its last statement until its next one, and the execution reads there what a direct
     * connection reads.
     */
    @ParameterizedTest
    @EnumSource(value = Driver.class, names = {"MARIADB_CONNECTOR_J_SERVER_PREPARED", "MYSQL_CONNECTOR_J_SERVER_PREPARED"})
    void aPreparedStatementReadingTheCountsKeepsTheLastStatementsConnection(Driver driver) throws Exception {
        try (Connection setup = topology.connectAsApp(topology.primary())) {
            execute(setup, "CREATE TABLE IF NOT EXISTS counted_prepared (id INT PRIMARY KEY, v INT)");
            execute(setup, "REPLACE INTO counted_prepared VALUES (1, 1), (2, 2), (3, 3)");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        String write = "UPDATE counted_prepared SET v = v + 1 WHERE id <= 2";
        String ask = "SELECT ROW_COUNT(), FOUND_ROWS()";
        String direct;
        // Executed once first: a driver may prepare on the server only at the first execution.
        try (Connection connection = gantry.connectDirect(driver, topology.primary());
             PreparedStatement counts = connection.prepareStatement(ask)) {
            row(counts);
            execute(connection, write);
            direct = row(counts);
        }
        try (Connection connection = gantry.connect(driver); Connection other = gantry.connect(driver);
             PreparedStatement counts = connection.prepareStatement(ask)) {
            row(counts);
            execute(connection, write);
            Thread.sleep(RETENTION.toMillis() * 4);
            execute(other, "/*#mode=READWRITE*/ SELECT id FROM counted_prepared");
            assertThat(sessionRow(connection, "connections")).contains("a prepared statement of the session reads");
            assertThat(row(counts)).isEqualTo(direct);
        }
    }

    private static String row(PreparedStatement statement) throws SQLException {
        try (ResultSet rows = statement.executeQuery()) {
            rows.next();
            return rows.getString(1) + " " + rows.getString(2);
        }
    }

    /** Each column's value, name and type, as one text. */
    private static String counts(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
            rows.next();
            ResultSetMetaData columns = rows.getMetaData();
            StringBuilder text = new StringBuilder();
            for (int i = 1; i <= columns.getColumnCount(); i++) {
                text.append(i == 1 ? "" : ", ").append(rows.getString(i)).append(' ').append(columns.getColumnLabel(i))
                        .append(' ').append(columns.getColumnTypeName(i)).append('(')
                        .append(columns.getPrecision(i)).append(')');
            }
            return text.toString();
        }
    }

    private static List<Integer> warningCodes(Connection connection) throws SQLException {
        List<Integer> codes = new ArrayList<>();
        try (Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SHOW WARNINGS")) {
            while (rows.next()) {
                codes.add(rows.getInt("Code"));
            }
        }
        return codes;
    }

    /**
     * Only a use of the connection keeps it: a session that goes on asking Gantry itself (SHOW GANTRY SESSION every
     * 30 ms, faster than the retention) still gives its idle connection to the pool.
     */
    @Test
    void statementsGantryAnswersItselfDoNotKeepAConnection() throws Exception {
        try (Connection connection = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            queryString(connection, "/*#mode=READWRITE*/ SELECT 1");
            await().atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(30))
                    .until(() -> sessionRow(connection, "connections").startsWith("none"));
        }
    }

    @Test
    void aTransactionKeepsItsConnectionWhileIdle() throws Exception {
        try (Connection connection = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            connection.setAutoCommit(false);
            execute(connection, "INSERT INTO multiplexed (what) VALUES ('in a transaction')");
            Thread.sleep(RETENTION.toMillis() * 4);
            try (Connection other = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
                assertThat(queryString(other, "/*#mode=READWRITE*/ SELECT COUNT(*) FROM multiplexed "
                        + "WHERE what = 'in a transaction'")).isEqualTo("0");
            }
            connection.commit();
            assertThat(queryString(connection, "/*#mode=READWRITE*/ SELECT COUNT(*) FROM multiplexed "
                    + "WHERE what = 'in a transaction'")).isNotEqualTo("0");
        }
    }

    /**
     * The idle timeout closes pooled connections but for the warm minimum of each server (per I/O thread); with no
     * minimum it closes them all. Connections of the minimum that the server closes are opened again.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(ints = {2, 0})
    void theIdleTimeoutLeavesTheWarmMinimumOfEachServer(int minimum) throws Exception {
        try (ProxyHarness pooled = ProxyHarness.start(topology, config -> config.withConnectionRetention(RETENTION)
                .withEventLoopThreads(1).withPool(new BackendPool.Settings(true, Duration.ofMillis(300), 64, 0,
                        Duration.ofSeconds(5), minimum)), servers -> servers)) {
            List<Connection> sessions = new ArrayList<>();
            try {
                // Six transactions at once: six connections to the primary, pooled when they end.
                for (int i = 0; i < 6; i++) {
                    Connection connection = pooled.connect(Driver.MARIADB_CONNECTOR_J);
                    sessions.add(connection);
                    connection.setAutoCommit(false);
                    execute(connection, "INSERT INTO multiplexed (what) VALUES ('warm')");
                }
            } finally {
                for (Connection connection : sessions) {
                    connection.commit();
                    connection.close();
                }
            }
            String primary = topology.primary().address();
            await().atMost(Duration.ofSeconds(5)).until(() -> idleOn(pooled, primary) >= 4);
            // Several idle timeouts later: the minimum is left, the rest closed.
            Thread.sleep(2500);
            assertThat(idleOn(pooled, primary)).isEqualTo(minimum);
            if (minimum == 0) {
                return;
            }
            // The server closes them (its wait_timeout, a restart, a KILL): the pool opens new ones, as the account of
            // a session that still lasts (the pool keeps no secret of its own).
            Connection alive = pooled.connect(Driver.MARIADB_CONNECTOR_J);
            queryString(alive, "/*#mode=READWRITE*/ SELECT 1");
            Thread.sleep(RETENTION.toMillis() * 4);
            long createdBefore = createdOn(pooled, primary);
            try (alive; Connection admin = topology.connectAsAdmin(topology.primary())) {
                List<Long> ids = new ArrayList<>();
                try (Statement statement = admin.createStatement();
                     ResultSet idle = statement.executeQuery("SELECT ID FROM information_schema.PROCESSLIST "
                             + "WHERE USER = '" + topology.appAccount().user() + "' AND COMMAND = 'Sleep'")) {
                    while (idle.next()) {
                        ids.add(idle.getLong(1));
                    }
                }
                for (long id : ids) {
                    execute(admin, "KILL " + id);
                }
                await().atMost(Duration.ofSeconds(5)).until(() -> createdOn(pooled, primary) >= createdBefore + minimum
                        && idleOn(pooled, primary) == minimum);
            }
        }
    }

    private long createdOn(ProxyHarness harness, String server) {
        return harness.proxy.backendPools().figures().stream()
                .filter(f -> f.server().equals(server) && f.user().equals(topology.appAccount().user()))
                .mapToLong(BackendPools.Figures::created).sum();
    }

    private long idleOn(ProxyHarness harness, String server) {
        return harness.proxy.backendPools().figures().stream()
                .filter(f -> f.server().equals(server) && f.user().equals(topology.appAccount().user()))
                .mapToLong(BackendPools.Figures::idle).sum();
    }

    /**
     * A setting the primary took and a replica refuses (a time zone name only the primary knows: its time zone
     * tables were loaded there alone, as happens): the read on the replica fails with the replica's own error, the
     * replica connection holding part of the settings never reaches another session, and setting the time zone
     * again replaces the refused value, so the reads work again.
     */
    @Test
    void aSettingAReplicaRefusesFailsThatReadOnlyAndLeaksToNoOtherSession() throws Exception {
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30)); // so that reads go to the replicas
        try (Connection admin = topology.connectAsAdmin(topology.primary())) {
            execute(admin, "SET sql_log_bin = 0");
            execute(admin, "INSERT INTO mysql.time_zone (Use_leap_seconds) VALUES ('N')");
            execute(admin, "SET @zone = LAST_INSERT_ID()");
            execute(admin, "INSERT INTO mysql.time_zone_name (Name, Time_zone_id) VALUES ('Gantry/Test', @zone)");
            execute(admin, "INSERT INTO mysql.time_zone_transition_type (Time_zone_id, Transition_type_id, `Offset`, "
                    + "Is_DST, Abbreviation) VALUES (@zone, 0, 3600, 0, 'GT')");
        }
        try {
            String defaultJoinSize;
            try (Connection direct = topology.connectAsApp(topology.replicas().get(0))) {
                defaultJoinSize = queryString(direct, "SELECT @@max_join_size");
                assertThatThrownBy(() -> execute(direct, "SET time_zone = 'Gantry/Test'"))
                        .as("the replicas do not know the name").isInstanceOf(SQLException.class);
            }
            try (Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
                execute(session, "/*#mode=READWRITE*/ SET time_zone = 'Gantry/Test'");
                execute(session, "SET max_join_size = 4242");
                // A read may go to the primary (until the replicas are known to have what the session read
                // there): it answers; on a replica the replayed time zone is refused, and only that read fails.
                int refused = 0;
                for (int i = 0; i < 6; i++) {
                    try {
                        assertThat(queryString(session, "SELECT CONCAT(@@time_zone, ' ', @@max_join_size)"))
                                .isEqualTo("Gantry/Test 4242");
                    } catch (SQLException e) {
                        assertThat(e.getErrorCode()).isEqualTo(1298);
                        assertThat(e.getMessage()).contains("Gantry/Test");
                        refused++;
                    }
                }
                assertThat(refused).as("reads that reached a replica").isGreaterThanOrEqualTo(3);
            }
            // The session ended with its replica connection holding max_join_size but not the time zone: closed,
            // not pooled as a connection with no settings.
            for (int i = 0; i < 8; i++) {
                try (Connection other = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
                    assertThat(queryString(other, "SELECT CONCAT(@@time_zone, ' ', @@max_join_size)"))
                            .isEqualTo("SYSTEM " + defaultJoinSize);
                }
            }
            try (Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
                execute(session, "/*#mode=READWRITE*/ SET time_zone = 'Gantry/Test'");
                execute(session, "SET max_join_size = 4242");
                execute(session, "SET time_zone = '+02:00'");
                assertThat(queryString(session, "SELECT CONCAT(@@time_zone, ' ', @@max_join_size)"))
                        .as("the newer time zone replaced the refused one").isEqualTo("+02:00 4242");
            }
        } finally {
            try (Connection admin = topology.connectAsAdmin(topology.primary())) {
                execute(admin, "SET sql_log_bin = 0");
                String zone = queryString(admin, "SELECT Time_zone_id FROM mysql.time_zone_name WHERE Name = 'Gantry/Test'");
                execute(admin, "DELETE FROM mysql.time_zone_transition_type WHERE Time_zone_id = " + zone);
                execute(admin, "DELETE FROM mysql.time_zone_name WHERE Time_zone_id = " + zone);
                execute(admin, "DELETE FROM mysql.time_zone WHERE Time_zone_id = " + zone);
            }
        }
    }
}
