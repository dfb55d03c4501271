package io.gantry.cdc;

import static io.gantry.cdc.CdcFailoverIT.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.authority.Authority;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.TopologyKinds;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.UpstreamUrl;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.LongStream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A snapshot interrupted by kill -9 of its server starts again from scratch on the next server; the rows of the
 * broken attempt never reach the sink, and the snapshot plus the stream after it hold every row exactly once
 * while a writer keeps inserting.
 */
class CdcSnapshotIT {

    private static final int TABLE_ROWS = 200_000;
    private static final Pattern ROWS_DONE = Pattern.compile(" (\\d+)/~");

    @TempDir
    Path dir;

    /** MariaDB's snapshot takes no lock (its consistent snapshot has binlog coordinates); MySQL's a short FTWRL. */
    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void snapshotRestartsOnTheNextServerAfterItsServerDies(TopologyKind kind) throws Exception {
        try (Topology topology = TopologyKinds.startPrivate(kind, "cdc-snapshot", 1)) {
            DatabaseServer replica = topology.replicas().get(0);
            try (Connection primary = topology.connectAsApp(topology.primary());
                 Statement statement = primary.createStatement()) {
                statement.execute("CREATE TABLE snap_rows (id BIGINT PRIMARY KEY, note VARCHAR(40))");
                if (kind == TopologyKind.MARIADB) {
                    statement.execute("INSERT INTO snap_rows SELECT seq, CONCAT('row ', seq) FROM seq_1_to_"
                            + TABLE_ROWS);
                } else {
                    statement.execute("SET SESSION cte_max_recursion_depth = " + TABLE_ROWS);
                    statement.execute("INSERT INTO snap_rows WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL "
                            + "SELECT n + 1 FROM seq WHERE n < " + TABLE_ROWS + ") SELECT n, CONCAT('row ', n) FROM seq");
                }
            }
            topology.awaitReplicasCaughtUp(Duration.ofSeconds(60));

            AtomicLong nextId = new AtomicLong(TABLE_ROWS + 1);
            AtomicBoolean writing = new AtomicBoolean(true);
            Thread writer = new Thread(() -> {
                try (Connection primary = topology.connectAsApp(topology.primary());
                     Statement statement = primary.createStatement()) {
                    while (writing.get()) {
                        statement.executeUpdate("INSERT INTO snap_rows VALUES (" + nextId.get() + ", 'late')");
                        nextId.incrementAndGet();
                        Thread.sleep(5);
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, "snapshot-writer");
            writer.start();

            Path sinkPath = dir.resolve("changes.jsonl");
            try (Authority authority = Authority.open(dir.resolve("data"));
                 CdcStream stream = CdcStream.start(authority, List.of(url(replica, 90), url(topology.primary(), 10)),
                         new CdcSettings(Duration.ofSeconds(1), 1, Optional.of(sinkPath), 1 << 30,
                                 TableFilter.parse("app.snap_rows", "app"), false))) {
                waitUntil(() -> rowsDone(stream.status().snapshot()) > 5_000, Duration.ofSeconds(60));
                String before = stream.status().snapshot();
                topology.kill(replica);
                System.out.println("CdcSnapshotIT: killed the snapshot's server at: " + before);
                waitUntil(() -> stream.status().state() == CdcStream.State.STREAMING, Duration.ofSeconds(120));
                assertThat(stream.status().snapshot()).startsWith("done: ")
                        .contains("from " + topology.primary().address());
                assertThat(stream.activeServer()).contains(topology.primary().address());
                Thread.sleep(500);
                writing.set(false);
                writer.join();
                long last = nextId.get() - 1;
                waitUntil(() -> {
                    SinkContents sink = SinkContents.read(sinkPath);
                    return sink.ids("snap_rows", "insert").contains(last)
                            || sink.ids("snap_rows", "snapshot").contains(last);
                }, Duration.ofSeconds(60));

                SinkContents sink = SinkContents.read(sinkPath);
                List<Long> snapshot = sink.ids("snap_rows", "snapshot");
                List<Long> streamed = sink.ids("snap_rows", "insert");
                assertThat(new HashSet<>(sink.gtids("snapshot"))).as("one snapshot position").hasSize(1);
                List<Long> all = new ArrayList<>(snapshot);
                all.addAll(streamed);
                Set<Long> distinct = new HashSet<>(all);
                assertThat(all).as("every row exactly once").hasSize(distinct.size());
                // Plain set arithmetic: AssertJ's containsAll compares element by element, quadratic at this size.
                List<Long> missing = LongStream.rangeClosed(1, last).filter(id -> !distinct.contains(id)).boxed()
                        .toList();
                assertThat(missing).as("rows missing from the sink").isEmpty();
                assertThat(distinct).hasSize((int) last);
                assertThat(snapshot).hasSizeGreaterThanOrEqualTo(TABLE_ROWS);
                System.out.printf("CdcSnapshotIT: %s: snapshot %d rows, then %d streamed; %s%n", kind,
                        snapshot.size(), streamed.size(), stream.status().snapshot());
            } finally {
                writing.set(false);
                writer.join();
            }
        }
    }

    private static long rowsDone(String snapshotStatus) {
        Matcher matcher = ROWS_DONE.matcher(snapshotStatus);
        return matcher.find() ? Long.parseLong(matcher.group(1)) : 0;
    }

    private static UpstreamUrl url(DatabaseServer server, int weight) {
        return new UpstreamUrl(server.host(), server.port(), "app", "app", "app", weight);
    }
}
