package io.gantry.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.ClassTopologies;
import io.gantry.proxy.RunningProxy;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.net.InetSocketAddress;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The health loop notices what happens to servers: deaths, returns and promotions, on MariaDB and on MySQL (roles
 * from {@code read_only}, lag from {@code gtid_current_pos} or {@code gtid_executed}); its round trip is a ping on a
 * kept connection, and its connect time is measured apart.
 */
class HealthLoopIT {

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(1);

    /**
     * One topology per flavour and number of replicas for the whole class: each test starts its own health loop or
     * proxy and names its own table; the promotion test leaves its promoted replica as the primary.
     */
    private static final ClassTopologies TOPOLOGIES = new ClassTopologies("health");

    @AfterEach
    void restoreServers() {
        TOPOLOGIES.restore();
    }

    @AfterAll
    static void stopServers() {
        TOPOLOGIES.close();
    }

    /** Both flavours with a 1 s interval; the 10 s interval once (it tests the loop's timing, not the flavour). */
    static Stream<Arguments> kindsAndIntervals() {
        return Stream.of(Arguments.of(TopologyKind.MARIADB, 1), Arguments.of(TopologyKind.MARIADB, 5),
                Arguments.of(TopologyKind.MYSQL, 1));
    }

    @ParameterizedTest(name = "{0}, health interval {1} s")
    @MethodSource("kindsAndIntervals")
    void killedReplicaIsSeenDownThenUpWithinOneIntervalPlusTheConnectTimeout(TopologyKind kind, int intervalSeconds)
            throws Exception {
        Duration interval = Duration.ofSeconds(intervalSeconds);
        Topology topology = TOPOLOGIES.get(kind, 1);
        try (RunningProxy proxy = RunningProxy.start(config(), ServerValidationIT.urls(topology, "app"), interval)) {
            DatabaseServer replica = topology.replicas().get(0);
            UpstreamServer seen = proxy.upstreams().find(replica.address()).orElseThrow();
            assertThat(seen.isUp()).isTrue();

            long killedAt = System.nanoTime();
            topology.kill(replica);
            long downAfter = waitUntil(() -> !seen.isUp(), interval.plus(CONNECT_TIMEOUT).plusSeconds(2)) - killedAt;

            topology.start(replica);
            long startedAt = System.nanoTime();
            long upAfter = waitUntil(seen::isUp, interval.plus(CONNECT_TIMEOUT).plusSeconds(2)) - startedAt;

            System.out.printf("HealthLoopIT: %s, interval %d s: down seen after %d ms, up again after %d ms%n",
                    kind, intervalSeconds, downAfter / 1_000_000, upAfter / 1_000_000);
            assertThat(downAfter / 1_000_000).isLessThanOrEqualTo(interval.plus(CONNECT_TIMEOUT).toMillis() + 500);
            assertThat(seen.lastError()).contains("health check failed");
            assertThat(upAfter / 1_000_000).isLessThanOrEqualTo(interval.plus(CONNECT_TIMEOUT).toMillis() + 500);
        }
    }

    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void pausedReplicaShowsLagFromGtidPositionsAndResumingClearsIt(TopologyKind kind) throws Exception {
        Duration interval = Duration.ofSeconds(1);
        Topology topology = TOPOLOGIES.get(kind, 2);
        try (RunningProxy proxy = RunningProxy.start(config(), ServerValidationIT.urls(topology, "app"), interval);
             Connection primary = topology.connectAsApp(topology.primary())) {
            DatabaseServer lagging = topology.replicas().get(0);
            UpstreamServer laggingSeen = proxy.upstreams().find(lagging.address()).orElseThrow();
            UpstreamServer otherSeen = proxy.upstreams().find(topology.replicas().get(1).address()).orElseThrow();
            execute(primary, "CREATE TABLE ticks (id INT PRIMARY KEY)");
            topology.pauseReplication(lagging);
            for (int i = 1; i <= 4; i++) {
                execute(primary, "INSERT INTO ticks VALUES (" + i + ")");
                Thread.sleep(interval.toMillis());
            }
            waitUntil(() -> laggingSeen.lagMillis() >= 2000, interval.multipliedBy(3));
            // Positions are read in parallel, so a replica read just before the primary's last write can show
            // one interval of lag in that round; once writes stop, the caught-up replica shows none.
            waitUntil(() -> otherSeen.lagMillis() == 0, interval.multipliedBy(3));
            assertThat(laggingSeen.lagMillis()).isGreaterThanOrEqualTo(2000);
            System.out.printf("HealthLoopIT: paused replica's lag %d ms, the other's %d ms%n",
                    laggingSeen.lagMillis(), otherSeen.lagMillis());
            topology.resumeReplication(lagging);
            waitUntil(() -> laggingSeen.lagMillis() == 0, interval.multipliedBy(4));
            assertThat(laggingSeen.executedGtids()).isEqualTo(otherSeen.executedGtids());
        }
    }

    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void promotionMovesWritesToTheNewPrimaryWithinOneInterval(TopologyKind kind) throws Exception {
        Duration interval = Duration.ofSeconds(1);
        Topology topology = TOPOLOGIES.get(kind, 2);
        try (RunningProxy proxy = RunningProxy.start(config(), ServerValidationIT.urls(topology, "app"), interval);
             // caching_sha2_password (MySQL's app account) without TLS: the password goes RSA-encrypted with
             // Gantry's key, which the driver may fetch.
             Connection session = DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + proxy.address().getPort()
                     + "/app?sslMode=DISABLED&allowPublicKeyRetrieval=true", "app", "app")) {
            execute(session, "CREATE TABLE moved (id INT PRIMARY KEY)");
            DatabaseServer promoted = topology.replicas().get(0);

            topology.promote(promoted);
            long promotedAt = System.nanoTime();
            UpstreamServer next = proxy.upstreams().find(promoted.address()).orElseThrow();
            long followed = waitUntil(() -> proxy.upstreams().primary().map(p -> p == next).orElse(false),
                    interval.plusSeconds(3)) - promotedAt;
            System.out.printf("HealthLoopIT: writes followed the promotion after %d ms%n", followed / 1_000_000);

            // The same session and new sessions write to the new primary.
            execute(session, "INSERT INTO moved VALUES (1)");
            assertThat(serverId(session, "/*#mode=READWRITE*/ SELECT @@server_id")).isEqualTo(promoted.port());
            try (Connection fresh = DriverManager.getConnection("jdbc:mariadb://127.0.0.1:"
                    + proxy.address().getPort() + "/app?sslMode=disable&allowPublicKeyRetrieval=true", "app", "app")) {
                execute(fresh, "INSERT INTO moved VALUES (2)");
            }
            topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
            try (Connection direct = topology.connectAsApp(topology.replicas().get(0));
                 Statement statement = direct.createStatement();
                 ResultSet rows = statement.executeQuery("SELECT COUNT(*) FROM moved")) {
                rows.next();
                assertThat(rows.getInt(1)).isEqualTo(2);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void theRoundTripIsAPingOnAKeptConnectionAndTheConnectTimeIsMeasuredApart(TopologyKind kind) throws Exception {
        Topology topology = TOPOLOGIES.get(kind, 1);
        try (Connection admin = topology.connectAsAdmin(topology.primary())) {
            Upstreams upstreams = new Upstreams(ServerValidationIT.urls(topology, "app"), Clock.systemUTC());
            try (HealthChecker checker = new HealthChecker(upstreams, Duration.ofSeconds(5))) {
                Map<UpstreamServer, List<Long>> rtt = new HashMap<>();
                Map<UpstreamServer, List<Long>> connect = new HashMap<>();
                for (int round = 0; round < 25; round++) {
                    checker.checkNow();
                    for (UpstreamServer server : upstreams.servers()) {
                        assertThat(server.isUp()).as("%s after round %d: %s", server, round, server.lastError())
                                .isTrue();
                        if (round >= 5) {
                            rtt.computeIfAbsent(server, s -> new ArrayList<>()).add(server.rttMicros());
                            connect.computeIfAbsent(server, s -> new ArrayList<>()).add(server.connectMicros());
                        }
                    }
                }
                for (UpstreamServer server : upstreams.servers()) {
                    long medianRtt = median(rtt.get(server));
                    long medianConnect = median(connect.get(server));
                    System.out.printf("HealthLoopIT: %s %s: rtt_ms median %.3f (max %.3f), connect_ms median %.3f%n",
                            kind, server.address(), medianRtt / 1000.0, Collections.max(rtt.get(server)) / 1000.0,
                            medianConnect / 1000.0);
                    assertThat(medianRtt).as("a ping costs less than a new connection's login")
                            .isLessThan(medianConnect);
                }

                UpstreamServer primary = upstreams.find(topology.primary().address()).orElseThrow();
                long kept = keptConnection(admin);
                checker.checkNow();
                assertThat(keptConnection(admin)).as("the same connection answers every round").isEqualTo(kept);

                execute(admin, "KILL " + kept);
                checker.checkNow();
                assertThat(primary.isUp()).as("a server that accepts new connections is up: %s",
                        primary.lastError()).isTrue();
                long replacement = keptConnection(admin);
                assertThat(replacement).isNotEqualTo(kept);
                checker.checkNow();
                assertThat(keptConnection(admin)).isEqualTo(replacement);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void aFrozenServerIsDownAfterOneRoundNoLongerThanItsLoginTimeout(TopologyKind kind) throws Exception {
        Duration connectTimeout = Duration.ofSeconds(1);
        Topology topology = TOPOLOGIES.get(kind, 1);
        Upstreams upstreams = new Upstreams(ServerValidationIT.urls(topology, "app"), Clock.systemUTC());
        try (HealthChecker checker = new HealthChecker(upstreams, connectTimeout)) {
            checker.checkNow();
            DatabaseServer replica = topology.replicas().get(0);
            UpstreamServer seen = upstreams.find(replica.address()).orElseThrow();
            assertThat(seen.isUp()).isTrue();

            topology.freeze(replica);
            try {
                long started = System.nanoTime();
                checker.checkNow();
                long roundMillis = (System.nanoTime() - started) / 1_000_000;
                System.out.printf("HealthLoopIT: %s: the round with a frozen replica took %d ms%n", kind,
                        roundMillis);
                assertThat(seen.isUp()).isFalse();
                assertThat(seen.lastError()).contains("health check failed");
                // A new connection's login may wait twice the connect timeout for the greeting, as before.
                assertThat(roundMillis).isLessThan(connectTimeout.multipliedBy(2).toMillis() + 1000);
            } finally {
                topology.thaw(replica);
            }
            checker.checkNow();
            assertThat(seen.isUp()).as(seen.lastError()).isTrue();
        }
    }

    /**
     * Gantry stopping in the middle of a round (its checks interrupted while they connect) marks no server down and
     * chooses no primary: that round says nothing about the servers (it used to log every server DOWN and "no
     * primary" at every such stop).
     */
    @Test
    void aRoundCutShortByTheStopMarksNothingDown() throws Exception {
        Topology topology = TOPOLOGIES.get(TopologyKind.MARIADB, 1);
        Upstreams upstreams = new Upstreams(ServerValidationIT.urls(topology, "app"), Clock.systemUTC());
        HealthChecker checker = new HealthChecker(upstreams, Duration.ofSeconds(10));
        DatabaseServer replica = topology.replicas().get(0);
        UpstreamServer seen = upstreams.find(replica.address()).orElseThrow();
        Thread round;
        try {
            checker.checkNow();
            assertThat(seen.isUp()).isTrue();
            topology.freeze(replica); // the next round's new connection to it waits for a greeting
            round = new Thread(checker::checkNow, "round");
            round.start();
            Thread.sleep(500);
        } finally {
            checker.close();
        }
        round.join(15_000);
        topology.thaw(replica);
        assertThat(round.isAlive()).isFalse();
        assertThat(seen.isUp()).as(String.valueOf(seen.lastError())).isTrue();
        assertThat(upstreams.primaryOrNull()).isNotNull();
    }

    /**
     * The same for the whole proxy: its health checks log in through the proxy's event loops, so stopping the proxy
     * while a check waits for a server's greeting must end the health loop before those loops (the demo's goodbye once
     * logged every server DOWN and "no primary" when a round was in flight at Ctrl-C).
     */
    @Test
    void stoppingTheProxyDuringARoundMarksNothingDown() throws Exception {
        Topology topology = TOPOLOGIES.get(TopologyKind.MARIADB, 1);
        ProxyConfig patient = config().withConnectTimeout(Duration.ofSeconds(10));
        RunningProxy proxy = RunningProxy.start(patient, ServerValidationIT.urls(topology, "app"),
                Duration.ofMillis(200));
        DatabaseServer replica = topology.replicas().get(0);
        UpstreamServer seen = proxy.upstreams().find(replica.address()).orElseThrow();
        Duration stoppedWithin;
        try {
            Thread.sleep(500); // a round or two: the replica has a kept connection, so the next login is the proxy's
            topology.freeze(replica);
            Thread.sleep(500); // the next round's login to it waits for a greeting
        } finally {
            long stopping = System.nanoTime();
            proxy.close();
            stoppedWithin = Duration.ofNanos(System.nanoTime() - stopping);
            topology.thaw(replica);
        }
        assertThat(seen.isUp()).as(String.valueOf(seen.lastError())).isTrue();
        assertThat(proxy.upstreams().primaryOrNull()).isNotNull();
        // Nor does it wait for the hung server's answers (the position sampler's close once waited 30 s for it).
        assertThat(stoppedWithin).isLessThan(Duration.ofSeconds(10));
    }

    /**
     * Once the proxy runs, a round's timed login is the proxy's own (its login code and TLS engine) for every server
     * that has a kept connection, instead of a new JDBC connection; its refusal (the server full) is not a death,
     * its failure to connect is.
     */
    @Test
    void aRoundTimesTheLoginGivenToItAndTellsARefusalFromAnOutage() throws Exception {
        Topology topology = TOPOLOGIES.get(TopologyKind.MARIADB, 1);
        Upstreams upstreams = new Upstreams(ServerValidationIT.urls(topology, "app"), Clock.systemUTC());
        try (HealthChecker checker = new HealthChecker(upstreams, CONNECT_TIMEOUT)) {
            checker.checkNow();
            Map<String, Integer> logins = Collections.synchronizedMap(new HashMap<>());
            AtomicReference<SQLException> answer = new AtomicReference<>();
            checker.timeLoginsWith((server, timeout) -> {
                logins.merge(server.address(), 1, Integer::sum);
                SQLException failure = answer.get();
                if (failure != null) {
                    throw failure;
                }
            });

            checker.checkNow();
            assertThat(logins).hasSize(topology.servers().size()).allSatisfy((server, n) -> assertThat(n).isOne());
            assertThat(upstreams.servers()).allMatch(UpstreamServer::isUp);

            answer.set(new SQLException("Too many connections", "08004", 1040));
            checker.checkNow();
            assertThat(upstreams.servers()).as("a full server answers: not down").allMatch(UpstreamServer::isUp);

            answer.set(new SQLException("cannot connect to the server: Connection refused", "08001"));
            checker.checkNow();
            assertThat(upstreams.servers()).noneMatch(UpstreamServer::isUp);
            assertThat(upstreams.servers().get(0).lastError()).contains("health check failed")
                    .contains("Connection refused");

            // Down, the servers have no kept connection: the next round's login is a JDBC connection again.
            answer.set(null);
            logins.clear();
            checker.checkNow();
            assertThat(logins).isEmpty();
            assertThat(upstreams.servers()).allMatch(UpstreamServer::isUp);
        }
    }

    /** The health loop's one connection to the server as the service account, once the round's new one is gone. */
    private static long keptConnection(Connection admin) throws Exception {
        List<Long> ids = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        do {
            ids.clear();
            try (Statement statement = admin.createStatement();
                 ResultSet rows = statement.executeQuery("SELECT ID FROM information_schema.PROCESSLIST "
                         + "WHERE USER = 'app' AND COMMAND <> 'Killed'")) {
                while (rows.next()) {
                    ids.add(rows.getLong(1));
                }
            }
            if (ids.size() == 1) {
                return ids.get(0);
            }
            Thread.sleep(20);
        } while (System.nanoTime() < deadline);
        throw new AssertionError("expected one connection of the service account, found " + ids);
    }

    private static long median(List<Long> values) {
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }

    private static ProxyConfig config() {
        return ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0)).withConnectTimeout(CONNECT_TIMEOUT);
    }

    /** Polls every 20 ms; returns System.nanoTime() when the condition first held. */
    private static long waitUntil(BooleanSupplier condition, Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not met within " + limit.toMillis() + " ms");
            }
            Thread.sleep(20);
        }
        return System.nanoTime();
    }

    private static void execute(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    private static long serverId(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
            rows.next();
            return rows.getLong(1);
        }
    }
}
