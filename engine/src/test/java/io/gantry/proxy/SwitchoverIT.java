package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.gantry.ClassTopologies;
import io.gantry.authority.Event;
import io.gantry.authority.EventKind;
import io.gantry.events.EngineEvent;
import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.proxy.session.FailoverSettings;
import io.gantry.route.ReadGuarantees;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.Role;
import io.gantry.topology.UpstreamServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Following the primary at {@code gantry run}'s defaults (health round every 2 s, checks bounded at 1.5 s, writes
 * held up to 5 s): a planned switchover under a write loop costs the client no error and loses no acknowledged write;
 * a primary that resumes after SIGSTOP is writable through Gantry again within a second; two writable servers at once
 * hold writes instead of guessing; a primary at {@code max_connections} is not taken for a dead one.
 */
class SwitchoverIT {

    /** {@code gantry run}'s default {@code --upstream-health-interval-secs}. */
    private static final Duration DEFAULT_HEALTH_INTERVAL = Duration.ofSeconds(2);

    /**
     * One topology per flavour and number of replicas for the whole class; each test starts its own Gantry and
     * names its own table. The switchover test leaves its promoted replica as the primary.
     */
    private static final ClassTopologies TOPOLOGIES = new ClassTopologies("switchover");

    @AfterEach
    void restoreServers() {
        TOPOLOGIES.restore();
    }

