package io.gantry.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.TopologyKind;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Runs the real runnable jar as an operator would ({@code java -jar gantry.jar demo}), uses the printed client
 * command lines (the {@code mariadb} ones as printed; for MySQL, whose bundled binaries have no client, the printed
 * address with connector-j), then stops it with SIGTERM (what Ctrl-C and systemd do) and checks every server
 * stopped.
 */
class DemoCommandIT {

    @ParameterizedTest
    @ValueSource(strings = {"mariadb", "mysql"})
    void demoPrintsWorkingClientCommandsAndStopsEveryServerOnExit(String flavour) throws Exception {
        if (flavour.equals("mysql")) {
            Optional<String> unavailable = TopologyKind.MYSQL.skipReason();
            assumeTrue(unavailable.isEmpty(), () -> "skipped: " + unavailable.orElse(""));
        }
        Path directory = Path.of("target", "demo-it-" + flavour).toAbsolutePath();
        int basePort = freeBasePort(4);
        int proxyPort = basePort + 3;
        Path sink = directory.resolve("changes.jsonl");
        ProcessBuilder start = new ProcessBuilder(javaBinary(), "-jar", Path.of("target", "gantry.jar").toString(),
                "demo", "--flavour", flavour, "--dir", directory.toString(), "--base-port", Integer.toString(basePort),
                "--cdc-sink", "jsonl:" + sink, "--listen", "127.0.0.1:" + proxyPort)
                .redirectErrorStream(true);
        // As on a server without a desktop: the demo must say it does not open the console, and why.
        start.environment().remove("DISPLAY");
        start.environment().remove("WAYLAND_DISPLAY");
        Process demo = start.start();
        List<String> output = new CopyOnWriteArrayList<>();
        CountDownLatch ready = new CountDownLatch(1);
        Thread reader = new Thread(() -> collect(demo, output, ready), "demo-output");
        reader.start();
        try {
            assertThat(ready.await(120, TimeUnit.SECONDS)).as("demo output so far: %s", output).isTrue();

            assertThat(output).anySatisfy(line -> assertThat(line).startsWith("Gantry demo sandbox: "
                    + (flavour.equals("mysql") ? "MySQL 8.0.15" : "MariaDB 11.4.5")));
            assertThat(output).contains("Console: not opened: no display (neither DISPLAY nor WAYLAND_DISPLAY is set)."
                    + " Open it on a desktop with:");
            String primaryCommand = commandFor(output, "primary");
            String replicaCommand = commandFor(output, "replica2");
            assertThat(primaryCommand).contains("-P " + basePort);
            assertThat(replicaCommand).contains("-P " + (basePort + 2));
            if (flavour.equals("mysql")) {
                assertThat(primaryCommand).startsWith("mysql -h 127.0.0.1 -P " + basePort + " -u app -papp app");
                assertThat(output).contains("  mysql -h 127.0.0.1 -P " + proxyPort + " -u app -papp app");
            }

            runClient(primaryCommand, "CREATE TABLE greeting (id INT PRIMARY KEY, words VARCHAR(50));"
                    + " INSERT INTO greeting VALUES (1, 'hello from the primary')");
            String seen = "";
            for (int attempt = 0; attempt < 50 && !seen.contains("hello from the primary"); attempt++) {
                Thread.sleep(100);
                try {
                    seen = runClient(replicaCommand, "SELECT words FROM greeting WHERE id = 1");
                } catch (SQLException notYetReplicated) {
                    seen = notYetReplicated.getMessage();
                }
            }
            assertThat(seen).contains("hello from the primary");
            assertThat(runClient(replicaCommand, "SELECT @@read_only")).contains("1");

            // The change stream wrote the insert to the sink, typed, with its GTID.
            assertThat(output).anySatisfy(line -> assertThat(line).startsWith("Change stream: ")
                    .contains("row changes go to " + sink));
            String changes = "";
            for (int attempt = 0; attempt < 100 && !changes.contains("hello from the primary"); attempt++) {
                Thread.sleep(100);
                changes = java.nio.file.Files.exists(sink) ? java.nio.file.Files.readString(sink) : "";
            }
            assertThat(changes).contains("\"table\":\"greeting\",\"op\":\"insert\",\"before\":null,"
                    + "\"after\":{\"id\":1,\"words\":\"hello from the primary\"}");

            // The running Gantry listens on its proxy port and on nothing else: no database port for the Authority.
            assertThat(listeningPorts(demo.pid())).containsExactly(proxyPort);
            // Its health history, through the proxy port as an admin account; its files are not opened meanwhile.
            Result export = runJar("export-health", "--from", "mysql://app:app@127.0.0.1:" + proxyPort);
            assertThat(export.exitCode()).as(export.output()).isZero();
            assertThat(export.output()).startsWith("at,server,health,role,rtt_ms,lag_ms")
                    .contains("127.0.0.1:" + basePort + ",up,primary,");
            // Its data directory: through the admin socket in it (its Authority is open in the demo's process only).
            Result files = runJar("export-health", "--data-dir", directory.resolve("gantry-data").toString());
            assertThat(files.exitCode()).as(files.output()).isZero();
            assertThat(files.output()).startsWith("at,server,health,role,rtt_ms,lag_ms")
                    .contains("127.0.0.1:" + basePort + ",up,primary,");
        } finally {
            // SIGTERM, as systemd sends; Ctrl-C (SIGINT) takes the same shutdown path. Through the handle, because
            // Process.destroy() also closes our end of its output, and we want to read its goodbye.
            demo.toHandle().destroy();
            assertThat(demo.waitFor(60, TimeUnit.SECONDS)).isTrue();
            reader.join(10_000);
        }
        assertThat(output).contains("Sandbox stopped.");
        // In order: Gantry stops while its servers still answer, so nothing it says on the way out is a failure
        // (the change stream once logged "the server closed the binlog connection; retry 1 of 3" here).
        assertThat(output).contains("Stopping Gantry and the sandbox ...");
        List<String> goodbye = output.subList(output.indexOf("Stopping Gantry and the sandbox ..."), output.size());
        assertThat(goodbye).noneSatisfy(line -> assertThat(line).containsAnyOf("[WARN]", "[ERROR]", "failed"));
        assertThat(Sandboxes.liveServersUnder(directory)).isEmpty();
    }

