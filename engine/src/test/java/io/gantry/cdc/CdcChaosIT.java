package io.gantry.cdc;

import static io.gantry.cdc.CdcFailoverIT.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.Gantry;
import io.gantry.authority.Retention;
import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.UpstreamUrl;
import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chaos test: a writer inserts numbered rows on the primary without pause while the CDC server (a replica) is
 * killed with kill -9 several times and Gantry itself (a separate JVM) is killed with kill -9 and restarted twice.
 * At the end the sink holds every id exactly once, in commit order, and Gantry's position is the primary's.
 */
class CdcChaosIT {

    @TempDir
    Path dir;

    @Test
    void everyRowExactlyOnceThroughServerAndGantryKills() throws Exception {
        try (Topology topology = Sandboxes.startPrivate(TopologyKind.MARIADB, "cdc-chaos", 2)) {
            DatabaseServer replica1 = topology.replicas().get(0);
            DatabaseServer replica2 = topology.replicas().get(1);
            try (Connection primary = topology.connectAsApp(topology.primary());
                 Statement statement = primary.createStatement()) {
                statement.execute("CREATE TABLE chaos (id BIGINT PRIMARY KEY, at TIMESTAMP(6))");
            }
            topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
            Path sink = dir.resolve("changes.jsonl");
            int port = freePort();
            List<String> command = gantryCommand(topology, port, sink);

            AtomicLong lastCommitted = new AtomicLong();
            AtomicBoolean writing = new AtomicBoolean(true);
            Thread writer = new Thread(() -> write(topology, lastCommitted, writing), "chaos-writer");
            Process gantry = start(command, 1);
            try {
                awaitStreaming(port);
                writer.start();
                // Kill the CDC server; the stream moves on. Then Gantry, mid-stream; then the server it moved to.
                Thread.sleep(1500);
                kill(topology, replica1);
                Thread.sleep(1500);
                gantry.destroyForcibly().waitFor();
                Thread.sleep(700);
                topology.start(replica1);
                gantry = start(command, 2);
                awaitStreaming(port);
                Thread.sleep(1500);
                kill(topology, replica2);
                Thread.sleep(1500);
                topology.start(replica2);
                Thread.sleep(1000);
                gantry.destroyForcibly().waitFor();
                gantry = start(command, 3);
                awaitStreaming(port);
                Thread.sleep(1000);
                kill(topology, activeReplica(port, replica1, replica2, topology));
                Thread.sleep(1500);
                writing.set(false);
                writer.join();
                for (DatabaseServer server : topology.servers()) {
                    if (!server.isRunning()) {
                        topology.start(server);
                    }
                }
                topology.awaitReplicasCaughtUp(Duration.ofSeconds(60));

                long last = lastCommitted.get();
                GtidSet primaryPosition = GtidSet.parse(topology.executedGtids(topology.primary()), Flavour.MARIADB);
                waitUntil(() -> position(port).map(p -> p.contains(primaryPosition)).orElse(false),
                        Duration.ofSeconds(60));
                GtidSet position = position(port).orElseThrow();
                assertThat(primaryPosition.contains(position)).as("Gantry's position %s is the primary's %s",
                        position, primaryPosition).isTrue();
                List<Long> ids = SinkContents.read(sink).ids("chaos", "insert");
                System.out.printf("CdcChaosIT: %d rows written, %d lines in the sink, servers in order: %s%n", last,
                        ids.size(), SinkContents.read(sink).serverRuns());
                assertThat(ids).as("every id exactly once, in commit order")
                        .containsExactlyElementsOf(LongStream.rangeClosed(1, last).boxed().toList());
            } catch (AssertionError | RuntimeException e) {
                printLogs();
                throw e;
            } finally {
                writing.set(false);
                writer.join();
                gantry.destroy();
                gantry.waitFor();
            }
        }
    }

    /** Gantry's own logs, so that a failure here can be understood from the test report alone. */
    private void printLogs() throws IOException {
        for (int run = 1; run <= 3; run++) {
            Path log = dir.resolve("gantry-" + run + ".log");
            if (java.nio.file.Files.exists(log)) {
                List<String> lines = java.nio.file.Files.readAllLines(log);
                System.out.println("---- Gantry run " + run + " (last 60 lines) ----");
                lines.subList(Math.max(0, lines.size() - 60), lines.size()).forEach(System.out::println);
            }
        }
    }

