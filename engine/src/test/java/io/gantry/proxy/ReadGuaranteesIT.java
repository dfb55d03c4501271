package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static io.gantry.proxy.ProxyHarness.queryString;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.route.ReadBalance;
import io.gantry.route.RoutingConfig;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.TopologyKinds;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The read guarantees against real servers whose replication is paused: a session sees its own writes and never
 * reads older than it has read, a staleness bound keeps it off lagging replicas, and each guarantee is seen to be
 * what decides (turned off, the same read is served stale by a replica).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReadGuaranteesIT {

    private static final AtomicInteger TABLES = new AtomicInteger();
    private Topology topology;
    private ProxyHarness gantry;

    /** The flavour this class runs against; {@link ReadGuaranteesMySqlIT} runs the same tests on MySQL. */
    TopologyKind kind() {
        return TopologyKind.MARIADB;
    }

    @BeforeAll
    void start() {
        topology = TopologyKinds.startPrivate(kind(), "read-guarantees", 2);
        gantry = ProxyHarness.start(topology);
    }

    @AfterAll
    void stop() {
        if (gantry != null) {
            gantry.close();
        }
        if (topology != null) {
            topology.close();
        }
    }

    @AfterEach
    void replicationRuns() throws Exception {
        for (DatabaseServer replica : topology.replicas()) {
            topology.resumeReplication(replica);
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void aSessionSeesItsOwnWriteWhileEveryReplicaLagsAndOnlyBecauseOfTheGuarantee(Driver driver) throws Exception {
        String table = newTable();
        try (Connection session = gantry.connect(driver)) {
            pauseEveryReplica();
            Map<String, String> before = gantry.proxy.readStatus();
            execute(session, "INSERT INTO " + table + " VALUES (1, 'mine')");
            assertThat(queryString(session, "SELECT v FROM " + table + " WHERE id = 1"))
                    .as("read right after the write").isEqualTo("mine");
            assertThat(gantry.whereRuns(session, "SELECT @@server_id FROM " + table + " WHERE id = 1"))
                    .as("the replicas do not have it: the primary answers").isEqualTo(topology.primary());
            assertThat(counter("Consistent_prefix_failed_reads_own_writes"))
                    .isGreaterThan(count(before, "Consistent_prefix_failed_reads_own_writes"));

        }
        // The same write and read in a session without read-your-writes, which has read nothing the replicas lack
        // (what a driver reads at connect time counts too: connect while they are level), so monotonic reads do
        // not hold it either: a lagging replica answers, without the row.
        replicationRuns();
        try (Connection careless = gantry.connect(driver)) {
            Thread.sleep(100); // the next position sample settles what the driver read at connect time
            pauseEveryReplica();
            execute(careless, "SET gantry_read_your_writes = OFF");
            assertThat(queryString(careless, "SELECT @@gantry_read_your_writes")).isEqualTo("OFF");
            execute(careless, "INSERT INTO " + table + " VALUES (2, 'lost')");
            assertThat(queryString(careless, "SELECT COUNT(*) FROM " + table + " WHERE id = 2")).isEqualTo("0");
        }
    }

    @Test
    void onceTheReplicasCatchUpReadsGoBackToThem() throws Exception {
        String table = newTable();
        try (Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            pauseEveryReplica();
            execute(session, "INSERT INTO " + table + " VALUES (1, 'mine')");
            assertThat(gantry.whereRuns(session, "SELECT @@server_id FROM " + table)).isEqualTo(topology.primary());
            for (DatabaseServer replica : topology.replicas()) {
                topology.resumeReplication(replica);
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> topology.replicas().contains(
                    gantry.whereRuns(session, "SELECT @@server_id FROM " + table)));
            assertThat(queryString(session, "SELECT v FROM " + table + " WHERE id = 1")).isEqualTo("mine");
        }
    }

    @Test
    void aSessionNeverReadsOlderThanItHasRead() throws Exception {
        String table = newTable();
        DatabaseServer lagging = topology.replicas().get(0);
        DatabaseServer current = topology.replicas().get(1);
        // Statement balance: each read may go to either replica, one of which lacks the row.
        try (ProxyHarness spreading = ProxyHarness.start(topology, c -> c.withRouting(
                new RoutingConfig(false, 0, ReadBalance.STATEMENT, true)), l -> l);
             Connection writer = topology.connectAsApp(topology.primary());
             Connection session = spreading.connect(Driver.MYSQL_CONNECTOR_J)) {
            topology.pauseReplication(lagging);
            execute(writer, "INSERT INTO " + table + " VALUES (1, 'new')");
            awaitRow(current, table);
            // Once one read has seen the row, none may miss it again, whichever server serves it.
            int seenAt = -1;
            for (int i = 0; i < 300; i++) {
                String value = queryString(session, "SELECT v FROM " + table + " WHERE id = 1");
                if (seenAt >= 0) {
                    assertThat(value).as("read %d, after the row was first seen at read %d", i, seenAt)
                            .isEqualTo("new");
                } else if ("new".equals(value)) {
                    seenAt = i;
                }
                Thread.sleep(3);
            }
            assertThat(seenAt).as("some read went to the replica that has the row").isGreaterThanOrEqualTo(0);
        }
    }

    @Test
    void aStalenessBoundKeepsTheSessionOffALaggingReplica() throws Exception {
        String table = newTable();
        try (Connection writer = topology.connectAsApp(topology.primary());
             Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            pauseEveryReplica();
            execute(writer, "INSERT INTO " + table + " VALUES (1, 'old enough')");
            Thread.sleep(1200);
            execute(session, "SET gantry_follower_read_staleness_ms = 1000");
            assertThat(queryString(session, "SELECT @@gantry_follower_read_staleness_ms")).isEqualTo("1000");
            Map<String, String> before = gantry.proxy.readStatus();
            assertThat(queryString(session, "SELECT v FROM " + table + " WHERE id = 1")).isEqualTo("old enough");
            assertThat(counter("Consistent_prefix_failed_reads_too_stale"))
                    .isGreaterThan(count(before, "Consistent_prefix_failed_reads_too_stale"));
            execute(session, "SET gantry_follower_read_staleness_ms = DEFAULT");
            assertThat(queryString(session, "SELECT @@gantry_follower_read_staleness_ms")).isNull();
        }
        // A session without the bound reads from the same lagging replicas.
        try (Connection relaxed = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            assertThat(topology.replicas()).contains(gantry.whereRuns(relaxed, "SELECT @@server_id"));
        }
    }

    @Test
    void withoutAvoidWaitingAReadWaitsOnAReplicaForTheSessionsWriteAndGoesToThePrimaryOnlyAfterTheTimeout()
            throws Exception {
        String table = newTable();
        try (ProxyHarness waiting = ProxyHarness.start(topology, config -> config.withReadGuarantees(
                config.readGuarantees().withWaiting(false, Duration.ofMillis(700))), servers -> servers);
             Connection session = waiting.connect(Driver.MARIADB_CONNECTOR_J)) {
            // Replicas apply the write within the wait: the read right after it is served by a replica.
            Map<String, String> before = waiting.proxy.readStatus();
            long[] onReplica = new long[40];
            for (int i = 0; i < onReplica.length; i++) {
                execute(session, "INSERT INTO " + table + " VALUES (" + (100 + i) + ", 'waited for')");
                long started = System.nanoTime();
                assertThat(queryString(session, "SELECT v FROM " + table + " WHERE id = " + (100 + i)))
                        .isEqualTo("waited for");
                onReplica[i] = System.nanoTime() - started;
            }
            Map<String, String> after = waiting.proxy.readStatus();
            assertThat(count(after, "Causal_waits") - count(before, "Causal_waits")).isPositive();
            assertThat(count(after, "Consistent_prefix_failed_reads_waited"))
                    .isEqualTo(count(before, "Consistent_prefix_failed_reads_waited"));
            assertThat(count(after, "Reads_served_by_replicas") - count(before, "Reads_served_by_replicas"))
                    .isGreaterThanOrEqualTo(onReplica.length);
            printLatency("waiting on a replica", onReplica);
            try (Connection avoiding = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
                long[] onPrimary = new long[onReplica.length];
                for (int i = 0; i < onPrimary.length; i++) {
                    execute(avoiding, "INSERT INTO " + table + " VALUES (" + (200 + i) + ", 'on the primary')");
                    long started = System.nanoTime();
                    queryString(avoiding, "SELECT v FROM " + table + " WHERE id = " + (200 + i));
                    onPrimary[i] = System.nanoTime() - started;
                }
                printLatency("sent to the primary (the default)", onPrimary);
            }
            // Replicas stopped: the read waits the whole timeout, then the primary answers (never another replica).
            pauseEveryReplica();
            execute(session, "INSERT INTO " + table + " VALUES (1, 'mine')");
            long started = System.nanoTime();
            assertThat(queryString(session, "SELECT v FROM " + table + " WHERE id = 1")).isEqualTo("mine");
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(700));
            assertThat(count(waiting.proxy.readStatus(), "Consistent_prefix_failed_reads_waited"))
                    .isEqualTo(count(after, "Consistent_prefix_failed_reads_waited") + 1);
        }
    }

    @Test
    void settingsAreGantrysOwnAndBadValuesAreRefusedNamingTheMinimum() throws Exception {
        try (Connection session = gantry.connect(Driver.MYSQL_CONNECTOR_J)) {
            assertThat(queryString(session, "SELECT @@gantry_read_from_followers")).isEqualTo("ON");
            assertThatThrownBy(() -> execute(session, "SET gantry_follower_read_staleness_ms = 100"))
                    .isInstanceOf(SQLException.class).hasMessageContaining("minimum of 500 ms");
            assertThatThrownBy(() -> execute(session, "SET gantry_read_fom_followers = OFF"))
                    .isInstanceOf(SQLException.class).hasMessageContaining("Unknown system variable 'gantry_read_fom_followers'");
            assertThatThrownBy(() -> execute(session, "SET gantry_read_your_writes = maybe"))
                    .isInstanceOf(SQLException.class).hasMessageContaining("ON or OFF");
            execute(session, "SET gantry_read_from_followers = OFF");
            assertThat(gantry.whereRuns(session, "SELECT @@server_id")).isEqualTo(topology.primary());
            Map<String, String> shown = new LinkedHashMap<>();
            try (Statement statement = session.createStatement();
                 ResultSet rows = statement.executeQuery("SHOW GANTRY SESSION")) {
                while (rows.next()) {
                    shown.put(rows.getString(1), rows.getString(2));
                }
            }
            assertThat(shown).containsEntry("gantry_read_from_followers", "OFF")
                    .containsEntry("gantry_read_your_writes", "ON").containsKey("max_stale_read_bound_ms");
            // The server never saw these statements: on a direct connection the variable does not exist.
            try (Connection direct = topology.connectAsApp(topology.primary())) {
                assertThatThrownBy(() -> queryString(direct, "SELECT @@gantry_read_from_followers"))
                        .isInstanceOf(SQLException.class).hasMessageContaining("Unknown system variable");
            }
        }
    }

    /** For the note: the latency of a read right after the session's own write, on one path. */
    private static void printLatency(String path, long[] nanos) {
        java.util.Arrays.sort(nanos);
        System.out.printf("ReadGuaranteesIT: a read right after the session's write, %s: median %.2f ms, p90 %.2f ms "
                + "over %d reads%n", path, nanos[nanos.length / 2] / 1e6, nanos[nanos.length * 9 / 10] / 1e6,
                nanos.length);
    }

    private void pauseEveryReplica() throws Exception {
        for (DatabaseServer replica : topology.replicas()) {
            topology.pauseReplication(replica);
        }
    }

    private void awaitRow(DatabaseServer server, String table) {
        await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> {
            try (Connection direct = topology.connectAsApp(server)) {
                return "1".equals(queryString(direct, "SELECT COUNT(*) FROM " + table));
            }
        });
    }

    private long counter(String name) {
        return count(gantry.proxy.readStatus(), name);
    }

    private long count(Map<String, String> status, String name) {
        return Long.parseLong(status.get(name));
    }

    private String newTable() throws SQLException {
        String table = "guarantees_" + TABLES.incrementAndGet();
        try (Connection connection = topology.connectAsApp(topology.primary())) {
            execute(connection, "CREATE TABLE " + table + " (id INT PRIMARY KEY, v VARCHAR(20))");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        return table;
    }
}
