package io.gantry.consistency;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.GantryProcess;
import io.gantry.cdc.SinkContents;
import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import io.gantry.route.ReadGuarantees;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.MariaDbTopology;
import io.gantry.sandbox.Sandboxes;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chaos soak of following the primary: sessions through Gantry (its own JVM, at its defaults) read and write
 * without pause (half of the writes in transactions of two writes with a read of the first between them), and one writer feeds a table to the change stream, while faults come one after another: a planned
 * switchover, kill -9 of a replica, kill -9 of the primary with a manual failover to the most advanced replica (the
 * old primary rejoins as a replica), SIGSTOP of a replica for 3 s, kill -9 of Gantry and its restart. The servers
 * commit semi-synchronously, as a primary that may be killed must: otherwise a commit it acknowledged may exist
 * nowhere else. At the end: no acknowledged write lost, none on a replica, no violation of the read guarantees in
 * the history, every fed row in the change feed exactly once, and the client errors each kind of fault cost.
 * {@code -Dgantry.soak.cycles=100} for the soak (10 by default, each fault twice, as CI runs it).
 */
class SwitchoverSoakIT {

    private static final int CYCLES = Integer.getInteger("gantry.soak.cycles", 10);
    private static final Duration INTERVAL = ReadGuarantees.DEFAULTS.sampleInterval();

    enum Fault {
        PLANNED_SWITCHOVER("planned switchover"),
        REPLICA_KILL("kill -9 of a replica"),
        PRIMARY_KILL("kill -9 of the primary, manual failover"),
        REPLICA_FREEZE("SIGSTOP of a replica for 3 s"),
        GANTRY_KILL("kill -9 of Gantry");

        final String description;

        Fault(String description) {
            this.description = description;
        }
    }

    @TempDir
    Path dir;

    /** Failed operations, each with when it was invoked, from the workload's history and the feed writer. */
    private final ConcurrentLinkedQueue<Long> feedErrors = new ConcurrentLinkedQueue<>();
    /** The feed's errors in words, for the report of what each fault cost. */
    private final ConcurrentLinkedQueue<String> feedErrorTexts = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Long> feedAcknowledged = new ConcurrentLinkedQueue<>();

