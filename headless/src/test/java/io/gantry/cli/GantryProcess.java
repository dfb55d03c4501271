package io.gantry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.sandbox.Topology;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A {@code gantry run} of the built jar in a process of its own, its output collected line by line. */
final class GantryProcess {

    /**
     * Creates the service account a Gantry process logs in with on {@code topology}'s primary (every privilege but
     * {@code READ_ONLY ADMIN}, so a read-only server refuses its writes as it would an application's), runs
     * {@code setup} there, and waits for the replicas to have it all.
     */
    static void createServiceAccount(Topology topology, String user, String password, String... setup)
            throws SQLException {
        try (Connection root = topology.connectAsAdmin(topology.primary());
             Statement statement = root.createStatement()) {
            statement.execute("CREATE USER IF NOT EXISTS '" + user + "'@'%' IDENTIFIED BY '" + password + "'");
            statement.execute("GRANT ALL PRIVILEGES ON *.* TO '" + user + "'@'%'");
            statement.execute("REVOKE READ_ONLY ADMIN ON *.* FROM '" + user + "'@'%'");
            for (String sql : setup) {
                statement.execute(sql);
            }
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
    }

    private static final Pattern LISTENING = Pattern.compile("proxy: listening on 127\\.0\\.0\\.1:(\\d+)");

    private final Process process;
    private final List<String> lines;
    private int port;

    private GantryProcess(Process process, List<String> lines) {
        this.process = process;
        this.lines = lines;
    }

    /** Starts {@code gantry run ARGUMENTS} with {@code environment} added to this one's; returns at once. */
    static GantryProcess launch(Map<String, String> environment, String... arguments) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-jar", Path.of("target", "gantry.jar").toString(), "run"));
        command.addAll(List.of(arguments));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putAll(environment);
        Process process = builder.start();
        List<String> lines = new CopyOnWriteArrayList<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException e) {
                lines.add("(output ended: " + e.getMessage() + ")");
            }
        }, "gantry-output");
        reader.setDaemon(true);
        reader.start();
        return new GantryProcess(process, lines);
    }

    /** Waits until it listens and serves: from then on a stop signal drains it. */
    GantryProcess awaitServing() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        Optional<Integer> listening = Optional.empty();
        while (listening.isEmpty()) {
            assertThat(process.isAlive()).as("gantry stopped:\n%s", output()).isTrue();
            assertThat(System.nanoTime()).as("gantry did not listen:\n%s", output()).isLessThan(deadline);
            Thread.sleep(50);
            listening = lines.stream().map(LISTENING::matcher).filter(Matcher::find)
                    .map(m -> Integer.parseInt(m.group(1))).findFirst();
        }
        port = listening.get();
        // Listening comes before the stop signals drain: a signal in between would stop it at once.
        awaitLine("gantry: serving");
        return this;
    }

    Process process() {
        return process;
    }

    List<String> lines() {
        return lines;
    }

    int port() {
        return port;
    }

    Connection connect(String user, String password) throws SQLException {
        return DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + port + "/app?sslMode=DISABLED"
                + "&connectTimeout=5000", user, password);
    }

    String output() {
        return String.join("\n", lines);
    }

    void awaitLine(String text) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (lines.stream().noneMatch(line -> line.contains(text))) {
            assertThat(System.nanoTime()).as("no line with '%s' in:\n%s", text, output()).isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    String matchOf(Pattern pattern) {
        return lines.stream().map(pattern::matcher).filter(Matcher::find).map(m -> m.group(1)).findFirst()
                .orElseThrow(() -> new AssertionError("no line matching " + pattern + " in:\n" + output()));
    }

    /** Waits for the process to end and returns its exit status. */
    int awaitExit(Duration within) throws InterruptedException {
        assertThat(process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS)).as("still running:\n%s", output())
                .isTrue();
        // The reader may still be taking the last lines.
        Thread.sleep(100);
        return process.exitValue();
    }
}
