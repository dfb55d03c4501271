package io.gantry.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.authority.Authority;
import io.gantry.authority.CdcPosition;
import io.gantry.cdc.CdcStream;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gantry run} as an operator runs it: the built jar in a process of its own, its settings in a
 * {@code --config} file, the service account's password in a password file or the environment, stopped with
 * SIGTERM while a real driver holds a transaction open.
 */
class RunCommandIT {

    /** A password found nowhere else, so a search for it cannot hit a user or database name. */
    private static final String SERVICE_USER = "gantry_svc";
    private static final String SERVICE_PASSWORD = "Pw-7c41d9e2-drain";
    private static final Pattern SAVED = Pattern.compile("cdc: stopped; position saved: GTID (\\S*)");

    private static Topology topology;

    @TempDir
    Path directory;

    private final List<Process> started = new ArrayList<>();
    /** Closed after each test, quietly: closing a connection the stop cut fails, and that is expected. */
    private final List<Connection> clients = new ArrayList<>();

    @BeforeAll
    static void serviceAccount() throws SQLException {
        topology = Sandboxes.shared(TopologyKind.MARIADB);
        GantryProcess.createServiceAccount(topology, SERVICE_USER, SERVICE_PASSWORD,
                "CREATE TABLE IF NOT EXISTS app.drained (id INT PRIMARY KEY, note VARCHAR(40))");
    }

    @AfterEach
    void stopLeftovers() {
        for (Connection client : clients) {
            try {
                client.close();
            } catch (SQLException cutByTheStop) {
                // the session ended with Gantry
            }
        }
        started.forEach(Process::destroyForcibly);
    }

    private Connection client(Connection connection) {
        clients.add(connection);
        return connection;
    }

