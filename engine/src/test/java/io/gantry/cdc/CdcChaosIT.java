package io.gantry.cdc;

import static io.gantry.cdc.CdcFailoverIT.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.GantryProcess;
import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
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
            GantryProcess gantry = new GantryProcess(dir, sink, "app.chaos", Duration.ofSeconds(1),
                    topology.servers());

            IdWriter writer = new IdWriter(topology, "INSERT INTO chaos VALUES (%d, NOW(6))");
            gantry.start();
            try {
                awaitStreaming(gantry);
                writer.start();
                // Kill the CDC server; the stream moves on. Then Gantry, mid-stream; then the server it moved to.
                Thread.sleep(1500);
                kill(topology, replica1);
                Thread.sleep(1500);
                gantry.kill();
                Thread.sleep(700);
                topology.start(replica1);
                gantry.start();
                awaitStreaming(gantry);
                Thread.sleep(1500);
                kill(topology, replica2);
                Thread.sleep(1500);
                topology.start(replica2);
                Thread.sleep(1000);
                gantry.kill();
                gantry.start();
                awaitStreaming(gantry);
                Thread.sleep(1000);
                kill(topology, activeReplica(gantry, replica1, replica2, topology));
                Thread.sleep(1500);
                long last = writer.stop();
                for (DatabaseServer server : topology.servers()) {
                    if (!server.isRunning()) {
                        topology.start(server);
                    }
                }
                topology.awaitReplicasCaughtUp(Duration.ofSeconds(60));

                GtidSet primaryPosition = GtidSet.parse(topology.executedGtids(topology.primary()), Flavour.MARIADB);
                waitUntil(() -> position(gantry).map(p -> p.contains(primaryPosition)).orElse(false),
                        Duration.ofSeconds(60));
                GtidSet position = position(gantry).orElseThrow();
                assertThat(primaryPosition.contains(position)).as("Gantry's position %s is the primary's %s",
                        position, primaryPosition).isTrue();
                List<Long> ids = SinkContents.read(sink).ids("chaos", "insert");
                System.out.printf("CdcChaosIT: %d rows written, %d lines in the sink, servers in order: %s%n", last,
                        ids.size(), SinkContents.read(sink).serverRuns());
                assertThat(ids).as("every id exactly once, in commit order")
                        .containsExactlyElementsOf(LongStream.rangeClosed(1, last).boxed().toList());
            } catch (AssertionError | RuntimeException e) {
                gantry.printLogs(60);
                throw e;
            } finally {
                writer.stop();
                gantry.close();
            }
        }
    }

    private static void kill(Topology topology, DatabaseServer server) {
        System.out.println("CdcChaosIT: kill -9 of " + server.name() + " " + server.address());
        topology.kill(server);
    }

    private static void awaitStreaming(GantryProcess gantry) throws InterruptedException {
        waitUntil(() -> "streaming".equals(gantry.status("CDC Status")), Duration.ofSeconds(60));
    }

    private static DatabaseServer activeReplica(GantryProcess gantry, DatabaseServer a, DatabaseServer b,
                                                Topology topology) {
        String active = gantry.status("CDC Server");
        return a.address().equals(active) ? a : b.address().equals(active) ? b : topology.replicas().get(0);
    }

    private static Optional<GtidSet> position(GantryProcess gantry) {
        String text = gantry.status("CDC Position");
        return text == null ? Optional.empty() : Optional.of(GtidSet.parse(text, Flavour.MARIADB));
    }
}
