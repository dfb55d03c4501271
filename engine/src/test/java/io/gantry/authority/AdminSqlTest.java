package io.gantry.authority;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Admin SQL on the Authority: what it sees, the types and text of its results, and what it refuses. */
class AdminSqlTest {

    private static final Instant T0 = Instant.parse("2026-11-30T21:00:00Z");

    @TempDir
    Path dir;

    private final Clock clock = Clock.fixed(T0, ZoneOffset.UTC);
    private Authority authority;

    @BeforeEach
    void open() {
        authority = Authority.open(dir.resolve("data"), clock);
    }

    @AfterEach
    void close() {
        authority.close();
    }

    private static HealthSample sample(String at, String server, String health, String role, Double rtt, Long lag,
                                       Double connect) {
        return new HealthSample(Instant.parse(at), server, health, role, rtt, lag, connect);
    }

    @Test
    void adminSqlSeesTheLiveServersWithTheDocumentedColumns() {
        Instant downSince = Instant.parse("2026-11-30T20:59:50.5Z");
        authority.replaceLiveServers(List.of(
                new LiveServerRow("db1", 3306, "shop", "gantry_svc", 50, "cdc, proxy", true, "up", null, T0, 12,
                        "primary", null, 0.25, 4.5, 0.3),
                new LiveServerRow("db2", 3307, "shop", "gantry_svc", 30, "proxy", false, "down", downSince,
                        downSince.minusSeconds(10), 0, "unknown", 1500L, null, null, null)));

        QueryResult all = authority.select("SELECT * FROM gantry.upstream_servers ORDER BY port");
        assertThat(all.columns()).containsExactly("host", "port", "database", "user", "weight", "purpose",
                "active_cdc", "health", "down_since", "last_ok", "connections", "role", "lag_ms", "rtt_ms",
                "connect_ms", "rtt_smoothed_ms");
        assertThat(all.rows()).containsExactly(
                Arrays.asList("db1", "3306", "shop", "gantry_svc", "50", "cdc, proxy", "1", "up", null,
                        "2026-11-30 21:00:00.000", "12", "primary", null, "0.25", "4.5", "0.3"),
                Arrays.asList("db2", "3307", "shop", "gantry_svc", "30", "proxy", "0", "down",
                        "2026-11-30 20:59:50.500", "2026-11-30 20:59:40.500", "0", "unknown", "1500", null, null,
                        null));

        QueryResult filtered = authority.select(
                "select host, `user`, weight from gantry.upstream_servers where health = 'up' order by weight desc "
                        + "limit 1;");
        assertThat(filtered.columns()).containsExactly("host", "user", "weight");
        assertThat(filtered.rows()).containsExactly(List.of("db1", "gantry_svc", "50"));

        authority.replaceLiveServers(List.of(new LiveServerRow("db3", 3306, "shop", "gantry_svc", 10, "proxy",
                false, "up", null, T0, 1, "replica", 0L, 3.0, 12.0, 3.5)));
        assertThat(authority.select("SELECT host, lag_ms, rtt_ms FROM gantry.upstream_servers").rows())
                .containsExactly(List.of("db3", "0", "3"));
    }

    @Test
    void adminSqlResultsAreTypedAndTheirTextIsWhatTheProxyPortShows() {
        authority.replaceLiveServers(List.of(new LiveServerRow("db1", 3306, "shop", "gantry_svc", 50, "proxy", true,
                "up", null, T0.plusMillis(5), 12, "primary", 7L, 0.25, 1.5, 0.3)));

        QueryResult result = authority.select("SELECT host, port, active_cdc, last_ok, down_since, lag_ms, rtt_ms, "
                + "CAST(1.50 AS DECIMAL(4, 2)) AS d, X'CAFE' AS b FROM gantry.upstream_servers");
        assertThat(result.types()).containsExactly(QueryResult.ValueType.TEXT, QueryResult.ValueType.INTEGER,
                QueryResult.ValueType.BOOLEAN, QueryResult.ValueType.TIMESTAMP, QueryResult.ValueType.TIMESTAMP,
                QueryResult.ValueType.INTEGER, QueryResult.ValueType.DOUBLE, QueryResult.ValueType.DECIMAL,
                QueryResult.ValueType.BINARY);
        List<Object> row = result.values().get(0);
        assertThat(row.subList(0, 8)).containsExactly("db1", 3306L, true, T0.plusMillis(5), null, 7L, 0.25,
                new java.math.BigDecimal("1.50"));
        assertThat((byte[]) row.get(8)).containsExactly(0xCA, 0xFE);
        assertThat(result.rows()).containsExactly(Arrays.asList("db1", "3306", "1", "2026-11-30 21:00:00.005", null,
                "7", "0.25", "1.50", "0xcafe"));
    }

