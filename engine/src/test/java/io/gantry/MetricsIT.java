package io.gantry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.authority.Retention;
import io.gantry.cdc.CdcSettings;
import io.gantry.cdc.TableFilter;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.UpstreamUrl;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --metrics-listen}: Prometheus scrapes {@code /metrics} during a small load, and the counters move. */
class MetricsIT {

    /** A sample line of the Prometheus text format: name, optional labels, a number. */
    private static final Pattern SAMPLE = Pattern.compile(
            "([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(?:[a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\\]|\\\\.)*\",?)*\\})? "
                    + "(-?[0-9.eE+-]+|NaN|\\+Inf|-Inf)");
    private static Topology topology;

    @TempDir
    Path dataDir;

    @BeforeAll
    static void topology() {
        topology = Sandboxes.shared(TopologyKind.MARIADB);
    }

    @Test
    void scrapedDuringALoadTheMetricsParseAndTheCountersMove() throws Exception {
        try (Gantry gantry = Gantry.start(options().withMetricsListen(new InetSocketAddress("127.0.0.1", 0)))) {
            InetSocketAddress metrics = gantry.metricsAddress().orElseThrow();
            Map<String, Double> before = scrape(metrics);
            int port = gantry.address().getPort();
            try (Connection session = DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + port + "/app", "app",
                    "app"); Statement statement = session.createStatement()) {
                for (int i = 0; i < 50; i++) {
                    try (ResultSet rows = statement.executeQuery("SELECT 1")) {
                        rows.next();
                    }
                }
                assertThatThrownBy(() -> statement.executeQuery("KILL 999999")).isInstanceOf(Exception.class);
                Map<String, Double> during = scrape(metrics);
                assertThat(during.get("gantry_client_sessions")).isGreaterThanOrEqualTo(1.0);
                double routed = sum(during, "gantry_statements_routed_total") - sum(before,
                        "gantry_statements_routed_total");
                assertThat(routed).isGreaterThanOrEqualTo(50);
                assertThat(sum(during, "gantry_statement_latency_seconds_count"))
                        .isGreaterThan(sum(before, "gantry_statement_latency_seconds_count"));
                assertThat(sum(during, "gantry_reads_total")).isGreaterThanOrEqualTo(50);
                assertThat(sum(during, "gantry_errors_total")).as("the refused KILL").isGreaterThanOrEqualTo(1);
                for (var server : topology.servers()) {
                    assertThat(during.get("gantry_upstream_up{server=\"" + server.address() + "\"}"))
                            .as("%s up", server.address()).isEqualTo(1.0);
                    assertThat(during.get("gantry_upstream_connect_seconds{server=\"" + server.address() + "\"}"))
                            .as("%s connect time", server.address()).isPositive();
                    assertThat(during.get("gantry_backend_connections_cap{server=\"" + server.address() + "\"}"))
                            .as("%s cap: four fifths of its max_connections", server.address()).isPositive();
                    assertThat(during.get("gantry_backend_waiting{server=\"" + server.address() + "\"}"))
                            .isZero();
                }
                assertThat(during.get("gantry_upstream_primary{server=\"" + topology.primary().address() + "\"}"))
                        .isEqualTo(1.0);
                // The shapes: SELECT 1 is among the top rows by total time, with its count and latency.
                String select = "{account=\"app\",digest=\"" + shapeDigest("SELECT ?", "app", "app")
                        + "\",schema=\"app\",shape=\"SELECT ?\"}";
                Map<String, Double> shapes = scrape(metrics);
                assertThat(shapes.keySet().stream().filter(k -> k.startsWith("gantry_query_shape_statements_total{")))
                        .hasSizeBetween(1, 20);
                assertThat(shapes.get("gantry_query_shape_statements_total" + select)).isGreaterThanOrEqualTo(50);
                assertThat(shapes.get("gantry_query_shape_seconds_total" + select)).isPositive();
                assertThat(shapes.get("gantry_query_shape_errors_total" + select)).isZero();
                assertThat(shapes.get("gantry_query_shape_latency_p99_seconds" + select)).isPositive();
                assertThat(shapes).containsKeys("gantry_slow_statements_total",
                        "gantry_slow_statements_dropped_total");
                // Every series the sample Grafana dashboard plots exists.
                String dashboard = java.nio.file.Files.readString(Path.of("..", "assets", "grafana-dashboard.json"));
                Matcher used = Pattern.compile("gantry_[a-z_]+").matcher(dashboard);
                while (used.find()) {
                    String name = used.group();
                    assertThat(during.keySet()).as("dashboard series %s", name)
                            .anyMatch(key -> key.equals(name) || key.startsWith(name + "{"));
                }
                // Exactly one state at a time (the shared servers may have no app table yet: then it is retrying).
                assertThat(sum(scrape(metrics), "gantry_cdc_state")).isEqualTo(1.0);
                assertThat(during).containsKey("gantry_cdc_lag_seconds");
            }
        }
    }

    @Test
    void aTakenMetricsPortStopsTheStartNamingTheFlag() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            assertThatThrownBy(() -> Gantry.start(options().withMetricsListen(
                    new InetSocketAddress("127.0.0.1", taken.getLocalPort()))))
                    .hasMessageContaining("--metrics-listen 127.0.0.1:" + taken.getLocalPort());
        }
    }

    /** Every sample of a scrape by its name and labels; fails on a line that is not the text format. */
    private static Map<String, Double> scrape(InetSocketAddress address) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + address.getPort() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
                type -> assertThat(type).startsWith("text/plain; version=0.0.4"));
        Map<String, Double> samples = new HashMap<>();
        for (String line : response.body().split("\n")) {
            if (line.isEmpty() || line.startsWith("# HELP ") || line.startsWith("# TYPE ")) {
                continue;
            }
            Matcher sample = SAMPLE.matcher(line);
            assertThat(sample.matches()).as("not a Prometheus sample line: %s", line).isTrue();
            samples.put(sample.group(1) + (sample.group(2) == null ? "" : sample.group(2)),
                    Double.parseDouble(sample.group(3).replace("+Inf", "Infinity")));
        }
        return samples;
    }

    /** What the metrics call a row: {@code ShapeMeters.digestId}, computed here again as its Javadoc says. */
    private static String shapeDigest(String shape, String schema, String account) {
        long hash = 0xcbf29ce484222325L;
        for (String part : List.of(shape, schema, account)) {
            for (int i = 0; i < part.length(); i++) {
                hash = (hash ^ part.charAt(i)) * 0x100000001b3L;
            }
            hash = (hash ^ 0xffff) * 0x100000001b3L;
        }
        return String.format("%016x", hash);
    }

    private static double sum(Map<String, Double> samples, String name) {
        return samples.entrySet().stream().filter(e -> e.getKey().equals(name) || e.getKey().startsWith(name + "{"))
                .mapToDouble(Map.Entry::getValue).sum();
    }

    private Gantry.Options options() {
        ProxyConfig proxy = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0))
                .withConnectTimeout(Duration.ofSeconds(2));
        List<UpstreamUrl> urls = topology.servers().stream()
                .map(s -> new UpstreamUrl(s.host(), s.port(), "app", "app", "app", 50)).toList();
        return new Gantry.Options(proxy, urls, List.of(), dataDir, Duration.ofSeconds(1), Retention.DEFAULT, Set.of(),
                Optional.of(new CdcSettings(Duration.ofSeconds(1), 1, Optional.of(dataDir.resolve("changes.jsonl")),
                        1 << 20, TableFilter.parse("app.*", "app"), false)));
    }
}
