package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.consistency.History;
import io.gantry.consistency.HistoryChecker;
import io.gantry.consistency.Operation;
import io.gantry.consistency.Violation;
import io.gantry.route.ReadGuarantees;
import io.gantry.route.ReadYourWritesScope;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Read-your-writes across an application's connection pool ({@code gantry_read_your_writes_scope}): each client writes
 * a versioned row on one connection and reads it back on another, as a web request takes one pooled connection to
 * write and the next request another to read, while both replicas' SQL threads are paused again and again. The
 * history is checked per client, not per connection: with the {@code account} and {@code token} scopes no read may
 * miss its client's write; with {@code session}, the negative control, reads do. {@code -Dgantry.causal-scope-seconds}
 * runs each case longer (3 s in CI; 25 s gave more than the 100 000 operations per case on this machine).
 */
class CausalScopeHistoryIT {

    private static final Duration RUN = Duration.ofSeconds(Integer.getInteger("gantry.causal-scope-seconds", 3));
    private static final int CLIENTS = 8;
    private static final String WRITE = "INSERT INTO kv (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = GREATEST(v, "
            + "VALUES(v))";
    private static final String READ = "SELECT (SELECT v FROM kv WHERE k = ?), @@server_id";

    private static Topology topology;
    /** Versions are unique across the class's runs; so are keys: the rows of an earlier run are not in this history. */
    private static final AtomicLong VERSIONS = new AtomicLong();
    private static final AtomicLong RUNS = new AtomicLong();

    @BeforeAll
    static void servers() throws SQLException {
        topology = Sandboxes.startPrivate(TopologyKind.MARIADB, "causal-scopes", 2);
        try (Connection connection = topology.connectAsApp(topology.primary());
             Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE kv (k INT PRIMARY KEY, v BIGINT NOT NULL)");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
    }

    @AfterAll
    static void stopServers() {
        topology.close();
    }

    @Test
    void withTheAccountScopeNoReadOnAnotherConnectionMissesTheClientsWrite() throws Exception {
        HistoryChecker.Report report = run(ReadYourWritesScope.ACCOUNT, false, "account");
        assertThat(report.operations()).isGreaterThan(1000);
        assertThat(report.violations()).as(report.describe(20)).isEmpty();
    }

    @Test
    void withATokenPerClientNoReadOnAnotherConnectionMissesTheClientsWrite() throws Exception {
        HistoryChecker.Report report = run(ReadYourWritesScope.TOKEN, true, "token");
        assertThat(report.operations()).isGreaterThan(1000);
        assertThat(report.violations()).as(report.describe(20)).isEmpty();
    }

    /** The negative control: the same load with each session's own writes only. The checker must find misses. */
    @Test
    void withTheSessionScopeReadsOnAnotherConnectionMissTheClientsWrites() throws Exception {
        HistoryChecker.Report report = run(ReadYourWritesScope.SESSION, false, "session (negative control)");
        assertThat(report.count(Violation.Rule.READ_YOUR_WRITES)).as(report.describe(3)).isPositive();
    }

    private HistoryChecker.Report run(ReadYourWritesScope scope, boolean tokens, String what) throws Exception {
        History history = new History();
        int firstKey = (int) RUNS.incrementAndGet() * 100_000;
        try (ProxyHarness harness = ProxyHarness.start(topology, config -> config.withReadGuarantees(
                ReadGuarantees.DEFAULTS.withScope(scope)), servers -> servers)) {
            List<Client> clients = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                ProxyHarness.Driver driver = ProxyHarness.Driver.values()[i % ProxyHarness.Driver.values().length];
                clients.add(new Client(what.charAt(0) + "-client" + i, i, firstKey + i * 1000,
                        harness.connect(driver), harness.connect(driver), tokens, history));
            }
            Map<String, String> before = harness.proxy.readStatus();
            Lag lag = new Lag(history);
            lag.start();
            List<Thread> threads = new ArrayList<>();
            long until = System.nanoTime() + RUN.toNanos();
            for (Client client : clients) {
                Thread thread = new Thread(() -> client.runUntil(until), client.name);
                thread.start();
                threads.add(thread);
            }
            for (Thread thread : threads) {
                thread.join();
            }
            lag.stop();
            Map<String, String> after = harness.proxy.readStatus();
            for (Client client : clients) {
                client.close();
            }
            HistoryChecker.Report report = new HistoryChecker(ReadGuarantees.DEFAULTS.sampleInterval())
                    .check(history);
            long failed = history.operations().stream().filter(operation -> !operation.ok()).count();
            System.out.printf("CausalScopeHistoryIT, scope %s: %d operations in %d s (%d failed), %d lag pauses; "
                            + "reads by replicas %d, by the primary %d; %s%n", what, report.operations(),
                    RUN.toSeconds(), failed, lag.pauses, delta(before, after, "Reads_served_by_replicas"),
                    delta(before, after, "Reads_served_by_primary"), report.describe(3));
            assertThat(failed).as("failed operations").isZero();
            return report;
        } finally {
            for (DatabaseServer replica : topology.replicas()) {
                topology.resumeReplication(replica);
            }
            topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        }
    }

