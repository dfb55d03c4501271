package io.gantry;

import io.gantry.authority.Retention;
import io.gantry.cdc.CdcSettings;
import io.gantry.cdc.TableFilter;
import io.gantry.cluster.ClusterSettings;
import io.gantry.handover.TakeOver;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.proxy.transport.SocketTransport;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.topology.UpstreamUrl;
import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Gantry in a JVM of its own, so that a test can kill it with kill -9 and start it again on the same data directory:
 * the proxy on a fixed port, every server of the topology upstream (weight 50), the change stream from the replicas
 * first (the first server given, the primary at the start, last) into a JSON-lines sink, connect timeout 1 s with
 * one retry, Gantry's defaults otherwise. Each run logs to {@code gantry-N.log} in the directory.
 */
public final class GantryProcess implements AutoCloseable {

    private final Path directory;
    private final int port;
    private final List<String> command = new ArrayList<>();
    private Process process;
    private int runs;

    /**
     * @param tables         the change stream's table filter ({@code --cdc-tables}), e.g. {@code app.feed}
     * @param healthInterval {@code --upstream-health-interval-secs}, as a duration
     * @param servers        the primary first, then the replicas
     */
    public GantryProcess(Path directory, Path sink, String tables, Duration healthInterval,
                         List<? extends DatabaseServer> servers) throws IOException {
        this.directory = directory;
        this.port = freePort();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(Main.class.getName());
        command.add(Integer.toString(port));
        command.add(directory.resolve("data").toString());
        command.add(sink.toString());
        command.add(tables);
        command.add(Long.toString(healthInterval.toMillis()));
        for (DatabaseServer server : servers) {
            command.add(server.host() + ":" + server.port());
        }
    }

    public int port() {
        return port;
    }

    /** Runs it as instance {@code instance} of cluster {@code name}, with that feed lease ({@code --cluster}). */
    public GantryProcess inCluster(String name, String instance, Duration feedLease) {
        command.add(1, "-Dgantry.test.cluster=" + name + "," + instance + "," + feedLease.toMillis());
        return this;
    }

    /** Runs its proxy on native epoll, the transport whose sessions a take-over moves. */
    public GantryProcess onEpoll() {
        command.add(1, "-Dgantry.test.epoll=true");
        return this;
    }

    /** Starts the next run; returns at once (see {@link #awaitAnswering}). */
    public void start() throws IOException {
        start(command);
    }

    private void start(List<String> run) throws IOException {
        runs++;
        File log = directory.resolve("gantry-" + runs + ".log").toFile();
        System.out.println("GantryProcess: starting Gantry (run " + runs + "), log in " + log);
        process = new ProcessBuilder(run).redirectErrorStream(true).redirectOutput(log).start();
    }

    /**
     * Starts the next run with {@code --take-over} of the running one, on the same data directory and port, and waits
     * until the running one has handed over and exited.
     */
    public void takeOver(Duration timeout) throws IOException, InterruptedException {
        Process running = process;
        List<String> taking = new ArrayList<>(command);
        taking.add(1, "-Dgantry.test.take-over=true");
        start(taking);
        if (!running.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            printLogs(60);
            throw new IllegalStateException("the Gantry taken over (run " + (runs - 1) + ") still runs after "
                    + timeout.toSeconds() + " s");
        }
    }

    /** kill -9, and waits until the process is gone. */
    public void kill() throws InterruptedException {
        System.out.println("GantryProcess: kill -9 of Gantry (run " + runs + ")");
        process.destroyForcibly().waitFor();
    }

    /** Waits until Gantry answers {@code SHOW GANTRY STATUS} on its port. */
    public void awaitAnswering(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (status("CDC Status") == null) {
            if (System.nanoTime() > deadline || !process.isAlive()) {
                printLogs(60);
                throw new IllegalStateException("Gantry (run " + runs + ") did not answer on port " + port + " within "
                        + timeout.toSeconds() + " s" + (process.isAlive() ? "" : "; it exited"));
            }
            Thread.sleep(100);
        }
    }

