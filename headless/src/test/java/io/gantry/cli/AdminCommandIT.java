package io.gantry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gantry.Gantry;
import io.gantry.authority.Retention;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.UpstreamUrl;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code gantry admin} against a running engine on real servers. */
class AdminCommandIT {

    private static Topology topology;

    @TempDir
    Path dataDir;

    private Gantry gantry;

    @BeforeAll
    static void topology() {
        topology = Sandboxes.startPrivate(TopologyKind.MARIADB, "admin-command", 2);
    }

    @AfterAll
    static void stopTopology() {
        if (topology != null) {
            topology.close();
        }
    }

    @BeforeEach
    void start() throws Exception {
        ProxyConfig proxy = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0))
                .withConnectTimeout(Duration.ofSeconds(1)).withConnectRetries(0);
        List<UpstreamUrl> urls = topology.servers().stream()
                .map(s -> new UpstreamUrl(s.host(), s.port(), "app", "app", "app", 50)).toList();
        gantry = Gantry.start(new Gantry.Options(proxy, urls, List.of(), dataDir, Duration.ofSeconds(1),
                Retention.DEFAULT, Set.of(), Optional.empty()));
    }

    @AfterEach
    void stop() {
        gantry.close();
    }

    /** Runs {@code gantry admin ARGS}; returns the exit code, with what it printed in {@code out} and {@code err}. */
    private static int admin(StringWriter out, StringWriter err, String... args) {
        CommandLine commandLine = GantryCommand.newCommandLine();
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        String[] all = new String[args.length + 1];
        all[0] = "admin";
        System.arraycopy(args, 0, all, 1, args.length);
        return commandLine.execute(all);
    }

    @Test
    void printsTheServersAsAnAlignedTable() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = admin(out, err, "--data-dir", dataDir.toString(),
                "SELECT host, port, role, health, weight FROM gantry.upstream_servers ORDER BY port");
        assertThat(code).as(err.toString()).isZero();
        List<String> lines = out.toString().lines().toList();
        System.out.println("AdminCommandIT:\n" + out);
        assertThat(lines.get(0)).matches("\\+-+\\+-+\\+-+\\+-+\\+-+\\+");
        assertThat(lines.get(1)).matches("\\| host +\\| port +\\| role +\\| health +\\| weight \\|");
        for (DatabaseServer server : topology.servers()) {
            assertThat(out.toString()).containsPattern("\\| " + server.host() + " +\\| +" + server.port() + " \\| "
                    + (server.equals(topology.primary()) ? "primary" : "replica") + " +\\| up +\\| +50 \\|");
        }
        assertThat(lines).hasSize(3 + 3 + 1 + 1);
        assertThat(lines).allSatisfy(line -> assertThat(line.length()).isIn(lines.get(0).length(), "3 rows".length()));
        assertThat(lines.get(lines.size() - 1)).isEqualTo("3 rows");
    }

    @Test
    void jsonLinesHaveOneTypedObjectPerRow() throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        assertThat(admin(out, err, "--admin-socket", gantry.adminSocket().toString(), "--json",
                "SELECT host, port, active_cdc FROM gantry.upstream_servers")).as(err.toString()).isZero();
        List<String> lines = out.toString().lines().toList();
        assertThat(lines).hasSize(3);
        JsonNode first = new ObjectMapper().readTree(lines.get(0));
        assertThat(first.get("port").isIntegralNumber()).isTrue();
        assertThat(first.get("active_cdc").isBoolean()).isTrue();
    }

    @Test
    void queriesPrintsTheStatementDigests() throws Exception {
        try (Connection connection = DriverManager.getConnection("jdbc:mysql://127.0.0.1:"
                + gantry.address().getPort() + "/app?sslMode=DISABLED", "app", "app");
             Statement statement = connection.createStatement()) {
            for (int i = 0; i < 3; i++) {
                statement.executeQuery("SELECT 1 + " + i).close();
            }
        }
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        assertThat(admin(out, err, "--json", "--data-dir", dataDir.toString(), "queries", "--order-by", "count",
                "--limit", "50")).as(err.toString()).isZero();
        ObjectMapper json = new ObjectMapper();
        List<JsonNode> rows = new ArrayList<>();
        for (String line : out.toString().lines().toList()) {
            rows.add(json.readTree(line));
        }
        assertThat(rows).filteredOn(row -> row.get("Query").asText().equals("SELECT ? + ?")).singleElement()
                .satisfies(row -> assertThat(row.get("Count").asText()).isEqualTo("3"));
        assertThat(admin(out, err, "--data-dir", dataDir.toString(), "queries", "--order-by", "slowest"))
                .isEqualTo(2);
    }

    @Test
    void aChangeSaysWhatChangedAndAnErrorExitsWithOne() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        String replica = topology.replicas().get(0).address();
        assertThat(admin(out, err, "--data-dir", dataDir.toString(), "ALTER GANTRY SET WEIGHT '" + replica + "' TO 70"))
                .isZero();
        assertThat(out.toString()).isEqualTo("OK: weight of " + replica + " is now 70\n");
        assertThat(admin(out, err, "--data-dir", dataDir.toString(), "ALTER GANTRY SET WEIGHT 'x' TO 70")).isOne();
        assertThat(err.toString()).startsWith("gantry: invalid_statement: ALTER GANTRY SET WEIGHT expects");
    }

    @Test
    void withoutARunningGantryItSaysWhereItLooked() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Path nowhere = dataDir.resolve("nowhere");
        assertThat(admin(out, err, "--data-dir", nowhere.toString(), "SHOW GANTRY STATUS")).isOne();
        assertThat(err.toString()).contains("cannot connect to the admin socket " + nowhere.resolve("admin.sock"));
        assertThat(admin(out, err)).isEqualTo(2);
        assertThat(err.toString()).contains("give either an admin statement or --watch");
    }

    @Test
    void watchShowsTheServersAndTheDownEventOfAKilledReplica() throws Exception {
        SynchronizedWriter out = new SynchronizedWriter();
        StringWriter err = new StringWriter();
        DatabaseServer victim = topology.replicas().get(1);
        CompletableFuture<Integer> watching = CompletableFuture.supplyAsync(() -> admin(out, err, "--data-dir",
                dataDir.toString(), "--watch"));
        try {
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> out.text().contains("server  "
                    + victim.address() + "  replica  up"));
            topology.kill(victim);
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> out.text().lines().anyMatch(line ->
                    line.contains("  event   " + victim.address() + "  down  ")));
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> out.text().contains("server  "
                    + victim.address() + "  unknown  down") || out.text().contains("server  " + victim.address()
                    + "  replica  down"));
            System.out.println("AdminCommandIT --watch:\n" + out.text());
            assertThat(out.text().lines().findFirst().orElseThrow()).startsWith("watching Gantry ");
        } finally {
            gantry.close();
            assertThat(watching.get(10, TimeUnit.SECONDS)).as("--watch ends when the engine stops").isOne();
            topology.start(victim);
        }
        assertThat(Arrays.asList(err.toString().split("\n"))).anySatisfy(line -> assertThat(line)
                .startsWith("gantry: the engine closed the admin connection"));
    }

    @Test
    void queriesWatchPrintsTheShapesAtEveryPush() throws Exception {
        try (Connection connection = DriverManager.getConnection("jdbc:mysql://127.0.0.1:"
                + gantry.address().getPort() + "/app?sslMode=DISABLED", "app", "app");
             Statement statement = connection.createStatement()) {
            statement.executeQuery("SELECT 2 * 21").close();
        }
        SynchronizedWriter out = new SynchronizedWriter();
        StringWriter err = new StringWriter();
        CompletableFuture<Integer> watching = CompletableFuture.supplyAsync(() -> admin(out, err, "--data-dir",
                dataDir.toString(), "queries", "--watch", "--limit", "50"));
        try {
            // one push at once, the next about 2 s later: two tables, each with the shape's row
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> out.text().lines()
                    .filter(line -> line.matches("\\d\\d:\\d\\d:\\d\\d  queries by total_time")).count() >= 2);
            assertThat(out.text().lines().filter(line -> line.startsWith("| SELECT ? * ? ")).count())
                    .isGreaterThanOrEqualTo(2);
        } finally {
            gantry.close();
            assertThat(watching.get(10, TimeUnit.SECONDS)).as("--watch ends when the engine stops").isOne();
        }
    }

    /** A writer the watch thread writes to while the test reads it. */
    private static final class SynchronizedWriter extends StringWriter {
        synchronized String text() {
            return toString();
        }

        @Override
        public synchronized void write(String text, int offset, int length) {
            super.write(text, offset, length);
        }

        @Override
        public synchronized void write(int c) {
            super.write(c);
        }

        @Override
        public synchronized void write(char[] chars, int offset, int length) {
            super.write(chars, offset, length);
        }
    }
}
