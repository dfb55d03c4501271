package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gantry.Gantry;
import io.gantry.TopologyKinds;
import io.gantry.authority.Retention;
import io.gantry.digest.DigestSettings;
import io.gantry.digest.StatementDigests;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.UpstreamUrl;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The statement digests against real servers (a MariaDB primary and two replicas): reads, writes, errors, a
 * transaction, a multi-statement text, prepared executions and Gantry's own statements run through Gantry, and
 * {@code SHOW GANTRY QUERIES} counts each shape with its errors by code, its rows and where it ran.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StatementDigestsIT {

    private Topology topology;
    private Gantry gantry;

    @TempDir
    static Path dataDir;

    @BeforeAll
    void start() throws Exception {
        topology = TopologyKinds.shared(TopologyKind.MARIADB);
        // Every statement goes to the slow-statement log too (0 ms), in the data directory.
        ProxyConfig proxy = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0))
                .withConnectTimeout(Duration.ofSeconds(2))
                .withDigests(new DigestSettings(true, StatementDigests.DEFAULT_MAX_SHAPES, Optional.of(Duration.ZERO),
                        false, Optional.empty()));
        List<UpstreamUrl> urls = topology.servers().stream()
                .map(s -> new UpstreamUrl(s.host(), s.port(), "app", "app", "app", 50)).toList();
        gantry = Gantry.start(new Gantry.Options(proxy, urls, List.of(), dataDir, Duration.ofSeconds(1),
                Retention.DEFAULT, Set.of(), Optional.empty()));
        try (Connection primary = topology.connectAsApp(topology.primary())) {
            execute(primary, "DROP TABLE IF EXISTS app.digest_t");
            execute(primary, "CREATE TABLE app.digest_t (id INT PRIMARY KEY, v INT)");
            execute(primary, "INSERT INTO app.digest_t VALUES (1, 10), (2, 20), (3, 30)");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
    }

    @AfterAll
    void stop() {
        if (gantry != null) {
            gantry.close();
        }
    }

    private Connection throughGantry(String options) throws SQLException {
        return DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + gantry.address().getPort() + "/app"
                + options, "app", "app");
    }

    /** SHOW GANTRY QUERIES of the app account in the app schema, by shape. */
    private static Map<String, Map<String, String>> queries(Connection connection, String statement)
            throws SQLException {
        Map<String, Map<String, String>> rows = new HashMap<>();
        try (Statement show = connection.createStatement(); ResultSet result = show.executeQuery(statement)) {
            while (result.next()) {
                Map<String, String> row = new HashMap<>();
                for (int i = 1; i <= result.getMetaData().getColumnCount(); i++) {
                    row.put(result.getMetaData().getColumnLabel(i), result.getString(i));
                }
                if (row.get("Account").equals("app") && row.get("Schema").equals("app")) {
                    rows.put(row.get("Query"), row);
                }
            }
        }
        return rows;
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void countsEveryKindOfStatementWithItsErrorsRowsAndWhereItRan() throws Exception {
        try (Connection connection = throughGantry("?allowMultiQueries=true&useServerPrepStmts=true")) {
            execute(connection, "FLUSH GANTRY QUERIES");
            try (Statement statement = connection.createStatement()) {
                for (int id = 1; id <= 3; id++) {
                    try (ResultSet rows = statement.executeQuery("SELECT v FROM digest_t WHERE id = " + id)) {
                        assertThat(rows.next()).isTrue();
                    }
                }
                statement.executeUpdate("INSERT INTO digest_t (id, v) VALUES (10, 1)");
                statement.executeUpdate("INSERT INTO digest_t (id, v) VALUES (11, /* a comment */ 1)");
                assertThatThrownBy(() -> statement.executeUpdate("INSERT INTO digest_t (id, v) VALUES (10, 1)"))
                        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1062));
                for (int i = 0; i < 2; i++) {
                    assertThatThrownBy(() -> statement.executeQuery("SELECT nope FROM digest_missing"))
                            .isInstanceOfSatisfying(SQLException.class,
                                    e -> assertThat(e.getErrorCode()).isEqualTo(1146));
                }
                // a transaction: its read runs on the primary, with the transaction's reason
                connection.setAutoCommit(false);
                assertThat(statement.executeUpdate("UPDATE digest_t SET v = v + 1 WHERE id IN (1, 2, 3)"))
                        .isEqualTo(3);
                try (ResultSet rows = statement.executeQuery("SELECT v FROM digest_t WHERE id = 1")) {
                    rows.next();
                }
                connection.commit();
                connection.setAutoCommit(true);
                // a write in a read-only transaction: error 1792, Gantry's when the transaction is on a replica
                // (it refuses the write there, as the server would), the primary's when it is on the primary
                statement.execute("START TRANSACTION READ ONLY");
                assertThatThrownBy(() -> statement.executeUpdate("INSERT INTO digest_t (v, id) VALUES (1, 99)"))
                        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1792));
                statement.execute("ROLLBACK");
                // a multi-statement text: each statement its own shape
                assertThat(statement.execute("SELECT v FROM digest_t WHERE id = 2; SELECT id FROM digest_t WHERE v > 0"))
                        .isTrue();
                do {
                    try (ResultSet rows = statement.getResultSet()) {
                        while (rows.next()) {
                            rows.getString(1);
                        }
                    }
                } while (statement.getMoreResults());
                execute(connection, "SHOW GANTRY STATUS");
                execute(connection, "SHOW GANTRY STATUS");
                // counted in the schema USE chose
                statement.execute("USE information_schema");
                statement.executeQuery("SELECT 1 AS in_another_schema").close();
                statement.execute("USE app");
            }
            try (PreparedStatement prepared = connection.prepareStatement("SELECT id, v FROM digest_t WHERE id = ?")) {
                for (int id = 1; id <= 3; id++) {
                    prepared.setInt(1, id);
                    try (ResultSet rows = prepared.executeQuery()) {
                        assertThat(rows.next()).isTrue();
                    }
                }
            }

            Map<String, Map<String, String>> rows = queries(connection, "SHOW GANTRY QUERIES");
            Map<String, String> pointRead = rows.get("SELECT v FROM digest_t WHERE id = ?");
            assertThat(pointRead).as("rows: %s", rows.keySet()).isNotNull();
            // three alone, one in the transaction, one in the multi-statement text
            assertThat(pointRead).containsEntry("Count", "5").containsEntry("Errors", "0")
                    .containsEntry("Rows_sent", "5").containsEntry("On_cache", "0").containsEntry("On_gantry", "0");
            // the first reads on a replica; after the session's writes, reads wait for the replicas or go to the
            // primary (read-your-writes); the transaction's on the primary
            assertThat(Long.parseLong(pointRead.get("On_primary")) + Long.parseLong(pointRead.get("On_replica")))
                    .isEqualTo(5);
            assertThat(Long.parseLong(pointRead.get("On_replica"))).isGreaterThanOrEqualTo(3);
            assertThat(pointRead.get("Routing_reasons")).contains("in_read_write_transaction:1");
            assertThat(Long.parseLong(pointRead.get("P99_us"))).isGreaterThanOrEqualTo(
                    Long.parseLong(pointRead.get("P50_us")));
            assertThat(Long.parseLong(pointRead.get("Max_us"))).isPositive();

            assertThat(rows.get("INSERT INTO digest_t ( id , v ) VALUES ( ? , ? )")).isNotNull()
                    .containsEntry("Count", "3").containsEntry("Errors", "1").containsEntry("Error_codes", "1062:1")
                    .containsEntry("Rows_affected", "2").containsEntry("On_primary", "3")
                    .containsEntry("Routing_reasons", "not_a_read:3");
            Map<String, String> readOnlyWrite = rows.get("INSERT INTO digest_t ( v , id ) VALUES ( ? , ? )");
            assertThat(readOnlyWrite).as("in a read-only transaction").isNotNull().containsEntry("Count", "1")
                    .containsEntry("Error_codes", "1792:1").containsEntry("On_replica", "0");
            assertThat(readOnlyWrite.get("On_gantry").equals("1")
                    ? readOnlyWrite.get("Routing_reasons").isEmpty() && readOnlyWrite.get("On_primary").equals("0")
                    : readOnlyWrite.get("Routing_reasons").equals("in_read_only_transaction:1"))
                    .as("refused by Gantry, or run on the primary: %s", readOnlyWrite).isTrue();
            assertThat(rows.get("SELECT nope FROM digest_missing")).isNotNull()
                    .containsEntry("Count", "2").containsEntry("Error_codes", "1146:2");
            assertThat(rows.get("UPDATE digest_t SET v = v + ? WHERE id IN ( ? )")).isNotNull()
                    .containsEntry("Count", "1").containsEntry("Rows_affected", "3").containsEntry("On_primary", "1");
            assertThat(rows.get("SELECT id FROM digest_t WHERE v > ?")).as("the multi-statement text's second")
                    .isNotNull().containsEntry("Count", "1").containsEntry("Rows_sent", "5");
            assertThat(rows.get("SELECT id , v FROM digest_t WHERE id = ?")).as("prepared executions").isNotNull()
                    .containsEntry("Count", "3").containsEntry("Rows_sent", "3");
            assertThat(rows.get("SHOW GANTRY STATUS")).isNotNull().containsEntry("Count", "2")
                    .containsEntry("On_gantry", "2");

            try (Statement show = connection.createStatement();
                 ResultSet result = show.executeQuery("SELECT schema_name FROM gantry.queries "
                         + "WHERE query = 'SELECT ? AS in_another_schema'")) {
                assertThat(result.next()).isTrue();
                assertThat(result.getString(1)).isEqualTo("information_schema");
            }

            Map<String, Map<String, String>> top = queries(connection, "SHOW GANTRY QUERIES ORDER BY errors LIMIT 1");
            assertThat(top.keySet()).containsExactly("SELECT nope FROM digest_missing");

            try (Statement table = connection.createStatement();
                 ResultSet result = table.executeQuery("SELECT count, error_codes, on_replica + on_primary AS ran "
                         + "FROM gantry.queries WHERE query = 'SELECT nope FROM digest_missing' AND account = 'app'")) {
                assertThat(result.next()).as("the row in gantry.queries").isTrue();
                assertThat(result.getLong("count")).isEqualTo(2);
                assertThat(result.getString("error_codes")).isEqualTo("1146:2");
                assertThat(result.getLong("ran")).isEqualTo(2);
            }

            List<String> proxied = new ArrayList<>();
            try (Statement show = connection.createStatement();
                 ResultSet result = show.executeQuery("SHOW PROXIED QUERIES")) {
                while (result.next()) {
                    proxied.add(result.getString("query") + " " + result.getString("count") + " "
                            + result.getString("cacheable"));
                }
            }
            assertThat(proxied).contains("SELECT v FROM digest_t WHERE id = ? 5 yes");

            execute(connection, "FLUSH GANTRY QUERIES");
            assertThat(queries(connection, "SHOW GANTRY QUERIES").keySet())
                    .noneMatch(shape -> shape.contains("digest_t"));
        }
    }

    @Test
    @Timeout(value = 1, unit = TimeUnit.MINUTES)
    void writesSlowStatementsToTheLogInTheDataDirectoryWithTheirLiteralsMasked() throws Exception {
        long session;
        try (Connection connection = throughGantry("")) {
            try (Statement statement = connection.createStatement();
                 ResultSet id = statement.executeQuery("SELECT CONNECTION_ID()")) {
                id.next();
                session = id.getLong(1);
            }
            try (Statement statement = connection.createStatement();
                 ResultSet rows = statement.executeQuery("SELECT v FROM digest_t WHERE id = 3 AND 'slow-log' <> 'x'")) {
                assertThat(rows.next()).isTrue();
            }
        }
        Path log = dataDir.resolve(DigestSettings.SLOW_LOG_FILE);
        ObjectMapper json = new ObjectMapper();
        List<String> replicas = topology.replicas().stream().map(s -> s.host() + ":" + s.port()).toList();
        Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            JsonNode line = null;
            List<String> lines = Files.readAllLines(log);
            for (String text : lines) {
                JsonNode read = json.readTree(text);
                if (read.get("shape").asText().equals("SELECT v FROM digest_t WHERE id = ? AND ? < > ?")) {
                    line = read;
                }
            }
            assertThat(line).as("the select's line in %s: %s", log, lines).isNotNull();
            assertThat(line.get("text").asText()).isEqualTo("SELECT v FROM digest_t WHERE id = ? AND ? < > ?");
            assertThat(line.get("session").asLong()).isEqualTo(session);
            assertThat(line.get("account").asText()).isEqualTo("app");
            assertThat(line.get("schema").asText()).isEqualTo("app");
            assertThat(line.get("ran_on").asText()).isEqualTo("replica");
            assertThat(line.get("server").asText()).isIn(replicas);
            assertThat(line.get("reason").asText()).startsWith("read_on");
            assertThat(line.get("rows_sent").asLong()).isEqualTo(1);
            assertThat(line.get("latency_ms").asDouble()).isPositive();
        });
    }
}