    @Test
    void drainLetsAnOpenTransactionCommitRefusesNewClientsAndSavesThePosition() throws Exception {
        Path dataDir = directory.resolve("data");
        Path config = write("gantry.conf",
                "# as an operator writes it",
                "upstream-db-url = " + urlWithoutPassword(topology.primary()),
                "upstream-db-url = " + urlWithoutPassword(topology.replicas().get(0)),
                "upstream-password-file = " + passwordFile("rw-------"),
                "listen = 127.0.0.1:0",
                "data-dir = " + dataDir,
                "drain-timeout-secs = 60",
                "metrics-listen = 127.0.0.1:0");
        GantryProcess gantry = start(Map.of(), "--config", config.toString());

        Connection admin = client(gantry.connect(SERVICE_USER, SERVICE_PASSWORD));
        Connection inTransaction = client(gantry.connect("app", "app"));
        Connection idle = client(gantry.connect("app", "app"));
        // What an operator or a scraper sees holds no password.
        String metricsPort = gantry.matchOf(Pattern.compile("metrics: serving Prometheus metrics on "
                + "http://127\\.0\\.0\\.1:(\\d+)/metrics"));
        String metrics = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create("http://127.0.0.1:" + metricsPort + "/metrics")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        assertThat(metrics).contains("gantry_upstream_up{server=\"" + topology.primary().address() + "\"}");
        String status = dump(admin, "SHOW GANTRY STATUS") + dump(admin, "SELECT * FROM gantry.upstream_servers")
                + dump(admin, "SELECT * FROM gantry.events") + metrics;
        assertThat(status).contains(topology.primary().address()).doesNotContain(SERVICE_PASSWORD);
        update(admin, "DELETE FROM drained");
        String before = awaitStreamedUpTo(admin, primaryPosition());

        inTransaction.setAutoCommit(false);
        update(inTransaction, "INSERT INTO drained VALUES (1, 'before SIGTERM')");

        gantry.process().toHandle().destroy(); // SIGTERM, as systemd sends
        gantry.awaitLine("proxy: draining: no new clients");

        // No new clients: the port is closed.
        assertThatThrownBy(() -> gantry.connect("app", "app")).isInstanceOf(SQLException.class);
        // The idle session is told why it ends, with the server's own shutdown error.
        assertThatThrownBy(() -> dump(idle, "SELECT 1")).isInstanceOf(SQLException.class)
                .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1053))
                .hasMessageContaining("Server shutdown in progress: Gantry is stopping");
        // The transaction goes on to its commit.
        update(inTransaction, "INSERT INTO drained VALUES (2, 'during the drain')");
        inTransaction.commit();
        String after = primaryPosition();

        assertThat(gantry.process().waitFor(30, TimeUnit.SECONDS)).as(gantry.output()).isTrue();
        assertThat(gantry.process().exitValue()).as(gantry.output()).isZero();
        assertThat(gantry.output()).contains("drained in").contains("gantry: stopped");

        assertThat(primaryRows()).containsExactly("1 before SIGTERM", "2 during the drain");
        String logged = gantry.matchOf(SAVED);
        assertThat(logged).isIn(before, after);
        try (Authority authority = Authority.open(dataDir)) {
            assertThat(authority.loadPosition(CdcStream.STREAM)).map(CdcPosition::gtidSet).contains(logged);
        }
        assertThat(gantry.output()).doesNotContain(SERVICE_PASSWORD);
    }

    @Test
    void secondSignalStopsAtOnceAndPasswordOnTheCommandLineIsWarnedOf() throws Exception {
        GantryProcess gantry = start(Map.of(), "--upstream-db-url", "mysql://" + SERVICE_USER + ":" + SERVICE_PASSWORD + "@"
                        + topology.primary().address() + "/app", "--listen", "127.0.0.1:0",
                "--data-dir", directory.resolve("data").toString(), "--no-cdc", "--drain-timeout-secs", "120");
        assertThat(gantry.output()).contains("--upstream-db-url holds a password on the command line, where every "
                + "local user sees it");
        Connection inTransaction = client(gantry.connect("app", "app"));
        inTransaction.setAutoCommit(false);
        update(inTransaction, "INSERT INTO drained VALUES (10, 'cut')");
        long signalled = System.nanoTime();
        gantry.process().toHandle().destroy();
        gantry.awaitLine("proxy: draining: no new clients");
        gantry.process().toHandle().destroy();
        assertThat(gantry.process().waitFor(20, TimeUnit.SECONDS)).as(gantry.output()).isTrue();
        assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - signalled)).isLessThan(20);
        assertThat(gantry.process().exitValue()).isZero();
        assertThat(gantry.output()).contains("stopping with 1 sessions still inside a transaction (a second "
                + "stop signal)");
        assertThatThrownBy(inTransaction::commit).isInstanceOf(SQLException.class);
        assertThat(primaryRows()).noneMatch(row -> row.startsWith("10 "));
    }

    @Test
    void drainTimeoutCutsTransactionsLeftOpen() throws Exception {
        GantryProcess gantry = start(Map.of("GANTRY_UPSTREAM_PASSWORD", SERVICE_PASSWORD,
                        "GANTRY_UPSTREAM_DB_URL", urlWithoutPassword(topology.primary()),
                        "GANTRY_DRAIN_TIMEOUT_SECS", "1", "GANTRY_NO_CDC", "true"),
                "--listen", "127.0.0.1:0", "--data-dir", directory.resolve("data").toString());
        Connection inTransaction = client(gantry.connect("app", "app"));
        inTransaction.setAutoCommit(false);
        update(inTransaction, "INSERT INTO drained VALUES (20, 'timed out')");
        gantry.process().toHandle().destroy();
        assertThat(gantry.process().waitFor(20, TimeUnit.SECONDS)).as(gantry.output()).isTrue();
        assertThat(gantry.process().exitValue()).isZero();
        assertThat(gantry.output()).contains("(--drain-timeout-secs 1 passed)");
        assertThat(primaryRows()).noneMatch(row -> row.startsWith("20 "));
        assertThat(gantry.output()).doesNotContain(SERVICE_PASSWORD);
    }

    @Test
    void jsonLogFormatWritesOneJsonObjectPerLine() throws Exception {
        GantryProcess gantry = start(Map.of("GANTRY_UPSTREAM_PASSWORD", SERVICE_PASSWORD),
                "--upstream-db-url", urlWithoutPassword(topology.primary()), "--listen", "127.0.0.1:0",
                "--data-dir", directory.resolve("data").toString(), "--no-cdc", "--log-format", "json");
        gantry.process().toHandle().destroy();
        assertThat(gantry.process().waitFor(20, TimeUnit.SECONDS)).as(gantry.output()).isTrue();
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        List<String> messages = new ArrayList<>();
        List<String> serverFields = new ArrayList<>();
        for (String line : gantry.lines()) {
            com.fasterxml.jackson.databind.JsonNode entry = json.readTree(line);
            assertThat(entry.path("level").asText()).as(line).isIn("TRACE", "DEBUG", "INFO", "WARN", "ERROR");
            assertThat(entry.path("loggerName").asText()).as(line).startsWith("io.gantry.");
            assertThat(entry.path("timestamp").asLong()).as(line).isPositive();
            messages.add(entry.path("formattedMessage").asText());
            if (entry.path("formattedMessage").asText().startsWith("proxy: primary is ")) {
                serverFields.add(entry.path("kvpList").findPath("server").asText());
            }
        }
        assertThat(messages).anyMatch(message -> message.startsWith("proxy: listening on 127.0.0.1:"));
        assertThat(serverFields).as("the server a line is about, as a field").containsExactly(
                topology.primary().address());
        assertThat(gantry.output()).doesNotContain(SERVICE_PASSWORD);
    }

    @Test
    void anUnknownLogFormatIsRefusedNamingIt() throws Exception {
        GantryProcess gantry = GantryProcess.launch(Map.of(), "--upstream-db-url",
                urlWithoutPassword(topology.primary()), "--log-format", "xml", "--data-dir",
                directory.resolve("data").toString());
        assertThat(gantry.awaitExit(Duration.ofSeconds(30))).isEqualTo(2);
        assertThat(gantry.output()).contains("--log-format must be text or json, not 'xml'");
    }

    @Test
    void passwordFileOthersCanReadIsRefusedNamingIt() throws Exception {
        Path file = passwordFile("rw-r--r--");
        GantryProcess gantry = GantryProcess.launch(Map.of(), "--upstream-db-url",
                urlWithoutPassword(topology.primary()), "--upstream-password-file", file.toString(), "--data-dir",
                directory.resolve("data").toString());
        assertThat(gantry.awaitExit(Duration.ofSeconds(30))).isEqualTo(2);
        assertThat(gantry.output()).contains("--upstream-password-file " + file + " may be read by group or others")
                .doesNotContain(SERVICE_PASSWORD);
    }

    // ---- the process --------------------------------------------------------------------------------------------

    private GantryProcess start(Map<String, String> environment, String... arguments) throws Exception {
        GantryProcess gantry = GantryProcess.launch(environment, arguments);
        started.add(gantry.process());
        gantry.awaitServing();
        assertNoPasswordInArguments(gantry.process());
        return gantry;
    }

    /** What {@code ps} shows of Gantry and of any process it started holds no password it was given apart. */
    private static void assertNoPasswordInArguments(Process process) throws IOException {
        List<ProcessHandle> processes = new ArrayList<>();
        processes.add(process.toHandle());
        processes.addAll(process.descendants().toList());
        for (ProcessHandle handle : processes) {
            byte[] cmdline = Files.readAllBytes(Path.of("/proc", Long.toString(handle.pid()), "cmdline"));
            String arguments = new String(cmdline, StandardCharsets.UTF_8).replace('\0', ' ');
            if (!arguments.contains(SERVICE_USER + ":" + SERVICE_PASSWORD)) { // the one test that puts it there
                assertThat(arguments).contains("gantry").doesNotContain(SERVICE_PASSWORD);
            }
        }
    }

    // ---- helpers ------------------------------------------------------------------------------------------------

    private static String urlWithoutPassword(DatabaseServer server) {
        return "mysql://" + SERVICE_USER + "@" + server.address() + "/app";
    }

    private Path passwordFile(String mode) throws IOException {
        Path file = write("password-" + mode, SERVICE_PASSWORD);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    private Path write(String name, String... lines) throws IOException {
        return Files.write(directory.resolve(name), List.of(lines));
    }

    /** Waits until the change stream has applied {@code position}; returns it. */
    private static String awaitStreamedUpTo(Connection admin, String position) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        String status = "";
        while (!status.contains("CDC Position " + position + "\n")) {
            assertThat(System.nanoTime()).as("the stream did not reach %s: %s", position, status).isLessThan(deadline);
            Thread.sleep(50);
            status = dump(admin, "SHOW GANTRY STATUS");
        }
        return position;
    }

    private static String primaryPosition() throws SQLException {
        try (Connection root = topology.connectAsAdmin(topology.primary())) {
            return dump(root, "SELECT @@gtid_binlog_pos").strip();
        }
    }

    private static List<String> primaryRows() throws SQLException {
        try (Connection root = topology.connectAsAdmin(topology.primary())) {
            return List.of(dump(root, "SELECT CONCAT(id, ' ', note) FROM app.drained ORDER BY id").split("\n"))
                    .stream().filter(line -> !line.isBlank()).collect(Collectors.toList());
        }
    }

    private static void update(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.executeUpdate(sql);
        }
    }

    /** Every row of the result, its columns separated by spaces, one row a line. */
    private static String dump(Connection connection, String sql) throws SQLException {
        StringBuilder out = new StringBuilder();
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
            int columns = rows.getMetaData().getColumnCount();
            while (rows.next()) {
                for (int i = 1; i <= columns; i++) {
                    out.append(i > 1 ? " " : "").append(rows.getString(i));
                }
                out.append('\n');
            }
        }
        return out.toString();
    }
}
