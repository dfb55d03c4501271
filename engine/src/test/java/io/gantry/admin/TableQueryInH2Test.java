package io.gantry.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.admin.AdminStatement.TableQuery;
import io.gantry.authority.Authority;
import io.gantry.authority.EventKind;
import io.gantry.authority.HealthSample;
import io.gantry.authority.LiveServerRow;
import io.gantry.authority.QueryResult;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The text of a {@link TableQuery} runs unchanged in the Authority itself, through the same read-only path the
 * admin statements use: unquoted, backquoted and upper-case names, comments, parentheses, CTEs and a trailing
 * semicolon. Each query reads the event or the server row recorded here, so a query that H2 parses but reads
 * nothing from fails.
 */
class TableQueryInH2Test {

    @TempDir
    static Path dir;
    private static Authority authority;

    @BeforeAll
    static void recordARowInEveryTable() {
        authority = Authority.open(dir.resolve("data"));
        Instant at = Instant.parse("2024-05-01T10:00:00Z");
        authority.recordEvent(at, "db1:3306", EventKind.DOWN, "failover drill");
        authority.replaceLiveServers(List.of(new LiveServerRow("db1", 3306, "app", "app", 50, "proxy", false,
                "down", at, at, 0, "primary", null, null, null, null)));
        authority.recordHealth(List.of(new HealthSample(at, "db1:3306", "down", "unknown", null, null, null)));
    }

    @AfterAll
    static void close() {
        authority.close();
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {
        "SELECT * FROM gantry.upstream_servers",
        "select * from gantry.events;",
        "SELECT host, port FROM GANTRY.UPSTREAM_SERVERS WHERE health = 'down'",
        "SELECT host FROM gantry.upstream_servers WHERE `user` = 'app'",
        "SELECT * FROM `gantry`.`events`",
        "SELECT * FROM `GANTRY`.events",
        "SELECT * FROM gantry . events",
        "/* dashboard */ SELECT * FROM gantry.events -- newest first\nORDER BY at DESC",
        "(SELECT * FROM gantry.events)",
        "SELECT (SELECT count(*) FROM gantry.events) AS n",
        "SELECT gantry.events.kind FROM gantry.events",
        "WITH recent AS (SELECT * FROM gantry.events WHERE kind = 'down') SELECT * FROM recent",
        "SELECT /*!40001 SQL_NO_CACHE */ * FROM gantry.health_history",
        "TABLE gantry.events",
        "select\n*\nfrom\ngantry\n.\nevents\n;\n",
    })
    void runsUnchanged(String sql) {
        TableQuery query = (TableQuery) AdminStatements.parse(sql).orElseThrow();
        QueryResult result = authority.select(query.sql());
        assertThat(result.columns()).isNotEmpty();
        assertThat(result.rows()).as("the recorded row").isNotEmpty();
    }
}
