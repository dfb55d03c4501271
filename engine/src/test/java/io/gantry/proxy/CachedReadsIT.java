package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.Gantry;
import io.gantry.TopologyKinds;
import io.gantry.authority.Retention;
import io.gantry.cdc.CdcSettings;
import io.gantry.cdc.CdcTestTable;
import io.gantry.cdc.TableFilter;
import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.UpstreamUrl;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Query caches against real servers (a MariaDB primary and two replicas): hits are the servers' own bytes, text and
 * prepared statements share a cache, the change stream evicts what writes change (written through Gantry or behind
 * its back), a session sees its own write at once, and an account that may not read a table never gets its rows.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CachedReadsIT {

    private Topology topology;
    private Gantry gantry;

    @TempDir
    static Path dataDir;

    /** The servers' kind: MariaDB here, MySQL in {@link CachedReadsMySqlIT}. */
    TopologyKind kind() {
        return TopologyKind.MARIADB;
    }

    @BeforeAll
    void start() throws Exception {
        topology = TopologyKinds.shared(kind());
        ProxyConfig proxy = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0))
                .withConnectTimeout(Duration.ofSeconds(2));
        List<UpstreamUrl> urls = topology.servers().stream()
                .map(s -> new UpstreamUrl(s.host(), s.port(), "app", "app", "app", 50)).toList();
        gantry = Gantry.start(new Gantry.Options(proxy, urls, List.of(), dataDir, Duration.ofSeconds(1),
                Retention.DEFAULT, Set.of(), Optional.of(new CdcSettings(Duration.ofSeconds(1), 1, Optional.empty(),
                1 << 20, TableFilter.allOf("app"), false))));
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> gantry.caches().freshness().live());
    }

    @AfterAll
    void stop() {
        if (gantry != null) {
            gantry.close();
        }
    }

    private Connection throughGantry(String user, String password, String options) throws SQLException {
        return DriverManager.getConnection(jdbcUrl("127.0.0.1:" + gantry.address().getPort(), options), user,
                password);
    }

    /**
     * The MariaDB driver's URL of the app database at {@code address}; on MySQL it may fetch the server's RSA key, as
     * caching_sha2_password needs without TLS.
     */
    private String jdbcUrl(String address, String options) {
        String url = "jdbc:mariadb://" + address + "/app" + options;
        return kind() == TopologyKind.MARIADB ? url : url + (options.isEmpty() ? "?" : "&") + "allowPublicKeyRetrieval=true";
    }

    private Connection throughGantry() throws SQLException {
        return throughGantry("app", "app", "");
    }

    private static String lastStatementDestination(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("EXPLAIN LAST STATEMENT")) {
            rows.next();
            return rows.getString(1);
        }
    }

    private static Map<String, String> showCache(Connection admin, String name) throws SQLException {
        try (Statement statement = admin.createStatement(); ResultSet rows = statement.executeQuery("SHOW CACHES")) {
            while (rows.next()) {
                if (rows.getString("name").equals(name)) {
                    Map<String, String> row = new ConcurrentHashMap<>();
                    for (int i = 1; i <= rows.getMetaData().getColumnCount(); i++) {
                        row.put(rows.getMetaData().getColumnLabel(i), rows.getString(i));
                    }
                    return row;
                }
            }
        }
        throw new AssertionError("no cache " + name + " in SHOW CACHES");
    }

    private GtidSet gtid(String text) {
        return GtidSet.parse(text, kind() == TopologyKind.MARIADB ? Flavour.MARIADB : Flavour.MYSQL);
    }

    /**
     * GTIDs that hold the write {@code writer} just committed: MariaDB reports the write's own ({@code @@last_gtid});
     * on MySQL, the primary's executed set read right after it, a superset, so that a stream position holding it
     * holds the write too.
     */
    private String gtidsOfLastWrite(Statement writer, Statement primary) throws SQLException {
        try (ResultSet last = kind() == TopologyKind.MARIADB ? writer.executeQuery("SELECT @@last_gtid")
                : primary.executeQuery("SELECT @@GLOBAL.gtid_executed")) {
            last.next();
            return last.getString(1);
        }
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void textAndPreparedReadsHitOneCacheWithTheServersOwnBytes() throws Exception {
        String table = "cached_types";
        try (Connection root = topology.connectAsApp(topology.primary())) {
            execute(root, "SET sql_mode = 'NO_ENGINE_SUBSTITUTION'"); // the zero dates of the test rows
            execute(root, "DROP TABLE IF EXISTS " + table);
            execute(root, "CREATE TABLE " + table + " (" + CdcTestTable.COLUMNS + ")");
            for (String insert : CdcTestTable.INSERTS) {
                execute(root, String.format(insert, table));
            }
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        try (Connection admin = throughGantry()) {
            execute(admin, "CREATE CACHE types FROM SELECT * FROM " + table + " WHERE id = ?");
        }
        int capabilities = WireClient.BASE_CAPABILITIES;
        try (WireClient direct = WireClient.login(topology.replicas().get(0).port(), "app", "app", "app",
                capabilities);
             WireClient proxied = WireClient.login(gantry.address().getPort(), "app", "app", "app", capabilities)) {
            for (int id = 1; id <= 4; id++) {
                String sql = "SELECT * FROM " + table + " WHERE id = " + id;
                List<byte[]> expected = direct.query(sql);
                Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
                    List<byte[]> answer = proxied.query(sql);
                    assertSamePackets(answer, expected, sql);
                    return text(proxied.query("EXPLAIN LAST STATEMENT")).contains("answered from cache types");
                });
                assertSamePackets(proxied.query(sql), expected, sql + " (a hit)");
            }
        }
        try (Connection admin = throughGantry();
             Connection prepared = throughGantry("app", "app", "?useServerPrepStmts=true");
             Connection direct = DriverManager.getConnection(
                     jdbcUrl(topology.replicas().get(0).address(), "?useServerPrepStmts=true"), "app", "app")) {
            long hitsBefore = Long.parseLong(showCache(admin, "types").get("hits"));
            for (int id = 1; id <= 4; id++) {
                List<String> expected = binaryRow(direct, table, id);
                int row = id;
                Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
                    assertThat(binaryRow(prepared, table, row)).as("row %d through Gantry", row)
                            .isEqualTo(expected);
                    return lastStatementDestination(prepared).equals("cache");
                });
            }
            assertThat(Long.parseLong(showCache(admin, "types").get("hits"))).isGreaterThan(hitsBefore + 3);
            assertThat(showCache(admin, "types").get("eviction")).isEqualTo("key id");
            execute(admin, "DROP CACHE types");
        }
    }

    /**
     * A cache made in one statement from the shape {@code SHOW GANTRY QUERIES} shows, whose lists after {@code IN}
     * are collapsed, serves lists of every length, text and prepared, and never serves one text's rows for another
     * of the same shape and values: {@code a IN (1, 2) AND b IN (2)} and {@code a IN (1) AND b IN (2, 2)}.
     */
    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aCacheMadeFromADigestShapeServesInListsOfEveryLengthAndTellsThemApart() throws Exception {
        try (Connection root = topology.connectAsApp(topology.primary())) {
            execute(root, "DROP TABLE IF EXISTS cached_in");
            execute(root, "CREATE TABLE cached_in (id INT PRIMARY KEY, a INT, b INT, v VARCHAR(10))");
            execute(root, "INSERT INTO cached_in VALUES (1, 1, 1, 'one'), (2, 2, 2, 'two'), (3, 3, 3, 'three'), "
                    + "(4, 1, 2, 'four'), (5, 2, 1, 'five')");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        List<String> texts = List.of(
                "SELECT v FROM cached_in WHERE a IN (1, 2) AND b IN (2)",
                "SELECT v FROM cached_in WHERE a IN (1) AND b IN (2, 2)",
                "SELECT v FROM cached_in WHERE a IN (1, 2, 3) AND b IN (1, 2, 3)",
                "SELECT v FROM cached_in WHERE a IN (3) AND b IN (3)");
        try (Connection admin = throughGantry();
             Connection direct = DriverManager.getConnection(jdbcUrl(topology.replicas().get(0).address(), ""),
                     "app", "app")) {
            execute(admin, texts.get(0));
            String shape;
            try (Statement statement = admin.createStatement();
                 ResultSet rows = statement.executeQuery("SHOW GANTRY QUERIES")) {
                List<String> shapes = new ArrayList<>();
                while (rows.next()) {
                    shapes.add(rows.getString("Query"));
                }
                shape = shapes.stream().filter(query -> query.contains("cached_in")).findFirst().orElseThrow();
            }
            assertThat(shape).isEqualTo("SELECT v FROM cached_in WHERE a IN ( ? ) AND b IN ( ? )");
            execute(admin, "CREATE CACHE in_lists FROM " + shape);
            for (int round = 0; round < 3; round++) {
                for (String text : texts) {
                    List<String> expected = sortedValues(direct, text);
                    Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
                        assertThat(sortedValues(admin, text)).as(text).isEqualTo(expected);
                        return lastStatementDestination(admin).equals("cache");
                    });
                }
            }
        }
        try (Connection admin = throughGantry();
             Connection prepared = throughGantry("app", "app", "?useServerPrepStmts=true");
             PreparedStatement twoThenOne = prepared.prepareStatement(
                     "SELECT v FROM cached_in WHERE a IN (?, ?) AND b IN (?)");
             PreparedStatement oneThenTwo = prepared.prepareStatement(
                     "SELECT v FROM cached_in WHERE a IN (?) AND b IN (?, ?)")) {
            long hitsBefore = Long.parseLong(showCache(admin, "in_lists").get("hits"));
            for (PreparedStatement select : List.of(twoThenOne, oneThenTwo)) {
                select.setInt(1, 1);
                select.setInt(2, 2);
                select.setInt(3, 2);
            }
            for (int round = 0; round < 3; round++) {
                for (PreparedStatement select : List.of(twoThenOne, oneThenTwo)) {
                    List<String> expected = select == twoThenOne ? List.of("four", "two") : List.of("four");
                    Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
                        assertThat(sortedValues(select)).isEqualTo(expected);
                        return lastStatementDestination(prepared).equals("cache");
                    });
                }
            }
            assertThat(Long.parseLong(showCache(admin, "in_lists").get("hits"))).isGreaterThanOrEqualTo(hitsBefore + 6);
            execute(admin, "DROP CACHE in_lists");
        }
    }

    private static List<String> sortedValues(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
            return sortedValues(rows);
        }
    }

    private static List<String> sortedValues(PreparedStatement select) throws SQLException {
        try (ResultSet rows = select.executeQuery()) {
            return sortedValues(rows);
        }
    }

    private static List<String> sortedValues(ResultSet rows) throws SQLException {
        List<String> values = new ArrayList<>();
        while (rows.next()) {
            values.add(rows.getString(1));
        }
        values.sort(null);
        return values;
    }

    /** A row read with the binary protocol, each value as the driver decodes it to text. */
    private static List<String> binaryRow(Connection connection, String table, int id) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement("SELECT * FROM " + table + " WHERE id = ?")) {
            select.setInt(1, id);
            try (ResultSet rows = select.executeQuery()) {
                assertThat(rows.next()).isTrue();
                List<String> values = new ArrayList<>();
                for (int i = 1; i <= rows.getMetaData().getColumnCount(); i++) {
                    values.add(rows.getString(i));
                }
                return values;
            }
        }
    }

    private static void assertSamePackets(List<byte[]> answer, List<byte[]> expected, String sql) {
        assertThat(answer).as("packets of %s", sql).hasSameSizeAs(expected);
        for (int i = 0; i < expected.size(); i++) {
            assertThat(answer.get(i)).as("packet %d of %s", i, sql).isEqualTo(expected.get(i));
        }
    }

    private static String text(List<byte[]> packets) {
        StringBuilder all = new StringBuilder();
        for (byte[] packet : packets) {
            all.append(new String(packet, StandardCharsets.ISO_8859_1));
        }
        return all.toString();
    }

    /**
     * The differential test: writers change rows directly on the primary (behind Gantry's back) and through Gantry,
     * while readers read them through Gantry, mostly from the cache. Values of a row only grow, so a read that
     * returns less than a write the change stream had applied when the read began is a stale read.
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void noCachedReadIsOlderThanTheStreamsPositionAndASessionSeesItsOwnWrite() throws Exception {
        int rows = 100;
        try (Connection root = topology.connectAsApp(topology.primary())) {
            execute(root, "DROP TABLE IF EXISTS cached_kv");
            execute(root, "CREATE TABLE cached_kv (id INT PRIMARY KEY, v BIGINT NOT NULL)");
            for (int id = 0; id < rows; id++) {
                execute(root, "INSERT INTO cached_kv VALUES (" + id + ", 0)");
            }
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        try (Connection admin = throughGantry()) {
            execute(admin, "CREATE CACHE kv FROM SELECT v FROM cached_kv WHERE id = ?");
        }
        /** For each row, its writes in order: value and GTID. */
        Map<Integer, List<long[]>> written = new ConcurrentHashMap<>();
        Map<Integer, List<String>> gtids = new ConcurrentHashMap<>();
        for (int id = 0; id < rows; id++) {
            written.put(id, java.util.Collections.synchronizedList(new ArrayList<>()));
            gtids.put(id, java.util.Collections.synchronizedList(new ArrayList<>()));
        }
        List<String> stale = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicLong counter = new AtomicLong();
        AtomicLong reads = new AtomicLong();
        AtomicLong hits = new AtomicLong();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        ExecutorService pool = Executors.newFixedThreadPool(5);
        List<Future<?>> work = new ArrayList<>();
        // Odd rows are written directly on the primary, even rows through Gantry, each by one writer in order.
        for (int parity = 0; parity < 2; parity++) {
            boolean direct = parity == 1;
            work.add(pool.submit(() -> {
                try (Connection writer = direct ? topology.connectAsApp(topology.primary()) : throughGantry();
                     Statement statement = writer.createStatement();
                     Connection primary = topology.connectAsApp(topology.primary());
                     Statement onPrimary = primary.createStatement()) {
                    while (System.nanoTime() < until) {
                        int id = ThreadLocalRandom.current().nextInt(rows / 2) * 2 + (direct ? 1 : 0);
                        long value = counter.incrementAndGet();
                        statement.executeUpdate("UPDATE cached_kv SET v = " + value + " WHERE id = " + id);
                        String gtid = gtidsOfLastWrite(statement, onPrimary);
                        written.get(id).add(new long[] {value});
                        gtids.get(id).add(gtid);
                        if (!direct) {
                            long seen;
                            try (ResultSet own = statement.executeQuery("SELECT v FROM cached_kv WHERE id = " + id)) {
                                own.next();
                                seen = own.getLong(1);
                            }
                            if (seen != value) {
                                stale.add("row " + id + ": the session that wrote " + value + " read " + seen + " ("
                                        + lastStatementDestination(writer) + ")");
                            }
                        }
                        Thread.sleep(ThreadLocalRandom.current().nextInt(20));
                    }
                }
                return null;
            }));
        }
        for (int reader = 0; reader < 3; reader++) {
            work.add(pool.submit(() -> {
                try (Connection connection = throughGantry(); Statement statement = connection.createStatement()) {
                    while (System.nanoTime() < until) {
                        int id = ThreadLocalRandom.current().nextInt(rows);
                        long applied = appliedValue(written.get(id), gtids.get(id));
                        long value;
                        try (ResultSet row = statement.executeQuery("SELECT v FROM cached_kv WHERE id = " + id)) {
                            row.next();
                            value = row.getLong(1);
                        }
                        // Reads a replica answers may lag the stream (within the read guarantees); hits may not.
                        if (lastStatementDestination(connection).equals("cache")) {
                            hits.incrementAndGet();
                            if (value < applied) {
                                stale.add("row " + id + ": a hit read " + value + " after the stream applied "
                                        + applied);
                            }
                        }
                        reads.incrementAndGet();
                    }
                }
                return null;
            }));
        }
        for (Future<?> done : work) {
            done.get(2, TimeUnit.MINUTES);
        }
        pool.shutdown();
        assertThat(stale).isEmpty();
        try (Connection admin = throughGantry()) {
            Map<String, String> cache = showCache(admin, "kv");
            assertThat(hits.get()).as("hits of %d reads (SHOW CACHES: %s)", reads.get(), cache).isGreaterThan(100);
            assertThat(Long.parseLong(cache.get("hits"))).isGreaterThanOrEqualTo(hits.get());
            assertThat(Long.parseLong(cache.get("evicted_by_change"))).isGreaterThan(0);
            try (Statement statement = admin.createStatement();
                 ResultSet proxied = statement.executeQuery("SHOW PROXIED QUERIES")) {
                boolean seen = false;
                while (proxied.next()) {
                    if (proxied.getString("query").equals("SELECT v FROM cached_kv WHERE id = ?")) {
                        seen = true;
                        assertThat(proxied.getString("cacheable")).isEqualTo("yes");
                        assertThat(proxied.getString("cache")).isEqualTo("kv");
                        assertThat(proxied.getLong("count")).isPositive();
                        assertThat(proxied.getLong("p99_us")).isGreaterThanOrEqualTo(proxied.getLong("p50_us"));
                    }
                }
                assertThat(seen).as("the misses of cache kv in SHOW PROXIED QUERIES").isTrue();
            }
            execute(admin, "DROP CACHE kv");
        }
    }

    /** The newest value written to a row whose GTID the change stream has applied (and evicted for), or 0. */
    private long appliedValue(List<long[]> values, List<String> gtids) {
        GtidSet applied = gantry.caches().streamPosition();
        long newest = 0;
        synchronized (values) {
            for (int i = 0; i < Math.min(values.size(), gtids.size()); i++) {
                if (applied != null && applied.contains(gtid(gtids.get(i)))) {
                    newest = Math.max(newest, values.get(i)[0]);
                }
            }
        }
        return newest;
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void anAccountWithoutSelectNeverGetsACachedRow() throws Exception {
        try (Connection root = topology.connectAsAdmin(topology.primary())) {
            execute(root, "DROP TABLE IF EXISTS app.cached_secret");
            execute(root, "CREATE TABLE app.cached_secret (id INT PRIMARY KEY, secret VARCHAR(20))");
            execute(root, "INSERT INTO app.cached_secret VALUES (1, 'hidden')");
            execute(root, "CREATE USER IF NOT EXISTS 'cache_outsider'@'%' IDENTIFIED BY 'outsider'");
            execute(root, "GRANT SELECT ON app.cached_kv TO 'cache_outsider'@'%'");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        try (Connection admin = throughGantry()) {
            execute(admin, "CREATE CACHE secret FROM SELECT secret FROM cached_secret WHERE id = ?");
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> {
                try (Statement statement = admin.createStatement();
                     ResultSet rows = statement.executeQuery("SELECT secret FROM cached_secret WHERE id = 1")) {
                    rows.next();
                    assertThat(rows.getString(1)).isEqualTo("hidden");
                }
                return lastStatementDestination(admin).equals("cache");
            });
        }
        SQLException directly;
        try (Connection direct = DriverManager.getConnection(topology.jdbcUrl(topology.primary()), "cache_outsider",
                "outsider"); Statement statement = direct.createStatement()) {
            directly = org.junit.jupiter.api.Assertions.assertThrows(SQLException.class,
                    () -> statement.executeQuery("SELECT secret FROM cached_secret WHERE id = 1"));
        }
        try (Connection outsider = throughGantry("cache_outsider", "outsider", "");
             Statement statement = outsider.createStatement()) {
            for (int i = 0; i < 5; i++) {
                assertThatThrownBy(() -> statement.executeQuery("SELECT secret FROM cached_secret WHERE id = 1"))
                        .isInstanceOfSatisfying(SQLException.class, e -> {
                            assertThat(e.getErrorCode()).isEqualTo(directly.getErrorCode());
                            assertThat(e.getSQLState()).isEqualTo(directly.getSQLState());
                        });
            }
        }
        try (Connection admin = throughGantry()) {
            execute(admin, "DROP CACHE secret");
        }
    }

    /**
     * A REVOKE on the primary reaches the caches through the change stream: the account's next read goes to a
     * server (and gets the server's refusal) at once, not after the 10 s re-check.
     */
    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aRevokeSeenInTheChangeStreamEndsTheAccountsCachedReads() throws Exception {
        try (Connection root = topology.connectAsAdmin(topology.primary())) {
            execute(root, "DROP TABLE IF EXISTS app.cached_granted");
            execute(root, "CREATE TABLE app.cached_granted (id INT PRIMARY KEY, note VARCHAR(20))");
            execute(root, "INSERT INTO app.cached_granted VALUES (1, 'granted')");
            execute(root, "DROP USER IF EXISTS 'cache_reader'@'%'");
            execute(root, "CREATE USER 'cache_reader'@'%' IDENTIFIED BY 'reader'");
            execute(root, "GRANT SELECT ON app.cached_granted TO 'cache_reader'@'%'");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        String query = "SELECT note FROM cached_granted WHERE id = 1";
        try (Connection admin = throughGantry();
             Connection reader = throughGantry("cache_reader", "reader", "");
             Statement statement = reader.createStatement()) {
            execute(admin, "CREATE CACHE granted FROM SELECT note FROM cached_granted WHERE id = ?");
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> {
                try (ResultSet rows = statement.executeQuery(query)) {
                    rows.next();
                    assertThat(rows.getString(1)).isEqualTo("granted");
                }
                return lastStatementDestination(reader).equals("cache");
            });
            long revoked;
            try (Connection root = topology.connectAsAdmin(topology.primary())) {
                execute(root, "REVOKE SELECT ON app.cached_granted FROM 'cache_reader'@'%'");
                revoked = System.nanoTime();
            }
            topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
            Awaitility.await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20)).until(() -> {
                try (ResultSet rows = statement.executeQuery(query)) {
                    return false;
                } catch (SQLException refused) {
                    assertThat(refused.getErrorCode()).isEqualTo(1142); // SELECT command denied
                    return true;
                }
            });
            assertThat(Duration.ofNanos(System.nanoTime() - revoked))
                    .as("refused well before the 10 s re-check").isLessThan(Duration.ofSeconds(5));
            execute(admin, "DROP CACHE granted");
        }
    }

    @Test
    void uncacheableQueriesAreRefusedWithTheReason() throws Exception {
        try (Connection admin = throughGantry(); Statement statement = admin.createStatement()) {
            assertThatThrownBy(() -> statement.execute("CREATE CACHE FROM SELECT v FROM cached_kv WHERE id = 1 "
                    + "FOR UPDATE")).hasMessageContaining("it locks rows");
            assertThatThrownBy(() -> statement.execute("CREATE CACHE FROM SELECT NOW(), v FROM cached_kv"))
                    .hasMessageContaining("NOW()");
            assertThatThrownBy(() -> statement.execute("CREATE CACHE FROM SELECT * FROM no_such_table"))
                    .hasMessageContaining("does not exist");
        }
    }
}