    /** One row of SHOW GANTRY STATUS through Gantry's port, or null while Gantry does not answer. */
    public String status(String name) {
        try (Connection connection = DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + port
                + "/app?sslMode=DISABLED&allowPublicKeyRetrieval=true&connectTimeout=1000", "app", "app");
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SHOW GANTRY STATUS")) {
            while (rows.next()) {
                if (rows.getString(1).equals(name)) {
                    return rows.getString(2);
                }
            }
            return null;
        } catch (SQLException e) {
            return null;
        }
    }

    /** The last lines of each run's log, so that a failure can be understood from the test report alone. */
    public void printLogs(int lastLines) {
        for (int run = 1; run <= runs; run++) {
            Path log = directory.resolve("gantry-" + run + ".log");
            try {
                if (Files.exists(log)) {
                    List<String> lines = Files.readAllLines(log);
                    System.out.println("---- Gantry run " + run + " (last " + lastLines + " lines) ----");
                    lines.subList(Math.max(0, lines.size() - lastLines), lines.size()).forEach(System.out::println);
                }
            } catch (IOException e) {
                System.out.println("---- Gantry run " + run + ": cannot read " + log + ": " + e);
            }
        }
    }

    /** SIGTERM (Gantry's orderly stop), and waits for it. */
    @Override
    public void close() throws InterruptedException {
        if (process != null) {
            process.destroy();
            process.waitFor();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** The process's entry point. Arguments: port, data directory, sink, tables, health interval in ms, servers. */
    public static final class Main {
        public static void main(String[] args) throws Exception {
            int port = Integer.parseInt(args[0]);
            List<UpstreamUrl> upstream = new ArrayList<>();
            List<UpstreamUrl> cdc = new ArrayList<>();
            for (int i = 5; i < args.length; i++) {
                String[] hostPort = args[i].split(":");
                UpstreamUrl url = new UpstreamUrl(hostPort[0], Integer.parseInt(hostPort[1]), "app", "app", "app",
                        50);
                upstream.add(url);
                // Replicas in list order with falling weights, the first server last.
                cdc.add(url.withWeight(i == 5 ? 10 : 100 - i));
            }
            ProxyConfig proxy = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", port))
                    .withConnectTimeout(Duration.ofSeconds(1)).withConnectRetries(1);
            if (Boolean.getBoolean("gantry.test.epoll")) {
                proxy = proxy.withSocketTransport(SocketTransport.EPOLL);
            }
            Gantry.Options options = new Gantry.Options(proxy, upstream, cdc, Path.of(args[1]),
                    Duration.ofMillis(Long.parseLong(args[4])), Retention.DEFAULT, Set.of(),
                    Optional.of(new CdcSettings(Duration.ofSeconds(1), 1, Optional.of(Path.of(args[2])),
                            256 * 1024, TableFilter.parse(args[3], "app"), false)));
            String cluster = System.getProperty("gantry.test.cluster");
            if (cluster != null) {
                String[] parts = cluster.split(",");
                options = options.withCluster(new ClusterSettings(parts[0], ClusterSettings.DEFAULT_SCHEMA, parts[1],
                        "127.0.0.1:" + port, Duration.ofMillis(Long.parseLong(parts[2]))));
            }
            Gantry gantry;
            if (Boolean.getBoolean("gantry.test.take-over")) {
                try (TakeOver from = TakeOver.connect(Path.of(args[1]), Duration.ofSeconds(10))) {
                    gantry = Gantry.takeOver(options, from);
                    gantry.moveSessionsFrom(from, Duration.ofSeconds(10));
                }
            } else {
                gantry = Gantry.start(options);
            }
            Runtime.getRuntime().addShutdownHook(new Thread(gantry::close));
            gantry.takenOver().join(); // as RunCommand, which drains first: the process ends once taken over
            System.exit(0);
        }
    }
}
