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
 * feed staying exactly once across the takeover, and across a {@code --take-over} of the next holder (issue 46).
 */
class ClusterFeedIT {

    private static final Duration LEASE = Duration.ofSeconds(3);
    /** One primary and two replicas. */
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

    /**
     * One writer at a time, and every row once: across a kill -9 of the writer, its return, and a {@code --take-over}
     * of the next writer, which lets the lease go when it lends its data directory so that another process (the new
     * one or another instance) takes the feed on.
     */
    @Test
    void oneWriterAtATimeAndEveryRowExactlyOnceAcrossAKillAndATakeOver() throws Exception {
        Path sink = dir.resolve("feed.jsonl");
        List<String> names = List.of("feed-a", "feed-b", "feed-c");
        List<GantryProcess> instances = instances("feed", names, sink);
        IdWriter writer = new IdWriter(topology, "INSERT INTO feed VALUES (%d)");
        try {
            startAll(instances);
            waitUntil(() -> lease().isPresent(), Duration.ofSeconds(30));
            Lease first = lease().orElseThrow();
            writer.start();
            Thread.sleep(2_000);

            GantryProcess owner = instances.get(names.indexOf(first.owner()));
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
            assertThat(lease().orElseThrow().owner()).as("the feed stayed with its new owner")
                    .isEqualTo(second.owner());

            GantryProcess holder = instances.get(names.indexOf(second.owner()));
            long started = System.nanoTime();
            holder.takeOver(Duration.ofSeconds(60));
            holder.awaitAnswering(Duration.ofSeconds(30));
            waitUntil(() -> lease().filter(l -> l.epoch() > second.epoch()).isPresent(), Duration.ofSeconds(30));
            Lease third = lease().orElseThrow();
            System.out.printf("ClusterFeedIT: %s (epoch %d) taken over; the feed is %s's (epoch %d) %d ms after "
                    + "the new process started%n", second.owner(), second.epoch(), third.owner(), third.epoch(),
                    Duration.ofNanos(System.nanoTime() - started).toMillis());
            Thread.sleep(1_000);
            assertEveryIdOnce(sink, "feed", writer.stop());
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
     * The Gantry processes {@code names} of cluster {@code cluster} (its name is also its table's, created here), not
     * started, sharing {@code sink}.
     */
    private List<GantryProcess> instances(String cluster, List<String> names, Path sink) throws Exception {
        try (Connection primary = topology.connectAsApp(topology.primary());
             Statement statement = primary.createStatement()) {
            statement.execute("CREATE TABLE " + cluster + " (id BIGINT PRIMARY KEY)");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        List<GantryProcess> instances = new ArrayList<>();
        for (String name : names) {
            java.nio.file.Files.createDirectories(dir.resolve(name));
            // On epoll, whose sessions a take-over moves.
            instances.add(new GantryProcess(dir.resolve(name), sink, "app." + cluster, Duration.ofSeconds(1),
                    topology.servers()).inCluster(cluster, name, LEASE).onEpoll());
        }
        return instances;
    }

    private static void startAll(List<GantryProcess> instances) throws Exception {
        for (GantryProcess instance : instances) {
            instance.start();
        }
        for (GantryProcess instance : instances) {
            instance.awaitAnswering(Duration.ofSeconds(60));
        }
    }

    /** Every id the writer wrote, 1 to {@code last}, is in the sink once, in commit order. */
    private static void assertEveryIdOnce(Path sink, String table, long last) throws Exception {
        waitUntil(() -> SinkContents.read(sink).ids(table, "insert").size() >= last, Duration.ofSeconds(60));
        Thread.sleep(LEASE.toMillis()); // anything written twice would be there by now
        List<Long> ids = SinkContents.read(sink).ids(table, "insert");
        System.out.printf("ClusterFeedIT: %d rows written, %d lines in the sink, servers in order: %s%n", last,
                ids.size(), SinkContents.read(sink).serverRuns());
        assertThat(ids).as("every id exactly once, in commit order")
                .containsExactlyElementsOf(LongStream.rangeClosed(1, last).boxed().toList());
    }

    private record Lease(String owner, long epoch) {
    }

    /** The feed's lease as the primary has it, while it is held. */
    private static Optional<Lease> lease() {
        try (Connection primary = topology.connectAsApp(topology.primary());
             Statement statement = primary.createStatement();
             ResultSet rows = statement.executeQuery("SELECT owner, epoch FROM gantry_cluster.feed_lease WHERE "
                     + "cluster = 'feed' AND owner <> '' AND expires_at >= NOW(3)")) {
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
