package io.gantry.authority;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ReadOnlySqlTest {

    @ParameterizedTest
    @ValueSource(strings = {
        "SELECT * FROM gantry.events",
        "  select 1",
        "-- a comment\nSELECT 1",
        "/* a; comment */ SHOW TABLES",
        "WITH x AS (SELECT 1) SELECT * FROM x",
        "VALUES (1)",
        "(SELECT 1) UNION (SELECT 2)",
        "SELECT 'a;b', \"c;d\", `e;f` FROM t",
        "SELECT 'it''s; fine'",
        "SELECT 1 -- trailing; comment",
        "TABLE gantry.events",
    })
    void acceptsOneReadOnlyStatement(String sql) {
        assertThat(ReadOnlySql.check(sql)).isNotBlank();
    }

    @Test
    void dropsATrailingSemicolon() {
        assertThat(ReadOnlySql.check("SELECT 1;  \n")).isEqualTo("SELECT 1");
        assertThat(ReadOnlySql.check("SELECT 1; -- done")).isEqualTo("SELECT 1");
    }

    @ParameterizedTest
    @ValueSource(strings = {"DELETE FROM gantry.events", "insert into t values (1)", "UPDATE t SET a = 1",
        "DROP TABLE gantry.events", "CREATE TABLE t(a INT)", "CALL 1", "SET EXCLUSIVE 1", "SHUTDOWN",
        "MERGE INTO t KEY(a) VALUES (1)", "/* SELECT */ DELETE FROM t"})
    void refusesEverythingElseNamingTheKeyword(String sql) {
        String keyword = sql.replaceAll("^/\\*.*?\\*/\\s*", "").split("\\s+")[0].toUpperCase();
        assertThatThrownBy(() -> ReadOnlySql.check(sql))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("only read-only statements (SELECT, SHOW, WITH, VALUES, TABLE) may run here, not " + keyword);
    }

    @Test
    void refusesASecondStatement() {
        assertThatThrownBy(() -> ReadOnlySql.check("SELECT 1; DELETE FROM gantry.events"))
                .hasMessage("one statement at a time; found more after the ';'");
        assertThatThrownBy(() -> ReadOnlySql.check("SELECT ';'; SELECT 2"))
                .hasMessage("one statement at a time; found more after the ';'");
    }

    @Test
    void refusesNothingAtAll() {
        assertThatThrownBy(() -> ReadOnlySql.check("  -- just a comment")).hasMessageStartingWith("an empty statement");
        assertThatThrownBy(() -> ReadOnlySql.check(null)).hasMessage("no SQL statement given");
    }
}