    @Test
    void adminSqlReadsEventsAndHealthHistory() {
        authority.recordEvent(T0, "db1:3306", EventKind.DOWN, "connection refused");
        authority.recordHealth(List.of(sample("2026-11-30T21:00:00Z", "db1:3306", "down", "unknown", null, null, null),
                sample("2026-11-30T21:00:01Z", "db1:3306", "up", "primary", 0.08, null, 2.25)));

        assertThat(authority.select("SELECT * FROM gantry.events").columns())
                .containsExactly("id", "at", "server", "kind", "reason", "instance", "origin_id");
        assertThat(authority.select("SELECT kind, reason FROM gantry.events").rows())
                .containsExactly(List.of("down", "connection refused"));
        assertThat(authority.select("SELECT * FROM gantry.health_history").columns())
                .containsExactly("at", "server", "health", "role", "rtt_ms", "lag_ms", "connect_ms");
        assertThat(authority.select("SELECT COUNT(*) AS samples FROM gantry.health_history").rows())
                .containsExactly(List.of("2"));
        assertThat(authority.select("SELECT rtt_ms, connect_ms FROM gantry.health_history ORDER BY at").rows())
                .containsExactly(Arrays.asList(null, null), List.of("0.08", "2.25"));
    }

    @Test
    void queryAndSelectRefuseAnythingButAReadAndRunNothing() {
        authority.recordEvent(T0, null, EventKind.STARTUP, "started");

        assertThatThrownBy(() -> authority.query("DELETE FROM gantry.events", rows -> null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("only read-only statements (SELECT, SHOW, WITH, VALUES, TABLE) may run here, not DELETE");
        assertThatThrownBy(() -> authority.select("  /* sneaky */ drop table gantry.events"))
                .hasMessageEndingWith("not DROP");
        assertThatThrownBy(() -> authority.select("SELECT 1; DELETE FROM gantry.events"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("one statement at a time");
        assertThatThrownBy(() -> authority.select("SELECT * FROM OLD TABLE (DELETE FROM gantry.events)"))
                .isInstanceOf(AuthorityException.class)
                .hasMessageContaining("Not enough rights");
        assertThatThrownBy(() -> authority.select("SELECT CSVWRITE('" + dir.resolve("out.csv") + "', 'SELECT 1')"))
                .isInstanceOf(AuthorityException.class)
                .hasMessageContaining("Admin rights are required");
        assertThatThrownBy(() -> authority.select("SELECT * FROM gantry.nothing"))
                .isInstanceOf(AuthorityException.class)
                .hasMessage("Table \"NOTHING\" not found");

        assertThat(authority.events(null, 10)).hasSize(1);
        assertThat(dir.resolve("out.csv")).doesNotExist();
        long count = authority.query("SELECT COUNT(*) FROM gantry.events", rows -> {
            rows.next();
            return rows.getLong(1);
        });
        assertThat(count).isEqualTo(1L);
        assertThat(authority.select("SHOW TABLES FROM gantry").rows()).hasSize(9);
        assertThat(authority.select("VALUES (1, 'a')").rows()).containsExactly(List.of("1", "a"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {
        "SELECT * FROM gantry.upstream_servers",
        "select * from gantry.events;",
        "SELECT host, port FROM GANTRY.UPSTREAM_SERVERS WHERE health = 'down'",
        "SELECT * FROM `gantry`.`events`",
        "SELECT * FROM gantry . events",
        "/* dashboard */ SELECT * FROM gantry.events -- newest first\nORDER BY at DESC",
        "(SELECT * FROM gantry.events)",
        "SELECT gantry.events.kind FROM gantry.events",
        "WITH recent AS (SELECT * FROM gantry.events WHERE kind = 'down') SELECT * FROM recent",
        "SELECT /*!40001 SQL_NO_CACHE */ * FROM gantry.health_history",
        "TABLE gantry.events",
        "SELECT s.user, `user`, \"USER\" FROM gantry.upstream_servers s",
        "SELECT * FROM gantry.health_history ORDER BY at DESC LIMIT 10, 5",
        "SHOW TABLES FROM gantry",
        "SHOW COLUMNS FROM gantry.upstream_servers",
    })
    void mysqlFlavouredAdminQueriesRun(String sql) {
        authority.replaceLiveServers(List.of(new LiveServerRow("db9", 3306, "shop", "gantry_svc", 50, "cdc",
                false, "unchecked", null, null, 0, "unknown", null, null, null, null)));
        assertThat(authority.select(sql).columns()).isNotEmpty();
    }
}
