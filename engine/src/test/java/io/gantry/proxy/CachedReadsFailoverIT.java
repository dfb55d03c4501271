package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.Gantry;
import io.gantry.authority.Retention;
import io.gantry.cdc.CdcSettings;
import io.gantry.cdc.TableFilter;
import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.UpstreamUrl;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of the change stream's server while cached reads run: the caches fall back to their TTL while the stream
 * retries and moves, no hit is older than the fallback rules allow, and {@code SHOW CACHES} shows the stream's new
 * server once it streams again.
 */
class CachedReadsFailoverIT {

    private static final int ROWS = 50;
    private static final Duration TTL = Duration.ofSeconds(2);

    @TempDir
    Path dataDir;

    /** A write: the value a row got, its GTID, and when the primary acknowledged it. */
    private record Write(int id, long value, GtidSet gtid, long ackedMillis) {
    }

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void killingTheStreamsServerFallsBackToTtlAndTheMoveShowsInShowCaches() throws Exception {
        try (Topology topology = Sandboxes.startPrivate(TopologyKind.MARIADB, "cache-cdc-kill", 2)) {
            DatabaseServer primary = topology.primary();
            DatabaseServer streamed = topology.replicas().get(0);
            DatabaseServer next = topology.replicas().get(1);
            try (Connection root = topology.connectAsApp(primary)) {
                execute(root, "CREATE TABLE kv (id INT PRIMARY KEY, v BIGINT NOT NULL)");
                for (int id = 0; id < ROWS; id++) {
                    execute(root, "INSERT INTO kv VALUES (" + id + ", 0)");
                }
            }
            topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
            // Sessions read from the primary and the second replica; the stream reads from the first replica,
            // then, once it is killed, from the second.
            List<UpstreamUrl> upstream = List.of(url(primary, 50), url(next, 50));
            List<UpstreamUrl> cdc = List.of(url(streamed, 100), url(next, 50));
            ProxyConfig proxy = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0))
                    .withConnectTimeout(Duration.ofSeconds(1));
            try (Gantry gantry = Gantry.start(new Gantry.Options(proxy, upstream, cdc, dataDir, Duration.ofSeconds(1),
                    Retention.DEFAULT, Set.of(), Optional.of(new CdcSettings(Duration.ofSeconds(1), 1,
                    Optional.empty(), 1 << 20, TableFilter.allOf("app"), false))))) {
                Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> gantry.caches().freshness().live());
                String url = "jdbc:mariadb://127.0.0.1:" + gantry.address().getPort() + "/app";
                try (Connection admin = DriverManager.getConnection(url, "app", "app")) {
                    execute(admin, "CREATE CACHE kv POLICY TTL " + TTL.toSeconds() + " SECONDS FROM SELECT v FROM kv "
                            + "WHERE id = ?");
                    assertThat(freshness(admin)).isEqualTo("kept fresh by the change stream from "
                            + streamed.address());
                }
                List<Write> writes = Collections.synchronizedList(new ArrayList<>());
                List<String> stale = Collections.synchronizedList(new ArrayList<>());
                AtomicLong hits = new AtomicLong();
                AtomicBoolean running = new AtomicBoolean(true);
                ExecutorService pool = Executors.newFixedThreadPool(3);
                List<Future<?>> work = new ArrayList<>();
                work.add(pool.submit(() -> {
                    AtomicLong counter = new AtomicLong();
                    try (Connection writer = topology.connectAsApp(primary);
                         Statement statement = writer.createStatement()) {
                        while (running.get()) {
                            int id = ThreadLocalRandom.current().nextInt(ROWS);
                            long value = counter.incrementAndGet();
                            statement.executeUpdate("UPDATE kv SET v = " + value + " WHERE id = " + id);
                            try (ResultSet last = statement.executeQuery("SELECT @@last_gtid")) {
                                last.next();
                                writes.add(new Write(id, value, GtidSet.parse(last.getString(1), Flavour.MARIADB),
                                        System.currentTimeMillis()));
                            }
                            Thread.sleep(50);
                        }
                    }
                    return null;
                }));
                for (int reader = 0; reader < 2; reader++) {
                    work.add(pool.submit(() -> {
                        try (Connection connection = DriverManager.getConnection(url, "app", "app");
                             Statement statement = connection.createStatement()) {
                            while (running.get()) {
                                int id = ThreadLocalRandom.current().nextInt(ROWS);
                                long started = System.currentTimeMillis();
                                GtidSet applied = gantry.caches().streamPosition();
                                long value;
                                try (ResultSet row = statement.executeQuery("SELECT v FROM kv WHERE id = " + id)) {
                                    row.next();
                                    value = row.getLong(1);
                                }
                                if (isHit(statement)) {
                                    hits.incrementAndGet();
                                    String why = tooOld(writes, id, value, applied, started);
                                    if (why != null) {
                                        stale.add(why);
                                    }
                                }
                            }
                        }
                        return null;
                    }));
                }
                Thread.sleep(3_000);
                long hitsBeforeKill = hits.get();
                String beforeKill;
                try (Connection admin = DriverManager.getConnection(url, "app", "app")) {
                    beforeKill = cacheRow(admin);
                }
                topology.kill(streamed);
                try (Connection admin = DriverManager.getConnection(url, "app", "app")) {
                    Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                            .until(() -> freshness(admin).endsWith("TTL only"));
                    Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                            .until(() -> freshness(admin).equals("kept fresh by the change stream from "
                                    + next.address()));
                }
                Thread.sleep(3_000);
                running.set(false);
                for (Future<?> done : work) {
                    done.get(1, TimeUnit.MINUTES);
                }
                pool.shutdown();
                assertThat(hitsBeforeKill).as("hits before the kill (SHOW CACHES then: %s)", beforeKill).isGreaterThan(20);
                assertThat(hits.get()).as("hits in all").isGreaterThan(hitsBeforeKill);
                assertThat(stale).isEmpty();
            }
        }
    }

    /**
     * Why a hit is older than the rules allow, or null: it must have every write to its row that the stream had
     * applied (and so evicted for) when the read began, and, whatever the stream does, every write acknowledged
     * more than the TTL (plus a second for the clocks of the check) before it.
     */
    private static String tooOld(List<Write> writes, int id, long value, GtidSet applied, long startedMillis) {
        synchronized (writes) {
            for (Write write : writes) {
                if (write.id() != id || write.value() <= value) {
                    continue;
                }
                if (applied != null && applied.contains(write.gtid())) {
                    return "row " + id + ": a hit read " + value + " after the stream applied " + write.value();
                }
                if (startedMillis - write.ackedMillis() > TTL.toMillis() + 1_000) {
                    return "row " + id + ": a hit read " + value + ", older than the TTL allows ("
                            + write.value() + " was written " + (startedMillis - write.ackedMillis()) + " ms before)";
                }
            }
        }
        return null;
    }

    private static boolean isHit(Statement statement) throws SQLException {
        try (ResultSet rows = statement.executeQuery("EXPLAIN LAST STATEMENT")) {
            rows.next();
            return rows.getString(1).equals("cache");
        }
    }

    private static String freshness(Connection admin) throws SQLException {
        try (Statement statement = admin.createStatement(); ResultSet rows = statement.executeQuery("SHOW CACHES")) {
            rows.next();
            return rows.getString("freshness");
        }
    }

    private static String cacheRow(Connection admin) throws SQLException {
        try (Statement statement = admin.createStatement(); ResultSet rows = statement.executeQuery("SHOW CACHES")) {
            rows.next();
            StringBuilder row = new StringBuilder();
            for (int i = 1; i <= rows.getMetaData().getColumnCount(); i++) {
                row.append(rows.getMetaData().getColumnLabel(i)).append('=').append(rows.getString(i)).append(' ');
            }
            return row.toString();
        }
    }

    private static UpstreamUrl url(DatabaseServer server, int weight) {
        return new UpstreamUrl(server.host(), server.port(), "app", "app", "app", weight);
    }
}
