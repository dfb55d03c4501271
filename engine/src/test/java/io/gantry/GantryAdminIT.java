package io.gantry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.authority.Retention;
import io.gantry.cdc.CdcSettings;
import io.gantry.cdc.TableFilter;
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
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The whole engine: the Authority, the lists it keeps, and the admin SQL on the proxy port. */
class GantryAdminIT {

    private static Topology topology;

    @TempDir
    Path dataDir;

    @BeforeAll
    static void topology() {
        topology = Sandboxes.shared(TopologyKind.MARIADB);
    }

    @Test
    void showGantryPoolsCountsTheSharedConnections() throws Exception {
        try (Gantry gantry = Gantry.start(options(urls(), Set.of(), ReadBalance.SESSION));
             Connection admin = connect(gantry)) {
            for (int i = 0; i < 3; i++) {
                try (Connection session = connect(gantry)) {
                    rows(session, "SELECT 1");
                }
            }
            // Each session that ended left its connection to the pool for the next one.
            List<Map<String, String>> pools = rows(admin, "SHOW GANTRY POOLS");
            assertThat(columns(admin, "SHOW GANTRY POOLS")).containsExactly("Server", "User", "Server_connections",
                    "Cap", "Waiting", "Idle", "Created", "Reused", "Reuse_ratio", "Closed_idle", "Waited",
                    "Wait_p99_ms");
            assertThat(pools).anySatisfy(pool -> {
                assertThat(pool.get("SERVER")).isEqualTo(topology.primary().address());
                assertThat(Long.parseLong(pool.get("REUSED"))).isGreaterThanOrEqualTo(1);
                assertThat(Long.parseLong(pool.get("SERVER_CONNECTIONS"))).isPositive();
                assertThat(Double.parseDouble(pool.get("WAIT_P99_MS"))).as("no cap reached").isZero();
            });
        }
    }

