package io.gantry;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.authority.Retention;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.route.ReadBalance;
import io.gantry.route.RoutingConfig;
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
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A replica that answers but cannot be trusted — its SQL thread stopped with an error, or it holds transactions the
 * primary never had — is marked {@code broken} or {@code diverged}, serves no reads, and comes back when it
 * recovers; each change is an event in plain words.
 */
class ReplicaHealthIT {

    private static final int READS = 200;

    @TempDir
    Path dataDir;

    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void replicaWhoseSqlThreadStoppedWithAnErrorIsBrokenAndServesNoReadsUntilItRunsAgain(TopologyKind kind)
            throws Exception {
        try (Topology own = TopologyKinds.startPrivate(kind, "health-broken", 2);
             Gantry gantry = Gantry.start(options(own));
             Connection session = connect(gantry)) {
            DatabaseServer broken = own.replicas().get(0);
            DatabaseServer healthy = own.replicas().get(1);
            execute(session, "CREATE TABLE clash (id INT PRIMARY KEY)");
            own.awaitReplicasCaughtUp(Duration.ofSeconds(30));

            // A row written on the replica behind replication's back; the primary then inserts the same key.
            own.writeOnReplica(broken, false, "INSERT INTO clash VALUES (1)");
            execute(session, "INSERT INTO clash VALUES (1)");
            waitFor(() -> own.replicationSqlError(broken).startsWith("1062"), "the replica's SQL thread fails");

            waitFor(() -> health(session, broken).equals("broken"), broken + " shows broken");
            assertThat(health(session, healthy)).isEqualTo("up");
            assertThat(health(session, own.primary())).isEqualTo("up");
            assertThat(events(session, broken, "broken")).singleElement().satisfies(reason -> assertThat(reason)
                    .startsWith("replica " + broken.address() + " is broken: its SQL thread stopped with error 1062")
                    .contains("Duplicate entry"));
            assertThat(readsOn(session, broken)).as("reads that ran on the broken replica").isZero();
            // A new session too, by session balance: it gets the healthy replica.
            try (Connection fresh = connect(gantry)) {
                assertThat(readsOn(fresh, broken)).isZero();
            }

            // The operator repairs it: the clashing row goes, the SQL thread runs again and applies the insert.
            own.writeOnReplica(broken, false, "DELETE FROM clash WHERE id = 1");
            own.resumeReplication(broken);
            waitFor(() -> health(session, broken).equals("up"), broken + " is up again");
            assertThat(events(session, broken, "up")).anySatisfy(reason -> assertThat(reason)
                    .contains("replication is healthy again").contains("was broken"));
            waitFor(() -> readsOn(session, broken) > 0, "reads reach the repaired replica again");
        }
    }

    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void replicaWithAnErrantTransactionIsDivergedWhileHealthyReplicasUnderSteadyWritesAreNot(TopologyKind kind)
            throws Exception {
        try (Topology own = TopologyKinds.startPrivate(kind, "health-diverged", 2);
             Gantry gantry = Gantry.start(options(own));
             Connection session = connect(gantry)) {
            DatabaseServer diverged = own.replicas().get(0);
            DatabaseServer healthy = own.replicas().get(1);
            execute(session, "CREATE TABLE ticks (id INT AUTO_INCREMENT PRIMARY KEY)");
            own.awaitReplicasCaughtUp(Duration.ofSeconds(30));

            // Writes on the primary all along: every health round samples replicas that may be ahead of the
            // primary's sample of that round. None of them may be called diverged for that.
            AtomicBoolean writing = new AtomicBoolean(true);
            AtomicReference<Throwable> writerFailure = new AtomicReference<>();
            List<String> healthyStates = new ArrayList<>();
            Thread writer = new Thread(() -> {
                try (Connection primary = own.connectAsApp(own.primary())) {
                    while (writing.get()) {
                        execute(primary, "INSERT INTO ticks VALUES ()");
                    }
                } catch (Throwable e) {
                    writerFailure.set(e);
                }
            }, "ticks-writer");
            String errantGtid = kind == TopologyKind.MARIADB ? "7-" + diverged.port() + "-1"
                    : serverUuid(own, diverged) + ":1";
            writer.start();
            try {
                if (kind == TopologyKind.MARIADB) {
                    // A transaction of the replica's own, binlogged in a domain the primary has never written.
                    own.writeOnReplica(diverged, true, "SET SESSION gtid_domain_id = 7",
                            "CREATE TABLE errant (id INT)");
                } else {
                    // A transaction of the replica's own: its GTID carries the replica's server UUID.
                    own.writeOnReplica(diverged, true, "CREATE TABLE errant (id INT)");
                }
                waitFor(() -> health(session, diverged).equals("diverged"), diverged + " shows diverged");
                assertThat(events(session, diverged, "diverged")).singleElement().satisfies(reason -> assertThat(reason)
                        .startsWith("replica " + diverged.address() + " is diverged: it has executed transactions "
                                + "the primary " + own.primary().address() + " lacks")
                        .contains(errantGtid));
                assertThat(readsOn(session, diverged)).as("reads that ran on the diverged replica").isZero();
                // Several more rounds under writes: the other replica never looks diverged.
                long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
                while (System.nanoTime() < until) {
                    healthyStates.add(gantry.upstreams().find(healthy.address()).orElseThrow().health().name());
                    Thread.sleep(50);
                }
            } finally {
                writing.set(false);
                writer.join();
            }
            assertThat(writerFailure.get()).isNull();
            assertThat(healthyStates).isNotEmpty().containsOnly("UP");
            assertThat(events(session, healthy, "diverged")).isEmpty();
            assertThat(events(session, healthy, "broken")).isEmpty();
            assertThat(health(session, diverged)).as("an errant GTID in its own domain does not stop replication")
                    .isEqualTo("diverged");

            if (kind == TopologyKind.MARIADB) {
                // The errant GTID goes away (its binary log reset): the replica is trusted again.
                own.writeOnReplica(diverged, false, "RESET MASTER");
            } else {
                // MySQL's usual repair: the primary gets the errant GTID as an empty transaction, so it holds
                // everything the replica has (RESET MASTER would empty the replica's whole gtid_executed).
                try (Connection root = own.connectAsAdmin(own.primary())) {
                    execute(root, "SET GTID_NEXT = '" + errantGtid + "'");
                    execute(root, "BEGIN");
                    execute(root, "COMMIT");
                    execute(root, "SET GTID_NEXT = 'AUTOMATIC'");
                }
            }
            waitFor(() -> health(session, diverged).equals("up"), diverged + " is up again");
            assertThat(events(session, diverged, "up")).anySatisfy(reason -> assertThat(reason)
                    .contains("replication is healthy again").contains("was diverged"));
        }
    }

