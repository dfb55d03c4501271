package io.gantry.sandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One server process ({@code mariadbd} or {@code mysqld}) with its own directory ({@code my.cnf}, {@code data/},
 * {@code error.log}) on a fixed loopback port. Its role only changes what {@code my.cnf} says about
 * {@code read_only}; replication is set up by the topology ({@link MariaDbTopology}, {@link MySqlTopology}).
 */
final class LocalServer implements DatabaseServer {

    static final String HOST = "127.0.0.1";
    private static final Logger LOG = LoggerFactory.getLogger(LocalServer.class);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    /** Unix socket paths are limited to 107 bytes; longer directories put the socket in the temp directory. */
    private static final int MAX_SOCKET_PATH = 100;

    private final String name;
    private final Path directory;
    private final ServerInstallation installation;
    private final List<String> extraOptions;
    private volatile int port;
    private volatile boolean readOnly;
    private volatile Process process;

    LocalServer(String name, Path directory, int port, ServerInstallation installation, boolean readOnly) {
        this(name, directory, port, installation, readOnly, List.of());
    }

    /** @param extraOptions {@code my.cnf} lines appended last, so they override the sandbox's own settings */
    LocalServer(String name, Path directory, int port, ServerInstallation installation, boolean readOnly,
                List<String> extraOptions) {
        this.name = name;
        this.directory = directory;
        this.port = port;
        this.installation = installation;
        this.readOnly = readOnly;
        this.extraOptions = List.copyOf(extraOptions);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String host() {
        return HOST;
    }

    @Override
    public int port() {
        return port;
    }

    @Override
    public boolean isRunning() {
        Process current = process;
        return current != null && current.isAlive();
    }

    Path directory() {
        return directory;
    }

    Path dataDirectory() {
        return directory.resolve("data");
    }

    Path errorLog() {
        return directory.resolve("error.log");
    }

    void setReadOnly(boolean readOnly) {
        this.readOnly = readOnly;
    }

    /**
     * Starts the process and waits until it accepts connections. With {@code portMayMove}, a port that turned out
     * to be taken (another process grabbed it after it was picked) is replaced by a fresh free port.
     */
    void start(boolean portMayMove) {
        for (int attempt = 1; ; attempt++) {
            try {
                startOnce();
                return;
            } catch (PortTakenException e) {
                if (!portMayMove || attempt == 3) {
                    throw new IllegalStateException(name + ": port " + port + " is already in use", e);
                }
                int taken = port;
                port = freePort();
                LOG.info("sandbox: {} port {} was taken, retrying on {}", name, taken, port);
            }
        }
    }

    private void startOnce() {
        if (isRunning()) {
            throw new IllegalStateException(name + " is already running (pid " + process.pid() + ")");
        }
        writeConfiguration();
        long startedAt = System.nanoTime();
        ProcessBuilder builder = new ProcessBuilder(installation.serverBinary().toString(),
                "--defaults-file=" + directory.resolve("my.cnf"))
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(directory.resolve("console.log").toFile()));
        builder.environment().putAll(installation.environment());
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + installation.serverBinary(), e);
        }
        ServerProcesses.register(process, directory);
        awaitReady(startedAt);
        LOG.debug("sandbox: {} up on port {} in {} ms (pid {})", name, port,
                (System.nanoTime() - startedAt) / 1_000_000, process.pid());
    }

    private void awaitReady(long startedAt) {
        long deadline = startedAt + START_TIMEOUT.toNanos();
        SQLException last = null;
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                ServerProcesses.unregister(process);
                String log = errorLogTail();
                if (log.contains("Address already in use") || log.contains("Bind on TCP/IP port")) {
                    throw new PortTakenException();
                }
                throw new IllegalStateException(name + ": " + installation.serverBinary().getFileName()
                        + " exited with code " + process.exitValue()
                        + " while starting; last lines of " + errorLog() + ":\n" + log);
            }
            try (Connection connection = connectAsRoot()) {
                if (isOurs(connection)) {
                    return;
                }
                // Another server answers on this port: ours is about to fail to bind it (seen above).
                last = new SQLException("port " + port + " is answered by another server");
            } catch (SQLException e) {
                last = e;
            }
            sleep(50);
        }
        ServerProcesses.terminate(process, Duration.ofSeconds(5));
        throw new IllegalStateException(name + ": no connection within " + START_TIMEOUT.toSeconds() + " s (last error: "
                + (last == null ? "none" : last.getMessage()) + "); last lines of " + errorLog() + ":\n" + errorLogTail());
    }

    /** Whether the server behind {@code connection} runs on this server's data directory. */
    private boolean isOurs(Connection connection) throws SQLException {
        try (var statement = connection.createStatement(); var rows = statement.executeQuery("SELECT @@datadir")) {
            if (!rows.next()) {
                return false;
            }
            try {
                return Path.of(rows.getString(1)).toRealPath().equals(dataDirectory().toRealPath());
            } catch (IOException e) {
                return false;
            }
        }
    }

    /** Clean shutdown: SIGTERM makes the server flush and exit; SIGKILL after 30 s. */
    void stop() {
        Process current = process;
        if (current != null) {
            ServerProcesses.terminate(current, Duration.ofSeconds(30));
        }
    }

    /** kill -9. */
    void kill() {
        Process current = process;
        if (current != null) {
            ServerProcesses.kill(current);
        }
    }

    /** Sends a signal by name ({@code STOP}, {@code CONT}) to the running process. */
    /**
     * Waits until every thread of the process is stopped after a SIGSTOP (each thread stops on its way back to user
     * space: a busy server may answer one more request in between), at most a second.
     */
    void awaitStopped() {
        Process current = process;
        if (current == null) {
            return;
        }
        Path tasks = Path.of("/proc", Long.toString(current.pid()), "task");
        long deadline = System.nanoTime() + 1_000_000_000L;
        while (System.nanoTime() < deadline) {
            try (java.util.stream.Stream<Path> threads = Files.list(tasks)) {
                boolean allStopped = threads.allMatch(thread -> {
                    try {
                        String stat = Files.readString(thread.resolve("stat"));
                        char state = stat.charAt(stat.lastIndexOf(')') + 2);
                        return state == 'T' || state == 't';
                    } catch (IOException e) {
                        return true; // the thread ended
                    }
                });
                if (allStopped) {
                    return;
                }
                Thread.sleep(2);
            } catch (IOException e) {
                return; // no /proc here: nothing to wait on
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    void signal(String name) {
        Process current = process;
        if (current == null || !current.isAlive()) {
            throw new IllegalStateException(this.name + " is not running, so it cannot get SIG" + name);
        }
        try {
            Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(current.pid()))
                    .redirectErrorStream(true).start();
            String output = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (kill.waitFor() != 0) {
                throw new IllegalStateException("kill -" + name + " " + current.pid() + " failed: " + output.strip());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while sending SIG" + name + " to " + this.name, e);
        }
    }

    Connection connectAsRoot() throws SQLException {
        return DriverManager.getConnection(jdbcUrl(""), "root", "");
    }

    Connection connect(String database, Credentials account) throws SQLException {
        return DriverManager.getConnection(jdbcUrl(database), account.user(), account.password());
    }

    String jdbcUrl(String database) {
        // sslMode=DISABLED: the sandbox servers run without TLS (see writeConfiguration).
        return "jdbc:mysql://" + HOST + ":" + port + "/" + database
                + "?sslMode=DISABLED&allowPublicKeyRetrieval=true&connectTimeout=5000";
    }

    private void writeConfiguration() {
        List<String> lines = new ArrayList<>();
        lines.add("[" + installation.optionGroup() + "]");
        lines.addAll(installation.serverOptions(name, true));
        lines.add("datadir=" + dataDirectory().toAbsolutePath());
        lines.add("port=" + port);
        lines.add("bind-address=" + HOST);
        lines.add("socket=" + socketPath());
        lines.add("pid-file=" + directory.toAbsolutePath().resolve("server.pid"));
        lines.add("log-error=" + errorLog().toAbsolutePath());
        if ("root".equals(System.getProperty("user.name"))) {
            lines.add("user=root");
        }
        lines.add("server-id=" + port);
        lines.add("report-host=" + HOST);
        lines.add("report-port=" + port);
        lines.add("log-bin=" + name + "-bin");
        lines.add("relay-log=" + name + "-relay-bin");
        lines.add("read-only=" + (readOnly ? "ON" : "OFF"));
        lines.add("relay-log-recovery=ON");
        lines.add("skip-name-resolve");
        lines.add("max-connections=500");
        lines.add("performance-schema=OFF");
        lines.addAll(installation.serverOptions(name, false));
        lines.addAll(extraOptions);
        try {
            Files.write(directory.resolve("my.cnf"), lines, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Path socketPath() {
        Path inside = directory.toAbsolutePath().resolve("server.sock");
        if (inside.toString().length() <= MAX_SOCKET_PATH) {
            return inside;
        }
        return Path.of(System.getProperty("java.io.tmpdir"),
                "gantry-" + Integer.toHexString(inside.toString().hashCode()) + ".sock");
    }

    String errorLogTail() {
        try {
            List<String> lines = Files.readAllLines(errorLog(), StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
        } catch (IOException e) {
            return "(no error log: " + e.getMessage() + ")";
        }
    }

    /** A TCP port that was free on loopback a moment ago. */
    static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find a free loopback port", e);
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    @Override
    public String toString() {
        return name + " (" + HOST + ":" + port + ")";
    }

    private static final class PortTakenException extends RuntimeException {
        PortTakenException() {
            super(null, null, false, false);
        }
    }
}