    @Test
    void upstreamServersIsOrdinarySqlOverLiveState() throws Exception {
        try (Gantry gantry = Gantry.start(options(urls(), Set.of(), ReadBalance.SESSION));
             Connection admin = connect(gantry)) {
            List<Map<String, String>> all = rows(admin, "SELECT * FROM gantry.upstream_servers");
            assertThat(all).hasSize(3);
            assertThat(columns(admin, "SELECT * FROM gantry.upstream_servers")).containsExactly("host", "port",
                    "database", "user", "weight", "purpose", "active_cdc", "health", "down_since", "last_ok",
                    "connections", "role", "lag_ms", "rtt_ms", "connect_ms", "rtt_smoothed_ms");
            List<Map<String, String>> replicas = rows(admin, "SELECT host, port, role FROM gantry.upstream_servers "
                    + "WHERE role = 'replica' ORDER BY port DESC LIMIT 1");
            assertThat(replicas).singleElement().satisfies(r -> assertThat(r.get("ROLE")).isEqualTo("replica"));
            assertThat(rows(admin, "SELECT COUNT(*) AS n FROM gantry.upstream_servers WHERE health = 'up'"))
                    .singleElement().satisfies(r -> assertThat(r.get("N")).isEqualTo("3"));
            assertThat(rows(admin, "SELECT * FROM gantry.events")).anySatisfy(
                    e -> assertThat(e.get("KIND")).isEqualTo("startup"));
            assertThatThrownBy(() -> {
                try (Statement statement = admin.createStatement()) {
                    statement.execute("DELETE FROM gantry.events");
                }
            })
                    .as("the gantry tables are read only, not missing")
                    .isInstanceOfSatisfying(SQLException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(1036);
                        assertThat(e.getMessage()).contains("The gantry tables are read only (DELETE refused)");
                    });
            assertThat(rows(admin, "SELECT * FROM gantry.events")).as("nothing was deleted").anySatisfy(
                    e -> assertThat(e.get("KIND")).isEqualTo("startup"));
        }
    }

    @Test
    void showGantryStatusHasOneRowPerItemIncludingTheCdcServer() throws Exception {
        try (Gantry gantry = Gantry.start(options(urls(), Set.of(), ReadBalance.SESSION));
             Connection admin = connect(gantry)) {
            Map<String, String> status = new LinkedHashMap<>();
            for (Map<String, String> row : rows(admin, "SHOW GANTRY STATUS")) {
                status.put(row.get("Variable_name"), row.get("Value"));
            }
            assertThat(status).containsKeys("Listening", "Primary", "Upstream Servers", "CDC Server");
            assertThat(status.get("Primary")).isEqualTo(topology.primary().address());
        }
    }

    @Test
    void weightsChangeTheShareOfReads() throws Exception {
        DatabaseServer heavy = topology.replicas().get(0);
        DatabaseServer light = topology.replicas().get(1);
        try (Gantry gantry = Gantry.start(options(urls(), Set.of(), ReadBalance.STATEMENT));
             Connection session = connect(gantry)) {
            execute(session, "ALTER GANTRY SET WEIGHT '" + heavy.address() + "' TO 80");
            execute(session, "ALTER GANTRY SET WEIGHT '" + light.address() + "' TO 20");
            int onHeavy = 0;
            int reads = 1_000;
            try (Statement statement = session.createStatement()) {
                for (int i = 0; i < reads; i++) {
                    // Monotonic reads keep the session on the replica it just read from until that replica is
                    // sampled again: only then is the next read a new weighted pick (under load that takes longer
                    // than any fixed pause, and reads kept on one replica would skew the share).
                    awaitNothingPending(statement);
                    try (ResultSet rows = statement.executeQuery("SELECT @@server_id")) {
                        rows.next();
                        if (rows.getInt(1) == heavy.port()) {
                            onHeavy++;
                        }
                    }
                }
            }
            System.out.printf("GantryAdminIT: %d of %d reads on the weight-80 replica%n", onHeavy, reads);
            // 80 % expected; with 1 000 picks the share stays within 4 standard deviations (1.3 % each) of it.
            assertThat(onHeavy / (double) reads).isBetween(0.75, 0.85);
            assertThat(rows(session, "SELECT weight FROM gantry.upstream_servers WHERE port = " + heavy.port()))
                    .singleElement().satisfies(r -> assertThat(r.get("WEIGHT")).isEqualTo("80"));
            assertThat(rows(session, "SELECT reason FROM gantry.events WHERE kind = 'weight_changed' AND server = '"
                    + heavy.address() + "'")).isNotEmpty();
            assertThatThrownBy(() -> execute(session, "ALTER GANTRY SET WEIGHT '" + heavy.address() + "' TO 101"))
                    .isInstanceOf(SQLException.class).hasMessageContaining("1..100");
        }
    }

    @Test
    void rejectedListChangeKeepsTheOldListAndAGoodOneReplacesIt() throws Exception {
        try (Gantry gantry = Gantry.start(options(urls(), Set.of(), ReadBalance.SESSION));
             Connection admin = connect(gantry)) {
            DatabaseServer primary = topology.primary();
            assertThatThrownBy(() -> execute(admin, "ALTER GANTRY CHANGE UPSTREAM TO 'mysql://app:app@"
                    + primary.address() + "/nowhere'"))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("the old one stays").hasMessageContaining("'nowhere' does not exist");
            assertThat(rows(admin, "SELECT * FROM gantry.upstream_servers")).hasSize(3);

            DatabaseServer replica = topology.replicas().get(0);
            execute(admin, "ALTER GANTRY CHANGE UPSTREAM TO 'mysql://app:app@" + primary.address() + "/app,"
                    + "mysql://app:app@" + replica.address() + "/app|70'");
            assertThat(rows(admin, "SELECT port, weight FROM gantry.upstream_servers WHERE purpose LIKE '%proxy%'"))
                    .extracting(r -> r.get("PORT") + "|" + r.get("WEIGHT"))
                    .containsExactlyInAnyOrder(primary.port() + "|50", replica.port() + "|70");
            // The CDC list did not change: the server that left the proxy list is still there, for CDC only.
            assertThat(rows(admin, "SELECT purpose FROM gantry.upstream_servers WHERE port = "
                    + topology.replicas().get(1).port())).singleElement()
                    .satisfies(r -> assertThat(r.get("PURPOSE")).isEqualTo("cdc"));
            // First start stored the proxy and CDC lists; the refused ALTER left no trace; the accepted one did.
            assertThat(rows(admin, "SELECT reason FROM gantry.events WHERE kind = 'list_changed' ORDER BY id"))
                    .extracting(r -> r.get("REASON"))
                    .satisfiesExactly(
                            first -> assertThat(first).startsWith("first start"),
                            second -> assertThat(second).startsWith("first start"),
                            third -> assertThat(third).startsWith("ALTER GANTRY CHANGE UPSTREAM by 'app'"));
        }
    }

    @Test
    void changingTheUpstreamListLeavesNoMomentWithoutAPrimary() throws Exception {
        String same = String.join(",", topology.servers().stream()
                .map(s -> "mysql://app:app@" + s.address() + "/app").toList());
        // The same servers with another service account: every entry is new to the live list.
        String otherAccount = String.join(",", topology.servers().stream()
                .map(s -> "mysql://gantry_svc:svc@" + s.address() + "/app").toList());
        String withoutReplicas = "mysql://app:app@" + topology.primary().address() + "/app";
        try (Connection root = topology.connectAsAdmin(topology.primary())) {
            execute(root, "CREATE USER IF NOT EXISTS gantry_svc@'%' IDENTIFIED BY 'svc'");
            execute(root, "GRANT ALL PRIVILEGES ON *.* TO gantry_svc@'%'");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        try (Gantry gantry = Gantry.start(options(urls(), Set.of(), ReadBalance.SESSION));
             Connection admin = connect(gantry)) {
            execute(admin, "CREATE TABLE IF NOT EXISTS change_window (id INT AUTO_INCREMENT PRIMARY KEY)");
            // The same list, the same servers as another account, a shorter list, and the full one back (two
            // servers new to the live list): right after each, a new client logs in and writes.
            for (String list : List.of(same, otherAccount, withoutReplicas, same)) {
                execute(admin, "ALTER GANTRY CHANGE UPSTREAM TO '" + list + "'");
                try (Connection fresh = connect(gantry)) {
                    execute(fresh, "INSERT INTO change_window VALUES ()");
                }
                assertThat(gantry.upstreams().primary()).as("primary right after the change to " + list.replace(
                        ":svc@", ":***@").replace(":app@", ":***@"))
                        .isPresent();
            }
            // The servers new to the list had their roles checked as part of the change.
            assertThat(rows(admin, "SELECT role FROM gantry.upstream_servers ORDER BY port"))
                    .extracting(r -> r.get("ROLE")).doesNotContain("unknown");
        }
    }

    @Test
    void theListSurvivesARestartAndTheFlagsAreThenIgnored() throws Exception {
        try (Gantry first = Gantry.start(options(urls(), Set.of(), ReadBalance.SESSION))) {
            assertThat(first.upstreams().servers()).hasSize(3);
        }
        // Second start with only the primary on the command line: the stored list of three wins.
        try (Gantry second = Gantry.start(options(urls().subList(0, 1), Set.of(), ReadBalance.SESSION));
             Connection admin = connect(second)) {
            assertThat(second.upstreams().servers()).hasSize(3);
            assertThat(rows(admin, "SELECT * FROM gantry.upstream_servers")).hasSize(3);
        }
    }

    @Test
    void accountsOutsideAdminUsersAreRefused() throws Exception {
        try (Gantry gantry = Gantry.start(options(urls(), Set.of("dba"), ReadBalance.SESSION));
             Connection session = connect(gantry)) {
            assertThatThrownBy(() -> rows(session, "SELECT * FROM gantry.events"))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("Access denied")
                    .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1227));
            assertThatThrownBy(() -> execute(session, "SHOW GANTRY STATUS")).hasMessageContaining("Access denied");
            // Ordinary statements still work.
            assertThat(rows(session, "SELECT 1 AS one")).hasSize(1);
        }
    }

    @Test
    void changeStreamIsVisibleAndStopsAndStartsThroughSql() throws Exception {
        Gantry.Options base = options(urls(), Set.of(), ReadBalance.SESSION);
        Gantry.Options withCdc = new Gantry.Options(base.proxy(), base.upstreamFlags(), base.cdcFlags(),
                base.dataDir(), base.healthInterval(), base.retention(), base.adminUsers(),
                Optional.of(new CdcSettings(Duration.ofSeconds(1), 1, Optional.empty(), 1 << 20,
                        TableFilter.allOf("app"), false)));
        try (Gantry gantry = Gantry.start(withCdc); Connection admin = connect(gantry)) {
            waitFor(() -> status(admin).get("CDC Status").equals("streaming"));
            Map<String, String> status = status(admin);
            String server = topology.primary().address(); // all weights are equal: the first of the list
            assertThat(status.get("CDC Server")).isEqualTo(server);
            // Two DDL statements on the primary: the position moves past both (it may start empty).
            execute(admin, "CREATE TABLE gantry_admin_cdc_probe (id INT)");
            execute(admin, "DROP TABLE gantry_admin_cdc_probe");
            String primaryPosition = single(topology.primary(), "SELECT @@GLOBAL.gtid_binlog_pos");
            waitFor(() -> status(admin).get("CDC Position").equals(primaryPosition));
            assertThat(status.get("Snapshot Status")).startsWith("none (no change sink");
            assertThat(status.get("Last CDC Error")).isEqualTo("none");
            assertThat(Double.parseDouble(status.get("CDC Events/s"))).isGreaterThanOrEqualTo(0);
            assertThat(rows(admin, "SELECT host, port FROM gantry.upstream_servers WHERE active_cdc"))
                    .singleElement().satisfies(r -> assertThat(r.get("HOST") + ":" + r.get("PORT")).isEqualTo(server));

            // Caught up, the stream's lag is 0; stopped while the primary commits, it grows; started, back to 0.
            waitFor(() -> status(admin).get("CDC Lag ms").equals("0"));
            execute(admin, "STOP GANTRY REPLICATION");
            waitFor(() -> status(admin).get("CDC Status").equals("stopped"));
            assertThat(status(admin).get("CDC Server")).isEqualTo("none");
            assertThat(rows(admin, "SELECT host FROM gantry.upstream_servers WHERE active_cdc")).isEmpty();
            execute(admin, "CREATE TABLE gantry_admin_cdc_lag_probe (id INT)");
            waitFor(() -> Long.parseLong(status(admin).get("CDC Lag ms")) > 200);
            execute(admin, "DROP TABLE gantry_admin_cdc_lag_probe");
            execute(admin, "START GANTRY REPLICATION");
            waitFor(() -> status(admin).get("CDC Status").equals("streaming"));
            waitFor(() -> status(admin).get("CDC Lag ms").equals("0"));
            assertThat(rows(admin, "SELECT kind FROM gantry.events WHERE kind LIKE 'cdc%' ORDER BY id"))
                    .extracting(r -> r.get("KIND")).containsExactly("cdc_started", "cdc_stopped", "cdc_started");

            // A CDC list without the current server: the stream moves to the new list's best server.
            DatabaseServer replica = topology.replicas().get(0);
            execute(admin, "ALTER GANTRY CHANGE CDC TO 'mysql://app:app@" + replica.address() + "/app|70'");
            waitFor(() -> status(admin).get("CDC Server").equals(replica.address()));
            assertThat(rows(admin, "SELECT reason FROM gantry.events WHERE kind = 'cdc_moved'")).singleElement()
                    .satisfies(r -> assertThat(r.get("REASON")).contains("removed " + server)
                            .contains("to " + replica.address()));
            assertThat(status(admin).get("CDC Servers")).isEqualTo(replica.address() + "|70");
        }
    }

    private static String single(DatabaseServer server, String sql) throws SQLException {
        try (Connection connection = topology.connectAsApp(server); Statement statement = connection.createStatement();
             ResultSet row = statement.executeQuery(sql)) {
            row.next();
            return row.getString(1);
        }
    }

    @Test
    void changeStreamStartsOnTheBestServerTheHealthChecksFoundUp() throws Exception {
        try (Topology own = Sandboxes.startPrivate(TopologyKind.MARIADB, "admin-cdc-down", 1)) {
            DatabaseServer replica = own.replicas().get(0);
            own.kill(replica);
            List<UpstreamUrl> urls = List.of(
                    new UpstreamUrl(own.primary().host(), own.primary().port(), "app", "app", "app", 10),
                    new UpstreamUrl(replica.host(), replica.port(), "app", "app", "app", 90));
            Gantry.Options base = options(urls, Set.of(), ReadBalance.SESSION);
            Gantry.Options withCdc = new Gantry.Options(base.proxy(), urls, List.of(), base.dataDir(),
                    base.healthInterval(), base.retention(), base.adminUsers(), Optional.of(new CdcSettings(
                    Duration.ofSeconds(1), 1, Optional.empty(), 1 << 20, TableFilter.allOf("app"), false)));
            try (Gantry gantry = Gantry.start(withCdc); Connection admin = connect(gantry)) {
                waitFor(() -> status(admin).get("CDC Status").equals("streaming"));
                assertThat(status(admin).get("CDC Server")).isEqualTo(own.primary().address());
                assertThat(status(admin).get("Last CDC Error")).as("no attempt on the server known down")
                        .isEqualTo("none");
            }
        }
    }

    private static Map<String, String> status(Connection admin) {
        try {
            Map<String, String> status = new LinkedHashMap<>();
            for (Map<String, String> row : rows(admin, "SHOW GANTRY STATUS")) {
                status.put(row.get("Variable_name"), row.get("Value"));
            }
            return status;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("condition met within 30 s").isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    private Gantry.Options options(List<UpstreamUrl> urls, Set<String> adminUsers, ReadBalance balance) {
        ProxyConfig proxy = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0))
                .withConnectTimeout(Duration.ofSeconds(2))
                .withRouting(new RoutingConfig(false, 0, balance, true));
        return new Gantry.Options(proxy, urls, List.of(), dataDir, Duration.ofSeconds(1), Retention.DEFAULT,
                adminUsers, Optional.empty());
    }

    private static List<UpstreamUrl> urls() {
        return topology.servers().stream()
                .map(s -> new UpstreamUrl(s.host(), s.port(), "app", "app", "app", 50)).toList();
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

    private static List<String> columns(Connection connection, String sql) throws SQLException {
        List<String> names = new ArrayList<>();
        try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            ResultSetMetaData meta = result.getMetaData();
            for (int i = 1; i <= meta.getColumnCount(); i++) {
                names.add(meta.getColumnLabel(i));
            }
        }
        return names;
    }

    private static List<Map<String, String>> rows(Connection connection, String sql) throws SQLException {
        List<Map<String, String>> rows = new ArrayList<>();
        try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            ResultSetMetaData meta = result.getMetaData();
            while (result.next()) {
                // Keys in the server's spelling, looked up without regard to case.
                Map<String, String> row = new java.util.TreeMap<>(String.CASE_INSENSITIVE_ORDER);
                for (int i = 1; i <= meta.getColumnCount(); i++) {
                    row.put(meta.getColumnLabel(i), result.getString(i));
                }
                rows.add(row);
            }
        }
        return rows;
    }

    /** Waits until the session's last read has been settled by a sample ({@code EXPLAIN GANTRY ROUTE} runs nothing). */
    private static void awaitNothingPending(Statement statement) throws Exception {
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(5).toNanos();
        while (true) {
            try (ResultSet rows = statement.executeQuery("EXPLAIN GANTRY ROUTE SELECT @@server_id")) {
                boolean pending = true;
                while (rows.next()) {
                    if (rows.getString(1).equals("pending")) {
                        pending = !rows.getString(2).equals("none");
                    }
                }
                if (!pending) {
                    return;
                }
            }
            assertThat(System.nanoTime()).as("the session's last read was never sampled").isLessThan(deadline);
            Thread.sleep(2);
        }
    }
}