    @Test
    void noAcknowledgedWriteLostAndTheFeedExactlyOnceAcrossSwitchoversAndKills() throws Exception {
        try (MariaDbTopology topology = Sandboxes.startSemiSync("switchover-soak", 2)) {
            try (Connection connection = topology.connectAsApp(topology.primary());
                 Statement statement = connection.createStatement()) {
                statement.execute(Workload.CREATE_TABLE);
                statement.execute("CREATE TABLE feed (id BIGINT PRIMARY KEY)");
            }
            topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
            Path sink = dir.resolve("changes.jsonl");
            GantryProcess gantry = new GantryProcess(dir, sink, "app.feed", Duration.ofSeconds(2), topology.servers());
            gantry.start();
            gantry.awaitAnswering(Duration.ofSeconds(60));

            History history = new History();
            Workload workload = new Workload(history, new Workload.Mix(0.3, 0.3, 0.05,
                    ReadGuarantees.DEFAULTS.maxStaleReadBound().toMillis(), 5, 30L, 0.5), sessions(gantry.port(), 8));
            AtomicBoolean feeding = new AtomicBoolean(true);
            Thread feeder = new Thread(() -> feed(gantry.port(), feeding), "soak-feed");
            Map<Fault, List<long[]>> windows = new EnumMap<>(Fault.class);
            long started = System.nanoTime();
            Thread load = null;
            try {
                workload.connect();
                load = new Thread(() -> {
                    try {
                        workload.runFor(Duration.ofHours(2));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }, "soak-workload");
                load.start();
                feeder.start();
                SplittableRandom random = new SplittableRandom(CYCLES);
                for (int cycle = 0; cycle < CYCLES; cycle++) {
                    Thread.sleep(1000 + random.nextInt(1000));
                    Fault fault = Fault.values()[cycle % Fault.values().length];
                    long from = System.nanoTime();
                    history.note("cycle " + (cycle + 1) + ": " + fault.description);
                    System.out.printf("SwitchoverSoakIT: cycle %d of %d: %s%n", cycle + 1, CYCLES,
                            fault.description);
                    inject(fault, topology, gantry, history, random);
                    // Errors a fault costs include the ones just after it ends (sessions on their way back).
                    Thread.sleep(1000);
                    windows.computeIfAbsent(fault, f -> new ArrayList<>()).add(new long[] {from, System.nanoTime()});
                }
            } catch (AssertionError | RuntimeException e) {
                gantry.printLogs(80);
                throw e;
            } finally {
                workload.stop();
                feeding.set(false);
                if (load != null) {
                    load.join();
                }
                feeder.join();
                workload.close();
            }
            long millis = (System.nanoTime() - started) / 1_000_000;

            for (DatabaseServer server : topology.servers()) {
                if (!server.isRunning()) {
                    topology.start(server);
                }
            }
            topology.awaitReplicasCaughtUp(Duration.ofSeconds(60));
            HistoryChecker.Report report = new HistoryChecker(INTERVAL).check(history);
            List<Violation> onReplicas = HistoryChecker.checkReplicaBinlogs(topology);
            int lostKeys = lostAcknowledgedVersions(topology, history);
            Set<Long> fed = ids(topology, topology.primary(), "SELECT id FROM feed");
            long lostFeed = feedAcknowledged.stream().filter(id -> !fed.contains(id)).count();

            GtidSet primaryPosition = GtidSet.parse(topology.executedGtids(topology.primary()), Flavour.MARIADB);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!cdcHolds(gantry, primaryPosition) && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            List<Long> feedIds = SinkContents.read(sink).ids("feed", "insert");
            Set<Long> distinct = new HashSet<>(feedIds);

            System.out.printf("SwitchoverSoakIT: %d cycles in %d s: %s%n  workload: %s; %d reconnects%n"
                            + "  feed: %d rows acknowledged, %d lost; %d lines in the change feed, %d distinct, "
                            + "%d rows in the table%n  acknowledged writes lost: %d keys; writes on a replica: %d; "
                            + "history violations: %d%n  client errors per fault: %s%n",
                    CYCLES, millis / 1000, countsByFault(windows), report.describe(20), workload.reconnects(),
                    feedAcknowledged.size(), lostFeed, feedIds.size(), distinct.size(), fed.size(), lostKeys,
                    onReplicas.size(), report.violations().size(), errorsPerFault(windows, history));
            errorKinds(windows, history).forEach(line -> System.out.println("  " + line));
            try {
                assertThat(lostKeys).as("keys whose last acknowledged version is missing").isZero();
                assertThat(workload.disagreements()).as("reads inside a transaction missing its own write").isEmpty();
                assertThat(lostFeed).as("acknowledged feed rows missing from the table").isZero();
                assertThat(onReplicas).as("writes on a replica").isEmpty();
                assertThat(report.violations()).as(report.describe(30)).isEmpty();
                assertThat(feedIds.size()).as("no row twice in the change feed").isEqualTo(distinct.size());
                assertThat(distinct).as("every fed row in the change feed").isEqualTo(fed);
                assertThat(HistoryChecker.dataDifferences(topology, "SELECT (SELECT COUNT(*) FROM kv), "
                        + "(SELECT COALESCE(SUM(v), 0) FROM kv), (SELECT COALESCE(BIT_XOR(CRC32(CONCAT(k, ':', v))), 0) "
                        + "FROM kv), (SELECT COUNT(*) FROM feed), (SELECT COALESCE(SUM(id), 0) FROM feed)"))
                        .as("every server ends with the primary's rows").isEmpty();
            } catch (AssertionError e) {
                history.events().stream().limit(300).forEach(event -> System.out.println("  chaos " + event));
                gantry.printLogs(80);
                throw e;
            } finally {
                gantry.close();
            }
        }
    }

    private void inject(Fault fault, MariaDbTopology topology, GantryProcess gantry, History history,
                        SplittableRandom random) throws Exception {
        List<DatabaseServer> replicas = topology.replicas();
        DatabaseServer replica = replicas.get(random.nextInt(replicas.size()));
        switch (fault) {
            case PLANNED_SWITCHOVER -> {
                topology.promote(replica);
                history.note("promoted " + replica.name());
                awaitGantryPrimary(gantry, replica);
            }
            case REPLICA_KILL -> {
                topology.kill(replica);
                Thread.sleep(1000 + random.nextInt(1000));
                topology.start(replica);
                history.note("restarted " + replica.name());
            }
            case PRIMARY_KILL -> {
                DatabaseServer old = topology.primary();
                topology.kill(old);
                history.note("kill -9 " + old.name());
                DatabaseServer promoted = topology.failover(Duration.ofSeconds(30));
                history.note("failover to " + promoted.name());
                awaitGantryPrimary(gantry, promoted);
                topology.start(old);
                history.note(old.name() + " rejoined as a replica");
            }
            case REPLICA_FREEZE -> {
                topology.freeze(replica);
                Thread.sleep(3000);
                topology.thaw(replica);
                history.note("thawed " + replica.name());
            }
            case GANTRY_KILL -> {
                gantry.kill();
                Thread.sleep(500);
                gantry.start();
                gantry.awaitAnswering(Duration.ofSeconds(60));
                history.note("Gantry restarted");
            }
        }
    }

    private static void awaitGantryPrimary(GantryProcess gantry, DatabaseServer primary) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (!primary.address().equals(gantry.status("Primary"))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Gantry did not follow the primary to " + primary.name() + " within 15 s; "
                        + "it names " + gantry.status("Primary"));
            }
            Thread.sleep(20);
        }
    }

    /** Sessions of both drivers, text and server-prepared, all with read-your-writes (Gantry's default). */
    private static List<Workload.SessionSpec> sessions(int port, int count) {
        String[] urls = {
            "jdbc:mariadb://127.0.0.1:" + port + "/app?sslMode=disable&useServerPrepStmts=false",
            "jdbc:mysql://127.0.0.1:" + port + "/app?sslMode=DISABLED&allowPublicKeyRetrieval=true",
            "jdbc:mariadb://127.0.0.1:" + port + "/app?sslMode=disable&useServerPrepStmts=true",
            "jdbc:mysql://127.0.0.1:" + port + "/app?sslMode=DISABLED&allowPublicKeyRetrieval=true"
                    + "&useServerPrepStmts=true",
        };
        List<Workload.SessionSpec> sessions = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String url = urls[i % urls.length] + "&connectTimeout=2000";
            sessions.add(new Workload.SessionSpec("s" + i, () -> DriverManager.getConnection(url, "app", "app"), 0,
                    true));
        }
        return sessions;
    }

    /** One writer inserting 1, 2, 3, ... into the fed table; each id acknowledged (or failed) is noted. */
    private void feed(int port, AtomicBoolean feeding) {
        String url = "jdbc:mysql://127.0.0.1:" + port + "/app?sslMode=DISABLED&allowPublicKeyRetrieval=true"
                + "&connectTimeout=2000";
        long id = 1;
        Connection connection = null;
        while (feeding.get()) {
            try {
                if (connection == null) {
                    connection = DriverManager.getConnection(url, "app", "app");
                }
                try (PreparedStatement insert = connection.prepareStatement("INSERT INTO feed (id) VALUES (?)")) {
                    insert.setLong(1, id);
                    insert.executeUpdate();
                }
                feedAcknowledged.add(id);
            } catch (SQLException e) {
                feedErrors.add(System.nanoTime());
                feedErrorTexts.add(e.getErrorCode() + " " + e.getMessage());
                if (Workload.brokenConnection(e)) {
                    close(connection);
                    connection = null;
                }
                pause(100);
            }
            id++;
            pause(5);
        }
        close(connection);
    }

    private static void close(Connection connection) {
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // dropped after a failure
            }
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Keys whose final value on the primary is below a version a client saw acknowledged. */
    private static int lostAcknowledgedVersions(MariaDbTopology topology, History history) throws SQLException {
        Map<Integer, Long> acknowledged = new HashMap<>();
        for (Operation operation : history.operations()) {
            if (operation.kind() == Operation.Kind.WRITE && operation.ok()) {
                acknowledged.merge(operation.key(), operation.version(), Math::max);
            }
        }
        Map<Integer, Long> stored = new HashMap<>();
        try (Connection connection = topology.connectAsApp(topology.primary());
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SELECT k, v FROM kv")) {
            while (rows.next()) {
                stored.put(rows.getInt(1), rows.getLong(2));
            }
        }
        int lost = 0;
        for (Map.Entry<Integer, Long> entry : acknowledged.entrySet()) {
            if (stored.getOrDefault(entry.getKey(), 0L) < entry.getValue()) {
                System.out.printf("SwitchoverSoakIT: k=%d acknowledged at version %d, stored %s%n", entry.getKey(),
                        entry.getValue(), stored.get(entry.getKey()));
                lost++;
            }
        }
        return lost;
    }

    private static boolean cdcHolds(GantryProcess gantry, GtidSet position) {
        String text = gantry.status("CDC Position");
        return text != null && GtidSet.parse(text, Flavour.MARIADB).contains(position);
    }

    private static String countsByFault(Map<Fault, List<long[]>> windows) {
        StringBuilder out = new StringBuilder();
        windows.forEach((fault, list) -> out.append(out.length() == 0 ? "" : ", ").append(list.size()).append(" × ")
                .append(fault.description));
        return out.toString();
    }

    /** Per kind of fault: the failed operations (workload and feed) during its windows, per occurrence. */
    private String errorsPerFault(Map<Fault, List<long[]>> windows, History history) {
        Map<String, String> out = new LinkedHashMap<>();
        windows.forEach((fault, list) -> {
            long errors = 0;
            for (long[] window : list) {
                // A transaction's two writes failed with one error: counted once.
                errors += history.operations().stream().filter(o -> !o.ok() && o.invokedNanos() >= window[0]
                        && o.invokedNanos() <= window[1]).map(o -> o.session() + "@" + o.invokedNanos())
                        .distinct().count();
                errors += feedErrors.stream().filter(at -> at >= window[0] && at <= window[1]).count();
            }
            out.put(fault.description, String.format("%.1f", errors / (double) list.size()));
        });
        return out.toString();
    }

    /** Per kind of fault, the client errors during its windows by what they said (numbers left out), most first. */
    private List<String> errorKinds(Map<Fault, List<long[]>> windows, History history) {
        List<String> lines = new ArrayList<>();
        windows.forEach((fault, list) -> {
            Map<String, Long> kinds = history.operations().stream()
                    .filter(o -> !o.ok() && o.error() != null && list.stream()
                            .anyMatch(w -> o.invokedNanos() >= w[0] && o.invokedNanos() <= w[1]))
                    .collect(Collectors.groupingBy(o -> inGeneral(o.errorCode() + " " + o.error()),
                            Collectors.counting()));
            kinds.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(8)
                    .forEach(kind -> lines.add(fault.description + ": " + kind.getValue() + " × " + kind.getKey()));
        });
        feedErrorTexts.stream().collect(Collectors.groupingBy(SwitchoverSoakIT::inGeneral, Collectors.counting()))
                .forEach((text, count) -> lines.add("feed: " + count + " × " + text));
        return lines;
    }

    private static String inGeneral(String error) {
        String general = error.replaceAll("[0-9]+", "N");
        return general.length() > 240 ? general.substring(0, 240) + "…" : general;
    }

    private static Set<Long> ids(MariaDbTopology topology, DatabaseServer server, String sql) throws SQLException {
        Set<Long> ids = new HashSet<>();
        try (Connection connection = topology.connectAsApp(server);
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery(sql)) {
            while (rows.next()) {
                ids.add(rows.getLong(1));
            }
        }
        return ids;
    }
}