    @AfterAll
    static void stopServers() {
        TOPOLOGIES.close();
    }

    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void aPlannedSwitchoverUnderAWriteLoopCostsNoErrorAndLosesNoAcknowledgedWrite(TopologyKind kind)
            throws Exception {
        Topology topology = TOPOLOGIES.get(kind, 2);
        try (ProxyHarness gantry = ProxyHarness.start(topology, config -> config, list -> list, event -> { },
                     DEFAULT_HEALTH_INTERVAL);
             Connection textSession = gantry.connect(Driver.MARIADB_CONNECTOR_J);
             Connection preparedSession = gantry.connect(Driver.MARIADB_CONNECTOR_J_SERVER_PREPARED)) {
            execute(textSession, "CREATE TABLE acknowledged (id INT PRIMARY KEY, server_id BIGINT)");
            // One loop sends COM_QUERY, the other COM_STMT_EXECUTE: both kinds of write are held.
            List<WriteLoop> loops = List.of(new WriteLoop(textSession, 0), new WriteLoop(preparedSession, 1_000_000));
            List<Thread> writers = new ArrayList<>();
            for (WriteLoop loop : loops) {
                Thread writer = new Thread(loop, "switchover-writer");
                writer.start();
                writers.add(writer);
            }
            Thread.sleep(1000);
            DatabaseServer oldPrimary = topology.primary();
            DatabaseServer promoted = topology.replicas().get(0);
            long promotedAt = System.nanoTime();
            topology.promote(promoted);
            long promotionMillis = (System.nanoTime() - promotedAt) / 1_000_000;
            Thread.sleep(3000);
            for (WriteLoop loop : loops) {
                loop.stop();
            }
            for (Thread writer : writers) {
                writer.join();
            }

            Set<Integer> acknowledged = new HashSet<>();
            List<String> errors = new ArrayList<>();
            for (WriteLoop loop : loops) {
                System.out.printf("SwitchoverIT: %s, %s: %d writes acknowledged, %d errors, the slowest took %d ms "
                                + "(the promotion itself %d ms)%n", kind, loop.firstId == 0 ? "text" : "prepared",
                        loop.acknowledged.size(), loop.errors.size(), loop.slowestMillis, promotionMillis);
                acknowledged.addAll(loop.acknowledged);
                errors.addAll(loop.errors);
                assertThat(loop.acknowledged).hasSizeGreaterThan(100);
            }
            assertThat(errors).as("client errors across the switchover").isEmpty();
            try (Connection direct = topology.connectAsApp(promoted);
                 Statement statement = direct.createStatement();
                 ResultSet rows = statement.executeQuery("SELECT id, server_id FROM acknowledged")) {
                Set<Integer> stored = new HashSet<>();
                Set<Long> servers = new HashSet<>();
                while (rows.next()) {
                    stored.add(rows.getInt(1));
                    servers.add(rows.getLong(2));
                }
                assertThat(stored).as("every acknowledged write is on the new primary").containsAll(acknowledged);
                assertThat(servers).as("writes ran on the old primary, then the new one")
                        .containsExactlyInAnyOrder((long) oldPrimary.port(), (long) promoted.port());
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void aPrimaryThatResumesAfterSigstopIsWritableAgainWithinASecond(TopologyKind kind) throws Exception {
        Topology topology = TOPOLOGIES.get(kind, 1);
        try (ProxyHarness gantry = ProxyHarness.start(topology, config -> config, list -> list, event -> { },
                     DEFAULT_HEALTH_INTERVAL);
             Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            execute(session, "CREATE TABLE resumed (id INT PRIMARY KEY)");
            execute(session, "INSERT INTO resumed VALUES (1)");
            UpstreamServer primary = gantry.proxy.upstreams().find(topology.primary().address()).orElseThrow();

            topology.freeze(topology.primary());
            long frozenAt = System.nanoTime();
            try {
                await().atMost(Duration.ofSeconds(6)).pollInterval(Duration.ofMillis(20)).until(() -> !primary.isUp());
            } finally {
                topology.thaw(topology.primary());
            }
            long downAfter = (System.nanoTime() - frozenAt) / 1_000_000;
            long thawedAt = System.nanoTime();
            execute(session, "INSERT INTO resumed VALUES (2)");
            long writableAfter = (System.nanoTime() - thawedAt) / 1_000_000;
            System.out.printf("SwitchoverIT: %s: the frozen primary was down after %d ms; after SIGCONT a write "
                    + "went through after %d ms%n", kind, downAfter, writableAfter);
            assertThat(downAfter).as("a frozen server is left within 5 s").isLessThanOrEqualTo(5000);
            assertThat(writableAfter).isLessThanOrEqualTo(1000);
        }
    }

    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void twoWritableServersHoldWritesRaiseTheEventAndNeitherIsShownAsThePrimary(TopologyKind kind)
            throws Exception {
        List<Event> roleChanges = new CopyOnWriteArrayList<>();
        Topology topology = TOPOLOGIES.get(kind, 1);
        try (ProxyHarness gantry = ProxyHarness.start(topology,
                     config -> config.withFailover(FailoverSettings.DEFAULTS.withSwitchoverHold(Duration.ofSeconds(2))),
                     list -> list, event -> {
                         if (event instanceof EngineEvent.Timeline timeline
                                 && timeline.event().kind() == EventKind.ROLE_CHANGE) {
                             roleChanges.add(timeline.event());
                         }
                     }, DEFAULT_HEALTH_INTERVAL);
             Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J);
             Connection replicaRoot = topology.connectAsAdmin(topology.replicas().get(0))) {
            execute(session, "CREATE TABLE guarded (id INT PRIMARY KEY, server_id BIGINT)");
            DatabaseServer replica = topology.replicas().get(0);
            DatabaseServer primary = topology.primary();

            // The unsafe order of a promotion: the new primary writable while the old one still is.
            execute(replicaRoot, "SET GLOBAL read_only = OFF");
            await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20))
                    .until(() -> gantry.proxy.upstreams().primary().isEmpty());
            assertThat(gantry.proxy.upstreams().servers()).extracting(UpstreamServer::role)
                    .containsOnly(Role.WRITABLE);
            await().atMost(Duration.ofSeconds(5)).until(() -> roleChanges.stream()
                    .anyMatch(e -> e.reason().contains("several servers are writable")));
            assertThat(roleChanges.get(roleChanges.size() - 1).reason()).contains(primary.address())
                    .contains(replica.address());

            // A write held past the hold is refused naming both servers, and ran nowhere.
            long started = System.nanoTime();
            assertThatThrownBy(() -> execute(session, "INSERT INTO guarded VALUES (1, @@server_id)"))
                    .isInstanceOf(SQLException.class).hasMessageContaining("several servers are writable")
                    .hasMessageContaining(primary.address()).hasMessageContaining(replica.address());
            long heldMillis = (System.nanoTime() - started) / 1_000_000;
            assertThat(heldMillis).isBetween(1900L, 4000L);

            // A write held while the operator makes one of them read-only again runs on the one that is not.
            Thread resolve = new Thread(() -> {
                try {
                    Thread.sleep(300);
                    execute(replicaRoot, "SET GLOBAL read_only = ON");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            resolve.start();
            execute(session, "INSERT INTO guarded VALUES (2, @@server_id)");
            resolve.join();
            try (Connection direct = topology.connectAsApp(primary);
                 Statement statement = direct.createStatement();
                 ResultSet rows = statement.executeQuery("SELECT id, server_id FROM guarded")) {
                List<String> stored = new ArrayList<>();
                while (rows.next()) {
                    stored.add(rows.getInt(1) + "@" + rows.getLong(2));
                }
                assertThat(stored).containsExactly("2@" + primary.port());
            }
            assertThat(gantry.proxy.upstreams().primary().map(UpstreamServer::address)).contains(primary.address());
        }
    }

    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void aPrimaryAtMaxConnectionsStaysUpAndWritableForTheSessionsOnIt(TopologyKind kind) throws Exception {
        List<Connection> fillers = new ArrayList<>();
        Topology topology = TOPOLOGIES.get(kind, 1);
        try (ProxyHarness gantry = ProxyHarness.start(topology, config -> config, list -> list, event -> { },
                     DEFAULT_HEALTH_INTERVAL);
             Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J);
             Connection root = topology.connectAsAdmin(topology.primary())) {
            execute(session, "CREATE TABLE crowded (id INT PRIMARY KEY)");
            execute(session, "INSERT INTO crowded VALUES (1)");
            UpstreamServer primary = gantry.proxy.upstreams().find(topology.primary().address()).orElseThrow();
            String before = ProxyHarness.queryString(root, "SELECT @@max_connections");
            execute(root, "SET GLOBAL max_connections = 10");
            try {
                // Fill the server until it refuses new connections.
                boolean full = false;
                while (fillers.size() < 40 && !full) {
                    try {
                        fillers.add(topology.connectAsApp(topology.primary()));
                    } catch (SQLException e) {
                        assertThat(e.getErrorCode()).isEqualTo(1040);
                        full = true;
                    }
                }
                assertThat(full).as("the primary refuses new connections").isTrue();
                // Two whole health rounds while it is full, asked for now instead of waited for at the interval:
                // each round's new connection to it is refused.
                for (int round = 0; round < 2; round++) {
                    long ticket = gantry.proxy.upstreams().requestCheck("test: the primary is full");
                    await().atMost(DEFAULT_HEALTH_INTERVAL.multipliedBy(3)).pollInterval(Duration.ofMillis(20))
                            .until(() -> gantry.proxy.upstreams().checkedSince(ticket));
                }

                assertThat(primary.isUp()).as("a full primary is not down: %s", primary.lastError()).isTrue();
                assertThat(gantry.proxy.upstreams().primary()).contains(primary);
                execute(session, "INSERT INTO crowded VALUES (2)");
                assertThat(ProxyHarness.queryString(session, "SELECT COUNT(*) FROM crowded")).isEqualTo("2");
            } finally {
                for (Connection filler : fillers) {
                    filler.close();
                }
                execute(root, "SET GLOBAL max_connections = " + before);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void aReadOnAFrozenReplicaRunsElsewhereAndAWriteOnAFrozenPrimaryFailsWithinFiveSeconds(TopologyKind kind)
            throws Exception {
        Topology topology = TOPOLOGIES.get(kind, 2);
        try (ProxyHarness gantry = ProxyHarness.start(topology, config -> config, list -> list, event -> { },
                     DEFAULT_HEALTH_INTERVAL);
             Connection reader = gantry.connect(Driver.MARIADB_CONNECTOR_J);
             Connection writer = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            execute(writer, "CREATE TABLE frozen (id INT PRIMARY KEY)");
            DatabaseServer replica = gantry.whereRunsOnceSettled(reader, "SELECT @@server_id");
            assertThat(topology.replicas()).contains(replica);
            // A session of server-side prepared statements (COM_STMT_EXECUTE) reading from the same replica.
            Connection preparedReader = null;
            for (int attempt = 0; attempt < 40 && preparedReader == null; attempt++) {
                Connection candidate = gantry.connect(Driver.MARIADB_CONNECTOR_J_SERVER_PREPARED);
                if (gantry.whereRunsOnceSettled(candidate, "SELECT @@server_id").equals(replica)) {
                    preparedReader = candidate;
                } else {
                    candidate.close();
                }
            }
            assertThat(preparedReader).as("a prepared-statement session on %s", replica.name()).isNotNull();

            topology.freeze(replica);
            long readMillis;
            DatabaseServer answeredBy;
            String preparedAnswer;
            try (Connection prepared = preparedReader) {
                long started = System.nanoTime();
                CompletableFuture<String> preparedRead = CompletableFuture.supplyAsync(() -> {
                    try {
                        return gantry.whereRuns(prepared, "SELECT @@server_id").name() + " after "
                                + (System.nanoTime() - started) / 1_000_000 + " ms";
                    } catch (SQLException e) {
                        return "failed: " + e.getMessage();
                    }
                });
                answeredBy = gantry.whereRuns(reader, "SELECT @@server_id");
                readMillis = (System.nanoTime() - started) / 1_000_000;
                preparedAnswer = preparedRead.get(15, TimeUnit.SECONDS);
            } finally {
                topology.thaw(replica);
            }
            System.out.printf("SwitchoverIT: %s: a long-lived session's read on a frozen replica was answered by "
                    + "%s after %d ms; a prepared read by %s%n", kind, answeredBy.name(), readMillis, preparedAnswer);
            assertThat(answeredBy).isNotEqualTo(replica);
            assertThat(readMillis).as("a frozen replica costs a read at most 5 s").isLessThanOrEqualTo(5000);
            assertThat(preparedAnswer).doesNotStartWith("failed").doesNotStartWith(replica.name());
            execute(reader, "SELECT 1"); // the session goes on

            execute(writer, "INSERT INTO frozen VALUES (1)");
            DatabaseServer primary = topology.primary();
            topology.freeze(primary);
            long writeMillis;
            CompletableFuture<String> newLogin;
            try {
                long started = System.nanoTime();
                // A new client meanwhile: its account look-up and first server must not wait on the frozen primary
                // past its login deadline.
                newLogin = CompletableFuture.supplyAsync(() -> {
                    try (Connection fresh = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
                        return gantry.whereRuns(fresh, "SELECT @@server_id").name() + " after "
                                + (System.nanoTime() - started) / 1_000_000 + " ms";
                    } catch (SQLException e) {
                        return "refused: " + e.getErrorCode() + " " + e.getMessage();
                    }
                });
                assertThatThrownBy(() -> execute(writer, "INSERT INTO frozen VALUES (2)"))
                        .isInstanceOf(SQLException.class).hasMessageContaining(primary.address())
                        .hasMessageContaining("stopped answering");
                writeMillis = (System.nanoTime() - started) / 1_000_000;
                newLogin.get(15, TimeUnit.SECONDS);
            } finally {
                topology.thaw(primary);
            }
            System.out.printf("SwitchoverIT: %s: a write on a frozen primary failed after %d ms; a new login read "
                    + "on %s%n", kind, writeMillis, newLogin.get());
            assertThat(writeMillis).as("a write's outcome is unknown: it fails, within 5 s").isLessThanOrEqualTo(5000);
            assertThat(newLogin.get()).doesNotStartWith("refused").doesNotContain(primary.name());
        }
    }

    /**
     * A read that waits on its replica for the session's own write ({@code --follower-reads-avoid-waiting false})
     * while that replica freezes: it runs elsewhere once a health check finds the replica down, instead of waiting
     * out its wait (30 s here) or the replica.
     */
    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void aReadWaitingOnAReplicaThatFreezesRunsElsewhere(TopologyKind kind) throws Exception {
        Topology topology = TOPOLOGIES.get(kind, 1);
        try (ProxyHarness gantry = ProxyHarness.start(topology, config -> config.withReadGuarantees(
                     ReadGuarantees.DEFAULTS.withWaiting(false, Duration.ofSeconds(30))), list -> list, event -> { },
                     DEFAULT_HEALTH_INTERVAL);
             Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            execute(session, "CREATE TABLE waited (id INT PRIMARY KEY)");
            DatabaseServer replica = topology.replicas().get(0);
            topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
            topology.pauseReplication(replica);
            try {
                execute(session, "INSERT INTO waited VALUES (1)");
                // The read needs the write: the paused replica makes it wait there; then the replica freezes.
                long started = System.nanoTime();
                CompletableFuture<String> read = CompletableFuture.supplyAsync(() -> {
                    try {
                        return ProxyHarness.queryString(session, "SELECT COUNT(*) FROM waited");
                    } catch (SQLException e) {
                        return "failed: " + e.getMessage();
                    }
                });
                Thread.sleep(300);
                topology.freeze(replica);
                long frozenAt = System.nanoTime();
                String answer;
                try {
                    answer = read.get(20, TimeUnit.SECONDS);
                } finally {
                    topology.thaw(replica);
                }
                long millis = (System.nanoTime() - started) / 1_000_000;
                long sinceFrozen = (System.nanoTime() - frozenAt) / 1_000_000;
                System.out.printf("SwitchoverIT: %s: a read waiting on a replica that froze answered %s after %d ms"
                        + " (%d ms after the freeze)%n", kind, answer, millis, sinceFrozen);
                assertThat(answer).isEqualTo("1");
                // A frozen server is left within 5 s of freezing at the defaults (the 300 ms before it do not count).
                assertThat(sinceFrozen).isLessThanOrEqualTo(5000);
            } finally {
                topology.resumeReplication(replica);
            }
        }
    }

    /** One insert per 20 ms on one session, each acknowledged id and each error recorded. */
    private static final class WriteLoop implements Runnable {
        private final Connection session;
        private final int firstId;
        private final AtomicBoolean running = new AtomicBoolean(true);
        final List<Integer> acknowledged = new CopyOnWriteArrayList<>();
        final List<String> errors = new CopyOnWriteArrayList<>();
        volatile long slowestMillis;

        WriteLoop(Connection session, int firstId) {
            this.session = session;
            this.firstId = firstId;
        }

        void stop() {
            running.set(false);
        }

        @Override
        public void run() {
            int id = firstId;
            try (PreparedStatement insert = session.prepareStatement(
                    "INSERT INTO acknowledged VALUES (?, @@server_id)")) {
                while (running.get()) {
                    id++;
                    long started = System.nanoTime();
                    try {
                        insert.setInt(1, id);
                        insert.executeUpdate();
                        acknowledged.add(id);
                    } catch (SQLException e) {
                        errors.add(id + ": " + e.getErrorCode() + " " + e.getMessage());
                    }
                    slowestMillis = Math.max(slowestMillis, (System.nanoTime() - started) / 1_000_000);
                    Thread.sleep(20);
                }
            } catch (SQLException | InterruptedException e) {
                errors.add("the loop stopped: " + e);
            }
        }
    }
}