    /** A single writer with autocommit: commit order is id order. */
    private static void write(Topology topology, AtomicLong lastCommitted, AtomicBoolean writing) {
        try (Connection primary = topology.connectAsApp(topology.primary());
             Statement statement = primary.createStatement()) {
            long id = 1;
            while (writing.get()) {
                statement.executeUpdate("INSERT INTO chaos VALUES (" + id + ", NOW(6))");
                lastCommitted.set(id);
                id++;
                Thread.sleep(2);
            }
        } catch (SQLException | InterruptedException e) {
            throw new IllegalStateException("the writer failed", e);
        }
    }

    private static void kill(Topology topology, DatabaseServer server) {
        System.out.println("CdcChaosIT: kill -9 of " + server.name() + " " + server.address());
        topology.kill(server);
    }

    private List<String> gantryCommand(Topology topology, int port, Path sink) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(GantryMain.class.getName());
        command.add(Integer.toString(port));
        command.add(dir.resolve("data").toString());
        command.add(sink.toString());
        for (DatabaseServer server : topology.servers()) {
            command.add(server.host() + ":" + server.port());
        }
        return command;
    }

    private Process start(List<String> command, int run) throws IOException {
        File log = dir.resolve("gantry-" + run + ".log").toFile();
        System.out.println("CdcChaosIT: starting Gantry (run " + run + "), log in " + log);
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log).start();
    }

    private static void awaitStreaming(int port) throws InterruptedException {
        waitUntil(() -> "streaming".equals(status(port, "CDC Status")), Duration.ofSeconds(60));
    }

    private static DatabaseServer activeReplica(int port, DatabaseServer a, DatabaseServer b, Topology topology) {
        String active = status(port, "CDC Server");
        return a.address().equals(active) ? a : b.address().equals(active) ? b : topology.replicas().get(0);
    }

    private static Optional<GtidSet> position(int port) {
        String text = status(port, "CDC Position");
        return text == null ? Optional.empty() : Optional.of(GtidSet.parse(text, Flavour.MARIADB));
    }

    /** One row of SHOW GANTRY STATUS through Gantry's port, or null while Gantry does not answer. */
    private static String status(int port, String name) {
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

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /**
     * Gantry in its own JVM, so the test can kill -9 it: proxy on the given port, the primary and replicas as
     * upstream, the replicas first (then the primary) for CDC, retries 1 and timeout 1 s, a JSON-lines sink.
     * Arguments: port, data directory, sink path, then host:port of the primary and each replica.
     */
    public static final class GantryMain {
        public static void main(String[] args) throws Exception {
            int port = Integer.parseInt(args[0]);
            List<UpstreamUrl> upstream = new ArrayList<>();
            List<UpstreamUrl> cdc = new ArrayList<>();
            for (int i = 3; i < args.length; i++) {
                String[] hostPort = args[i].split(":");
                UpstreamUrl url = new UpstreamUrl(hostPort[0], Integer.parseInt(hostPort[1]), "app", "app", "app",
                        50);
                upstream.add(url);
                // Replicas in list order with falling weights, the primary last.
                cdc.add(url.withWeight(i == 3 ? 10 : 100 - i));
            }
            ProxyConfig proxy = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", port))
                    .withConnectTimeout(Duration.ofSeconds(1)).withConnectRetries(1);
            Gantry gantry = Gantry.start(new Gantry.Options(proxy, upstream, cdc, Path.of(args[1]),
                    Duration.ofSeconds(1), Retention.DEFAULT, Set.of(), Optional.of(new CdcSettings(
                    Duration.ofSeconds(1), 1, Optional.of(Path.of(args[2])), 256 * 1024,
                    TableFilter.parse("app.chaos", "app"), false))));
            Runtime.getRuntime().addShutdownHook(new Thread(gantry::close));
            Thread.currentThread().join();
        }
    }
}
