package io.gantry.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.Gantry;
import io.gantry.authority.Retention;
import io.gantry.cdc.CdcSettings;
import io.gantry.cdc.TableFilter;
import io.gantry.handover.TakeOver;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.proxy.transport.SocketTransport;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.MariaDbTopology;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Several Gantry instances sharing one configuration through the cluster's tables on the primary (issue 29): a change
 * on one reaches the others (from the change stream, or by polling without it), concurrent changes leave every
 * instance on one history, a newcomer gets the current configuration, and an instance restarted while the primary is
 * down serves with the configuration it had.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterIT {

    private static Topology topology;

    @TempDir
    Path dir;

    @BeforeAll
    static void topology() {
        topology = Sandboxes.startPrivate(TopologyKind.MARIADB, "cluster", 2);
    }

    @AfterAll
    static void stop() throws Exception {
        topology.close();
    }

    @Test
    @Order(1)
    void aWeightChangeOnOneReachesTheOthersFromTheirChangeStreams() throws Exception {
        DatabaseServer replica = topology.replicas().get(0);
        // A poll interval far above the 1 s the change must take: only the change stream can bring it in time.
        Duration poll = Duration.ofSeconds(20);
        try (Gantry a = start("cdc", "gantry-a", poll, true);
             Gantry b = start("cdc", "gantry-b", poll, true);
             Gantry c = start("cdc", "gantry-c", poll, true);
             Connection adminA = connect(a); Connection adminB = connect(b); Connection adminC = connect(c)) {
            waitFor(() -> status(adminB).get("CDC Status").equals("streaming")
                    && status(adminC).get("CDC Status").equals("streaming"), Duration.ofSeconds(30));
            assertThat(clusterVersion(adminA)).isEqualTo(clusterVersion(adminB)).isEqualTo(clusterVersion(adminC));

            long changed = System.nanoTime();
            execute(adminA, "ALTER GANTRY SET WEIGHT '" + replica.address() + "' TO 7");
            waitFor(() -> weight(adminB, replica) == 7 && weight(adminC, replica) == 7, Duration.ofSeconds(5));
            long millis = Duration.ofNanos(System.nanoTime() - changed).toMillis();
            System.out.printf("ClusterIT: a weight change on one instance seen by both others in %d ms%n", millis);
            assertThat(millis).as("seen by the others within 1 s").isLessThan(1_000);
            assertThat(events(adminB)).anySatisfy(reason -> assertThat(reason).contains("from instance gantry-a")
                    .contains("ALTER GANTRY SET WEIGHT"));

            // One timeline: a's own event of the change reaches b's and c's, naming a; b's own names b.
            String ownOfA = "SELECT reason FROM gantry.events WHERE instance = 'gantry-a' AND kind = 'weight_changed' "
                    + "AND reason NOT LIKE '%from instance%' AND reason LIKE '%-> 7 %'";
            waitFor(() -> rows(adminB, ownOfA).size() == 1 && rows(adminC, ownOfA).size() == 1, Duration.ofSeconds(5));
            long eventMillis = Duration.ofNanos(System.nanoTime() - changed).toMillis();
            System.out.printf("ClusterIT: an event recorded on one instance in both others' timelines in %d ms%n",
                    eventMillis);
            assertThat(eventMillis).as("in the others' timelines within about a second").isLessThan(1_500);
            // b's own event of applying it, and c's, pulled; on a every instance's events, none without an instance.
            waitFor(() -> instances(adminB, "kind = 'weight_changed' AND reason LIKE '%from instance gantry-a%'")
                    .equals(List.of("gantry-b", "gantry-c")), Duration.ofSeconds(5));
            waitFor(() -> instances(adminA, "TRUE").equals(List.of("gantry-a", "gantry-b", "gantry-c")),
                    Duration.ofSeconds(5));

            // Two instances change the same weight at the same moment: one history for all three.
            CountDownLatch go = new CountDownLatch(1);
            CompletableFuture<String> onA = CompletableFuture.supplyAsync(() -> tryAlter(adminA, go, replica, 10));
            CompletableFuture<String> onB = CompletableFuture.supplyAsync(() -> tryAlter(adminB, go, replica, 90));
            go.countDown();
            List<String> outcomes = List.of(onA.get(), onB.get());
            System.out.println("ClusterIT: concurrent changes: " + outcomes);
            assertThat(outcomes).as("at least one is made").contains("ok");
            assertThat(outcomes).allSatisfy(outcome -> assertThat(outcome).satisfiesAnyOf(
                    o -> assertThat(o).isEqualTo("ok"),
                    o -> assertThat(o).contains("changed first by instance gantry-")));
            waitFor(() -> clusterVersion(adminA) == clusterVersion(adminB)
                    && clusterVersion(adminB) == clusterVersion(adminC)
                    && weight(adminA, replica) == weight(adminB, replica)
                    && weight(adminB, replica) == weight(adminC, replica), Duration.ofSeconds(5));
            int agreed = weight(adminA, replica);
            assertThat(agreed).isIn(10, 90);

            // A newcomer, whose own list has every weight at 50, serves with the cluster's.
            try (Gantry d = start("cdc", "gantry-d", poll, true); Connection adminD = connect(d)) {
                assertThat(weight(adminD, replica)).isEqualTo(agreed);
                assertThat(clusterVersion(adminD)).isEqualTo(clusterVersion(adminA));
                List<Map<String, String>> instances = rows(adminD, "SHOW GANTRY CLUSTER");
                assertThat(instances).extracting(row -> row.get("Instance"))
                        .contains("gantry-a", "gantry-b", "gantry-c", "gantry-d");
                assertThat(instances).filteredOn(row -> row.get("This_instance").equals("yes"))
                        .extracting(row -> row.get("Instance")).containsExactly("gantry-d");
            }
        }
    }

    @Test
    @Order(2)
    void withoutTheChangeStreamInstancesLearnOfAChangeWithinAPollInterval() throws Exception {
        DatabaseServer replica = topology.replicas().get(1);
        Duration poll = Duration.ofSeconds(1);
        Gantry.Options withMetrics = options(urls(), dir.resolve("polled-a"), poll, false)
                .withMetricsListen(new InetSocketAddress("127.0.0.1", 0))
                .withCluster(new ClusterSettings("polled", ClusterSettings.DEFAULT_SCHEMA, "gantry-a", "127.0.0.1:0"));
        try (Gantry a = Gantry.start(withMetrics);
             Gantry b = start("polled", "gantry-b", poll, false);
             Gantry c = start("polled", "gantry-c", poll, false);
             Connection adminA = connect(a); Connection adminB = connect(b); Connection adminC = connect(c)) {
            long changed = System.nanoTime();
            execute(adminA, "ALTER GANTRY SET WEIGHT '" + replica.address() + "' TO 33");
            waitFor(() -> weight(adminB, replica) == 33 && weight(adminC, replica) == 33, Duration.ofSeconds(5));
            long millis = Duration.ofNanos(System.nanoTime() - changed).toMillis();
            System.out.printf("ClusterIT: without CDC, a change seen by both other instances in %d ms (poll 1 s)%n",
                    millis);
            assertThat(millis).as("within one poll interval, and the time to apply it").isLessThan(1_500);
            assertThat(status(adminB).get("Cluster State")).isEqualTo("in step");

            String metrics = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create("http://127.0.0.1:" + a.metricsAddress().orElseThrow().getPort() + "/metrics"))
                    .build(), java.net.http.HttpResponse.BodyHandlers.ofString()).body();
            assertThat(metrics).as("every series names the cluster and the instance")
                    .contains("gantry_cluster_config_version{cluster=\"polled\",cluster_instance=\"gantry-a\"} 2.0")
                    .contains("gantry_client_sessions{cluster=\"polled\",cluster_instance=\"gantry-a\"}");
        }
    }

    @Test
    @Order(2)
    void aChangeMadeOnAnOlderVersionIsRefusedNamingTheInstanceThatChangedItFirst() throws Exception {
        DatabaseServer replica = topology.replicas().get(1);
        // No change stream and a long poll: b does not learn of a's change before it makes its own.
        Duration poll = Duration.ofSeconds(60);
        try (Gantry a = start("cas", "gantry-a", poll, false);
             Gantry b = start("cas", "gantry-b", poll, false);
             Connection adminA = connect(a); Connection adminB = connect(b)) {
            execute(adminA, "ALTER GANTRY SET WEIGHT '" + replica.address() + "' TO 20");
            assertThatThrownBy(() -> execute(adminB, "ALTER GANTRY SET WEIGHT '" + replica.address() + "' TO 80"))
                    .hasMessageContaining("changed first by instance gantry-a (version 2 at ")
                    .hasMessageContaining("this change was not made");
            assertThat(weight(adminB, replica)).as("b applied a's version when refused").isEqualTo(20);
            execute(adminB, "ALTER GANTRY SET WEIGHT '" + replica.address() + "' TO 80");
            assertThat(clusterVersion(adminB)).isEqualTo(3);
            assertThat(rows(adminB, "SHOW GANTRY CLUSTER")).extracting(row -> row.get("Cluster_version"))
                    .containsOnly("3");
        }
    }

    @Test
    @Order(2)
    void cacheDefinitionsAreSharedAndANewcomerHasThem() throws Exception {
        try (Connection root = topology.connectAsAdmin(topology.primary())) {
            execute(root, "CREATE TABLE IF NOT EXISTS app.cluster_kv (id INT PRIMARY KEY, v INT)");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        Duration poll = Duration.ofSeconds(20);
        try (Gantry a = start("caches", "gantry-a", poll, true);
             Gantry b = start("caches", "gantry-b", poll, true);
             Connection adminA = connect(a); Connection adminB = connect(b)) {
            waitFor(() -> status(adminB).get("CDC Status").equals("streaming"), Duration.ofSeconds(30));
            execute(adminA, "CREATE CACHE kv FROM SELECT v FROM cluster_kv WHERE id = ?");
            waitFor(() -> cacheNames(adminB).contains("kv"), Duration.ofSeconds(2));
            assertThatThrownBy(() -> execute(adminB, "CREATE CACHE kv2 FROM SELECT v FROM cluster_kv WHERE id = ?"))
                    .as("the shape is cached already, on every instance").hasMessageContaining("already caches");
            try (Gantry c = start("caches", "gantry-c", poll, true); Connection adminC = connect(c)) {
                assertThat(cacheNames(adminC)).containsExactly("kv");
                execute(adminC, "DROP CACHE kv");
                waitFor(() -> cacheNames(adminA).isEmpty() && cacheNames(adminB).isEmpty(), Duration.ofSeconds(2));
            }
        }
    }

    @Test
    @Order(3)
    void anAccountWithoutThePrivilegesIsToldWhichGrantItNeeds() throws Exception {
        try (Connection root = topology.connectAsAdmin(topology.primary())) {
            execute(root, "CREATE USER IF NOT EXISTS cluster_ro@'%' IDENTIFIED BY 'ro'");
            execute(root, "GRANT SELECT ON *.* TO cluster_ro@'%'");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        List<UpstreamUrl> urls = topology.servers().stream()
                .map(s -> new UpstreamUrl(s.host(), s.port(), "app", "cluster_ro", "ro", 50)).toList();
        assertThatThrownBy(() -> Gantry.start(options(urls, dir.resolve("ro"), Duration.ofSeconds(2), false)
                .withCluster(new ClusterSettings("private", "gantry_private", "gantry-ro", "127.0.0.1:0"))))
                .hasMessageContaining("lacks a privilege on the schema `gantry_private`")
                .hasMessageContaining("GRANT CREATE, SELECT, INSERT, UPDATE, DELETE ON `gantry_private`.* TO 'cluster_ro'");
    }

    /**
     * {@code --take-over} of an instance: the new process takes its place in the cluster (its changes are versions
     * of the cluster, the others' reach it, {@code SHOW GANTRY CLUSTER} names it as this instance) and the session
     * that moved keeps its id; the old process refused changes while lent.
     */
    @Test
    @Order(3)
    void aTakeOverPassesTheInstancesPlaceInTheCluster() throws Exception {
        DatabaseServer replica = topology.replicas().get(0);
        Path dataDir = dir.resolve("taken-gantry-a");
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        Gantry.Options plain = options(urls(), dataDir, Duration.ofSeconds(1), true);
        ProxyConfig epoll = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", port))
                .withConnectTimeout(Duration.ofSeconds(2)).withSocketTransport(SocketTransport.EPOLL);
        Gantry.Options optionsA = new Gantry.Options(epoll, plain.upstreamFlags(), List.of(), dataDir,
                plain.healthInterval(), Retention.DEFAULT, Set.of(), plain.cdc())
                .withCluster(new ClusterSettings("taken", ClusterSettings.DEFAULT_SCHEMA, "gantry-a", "127.0.0.1:0"));
        Gantry next = null;
        try (Gantry b = start("taken", "gantry-b", Duration.ofSeconds(1), true); Connection adminB = connect(b)) {
            Gantry a = Gantry.start(optionsA);
            try (Connection moving = connect(a)) {
                long id = connectionId(moving);
                execute(moving, "ALTER GANTRY SET WEIGHT '" + replica.address() + "' TO 21");
                waitFor(() -> weight(adminB, replica) == 21, Duration.ofSeconds(5));
                try (TakeOver from = TakeOver.connect(dataDir, Duration.ofSeconds(10))) {
                    next = Gantry.takeOver(optionsA, from);
                    // Still served by the old process, which lent its place: it refuses to change the cluster.
                    assertThatThrownBy(() -> execute(moving, "ALTER GANTRY SET WEIGHT '" + replica.address()
                            + "' TO 29")).hasMessageContaining("handing instance gantry-a over to the Gantry taking "
                            + "over");
                    TakeOver.Moved moved = next.moveSessionsFrom(from, Duration.ofSeconds(10));
                    assertThat(moved.moved()).as("the session moved").isEqualTo(1);
                }
                a.takenOver().get(10, TimeUnit.SECONDS);
                a.close();
                assertThat(connectionId(moving)).as("the moved session's id").isEqualTo(id);
                // The new process is instance gantry-a: its change is the cluster's next version, and reaches b.
                long before = clusterVersion(adminB);
                execute(moving, "ALTER GANTRY SET WEIGHT '" + replica.address() + "' TO 22");
                waitFor(() -> weight(adminB, replica) == 22, Duration.ofSeconds(5));
                assertThat(clusterVersion(adminB)).isEqualTo(before + 1);
                assertThat(rows(moving, "SHOW GANTRY CLUSTER")).filteredOn(row -> row.get("This_instance")
                        .equals("yes")).extracting(row -> row.get("Instance")).containsExactly("gantry-a");
                // b's change reaches it.
                execute(adminB, "ALTER GANTRY SET WEIGHT '" + replica.address() + "' TO 23");
                waitFor(() -> weight(moving, replica) == 23, Duration.ofSeconds(5));
            }
        } finally {
            if (next != null) {
                next.close();
            }
        }
    }

    private static long connectionId(Connection connection) {
        return Long.parseLong(rows(connection, "SELECT CONNECTION_ID() AS id").get(0).get("ID"));
    }

    @Test
    @Order(4)
    void anInstanceRestartedWhileThePrimaryIsDownServesWithItsLastConfiguration() throws Exception {
        DatabaseServer replica = topology.replicas().get(0);
        try (Gantry a = start("restart", "gantry-a", Duration.ofSeconds(1), false); Connection admin = connect(a)) {
            execute(admin, "ALTER GANTRY SET WEIGHT '" + replica.address() + "' TO 12");
        }
        topology.kill(topology.primary());
        boolean primaryBack = false;
        // The mariadb client, which sends only what it is given: with no primary ever seen by this start, reads have
        // no bound on their staleness and are refused (--max-stale-read-bound-ms); admin statements answer.
        try (Gantry a = start("restart", "gantry-a", Duration.ofSeconds(1), false)) {
            assertThat(client(a, "SELECT weight FROM gantry.upstream_servers WHERE port = " + replica.port()))
                    .as("the last configuration, from the Authority").isEqualTo("12");
            assertThat(client(a, "SHOW GANTRY STATUS")).contains("Cluster Version\t2")
                    .contains("Cluster State\tserving with its last configuration");
            assertThat(client(a, "ALTER GANTRY SET WEIGHT '" + replica.address() + "' TO 13"))
                    .contains("changes wait until the primary is back");

            java.time.Instant backAt = java.time.Instant.now();
            topology.start(topology.primary());
            primaryBack = true;
            waitFor(() -> client(a, "SHOW GANTRY STATUS").contains("Cluster State\tin step"), Duration.ofSeconds(20));
            // Both starts' events, the second recorded while the primary was down, reach the shared timeline with
            // the times they were recorded at.
            String startsBefore = "SELECT COUNT(*) FROM gantry_cluster.events WHERE cluster = 'restart' AND instance "
                    + "= 'gantry-a' AND kind = 'startup' AND at < '" + java.time.format.DateTimeFormatter.ofPattern(
                    "yyyy-MM-dd HH:mm:ss.SSS").withZone(java.time.ZoneOffset.UTC).format(backAt) + "'";
            try (Connection root = topology.connectAsAdmin(topology.primary())) {
                waitFor(() -> rows(root, startsBefore).get(0).values().iterator().next().equals("2"),
                        Duration.ofSeconds(5));
            }
            assertThat(client(a, "ALTER GANTRY SET WEIGHT '" + replica.address() + "' TO 13")).as("no error").isEmpty();
            assertThat(client(a, "SELECT weight FROM gantry.upstream_servers WHERE port = " + replica.port()))
                    .isEqualTo("13");
            assertThat(client(a, "SHOW GANTRY STATUS")).contains("Cluster Version\t3");
        } finally {
            if (!primaryBack) {
                topology.start(topology.primary());
            }
        }
    }

    @Test
    @Order(5)
    void theConfigurationFollowsAPromotedReplica() throws Exception {
        DatabaseServer replica = topology.replicas().get(1);
        try (Gantry a = start("promoted", "gantry-a", Duration.ofSeconds(1), true);
             Gantry b = start("promoted", "gantry-b", Duration.ofSeconds(1), true);
             Connection adminA = connect(a); Connection adminB = connect(b)) {
            execute(adminA, "ALTER GANTRY SET WEIGHT '" + replica.address() + "' TO 41");
            waitFor(() -> weight(adminB, replica) == 41, Duration.ofSeconds(5));
            DatabaseServer newPrimary = topology.replicas().get(0);
            topology.promote(newPrimary);
            waitFor(() -> status(adminA).get("Primary").equals(newPrimary.address())
                    && status(adminB).get("Primary").equals(newPrimary.address()), Duration.ofSeconds(20));
            // The versions replicated to the new primary: the next change is version 3 there, and reaches b.
            execute(adminA, "ALTER GANTRY SET WEIGHT '" + replica.address() + "' TO 42");
            waitFor(() -> weight(adminB, replica) == 42, Duration.ofSeconds(5));
            assertThat(clusterVersion(adminA)).isEqualTo(3);
            assertThat(clusterVersion(adminB)).isEqualTo(3);
            assertThat(rows(adminB, "SHOW GANTRY CLUSTER")).extracting(row -> row.get("Cluster_version"))
                    .containsOnly("3");
        }
    }

    // ---- helpers -------------------------------------------------------------------------------

    private Gantry start(String cluster, String instance, Duration poll, boolean cdc) throws InterruptedException {
        Gantry.Options options = options(urls(), dir.resolve(cluster + "-" + instance), poll, cdc);
        return Gantry.start(options.withCluster(new ClusterSettings(cluster, ClusterSettings.DEFAULT_SCHEMA,
                instance, "127.0.0.1:0")));
    }

    private static Gantry.Options options(List<UpstreamUrl> urls, Path dataDir, Duration poll, boolean cdc) {
        ProxyConfig proxy = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0))
                .withConnectTimeout(Duration.ofSeconds(2));
        Optional<CdcSettings> stream = cdc ? Optional.of(new CdcSettings(Duration.ofSeconds(2), 1, Optional.empty(),
                1 << 20, TableFilter.allOf("app"), false)) : Optional.empty();
        return new Gantry.Options(proxy, urls, List.of(), dataDir, poll, Retention.DEFAULT, Set.of(), stream);
    }

    private static List<UpstreamUrl> urls() {
        return topology.servers().stream().map(s -> new UpstreamUrl(s.host(), s.port(), "app", "app", "app", 50))
                .toList();
    }

    private static String tryAlter(Connection admin, CountDownLatch go, DatabaseServer server, int weight) {
        try {
            go.await();
            execute(admin, "ALTER GANTRY SET WEIGHT '" + server.address() + "' TO " + weight);
            return "ok";
        } catch (SQLException e) {
            return e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    /** What the mariadb client prints for {@code sql} in batch mode, errors included, stripped. */
    private static String client(Gantry gantry, String sql) {
        try {
            Process process = new ProcessBuilder(((MariaDbTopology) topology).installation().client().toString(), "--skip-ssl", "-h127.0.0.1",
                    "-P" + gantry.address().getPort(), "-uapp", "-papp", "-N", "-B", "-e", sql)
                    .redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            process.waitFor();
            return output.strip();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static int weight(Connection admin, DatabaseServer server) {
        List<Map<String, String>> rows = rows(admin, "SELECT weight FROM gantry.upstream_servers WHERE port = "
                + server.port());
        return Integer.parseInt(rows.get(0).get("WEIGHT"));
    }

    private static List<String> cacheNames(Connection admin) {
        return rows(admin, "SHOW CACHES").stream().map(row -> row.get("Name")).toList();
    }

    private static long clusterVersion(Connection admin) {
        return Long.parseLong(status(admin).get("Cluster Version"));
    }

    private static List<String> events(Connection admin) {
        return rows(admin, "SELECT reason FROM gantry.events ORDER BY id").stream().map(r -> r.get("REASON"))
                .toList();
    }

    /** The instances named by the events {@code where} selects, in order, NULL as "null". */
    private static List<String> instances(Connection admin, String where) {
        return rows(admin, "SELECT DISTINCT COALESCE(instance, 'null') AS i FROM gantry.events WHERE " + where
                + " ORDER BY i").stream().map(row -> row.get("I")).toList();
    }

    private static Map<String, String> status(Connection admin) {
        Map<String, String> status = new LinkedHashMap<>();
        for (Map<String, String> row : rows(admin, "SHOW GANTRY STATUS")) {
            status.put(row.get("Variable_name"), row.get("Value"));
        }
        return status;
    }

    private static Connection connect(Gantry gantry) throws SQLException {
        return DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + gantry.address().getPort()
                + "/app?sslMode=DISABLED", "app", "app");
    }

    private static void execute(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    private static List<Map<String, String>> rows(Connection connection, String sql) {
        try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            List<Map<String, String>> rows = new ArrayList<>();
            int columns = result.getMetaData().getColumnCount();
            while (result.next()) {
                Map<String, String> row = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
                for (int i = 1; i <= columns; i++) {
                    row.put(result.getMetaData().getColumnLabel(i), result.getString(i));
                }
                rows.add(row);
            }
            return rows;
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }

    private static void waitFor(BooleanSupplier condition, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("condition met within " + within).isLessThan(deadline);
            Thread.sleep(10);
        }
    }
}