    private static void collect(Process demo, List<String> output, CountDownLatch ready) {
        try (BufferedReader lines = new BufferedReader(
                new InputStreamReader(demo.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                output.add(line);
                if (line.startsWith("Press Ctrl-C")) {
                    ready.countDown();
                }
            }
        } catch (IOException e) {
            output.add("(output stream ended: " + e.getMessage() + ")");
        }
    }

    /** The CONNECT WITH column of a server's line: everything after ROLE, NAME and ADDRESS. */
    private static String commandFor(List<String> output, String serverName) {
        return output.stream()
                .map(String::trim)
                .filter(line -> line.split("\\s+").length > 3 && line.split("\\s+")[1].equals(serverName))
                .map(line -> line.split("\\s+", 4)[3])
                .findFirst()
                .orElseThrow(() -> new AssertionError("no line for " + serverName + " in " + output));
    }

    /**
     * Runs {@code sql} with a printed command line and returns what it printed: the {@code mariadb} client as
     * printed; a {@code mysql} line (no client comes with the MySQL binaries) through connector-j with the same
     * address and account, printing one value per line as {@code --batch} would.
     */
    private static String runClient(String commandLine, String sql) throws Exception {
        if (commandLine.startsWith("mysql ")) {
            return runWithJdbc(commandLine, sql);
        }
        return runMariaDbClient(commandLine, sql);
    }

    private static String runWithJdbc(String commandLine, String sql) throws SQLException {
        String[] words = commandLine.split(" ");
        String host = words[List.of(words).indexOf("-h") + 1];
        String port = words[List.of(words).indexOf("-P") + 1];
        String user = words[List.of(words).indexOf("-u") + 1];
        String password = List.of(words).stream().filter(w -> w.startsWith("-p")).findFirst().orElseThrow()
                .substring(2);
        String database = words[words.length - 1];
        // The servers offer TLS (as MySQL 8 does), so the caching_sha2_password login needs no RSA key.
        StringBuilder printed = new StringBuilder();
        try (Connection connection = DriverManager.getConnection("jdbc:mysql://" + host + ":" + port + "/"
                + database + "?sslMode=REQUIRED&allowMultiQueries=true", user, password);
             Statement statement = connection.createStatement()) {
            boolean results = statement.execute(sql);
            while (true) {
                if (results) {
                    try (ResultSet rows = statement.getResultSet()) {
                        while (rows.next()) {
                            printed.append(rows.getString(1)).append('\n');
                        }
                    }
                } else if (statement.getUpdateCount() == -1) {
                    break;
                }
                results = statement.getMoreResults();
            }
        }
        return printed.toString();
    }

    private static String runMariaDbClient(String commandLine, String sql) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(commandLine.split(" ")));
        command.add("--batch");
        command.add("-e");
        command.add(sql);
        Process client = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(client.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(client.exitValue()).as("mariadb client said: %s", output).isZero();
        return output;
    }

    private record Result(int exitCode, String output) {
    }

    private static Result runJar(String... arguments) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(javaBinary(), "-jar", Path.of("target", "gantry.jar").toString()));
        command.addAll(List.of(arguments));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Result(process.exitValue(), output);
    }

    /** The TCP ports a process listens on, from its socket descriptors and the kernel's socket tables. */
    private static List<Integer> listeningPorts(long pid) throws IOException {
        java.util.Set<String> inodes = new java.util.HashSet<>();
        try (java.util.stream.Stream<Path> fds = java.nio.file.Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            for (Path fd : fds.toList()) {
                try {
                    String target = java.nio.file.Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:[")) {
                        inodes.add(target.substring(8, target.length() - 1));
                    }
                } catch (IOException closedMeanwhile) {
                    // the descriptor went away while listing
                }
            }
        }
        List<Integer> ports = new ArrayList<>();
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            // Read once: the table changes as sockets come and go, so a second read may be shorter or longer.
            List<String> lines = java.nio.file.Files.readAllLines(Path.of(table));
            for (String line : lines.subList(1, lines.size())) {
                String[] fields = line.trim().split("\\s+");
                boolean listening = fields[3].equals("0A");
                if (listening && inodes.contains(fields[9])) {
                    String local = fields[1];
                    ports.add(Integer.parseInt(local.substring(local.indexOf(':') + 1), 16));
                }
            }
        }
        return ports;
    }

    private static int freeBasePort(int count) throws IOException {
        for (int attempt = 0; attempt < 50; attempt++) {
            int base = ThreadLocalRandom.current().nextInt(20000, 30000);
            if (allFree(base, count)) {
                return base;
            }
        }
        throw new IllegalStateException("no " + count + " consecutive free ports found");
    }

    private static boolean allFree(int base, int count) {
        for (int port = base; port < base + count; port++) {
            try (ServerSocket ignored = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
                // free
            } catch (IOException e) {
                return false;
            }
        }
        return true;
    }

    private static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}
