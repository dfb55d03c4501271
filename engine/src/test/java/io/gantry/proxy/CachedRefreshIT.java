package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.Gantry;
import io.gantry.authority.Retention;
import io.gantry.cache.CacheSettings;
import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.UpstreamUrl;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
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
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Refresh-ahead by Gantry's own workers and the account check on the highest-weight server, against a MariaDB
 * primary (weight 20) and two replicas (weights 30 and 90). Shallow caches (TTL only): no change stream evicts, so
 * only a refresh can bring a change into a hit. The replica killed at the end goes last.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CachedRefreshIT {

    private static Topology topology;
    private static Gantry gantry;
    private static DatabaseServer light;
    private static DatabaseServer heavy;

    @TempDir
    static Path dataDir;

    @BeforeAll
    static void start() throws Exception {
        topology = Sandboxes.startPrivate(TopologyKind.MARIADB, "cache-refresh", 2);
        light = topology.replicas().get(0);
        heavy = topology.replicas().get(1);
        List<UpstreamUrl> urls = List.of(url(topology.primary(), 20), url(light, 30), url(heavy, 90));
        ProxyConfig proxy = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0))
                .withConnectTimeout(Duration.ofSeconds(1));
        // One worker: each result format has one refresh connection, so the server a format's refreshes come from
        // changes only when the worker reconnects.
        gantry = Gantry.start(new Gantry.Options(proxy, urls, List.of(), dataDir, Duration.ofSeconds(1),
                Retention.DEFAULT, Set.of(), Optional.empty())
                .withCaches(new CacheSettings(256L << 20, 1L << 20, Duration.ofSeconds(1), 1))
                .withMetricsListen(new InetSocketAddress("127.0.0.1", 0)));
    }

    @AfterAll
    static void stop() {
        if (gantry != null) {
            gantry.close();
        }
        if (topology != null) {
            topology.close();
        }
    }

    private static UpstreamUrl url(DatabaseServer server, int weight) {
        return new UpstreamUrl(server.host(), server.port(), "app", "app", "app", weight);
    }

    private static Connection throughGantry(String user, String password) throws SQLException {
        return DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + gantry.address().getPort() + "/app", user,
                password);
    }

    /** {@code EXPLAIN LAST STATEMENT}: destination and detail. */
    private static List<String> lastStatement(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("EXPLAIN LAST STATEMENT")) {
            rows.next();
            return List.of(rows.getString(1), rows.getString(2));
        }
    }

    private static String readString(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
            rows.next();
            return rows.getString(1);
        }
    }

    /** What {@code EXPLAIN GANTRY ROUTE} says of {@code server} for {@code sql} in this session. */
    private static String routeDetail(Connection connection, String sql, DatabaseServer server) throws SQLException {
        try (Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("EXPLAIN GANTRY ROUTE " + sql)) {
            while (rows.next()) {
                if (rows.getString(1).equals(server.address())) {
                    return rows.getString(2);
                }
            }
        }
        throw new AssertionError("EXPLAIN GANTRY ROUTE has no row for " + server.address());
    }

    @Test
    @Order(1)
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aNewAccountsFirstReadOfACachedQueryIsCheckedOnTheHighestWeightServer() throws Exception {
        try (Connection root = topology.connectAsAdmin(topology.primary())) {
            execute(root, "CREATE TABLE app.checked_kv (id INT PRIMARY KEY, v VARCHAR(20))");
            execute(root, "INSERT INTO app.checked_kv VALUES (1, 'one')");
            execute(root, "CREATE USER 'cache_newcomer'@'%' IDENTIFIED BY 'newcomer'");
            execute(root, "GRANT SELECT ON app.* TO 'cache_newcomer'@'%'");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        // An entry is as new as its filling server's last position sample, and the newcomer's floor below is what
        // samples show it read: until Gantry's samples of every server hold these writes, the entry would rightly
        // be too old for the newcomer, and the check this test is about would not happen.
        GtidSet written;
        try (Connection root = topology.connectAsAdmin(topology.primary())) {
            written = GtidSet.parse(readString(root, "SELECT @@gtid_current_pos"), Flavour.MARIADB);
        }
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> gantry.upstreams().servers().stream()
                .allMatch(server -> server.position() != null && server.position().executed().contains(written)));
        String cached = "SELECT v FROM checked_kv WHERE id = 1";
        try (Connection admin = throughGantry("app", "app")) {
            execute(admin, "CREATE SHALLOW CACHE checked POLICY TTL 60 SECONDS FROM SELECT v FROM checked_kv "
                    + "WHERE id = ?");
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> {
                assertThat(readString(admin, cached)).isEqualTo("one");
                return lastStatement(admin).get(0).equals("cache");
            });
        }
        // A session of the new account whose reads go to the lighter replica (session balance keeps it there).
        Connection newcomer = null;
        for (int attempt = 0; attempt < 50 && newcomer == null; attempt++) {
            Connection candidate = throughGantry("cache_newcomer", "newcomer");
            readString(candidate, "SELECT v FROM checked_kv WHERE id > 0");
            if (lastStatement(candidate).get(1).contains(light.address())) {
                newcomer = candidate;
            } else {
                candidate.close();
            }
        }
        assertThat(newcomer).as("a session of cache_newcomer reading from %s", light.address()).isNotNull();
        try (Connection session = newcomer) {
            // Until a position sample shows the heavier replica holds what the session read on the lighter one,
            // monotonic reads keep the session off it, and the check would rightly be routed as usual.
            Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                    .until(() -> routeDetail(session, cached, heavy).endsWith(": qualifies"));
            assertThat(readString(session, cached)).isEqualTo("one");
            List<String> checked = lastStatement(session);
            assertThat(checked.get(0)).isEqualTo("cache miss, then upstream");
            assertThat(checked.get(1)).contains(heavy.address()).contains("cache account check");
            assertThat(readString(session, cached)).isEqualTo("one");
            assertThat(lastStatement(session).get(0)).as("checked: served from the cache").isEqualTo("cache");
            String plain = "SELECT v FROM checked_kv WHERE id > 0";
            Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                    .until(() -> routeDetail(session, plain, light).endsWith(": qualifies"));
            readString(session, plain);
            assertThat(lastStatement(session).get(1)).as("the check did not move the session's replica")
                    .contains(light.address());
        }
        try (Connection admin = throughGantry("app", "app")) {
            execute(admin, "DROP CACHE checked");
        }
    }

    /** A client of its own result format (its session settings differ by {@code time_zone}). */
    private record Client(WireClient wire, long statementId) {
    }

    private static final String JOINED = "SELECT k.v, o.origin, k.ts FROM refresh_kv k JOIN refresh_origin o "
            + "ON o.id = k.id WHERE k.id = ";

    @Test
    @Order(2)
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void refreshWorkersRenewHitsWithTheServersBytesAndPickAnotherUpServerWhenTheirsDies() throws Exception {
        try (Connection root = topology.connectAsAdmin(topology.primary())) {
            // ts reads differently in each time zone: a refresh in another zone would not give the session's bytes.
            execute(root, "CREATE TABLE app.refresh_kv (id INT PRIMARY KEY, v BIGINT NOT NULL, "
                    + "ts TIMESTAMP NOT NULL DEFAULT '2026-06-01 12:00:00')");
            execute(root, "INSERT INTO app.refresh_kv (id, v) VALUES (1, 0), (3, 0)");
            execute(root, "CREATE TABLE app.refresh_origin (id INT PRIMARY KEY, origin VARCHAR(40) NOT NULL)");
            execute(root, "INSERT INTO app.refresh_origin VALUES (1, 'replicated'), (3, 'replicated')");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        // Each server names itself in refresh_origin, behind replication's back: a row says which server answered.
        for (DatabaseServer server : topology.servers()) {
            try (Connection root = topology.connectAsAdmin(server)) {
                execute(root, "SET SESSION sql_log_bin = 0");
                execute(root, "UPDATE app.refresh_origin SET origin = '" + server.address() + "'");
            }
        }
        try (Connection admin = throughGantry("app", "app")) {
            execute(admin, "CREATE SHALLOW CACHE refreshed POLICY TTL 30 SECONDS REFRESH EVERY 1 SECONDS FROM "
                    + JOINED + "?");
        }
        List<Client> clients = new ArrayList<>();
        try {
            // Two sessions of one format, one per protocol: a session that saw the new value of one protocol's
            // entry would rightly not be served the other's older one (monotonic reads).
            Client first = client(0);
            Client prepared = client(0);
            clients.add(first);
            clients.add(prepared);
            awaitSettledHit(first, true);
            awaitSettledHit(prepared, false);
            // Row 3's entry is filled by an execution that binds no types (the first one did): a worker's connection
            // has never seen the statement, so its execution must bind them itself.
            Client untyped = client(0);
            clients.add(untyped);
            untyped.wire().execute(untyped.statementId(), 1);
            Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
                if (!settled(untyped)) {
                    return false;
                }
                untyped.wire().execute(untyped.statementId(), 3, false);
                return explain(untyped).contains("answered from cache refreshed");
            });

            long changed = System.nanoTime();
            try (Connection direct = topology.connectAsApp(topology.primary())) {
                execute(direct, "UPDATE refresh_kv SET v = 1");
            }
            // Every read is a hit; a refresh brings the change in within a few seconds.
            Awaitility.await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(50))
                    .until(() -> textRow(hit(first, true)).get(0).equals("1"));
            long refreshedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - changed);
            Awaitility.await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(50))
                    .until(() -> binaryValue(hit(prepared, false)) == 1);
            Awaitility.await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(50)).until(() -> {
                List<byte[]> answer = untyped.wire().execute(untyped.statementId(), 3, false);
                assertThat(explain(untyped)).contains("answered from cache refreshed");
                return binaryValue(answer) == 1;
            });
            System.out.println("CachedRefreshIT: the change on the primary reached the hits " + refreshedMillis
                    + " ms after it was made");

            // The refreshed packets are the servers' own: those a direct client of the same format gets there.
            List<byte[]> text = hit(first, true);
            DatabaseServer origin = server(textRow(text).get(1));
            List<byte[]> binary = hit(prepared, false);
            assertThat(binaryOrigin(binary)).as("one connection per format").isEqualTo(origin.address());
            try (WireClient direct = WireClient.login(origin.port(), "app", "app", "app",
                    WireClient.BASE_CAPABILITIES)) {
                assertSamePackets(text, direct.query(JOINED + "1"), "text");
                assertSamePackets(binary, direct.execute(direct.prepare(JOINED + "?"), 1), "binary");
            }

            // More formats (time zones), each with its own refresh connection on a server picked at random: at least
            // one, and more until one is on a replica (each is with odds 2 in 3).
            Client onReplica = topology.replicas().contains(origin) ? first : null;
            for (int zone = 1; zone <= 8 && (zone == 1 || onReplica == null); zone++) {
                Client next = client(zone);
                clients.add(next);
                awaitSettledHit(next, true);
                long refreshes = refreshes();
                Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                        .until(() -> hit(next, true) != null && refreshes() > refreshes);
                // Refreshed on a connection with the session's time zone: the bytes of a direct session in that zone.
                List<byte[]> refreshed = hit(next, true);
                DatabaseServer from = server(textRow(refreshed).get(1));
                try (WireClient direct = WireClient.login(from.port(), "app", "app", "app",
                        WireClient.BASE_CAPABILITIES)) {
                    direct.query("SET time_zone = '+0" + zone + ":00'");
                    assertSamePackets(refreshed, direct.query(JOINED + "1"), "text in time zone +0" + zone + ":00");
                }
                if (topology.replicas().contains(from)) {
                    onReplica = next;
                }
            }
            assertThat(onReplica).as("a format refreshed from a replica").isNotNull();
            Client watched = onReplica;
            DatabaseServer killed = server(textRow(hit(watched, true)).get(1));
            topology.kill(killed);
            long killedAt = System.nanoTime();
            Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                    .until(() -> !textRow(hit(watched, true)).get(1).equals(killed.address()));
            DatabaseServer next = server(textRow(hit(watched, true)).get(1));
            assertThat(next).as("refreshed from another up server").isNotEqualTo(killed);
            System.out.println("CachedRefreshIT: refreshes came from " + next.address() + " "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt) + " ms after " + killed.address()
                    + " was killed");
            assertThat(refreshes()).isPositive();
            assertThat(metrics()).contains("gantry_cache_refreshes_total{cache=\"refreshed\",outcome=\"refreshed\"}");
            try (Connection admin = throughGantry("app", "app")) {
                execute(admin, "DROP CACHE refreshed");
            }
            assertThat(metrics()).as("a dropped cache's counters go with it").doesNotContain("cache=\"refreshed\"");
        } finally {
            for (Client client : clients) {
                client.wire().close();
            }
        }
    }

    /** A client through Gantry with BASE_CAPABILITIES; {@code zone} &gt; 0 gives it a format of its own. */
    private static Client client(int zone) throws Exception {
        WireClient wire = WireClient.login(gantry.address().getPort(), "app", "app", "app",
                WireClient.BASE_CAPABILITIES);
        if (zone > 0) {
            wire.query("SET time_zone = '+0" + zone + ":00'");
        }
        return new Client(wire, wire.prepare(JOINED + "?"));
    }

    private static List<byte[]> read(Client client, boolean text) throws Exception {
        return text ? client.wire().query(JOINED + "1") : client.wire().execute(client.statementId(), 1);
    }

    /** A read that must be a hit: no server is asked. */
    private static List<byte[]> hit(Client client, boolean text) throws Exception {
        List<byte[]> answer = read(client, text);
        assertThat(explain(client)).as("EXPLAIN LAST STATEMENT").contains("answered from cache refreshed");
        return answer;
    }

    /**
     * Waits until a position sample settled the session's reads, and then a read is a hit. Until it is settled, a hit
     * settles it with a sample taken later, which may hold a change made since, and rightly refuses an entry older
     * than that (monotonic reads): a session whose next reads must all be hits must start from a settled floor.
     */
    private static void awaitSettledHit(Client client, boolean text) {
        Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
            if (!settled(client)) {
                return false;
            }
            read(client, text);
            return explain(client).contains("answered from cache refreshed");
        });
    }

    /** Whether no read of the session waits for a position sample ({@code EXPLAIN GANTRY ROUTE}: pending none). */
    private static boolean settled(Client client) throws Exception {
        StringBuilder all = new StringBuilder();
        for (byte[] packet : client.wire().query("EXPLAIN GANTRY ROUTE " + JOINED + "1")) {
            all.append(new String(packet, StandardCharsets.ISO_8859_1));
        }
        return all.toString().contains("\u0007pending\u0004none");
    }

    private static String explain(Client client) throws Exception {
        StringBuilder all = new StringBuilder();
        for (byte[] packet : client.wire().query("EXPLAIN LAST STATEMENT")) {
            all.append(new String(packet, StandardCharsets.ISO_8859_1));
        }
        return all.toString();
    }

    private static long refreshes() throws SQLException {
        try (Connection admin = throughGantry("app", "app"); Statement statement = admin.createStatement();
             ResultSet rows = statement.executeQuery("SHOW CACHES")) {
            while (rows.next()) {
                if (rows.getString("name").equals("refreshed")) {
                    return rows.getLong("refreshes");
                }
            }
        }
        throw new AssertionError("no cache refreshed in SHOW CACHES");
    }

    private static String metrics() throws Exception {
        InetSocketAddress address = gantry.metricsAddress().orElseThrow();
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                "http://127.0.0.1:" + address.getPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        return response.body();
    }

    private static DatabaseServer server(String address) {
        return topology.servers().stream().filter(s -> s.address().equals(address)).findFirst()
                .orElseThrow(() -> new AssertionError("no server " + address));
    }

    /**
     * The values of the one row of a text result without CLIENT_DEPRECATE_EOF: column count, definitions, EOF, the
     * row, EOF.
     */
    private static List<String> textRow(List<byte[]> packets) {
        int columns = packets.get(0)[0];
        byte[] row = packets.get(columns + 2);
        List<String> values = new ArrayList<>();
        for (int at = 0; at < row.length; ) {
            int length = row[at] & 0xFF;
            values.add(new String(row, at + 1, length, StandardCharsets.ISO_8859_1));
            at += 1 + length;
        }
        return values;
    }

    /**
     * The binary row of (v BIGINT, origin VARCHAR, ts TIMESTAMP): header, a one-byte NULL bitmap, 8 bytes of v, then
     * origin.
     */
    private static byte[] binaryRowOf(List<byte[]> packets) {
        return packets.get(packets.get(0)[0] + 2);
    }

    private static long binaryValue(List<byte[]> packets) {
        byte[] row = binaryRowOf(packets);
        long value = 0;
        for (int i = 7; i >= 0; i--) {
            value = value << 8 | (row[2 + i] & 0xFF);
        }
        return value;
    }

    private static String binaryOrigin(List<byte[]> packets) {
        byte[] row = binaryRowOf(packets);
        return new String(row, 11, row[10] & 0xFF, StandardCharsets.ISO_8859_1);
    }

    private static void assertSamePackets(List<byte[]> answer, List<byte[]> expected, String protocol) {
        assertThat(answer).as("%s packets", protocol).hasSameSizeAs(expected);
        for (int i = 0; i < expected.size(); i++) {
            assertThat(answer.get(i)).as("%s packet %d", protocol, i).isEqualTo(expected.get(i));
        }
    }
}
