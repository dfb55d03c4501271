package io.gantry.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.GantryProcess;
import io.gantry.cdc.IdWriter;
import io.gantry.cdc.SinkContents;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster's change feed has one writer at a time (issue 29, point 3): three Gantry processes share one sink, the
 * lease holder writes it, and after a kill -9 of the holder another takes the feed over within the lease time, the
 * feed staying exactly once across the takeover; and across a take-over of the holder (`--take-over`).
 */
class ClusterFeedIT {

    private static final Duration LEASE = Duration.ofSeconds(3);
    /** One primary and two replicas for both cases, each with a cluster and a table of its own. */
    private static Topology topology;

    @TempDir
    Path dir;

    @BeforeAll
    static void topology() {
        topology = Sandboxes.startPrivate(TopologyKind.MARIADB, "cluster-feed", 2);
    }

    @AfterAll
    static void stop() throws Exception {
        topology.close();
    }

    @Test
    void oneWriterAtATimeAndEveryRowExactlyOnceAcrossAKillOfIt() throws Exception {
        try (Connection primary = topology.connectAsApp(topology.primary());
             Statement statement = primary.createStatement()) {
            statement.execute("CREATE TABLE feed (id BIGINT PRIMARY KEY)");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        Path sink = dir.resolve("feed.jsonl");
        List<GantryProcess> instances = new ArrayList<>();
        for (String name : List.of("feed-a", "feed-b", "feed-c")) {
            java.nio.file.Files.createDirectories(dir.resolve(name));
            instances.add(new GantryProcess(dir.resolve(name), sink, "app.feed", Duration.ofSeconds(1),
                    topology.servers()).inCluster("feed", name, LEASE));
        }
        IdWriter writer = new IdWriter(topology, "INSERT INTO feed VALUES (%d)");
        try {
            for (GantryProcess instance : instances) {
                instance.start();
            }
            for (GantryProcess instance : instances) {
                instance.awaitAnswering(Duration.ofSeconds(60));
            }
            waitUntil(() -> lease().isPresent(), Duration.ofSeconds(30));
            Lease first = lease().orElseThrow();
            writer.start();
            Thread.sleep(2_000);

            GantryProcess owner = instances.get(List.of("feed-a", "feed-b", "feed-c").indexOf(first.owner()));
            owner.kill();
            long killed = System.nanoTime();
            waitUntil(() -> lease().filter(l -> !l.owner().equals(first.owner())).isPresent(),
                    Duration.ofSeconds(30));
            long takeoverMillis = Duration.ofNanos(System.nanoTime() - killed).toMillis();
            Lease second = lease().orElseThrow();
            System.out.printf("ClusterFeedIT: %s (epoch %d) killed; %s took the feed over (epoch %d) %d ms later, "
                    + "lease %d ms%n", first.owner(), first.epoch(), second.owner(), second.epoch(),
                    takeoverMillis, LEASE.toMillis());
            assertThat(second.epoch()).isGreaterThan(first.epoch());
            assertThat(takeoverMillis).as("within the lease time and one try of the others")
                    .isLessThan(LEASE.toMillis() + LEASE.toMillis() / 3 + 1_000);

            Thread.sleep(2_000);
            owner.start(); // the killed instance comes back and does not take the feed from its new owner
            owner.awaitAnswering(Duration.ofSeconds(60));
            Thread.sleep(1_000);
            long last = writer.stop();
            waitUntil(() -> SinkContents.read(sink).ids("feed", "insert").size() >= last, Duration.ofSeconds(60));
            Thread.sleep(LEASE.toMillis()); // anything written twice would be there by now
            List<Long> ids = SinkContents.read(sink).ids("feed", "insert");
            System.out.printf("ClusterFeedIT: %d rows written, %d lines in the sink, servers in order: %s%n", last,
                    ids.size(), SinkContents.read(sink).serverRuns());
            assertThat(ids).as("every id exactly once, in commit order")
                    .containsExactlyElementsOf(LongStream.rangeClosed(1, last).boxed().toList());
            assertThat(lease().orElseThrow().owner()).as("the feed stayed with its new owner")
                    .isEqualTo(second.owner());
        } catch (AssertionError | RuntimeException e) {
            for (GantryProcess instance : instances) {
                instance.printLogs(40);
            }
            throw e;
        } finally {
            writer.stop();
            for (GantryProcess instance : instances) {
                instance.close();
            }
        }
    }

    /**
     * {@code --take-over} of the feed's writer: it lets the lease go when it lends its data directory, another
     * process (the new one or another instance) takes the feed on, and every row is in the sink exactly once.
     */
    @Test
    void aTakeOverOfTheWriterPassesTheFeedOnExactlyOnce() throws Exception {
        try (Connection primary = topology.connectAsApp(topology.primary());
             Statement statement = primary.createStatement()) {
            statement.execute("CREATE TABLE moved (id BIGINT PRIMARY KEY)");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        Path sink = dir.resolve("take-over-feed.jsonl");
        List<GantryProcess> instances = new ArrayList<>();
        for (String name : List.of("moved-a", "moved-b")) {
            java.nio.file.Files.createDirectories(dir.resolve(name));
            instances.add(new GantryProcess(dir.resolve(name), sink, "app.moved", Duration.ofSeconds(1),
                    topology.servers()).inCluster("feed-moved", name, LEASE).onEpoll());
        }
        IdWriter writer = new IdWriter(topology, "INSERT INTO moved VALUES (%d)");
        try {
            for (GantryProcess instance : instances) {
                instance.start();
            }
            for (GantryProcess instance : instances) {
                instance.awaitAnswering(Duration.ofSeconds(60));
            }
            waitUntil(() -> lease("feed-moved").isPresent(), Duration.ofSeconds(30));
            Lease first = lease("feed-moved").orElseThrow();
            writer.start();
            Thread.sleep(1_500);
            GantryProcess owner = instances.get(List.of("moved-a", "moved-b").indexOf(first.owner()));
            long started = System.nanoTime();
            owner.takeOver(Duration.ofSeconds(60));
            owner.awaitAnswering(Duration.ofSeconds(30));
            waitUntil(() -> lease("feed-moved").filter(l -> l.epoch() > first.epoch()).isPresent(),
                    Duration.ofSeconds(30));
            Lease second = lease("feed-moved").orElseThrow();
            System.out.printf("ClusterFeedIT: %s (epoch %d) taken over; the feed is %s's (epoch %d) %d ms after "
                    + "the new process started%n", first.owner(), first.epoch(), second.owner(), second.epoch(),
                    Duration.ofNanos(System.nanoTime() - started).toMillis());
            Thread.sleep(1_500);
            long last = writer.stop();
            waitUntil(() -> SinkContents.read(sink).ids("moved", "insert").size() >= last, Duration.ofSeconds(60));
            Thread.sleep(LEASE.toMillis()); // anything written twice would be there by now
            List<Long> ids = SinkContents.read(sink).ids("moved", "insert");
            System.out.printf("ClusterFeedIT: %d rows written, %d lines in the sink%n", last, ids.size());
            assertThat(ids).as("every id exactly once, in commit order")
                    .containsExactlyElementsOf(LongStream.rangeClosed(1, last).boxed().toList());
        } catch (AssertionError | RuntimeException e) {
            for (GantryProcess instance : instances) {
                instance.printLogs(40);
            }
            throw e;
        } finally {
            writer.stop();
            for (GantryProcess instance : instances) {
                instance.close();
            }
        }
    }

    private record Lease(String owner, long epoch) {
    }

    /** The feed's lease as the primary has it, while it is held. */
    private static Optional<Lease> lease() {
        return lease("feed");
    }

    private static Optional<Lease> lease(String cluster) {
        try (Connection primary = topology.connectAsApp(topology.primary());
             Statement statement = primary.createStatement();
             ResultSet rows = statement.executeQuery("SELECT owner, epoch FROM gantry_cluster.feed_lease WHERE "
                     + "cluster = '" + cluster + "' AND owner <> '' AND expires_at >= NOW(3)")) {
            return rows.next() ? Optional.of(new Lease(rows.getString(1), rows.getLong(2))) : Optional.empty();
        } catch (SQLException e) {
            return Optional.empty(); // not created yet
        }
    }

    private static void waitUntil(BooleanSupplier condition, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("condition met within " + within).isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