    /** MariaDB only: MySQL has no domains, and an errant GTID (another UUID) never stops its replication. */
    @Test
    void errantTransactionInThePrimarysDomainIsDivergedThenBrokenAtThePrimarysNextWrite() throws Exception {
        try (Topology own = Sandboxes.startPrivate(TopologyKind.MARIADB, "health-errant-domain0", 1);
             Gantry gantry = Gantry.start(options(own));
             Connection session = connect(gantry)) {
            DatabaseServer replica = own.replicas().get(0);
            execute(session, "CREATE TABLE notes (id INT PRIMARY KEY)");
            own.awaitReplicasCaughtUp(Duration.ofSeconds(30));

            own.writeOnReplica(replica, true, "INSERT INTO notes VALUES (1)");
            waitFor(() -> health(session, replica).equals("diverged"), replica + " shows diverged");
            // Its next GTID in the same domain is out of order on the replica: gtid_strict_mode stops the SQL thread.
            execute(session, "INSERT INTO notes VALUES (2)");
            waitFor(() -> health(session, replica).equals("broken"), replica + " shows broken");
            assertThat(events(session, replica, "broken")).singleElement().satisfies(reason -> assertThat(reason)
                    .startsWith("replica " + replica.address() + " is broken: its SQL thread stopped with error"));
            assertThat(readsOn(session, replica)).isZero();
        }
    }

    private Gantry.Options options(Topology own) {
        List<UpstreamUrl> urls = own.servers().stream()
                .map(s -> new UpstreamUrl(s.host(), s.port(), "app", "app", "app", 50)).toList();
        ProxyConfig proxy = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0))
                .withConnectTimeout(Duration.ofSeconds(2))
                .withRouting(new RoutingConfig(false, 0, ReadBalance.STATEMENT, true));
        return new Gantry.Options(proxy, urls, List.of(), dataDir, Duration.ofSeconds(1), Retention.DEFAULT,
                Set.of(), Optional.empty());
    }

    /** How many of {@value #READS} reads through the proxy ran on {@code server}. */
    private static int readsOn(Connection session, DatabaseServer server) {
        int on = 0;
        try (Statement statement = session.createStatement()) {
            for (int i = 0; i < READS; i++) {
                try (ResultSet rows = statement.executeQuery("SELECT @@server_id")) {
                    rows.next();
                    if (rows.getInt(1) == server.port()) {
                        on++;
                    }
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return on;
    }

    private static String health(Connection admin, DatabaseServer server) {
        return single(admin, "SELECT health FROM gantry.upstream_servers WHERE port = " + server.port());
    }

    private static List<String> events(Connection admin, DatabaseServer server, String kind) throws SQLException {
        List<String> reasons = new ArrayList<>();
        try (Statement statement = admin.createStatement();
             ResultSet rows = statement.executeQuery("SELECT reason FROM gantry.events WHERE server = '"
                     + server.address() + "' AND kind = '" + kind + "' ORDER BY id")) {
            while (rows.next()) {
                reasons.add(rows.getString(1));
            }
        }
        return reasons;
    }

    private static String single(Connection connection, String sql) {
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
            return rows.next() ? rows.getString(1) : "";
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void waitFor(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what + " within 30 s").isLessThan(deadline);
            Thread.sleep(100);
        }
    }

    private static Connection connect(Gantry gantry) throws SQLException {
        // allowPublicKeyRetrieval: MySQL's app account is caching_sha2_password, and this connection has no TLS.
        return DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + gantry.address().getPort()
                + "/app?sslMode=DISABLED&allowPublicKeyRetrieval=true", "app", "app");
    }

    private static String serverUuid(Topology topology, DatabaseServer server) throws SQLException {
        try (Connection root = topology.connectAsAdmin(server)) {
            return single(root, "SELECT @@server_uuid");
        }
    }

    private static void execute(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }
}
