package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static io.gantry.proxy.ProxyHarness.queryString;
import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.Gantry;
import io.gantry.TopologyKinds;
import io.gantry.authority.Retention;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.UpstreamUrl;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The settings MySQL Connector/J sends on every connect, {@code SET character_set_results = NULL} and
 * {@code SET autocommit=1} (the latter pools send on every return of a connection too), are answered by Gantry as the
 * server would answer them, without a server; a SET that changes autocommit still goes to the primary, and its effect
 * holds.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AutocommitSettingIT {

    private Topology topology;
    private Gantry gantry;

    @TempDir
    static Path dataDir;

    @BeforeAll
    void start() throws Exception {
        topology = TopologyKinds.shared(TopologyKind.MARIADB);
        List<UpstreamUrl> urls = topology.servers().stream()
                .map(s -> new UpstreamUrl(s.host(), s.port(), "app", "app", "app", 50)).toList();
        gantry = Gantry.start(new Gantry.Options(ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0)), urls,
                List.of(), dataDir, Duration.ofSeconds(1), Retention.DEFAULT, Set.of(), Optional.empty()));
        try (Connection connection = topology.connectAsApp(topology.primary())) {
            execute(connection, "CREATE TABLE IF NOT EXISTS autocommit_rows (id INT PRIMARY KEY)");
        }
    }

    @AfterAll
    void stop() {
        if (gantry != null) {
            gantry.close();
        }
    }

    /** MySQL Connector/J through Gantry, as the app account. */
    private Connection throughGantry() throws SQLException {
        return DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + gantry.address().getPort()
                + "/app?sslMode=DISABLED&allowPublicKeyRetrieval=true", "app", "app");
    }

    @Test
    void settingsThatOnlyGetAnOkAreAnsweredByGantryAsTheServerAnswersThem() throws Exception {
        try (Connection admin = throughGantry()) {
            execute(admin, "FLUSH GANTRY QUERIES");
        }
        // Each answer compared byte for byte; the last two show the deferred NULL took effect where the SELECT ran.
        // A first statement, so that a server has told the session's autocommit (its default may be off).
        List<String> statements = List.of("SELECT 1", "SET autocommit=1", "SET @@session.autocommit = ON",
                "SET character_set_results = latin1", "SET character_set_results = NULL",
                "SELECT @@character_set_results, CONVERT('\u00e9t\u00e9' USING utf8mb4)");
        List<List<byte[]>> direct = answers(topology.primary().port(), statements);
        List<List<byte[]>> proxied = answers(gantry.address().getPort(), statements);
        for (int i = 0; i < statements.size(); i++) {
            assertThat(proxied.get(i)).as("%s through Gantry, against direct", statements.get(i))
                    .usingElementComparator(Arrays::compare).isEqualTo(direct.get(i));
        }
        Map<String, String> whereRan = new HashMap<>();
        try (Connection admin = throughGantry();
             Statement show = admin.createStatement();
             ResultSet rows = show.executeQuery("SHOW GANTRY QUERIES")) {
            while (rows.next()) {
                whereRan.put(rows.getString("Query"), "gantry " + rows.getLong("On_gantry") + ", primary "
                        + rows.getLong("On_primary") + ", replica " + rows.getLong("On_replica"));
            }
        }
        assertThat(whereRan).containsEntry("SET @@session.autocommit = ON", "gantry 1, primary 0, replica 0")
                .containsEntry("SET character_set_results = latin1", "gantry 0, primary 1, replica 0");
        // Connector/J's own connect sends both too: the SHOW's connection counts one more of each.
        assertThat(whereRan.get("SET autocommit = ?")).isEqualTo("gantry 2, primary 0, replica 0");
        assertThat(whereRan.get("SET character_set_results = NULL")).isEqualTo("gantry 2, primary 0, replica 0");
    }

    /** Every packet of the answer to each statement, in one session logged in to {@code port}. */
    private static List<List<byte[]>> answers(int port, List<String> statements) throws Exception {
        List<List<byte[]>> answers = new ArrayList<>();
        try (WireClient client = WireClient.login(port, "app", "app", "app", WireClient.BASE_CAPABILITIES)) {
            for (String sql : statements) {
                answers.add(client.query(sql));
            }
        }
        return answers;
    }

    @Test
    void rowCountAfterItIsZeroAsOnTheServer() throws SQLException {
        for (boolean throughGantry : new boolean[] {false, true}) {
            try (Connection connection = throughGantry ? throughGantry()
                    : topology.connectAsApp(topology.primary())) {
                execute(connection, "DELETE FROM autocommit_rows");
                execute(connection, "INSERT INTO autocommit_rows VALUES (1), (2), (3)");
                execute(connection, "SET autocommit = 1");
                assertThat(queryString(connection, "SELECT ROW_COUNT()"))
                        .as(throughGantry ? "through Gantry" : "direct").isEqualTo("0");
            }
        }
    }

    @Test
    void autocommitTurnedOffStaysOffAndTurnedOnInATransactionCommitsIt() throws SQLException {
        try (Connection connection = throughGantry()) {
            execute(connection, "DELETE FROM autocommit_rows");
            execute(connection, "SET autocommit = 0"); // a change: the primary runs it
            execute(connection, "SET autocommit = 0"); // as it is: Gantry answers
            execute(connection, "INSERT INTO autocommit_rows VALUES (10)");
            execute(connection, "ROLLBACK");
            assertThat(queryString(connection, "SELECT COUNT(*) FROM autocommit_rows")).isEqualTo("0");
            execute(connection, "INSERT INTO autocommit_rows VALUES (11)");
            execute(connection, "SET autocommit = 1"); // inside the transaction: the server commits it
            execute(connection, "ROLLBACK");
        }
        try (Connection direct = topology.connectAsApp(topology.primary())) {
            assertThat(queryString(direct, "SELECT GROUP_CONCAT(id) FROM autocommit_rows")).isEqualTo("11");
        }
    }
}
