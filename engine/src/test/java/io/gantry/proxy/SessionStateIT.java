package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static io.gantry.proxy.ProxyHarness.queryString;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.TopologyKinds;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Session settings behave as on a direct connection, whichever backend runs the next statement. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SessionStateIT {

    private Topology topology;
    private ProxyHarness gantry;

    /** The flavour this class runs against; a subclass runs the same tests on another. */
    TopologyKind kind() {
        return TopologyKind.MARIADB;
    }

    @BeforeAll
    void startProxy() throws SQLException {
        topology = TopologyKinds.shared(kind());
        gantry = ProxyHarness.start(topology);
        try (Connection connection = topology.connectAsApp(topology.primary())) {
            execute(connection, "CREATE DATABASE IF NOT EXISTS other");
            execute(connection, "CREATE TABLE IF NOT EXISTS other.marker (what VARCHAR(20))");
            execute(connection, "DELETE FROM other.marker");
            execute(connection, "INSERT INTO other.marker VALUES ('other database')");
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
    @EnumSource(Driver.class)
    void settingsMadeOnThePrimaryApplyOnTheReplica(Driver driver) throws SQLException {
        try (Connection connection = gantry.connect(driver)) {
            execute(connection, "SET time_zone = '+05:30'");
            execute(connection, "SET sql_mode = 'ANSI_QUOTES,NO_ENGINE_SUBSTITUTION'");
            execute(connection, "SET NAMES latin1");
            // Plain reads: they run on the session's replica, which must have been brought to the same state.
            assertThat(topology.replicas()).contains(gantry.whereRuns(connection, "SELECT @@server_id"));
            assertThat(queryString(connection, "SELECT @@time_zone")).isEqualTo("+05:30");
            assertThat(queryString(connection, "SELECT @@sql_mode")).isEqualTo("ANSI_QUOTES,NO_ENGINE_SUBSTITUTION");
            assertThat(queryString(connection, "SELECT @@character_set_client")).isEqualTo("latin1");
            // And on the primary too.
            assertThat(queryString(connection, "/*#mode=READWRITE*/ SELECT @@time_zone")).isEqualTo("+05:30");
        }
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void useSwitchesTheDatabaseOnEveryBackend(Driver driver) throws SQLException {
        try (Connection connection = gantry.connect(driver)) {
            execute(connection, "USE other");
            assertThat(queryString(connection, "SELECT DATABASE()")).isEqualTo("other");
            assertThat(queryString(connection, "SELECT what FROM marker")).isEqualTo("other database");
            assertThat(queryString(connection, "/*#mode=READWRITE*/ SELECT DATABASE()")).isEqualTo("other");
        }
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void catalogSwitchThroughTheDriverWorks(Driver driver) throws SQLException {
        try (Connection connection = gantry.connect(driver)) {
            // mysql-connector-j and MariaDB Connector/J send COM_INIT_DB or USE for this.
            connection.setCatalog("other");
            assertThat(queryString(connection, "SELECT what FROM marker")).isEqualTo("other database");
        }
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void userVariablesKeepTheirValues(Driver driver) throws SQLException {
        try (Connection connection = gantry.connect(driver)) {
            execute(connection, "SET @answer = 42");
            assertThat(queryString(connection, "SELECT @answer")).isEqualTo("42");
            assertThat(queryString(connection, "SELECT @answer + 1 FROM DUAL")).isEqualTo("43");
            // Setting a user variable pins the session to the primary for the rest of its life.
            assertThat(gantry.whereRuns(connection, "SELECT @@server_id")).isEqualTo(topology.primary());
        }
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void temporaryTablesStayVisible(Driver driver) throws SQLException {
        try (Connection connection = gantry.connect(driver)) {
            execute(connection, "CREATE TEMPORARY TABLE scratch (n INT)");
            execute(connection, "INSERT INTO scratch VALUES (1), (2), (3)");
            assertThat(queryString(connection, "SELECT SUM(n) FROM scratch")).isEqualTo("6");
        }
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void namedLocksAreHeldByTheSession(Driver driver) throws SQLException {
        try (Connection holder = gantry.connect(driver); Connection other = gantry.connect(driver)) {
            assertThat(queryString(holder, "SELECT GET_LOCK('gantry-test-" + driver + "', 5)")).isEqualTo("1");
            // IS_USED_LOCK() names the server's thread, while CONNECTION_ID() is the Gantry session id.
            assertThat(queryString(holder, "SELECT IS_USED_LOCK('gantry-test-" + driver + "') IS NOT NULL"))
                    .isEqualTo("1");
            assertThat(queryString(other, "SELECT GET_LOCK('gantry-test-" + driver + "', 0)")).isEqualTo("0");
            assertThat(queryString(holder, "SELECT RELEASE_LOCK('gantry-test-" + driver + "')")).isEqualTo("1");
        }
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void multiStatementTextReturnsEveryResultSet(Driver driver) throws SQLException {
        try (Connection connection = gantry.connect(driver, "allowMultiQueries=true");
             Statement statement = connection.createStatement()) {
            assertThat(statement.execute("SELECT 1; SELECT 2, 3; DO 1")).isTrue();
            try (ResultSet first = statement.getResultSet()) {
                first.next();
                assertThat(first.getInt(1)).isEqualTo(1);
            }
            assertThat(statement.getMoreResults()).isTrue();
            try (ResultSet second = statement.getResultSet()) {
                second.next();
                assertThat(second.getInt(2)).isEqualTo(3);
            }
            assertThat(statement.getMoreResults()).isFalse();
            // The session is still in step afterwards.
            assertThat(queryString(connection, "SELECT 'next'")).isEqualTo("next");
        }
    }

    @ParameterizedTest
    @EnumSource(value = Driver.class, names = {"MYSQL_CONNECTOR_J", "MYSQL_CONNECTOR_J_SERVER_PREPARED"})
    void changeUserStartsAFreshSession(Driver driver) throws SQLException {
        try (Connection connection = gantry.connect(driver)) {
            execute(connection, "SET @before = 'set'");
            execute(connection, "SET time_zone = '+03:00'");
            // COM_CHANGE_USER: same account (the only one Gantry accepts for now), another database.
            connection.unwrap(com.mysql.cj.jdbc.JdbcConnection.class).changeUser("app", "app");
            assertThat(queryString(connection, "SELECT @before")).isNull();
            assertThat(queryString(connection, "SELECT @@time_zone")).isNotEqualTo("+03:00");
            // No longer pinned by the old session's user variable: reads go to a replica again.
            assertThat(topology.replicas()).contains(gantry.whereRunsOnceSettled(connection, "SELECT @@server_id"));
        }
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void serverErrorsReachTheClientAndTheSessionGoesOn(Driver driver) throws SQLException {
        try (Connection connection = gantry.connect(driver)) {
            assertThatThrownBy(() -> queryString(connection, "SELECT * FROM no_such_table"))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("no_such_table")
                    .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1146));
            assertThat(queryString(connection, "SELECT 'still here'")).isEqualTo("still here");
        }
    }
}
