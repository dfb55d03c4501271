package io.gantry;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.authority.Retention;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.route.ReadBalance;
import io.gantry.route.RoutingConfig;
import io.gantry.sandbox.MariaDbTopology;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.UpstreamUrl;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Gantry's own result sets (admin SQL) read by every client the suite uses. A MariaDB client negotiates extended
 * column metadata with Gantry (the primary offers it), and then reads an extended-metadata field in every column
 * definition: Gantry's must carry it too, or the client misreads them.
 */
class AdminSqlClientsIT {

    private static final String SQL = "SELECT * FROM gantry.upstream_servers";
    private static final List<String> COLUMNS = List.of("host", "port", "database", "user", "weight", "purpose",
            "active_cdc", "health", "down_since", "last_ok", "connections", "role", "lag_ms", "rtt_ms", "connect_ms",
            "rtt_smoothed_ms");

    @TempDir
    static Path dataDir;

    private static MariaDbTopology topology;
    private static Gantry gantry;

    @BeforeAll
    static void start() throws Exception {
        topology = (MariaDbTopology) Sandboxes.shared(TopologyKind.MARIADB);
        List<UpstreamUrl> urls = topology.servers().stream()
                .map(s -> new UpstreamUrl(s.host(), s.port(), "app", "app", "app", 50)).toList();
        ProxyConfig proxy = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0))
                .withConnectTimeout(Duration.ofSeconds(2))
                .withRouting(new RoutingConfig(false, 0, ReadBalance.SESSION, true));
        gantry = Gantry.start(new Gantry.Options(proxy, urls, List.of(), dataDir, Duration.ofSeconds(1),
                Retention.DEFAULT, Set.of(), Optional.empty()));
    }

    @AfterAll
    static void stop() {
        gantry.close();
    }

    @Test
    void mariaDbConnectorJReadsUpstreamServers() throws Exception {
        assertReadsUpstreamServers("jdbc:mariadb://127.0.0.1:" + port() + "/app?sslMode=disable");
        assertReadsUpstreamServers("jdbc:mariadb://127.0.0.1:" + port() + "/app?sslMode=disable&useServerPrepStmts=true");
    }

    @Test
    void mysqlConnectorJReadsUpstreamServers() throws Exception {
        assertReadsUpstreamServers("jdbc:mysql://127.0.0.1:" + port() + "/app?sslMode=DISABLED");
    }

    @Test
    void mariaDbCommandLineClientReadsUpstreamServers() throws Exception {
        Process process = new ProcessBuilder(topology.installation().client().toString(), "--skip-ssl", "-h",
                "127.0.0.1", "-P", Integer.toString(port()), "-u", "app", "-papp", "app", "-t",
                "--column-type-info", "-e", SQL).redirectErrorStream(true).start();
        String output;
        try (InputStream out = process.getInputStream()) {
            output = new String(out.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as("mariadb client output: %s", output).isZero();
        assertThat(output).contains("Field   1:  `host`", "Field  14:  `rtt_ms`", "Field  15:  `connect_ms`", "Type:       VAR_STRING")
                .doesNotContain("format=");
        for (var server : topology.servers()) {
            assertThat(output).containsPattern("\\| " + server.host() + " +\\| " + server.port() + " +\\| app ");
        }
    }

    private static void assertReadsUpstreamServers(String url) throws Exception {
        try (Connection connection = DriverManager.getConnection(url, "app", "app");
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery(SQL)) {
            ResultSetMetaData meta = rows.getMetaData();
            List<String> labels = new ArrayList<>();
            for (int i = 1; i <= meta.getColumnCount(); i++) {
                labels.add(meta.getColumnLabel(i).toLowerCase());
                assertThat(meta.getColumnTypeName(i)).as("%s column %d", url, i).isEqualTo("VARCHAR");
            }
            assertThat(labels).as(url).containsExactlyElementsOf(COLUMNS);
            List<String> ports = new ArrayList<>();
            while (rows.next()) {
                ports.add(rows.getString("port"));
                assertThat(rows.getString("host")).isEqualTo("127.0.0.1");
            }
            assertThat(ports).as(url).containsExactlyInAnyOrderElementsOf(
                    topology.servers().stream().map(s -> Integer.toString(s.port())).toList());
        }
    }

    private static int port() {
        return gantry.address().getPort();
    }
}
