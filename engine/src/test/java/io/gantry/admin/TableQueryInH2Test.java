package io.gantry.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.admin.AdminStatement.TableQuery;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The text of a {@link TableQuery} runs unchanged in an in-memory H2 database in MySQL mode where
 * the tables live in schema {@code GANTRY}: unquoted, backquoted and upper-case names, comments,
 * parentheses, CTEs and a trailing semicolon.
 */
class TableQueryInH2Test {

    private static Connection h2;

    @BeforeAll
    static void createGantryTables() throws SQLException {
        h2 = DriverManager.getConnection("jdbc:h2:mem:table_query_test;MODE=MySQL");
        try (Statement s = h2.createStatement()) {
            s.execute("CREATE SCHEMA GANTRY");
            s.execute("CREATE TABLE GANTRY.UPSTREAM_SERVERS (HOST VARCHAR(255), PORT INT, HEALTH VARCHAR(16))");
            s.execute("CREATE TABLE GANTRY.EVENTS (ID BIGINT, AT TIMESTAMP, KIND VARCHAR(32))");
            s.execute("CREATE TABLE GANTRY.HEALTH_HISTORY (HOST VARCHAR(255), AT TIMESTAMP, HEALTH VARCHAR(16))");
            s.execute("INSERT INTO GANTRY.EVENTS VALUES (1, TIMESTAMP '2024-05-01 10:00:00', 'failover')");
        }
    }

    @AfterAll
    static void close() throws SQLException {
        h2.close();
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {
        "SELECT * FROM gantry.upstream_servers",
        "select * from gantry.events;",
        "SELECT host, port FROM GANTRY.UPSTREAM_SERVERS WHERE health = 'down'",
        "SELECT * FROM `gantry`.`events`",
        "SELECT * FROM `GANTRY`.events",
        "SELECT * FROM gantry . events",
        "/* dashboard */ SELECT * FROM gantry.events -- newest first\nORDER BY at DESC",
        "(SELECT * FROM gantry.events)",
        "SELECT (SELECT count(*) FROM gantry.events) AS n",
        "SELECT gantry.events.kind FROM gantry.events",
        "WITH recent AS (SELECT * FROM gantry.events WHERE kind = 'failover') SELECT * FROM recent",
        "SELECT /*!40001 SQL_NO_CACHE */ * FROM gantry.health_history",
        "TABLE gantry.events",
        "select\n*\nfrom\ngantry\n.\nevents\n;\n",
    })
    void runsUnchanged(String sql) throws SQLException {
        TableQuery query = (TableQuery) AdminStatements.parse(sql).orElseThrow();
        try (Statement s = h2.createStatement(); ResultSet rs = s.executeQuery(query.sql())) {
            assertThat(rs.getMetaData().getColumnCount()).isPositive();
        }
    }
}
