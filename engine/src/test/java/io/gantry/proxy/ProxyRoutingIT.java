package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.route.ReadBalance;
import io.gantry.route.ReadGuarantees;
import io.gantry.route.RoutingConfig;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.TopologyKinds;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.UpstreamUrl;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every routing rule and the precedence between them, observed through real drivers with {@code SELECT @@server_id}
 * (the sandbox sets each server's id to its port) and with writes that only the primary accepts (the test account
 * cannot write to a read-only replica), on MariaDB and on MySQL.
 */
class ProxyRoutingIT {

    private static final AtomicInteger TABLES = new AtomicInteger();
    /** One proxy per flavour, in front of that flavour's shared topology, started by the first test that needs it. */
    private static final Map<TopologyKind, ProxyHarness> PROXIES = new EnumMap<>(TopologyKind.class);

    /** Every driver against every flavour. */
    static Stream<Arguments> kindsAndDrivers() {
        return TopologyKinds.all().flatMap(kind -> Arrays.stream(Driver.values()).map(d -> Arguments.of(kind, d)));
    }

    private static synchronized ProxyHarness gantry(TopologyKind kind) {
        return PROXIES.computeIfAbsent(kind, k -> ProxyHarness.start(TopologyKinds.shared(k)));
    }

    @AfterAll
    static void stopProxies() {
        PROXIES.values().forEach(ProxyHarness::close);
        PROXIES.clear();
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("kindsAndDrivers")
    void plainReadGoesToAReplicaAndStaysThereForTheSession(TopologyKind kind, Driver driver) throws SQLException {
        ProxyHarness gantry = gantry(kind);
        Topology topology = gantry.topology;
        try (Connection connection = gantry.connect(driver)) {
            DatabaseServer first = gantry.whereRuns(connection, "SELECT @@server_id");
            assertThat(topology.replicas()).contains(first);
            for (int i = 0; i < 10; i++) {
                assertThat(gantry.whereRuns(connection, "SELECT @@server_id")).isEqualTo(first);
            }
        }
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("kindsAndDrivers")
    void writesLandOnThePrimaryOnly(TopologyKind kind, Driver driver) throws SQLException {
        ProxyHarness gantry = gantry(kind);
        Topology topology = gantry.topology;
        String table = newTable(topology);
        try (Connection connection = gantry.connect(driver)) {
            execute(connection, "INSERT INTO " + table + " VALUES (1)");
            execute(connection, "UPDATE " + table + " SET id = 2");
        }
        // The replicas' read_only refuses the test account, so the write could only have succeeded on the primary;
        // the GTIDs confirm it: every transaction carries the primary's identity, none a replica's.
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        assertThat(topology.executedGtids(topology.primary())).contains(gtidSource(kind, topology, topology.primary()));
        for (DatabaseServer replica : topology.replicas()) {
            assertThat(topology.executedGtids(replica)).as("GTIDs on %s", replica.name())
                    .doesNotContain(gtidSource(kind, topology, replica));
        }
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("kindsAndDrivers")
    void lockingReadGoesToThePrimary(TopologyKind kind, Driver driver) throws SQLException {
        ProxyHarness gantry = gantry(kind);
        Topology topology = gantry.topology;
        String table = newTable(topology);
        try (Connection connection = gantry.connect(driver)) {
            assertThat(gantry.whereRuns(connection,
                    "SELECT @@server_id FROM " + table + " RIGHT JOIN (SELECT 1) one ON 1=1 FOR UPDATE"))
                    .isEqualTo(topology.primary());
            assertThat(gantry.whereRuns(connection, "SELECT @@server_id LOCK IN SHARE MODE"))
                    .isEqualTo(topology.primary());
        }
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("kindsAndDrivers")
    void readWriteTransactionRunsOnThePrimaryUntilItEnds(TopologyKind kind, Driver driver) throws SQLException {
        ProxyHarness gantry = gantry(kind);
        Topology topology = gantry.topology;
        try (Connection connection = gantry.connect(driver)) {
            execute(connection, "BEGIN");
            assertThat(gantry.whereRuns(connection, "SELECT @@server_id")).isEqualTo(topology.primary());
            execute(connection, "COMMIT");
            assertThat(topology.replicas()).contains(gantry.whereRunsOnceSettled(connection, "SELECT @@server_id"));

            connection.setAutoCommit(false);
            assertThat(gantry.whereRuns(connection, "SELECT @@server_id")).as("autocommit off")
                    .isEqualTo(topology.primary());
            connection.commit();
            connection.setAutoCommit(true);
            assertThat(topology.replicas()).contains(gantry.whereRunsOnceSettled(connection, "SELECT @@server_id"));
        }
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("kindsAndDrivers")
    void readOnlyTransactionRunsWholeOnOneReplica(TopologyKind kind, Driver driver) throws SQLException {
        ProxyHarness gantry = gantry(kind);
        Topology topology = gantry.topology;
        try (Connection connection = gantry.connect(driver)) {
            execute(connection, "START TRANSACTION READ ONLY");
            DatabaseServer server = gantry.whereRuns(connection, "SELECT @@server_id");
            assertThat(topology.replicas()).contains(server);
            for (int i = 0; i < 5; i++) {
                assertThat(gantry.whereRuns(connection, "SELECT @@server_id")).isEqualTo(server);
            }
            execute(connection, "COMMIT");
        }
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("kindsAndDrivers")
    void hintReadWriteSendsAReadToThePrimary(TopologyKind kind, Driver driver) throws SQLException {
        ProxyHarness gantry = gantry(kind);
        Topology topology = gantry.topology;
        try (Connection connection = gantry.connect(driver)) {
            assertThat(gantry.whereRuns(connection, "/*#mode=READWRITE*/ SELECT @@server_id"))
                    .isEqualTo(topology.primary());
        }
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("kindsAndDrivers")
    void hintReadOnlyCannotSendAWriteOrATransactionToAReplica(TopologyKind kind, Driver driver) throws SQLException {
        ProxyHarness gantry = gantry(kind);
        Topology topology = gantry.topology;
        String table = newTable(topology);
        try (Connection connection = gantry.connect(driver)) {
            execute(connection, "/*#mode=READONLY*/ INSERT INTO " + table + " VALUES (7)");
            execute(connection, "BEGIN");
            assertThat(gantry.whereRuns(connection, "/*#mode=READONLY*/ SELECT @@server_id"))
                    .isEqualTo(topology.primary());
            execute(connection, "COMMIT");
        }
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("kindsAndDrivers")
    void masterPreferredSendsReadsToThePrimaryUnlessHintedReadOnly(TopologyKind kind, Driver driver) throws SQLException {
        ProxyHarness gantry = gantry(kind);
        Topology topology = gantry.topology;
        try (ProxyHarness preferring = ProxyHarness.start(topology,
                c -> c.withRouting(new RoutingConfig(true, 0, ReadBalance.SESSION, true)), l -> l);
             Connection connection = preferring.connect(driver)) {
            assertThat(preferring.whereRuns(connection, "SELECT @@server_id")).isEqualTo(topology.primary());
            // Right after a read on the primary, monotonic reads keep the session there until the next sample.
            assertThat(topology.replicas())
                    .contains(preferring.whereRunsOnceSettled(connection, "/*#mode=READONLY*/ SELECT @@server_id"));
        }
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("kindsAndDrivers")
    void readMasterPercentageDrawsThePrimaryUnlessHintedReadOnly(TopologyKind kind, Driver driver) throws SQLException {
        ProxyHarness gantry = gantry(kind);
        Topology topology = gantry.topology;
        try (ProxyHarness always = ProxyHarness.start(topology,
                c -> c.withRouting(new RoutingConfig(false, 100, ReadBalance.SESSION, true)), l -> l);
             Connection connection = always.connect(driver)) {
            assertThat(always.whereRuns(connection, "SELECT @@server_id")).isEqualTo(topology.primary());
            assertThat(topology.replicas())
                    .contains(always.whereRunsOnceSettled(connection, "/*#mode=READONLY*/ SELECT @@server_id"));
            // The hint cannot beat rule 1: a write still goes to the primary.
            assertThat(always.whereRuns(connection, "/*#mode=READONLY*/ SELECT @@server_id FOR UPDATE"))
                    .isEqualTo(topology.primary());
        }
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("kindsAndDrivers")
    void readsGoToThePrimaryWhenNoReplicaIsUp(TopologyKind kind, Driver driver) throws SQLException {
        ProxyHarness gantry = gantry(kind);
        Topology topology = gantry.topology;
        // The list names the primary and a replica that does not answer (nothing listens on its port).
        try (ProxyHarness lonely = ProxyHarness.start(topology, c -> c, l -> List.of(l.get(0),
                new UpstreamUrl("127.0.0.1", 1, topology.database(), "app", "app", 50)));
             Connection connection = lonely.connect(driver)) {
            assertThat(lonely.whereRuns(connection, "/*#mode=READONLY*/ SELECT @@server_id"))
                    .isEqualTo(topology.primary());
        }
    }

    /**
     * One driver per flavour: the pick does not depend on the driver, and each read waits for the sampler (about a
     * quarter second), so every driver would cost minutes.
     */
    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void statementBalanceSpreadsReadsByWeight(TopologyKind kind) throws SQLException {
        Driver driver = Driver.MARIADB_CONNECTOR_J;
        ProxyHarness gantry = gantry(kind);
        Topology topology = gantry.topology;
        DatabaseServer heavy = topology.replicas().get(0);
        // Samples every 20 ms instead of 250: each draw waits for two rounds (below), 100 draws in seconds.
        try (ProxyHarness spreading = ProxyHarness.start(topology,
                c -> c.withRouting(new RoutingConfig(false, 0, ReadBalance.STATEMENT, true))
                        .withReadGuarantees(new ReadGuarantees(true, Duration.ZERO, Duration.ofSeconds(60),
                                Duration.ofMillis(20))),
                l -> l.stream().map(u -> u.port() == heavy.port() ? u.withWeight(90) : u.withWeight(10)).toList());
             Connection connection = spreading.connect(driver)) {
            List<DatabaseServer> seen = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                seen.add(spreading.whereRuns(connection, "SELECT @@server_id"));
                // Monotonic reads keep a session on the replica it just read from until that replica is sampled
                // again (a few ms quiet, far longer on a loaded machine): only reads after that are each a new
                // weighted pick, so wait for two sampling rounds rather than a fixed time.
                awaitSamplingRounds(spreading, 2, topology.servers().size());
            }
            assertThat(seen).doesNotContain(topology.primary());
            long onHeavy = seen.stream().filter(heavy::equals).count();
            // 90 % expected; 100 draws keep it within these bounds but once in tens of thousands of runs (the lower
            // bound is five standard deviations off, all 100 on the heavy one has a chance of 0.9^100).
            assertThat(onHeavy).isBetween(75L, 99L);
        }
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("kindsAndDrivers")
    void sessionBalanceSpreadsSessionsOverReplicas(TopologyKind kind, Driver driver) throws SQLException {
        ProxyHarness gantry = gantry(kind);
        Topology topology = gantry.topology;
        Set<DatabaseServer> seen = new HashSet<>();
        for (int i = 0; i < 20 && seen.size() < 2; i++) {
            try (Connection connection = gantry.connect(driver)) {
                seen.add(gantry.whereRuns(connection, "SELECT @@server_id"));
            }
        }
        assertThat(seen).containsExactlyInAnyOrderElementsOf(topology.replicas());
    }

    /**
     * MariaDB skips a {@code /*!99999} comment (newer than itself) and runs the INSERT after it; read with the comment
     * as code, the text is one SELECT of an unterminated string. The text goes to the primary, or a replica refuses
     * the INSERT and the row is missing.
     */
    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("kindsAndDrivers")
    void aWriteThatAConditionalCommentHidesGoesToThePrimary(TopologyKind kind, Driver driver) throws SQLException {
        ProxyHarness gantry = gantry(kind);
        Topology topology = gantry.topology;
        String table = newTable(topology);
        try (Connection connection = gantry.connect(driver, "allowMultiQueries=true");
             Statement statement = connection.createStatement()) {
            statement.execute("SELECT 1 /*!99999 'x */ ; INSERT INTO " + table + " VALUES (7)");
            while (statement.getMoreResults() || statement.getUpdateCount() != -1) {
                // every result, so that an error in the INSERT surfaces here
            }
        }
        try (Connection primary = topology.connectAsApp(topology.primary())) {
            assertThat(ProxyHarness.queryString(primary, "SELECT COUNT(*) FROM " + table + " WHERE id = 7"))
                    .isEqualTo("1");
        }
    }

    /** Waits until the position sampler has sent {@code rounds} more queries to each of {@code servers} (at most 5 s). */
    private static void awaitSamplingRounds(ProxyHarness gantry, int rounds, int servers) {
        long before = samplesSent(gantry);
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (samplesSent(gantry) < before + (long) rounds * servers && System.nanoTime() < deadline) {
            sleep(2);
        }
    }

    private static long samplesSent(ProxyHarness gantry) {
        return Long.parseLong(gantry.proxy.readStatus().get("Position_samples_sent"));
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * What a server's own transactions carry in GTID sets: MariaDB's {@code -server_id-} (the sandbox's server ids
     * are the ports), MySQL's {@code server_uuid:}.
     */
    private static String gtidSource(TopologyKind kind, Topology topology, DatabaseServer server)
            throws SQLException {
        if (kind == TopologyKind.MARIADB) {
            return "-" + server.port() + "-";
        }
        try (Connection root = topology.connectAsAdmin(server)) {
            return ProxyHarness.queryString(root, "SELECT @@server_uuid") + ":";
        }
    }

    private static String newTable(Topology topology) throws SQLException {
        String table = "routing_" + TABLES.incrementAndGet();
        try (Connection connection = topology.connectAsApp(topology.primary())) {
            execute(connection, "CREATE TABLE " + table + " (id INT PRIMARY KEY)");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        return table;
    }
}