    /**
     * One application client: a request writes a new version of one of its keys on one pooled connection, the next
     * reads it on another; now and then a read of a key it wrote earlier.
     */
    private final class Client {

        final String name;
        private final int index;
        private final int firstKey;
        private final Connection writer;
        private final Connection reader;
        private final History history;
        private final PreparedStatement write;
        private final PreparedStatement read;
        private final Random random;

        Client(String name, int index, int firstKey, Connection writer, Connection reader, boolean tokens,
               History history) throws SQLException {
            this.name = name;
            this.index = index;
            this.firstKey = firstKey;
            this.writer = writer;
            this.reader = reader;
            this.history = history;
            this.random = new Random(index);
            if (tokens) {
                // What a framework hook does per request: both connections name the client's token.
                for (Connection connection : List.of(writer, reader)) {
                    try (Statement statement = connection.createStatement()) {
                        statement.execute("SET gantry_causal_token = 'user-" + index + "'");
                    }
                }
            }
            this.write = writer.prepareStatement(WRITE);
            this.read = reader.prepareStatement(READ);
        }

        void runUntil(long until) {
            while (System.nanoTime() < until) {
                int key = firstKey + random.nextInt(20);
                if (random.nextInt(4) != 0) {
                    long version = VERSIONS.incrementAndGet();
                    long invoked = System.nanoTime();
                    try {
                        write.setInt(1, key);
                        write.setLong(2, version);
                        write.executeUpdate();
                        history.record(Operation.write(name, key, version, invoked, System.nanoTime()));
                    } catch (SQLException e) {
                        history.record(failed(Operation.Kind.WRITE, key, version, invoked, e));
                        continue;
                    }
                }
                long invoked = System.nanoTime();
                try {
                    read.setInt(1, key);
                    try (ResultSet row = read.executeQuery()) {
                        row.next();
                        history.record(new Operation(name, Operation.Kind.READ, key, row.getLong(1), invoked,
                                System.nanoTime(), System.currentTimeMillis(), Operation.Outcome.OK,
                                row.getString(2), 0, 0, null));
                    }
                } catch (SQLException e) {
                    history.record(failed(Operation.Kind.READ, key, 0, invoked, e));
                }
            }
        }

        private Operation failed(Operation.Kind kind, int key, long version, long invoked, SQLException e) {
            return new Operation(name, kind, key, version, invoked, System.nanoTime(), System.currentTimeMillis(),
                    Operation.Outcome.FAILED, null, 0, e.getErrorCode(), e.getMessage());
        }

        void close() throws SQLException {
            writer.close();
            reader.close();
        }
    }

    /** Both replicas' SQL threads paused for 50-300 ms, then left to catch up for 20-100 ms, over and over. */
    private static final class Lag {

        private final History history;
        private final Thread thread;
        private volatile boolean running = true;
        private int pauses;

        Lag(History history) {
            this.history = history;
            this.thread = new Thread(this::loop, "lag");
        }

        void start() {
            thread.start();
        }

        private void loop() {
            Random random = new Random(42);
            while (running) {
                try {
                    for (DatabaseServer replica : topology.replicas()) {
                        topology.pauseReplication(replica);
                    }
                    pauses++;
                    history.note("paused both replicas' SQL threads");
                    Thread.sleep(50 + random.nextInt(250));
                    for (DatabaseServer replica : topology.replicas()) {
                        topology.resumeReplication(replica);
                    }
                    Thread.sleep(20 + random.nextInt(80));
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        void stop() throws InterruptedException {
            running = false;
            thread.join(10_000);
        }
    }

    private static long delta(Map<String, String> before, Map<String, String> after, String name) {
        return Long.parseLong(after.getOrDefault(name, "0")) - Long.parseLong(before.getOrDefault(name, "0"));
    }
}
