package io.gantry.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.authority.Event;
import io.gantry.authority.LiveServerRow;
import io.gantry.authority.QueryResult;
import io.gantry.route.QueryText;
import io.gantry.route.SqlMode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/** The admin SQL front: which text it takes, who may run it, and how each statement becomes an operation. */
class AdminSqlRunnerTest {

    private final List<String> calls = new ArrayList<>();
    private final AdminSqlRunner runner = new AdminSqlRunner(new RecordingOperations(), Set.of("admin"), Runnable::run);

    @Test
    void ordinaryStatementsAreNotItsOwn() {
        assertThat(handle("SELECT * FROM orders", "admin")).isEmpty();
        assertThat(calls).isEmpty();
    }

    @Test
    void onlyAdminUsersMayRunAdminStatements() {
        AdminResult result = result(handle("ALTER GANTRY SET WEIGHT 'db1:3306' TO 5", "app")
                .orElseThrow());
        assertThat(result).isEqualTo(new AdminResult.Failed(AdminResult.Failure.ACCESS_DENIED,
                "Access denied; only the --admin-users accounts may run Gantry admin statements"));
        assertThat(calls).isEmpty();
    }

    @Test
    void eachStatementIsOneOperationCalledWithWhoAsked() {
        assertThat(result(handle("ALTER GANTRY SET WEIGHT 'db1:3306' TO 5", "admin")
                .orElseThrow())).isEqualTo(new AdminResult.Done(1, "weight"));
        result(handle("ALTER GANTRY CHANGE UPSTREAM TO 'mysql://a:b@db1:3306/app'", "admin")
                .orElseThrow());
        result(handle("ALTER GANTRY CHANGE CDC TO 'mysql://a:b@db2:3306/app'", "admin")
                .orElseThrow());
        result(handle("STOP GANTRY REPLICATION", "admin").orElseThrow());
        result(handle("START GANTRY REPLICATION", "admin").orElseThrow());
        result(handle("SELECT * FROM gantry.events", "admin").orElseThrow());
        assertThat(calls).containsExactly("setWeight db1:3306 5 admin",
                "changeUpstream mysql://a:b@db1:3306/app admin", "changeCdc mysql://a:b@db2:3306/app admin",
                "stopReplication admin", "startReplication admin", "query SELECT * FROM gantry.events");
    }

    @Test
    void showGantryStatusIsTwoTextColumns() {
        AdminResult.Rows rows = (AdminResult.Rows) result(handle("SHOW GANTRY STATUS", "admin")
                .orElseThrow());
        assertThat(rows.columns()).extracting(AdminResult.Column::name).containsExactly("Variable_name", "Value");
        assertThat(rows.columns()).extracting(AdminResult.Column::type).containsOnly(QueryResult.ValueType.TEXT);
        assertThat(rows.text()).containsExactly(List.of("Primary", "db1:3306"));
    }

    @Test
    void poolsAreRowsPerServerAndAccount() {
        AdminResult.Rows rows = (AdminResult.Rows) result(handle("SHOW GANTRY POOLS", "admin").orElseThrow());
        assertThat(rows.columns()).extracting(AdminResult.Column::name).containsExactly("Server", "User",
                "Server_connections", "Cap", "Waiting", "Idle", "Created", "Reused", "Reuse_ratio", "Closed_idle",
                "Waited", "Wait_p99_ms");
        // 12 of the 16 connections sessions needed came from the pool.
        assertThat(rows.text()).containsExactly(List.of("db1:3306", "app", "12", "120", "2", "3", "4", "12", "0.750", "1",
                "7", "12.3"));
        assertThat(result(handle("SHOW GANTRY POOLS", "app").orElseThrow())).as("only admin users")
                .isInstanceOf(AdminResult.Failed.class);
    }

    private static final java.time.Instant SEEN = java.time.Instant.parse("2026-12-07T12:00:00Z");
    private static final List<io.gantry.digest.ShapeDigest> QUERIES = List.of(
            new io.gantry.digest.ShapeDigest("SELECT c FROM t WHERE id = ?", "app", "alice", 90, java.util.Map.of(),
                    90, 0, 900, 9, 12, 15, 40, java.util.Map.of(io.gantry.digest.RanOn.REPLICA, 90L),
                    java.util.Map.of(io.gantry.route.RouteReason.READ_ON_REPLICA, 90L), SEEN, SEEN, false),
            new io.gantry.digest.ShapeDigest("UPDATE t SET c = ? WHERE id = ?", "app", "alice", 10,
                    java.util.Map.of(1213, 2L, 1062, 1L), 0, 7, 5000, 400, 900, 1000, 1000,
                    java.util.Map.of(io.gantry.digest.RanOn.PRIMARY, 10L),
                    java.util.Map.of(io.gantry.route.RouteReason.NOT_A_READ, 10L), SEEN, SEEN, false));

    @Test
    void theQueriesAreSortedAsAskedAndLimited() {
        AdminResult.Rows rows = (AdminResult.Rows) result(handle("SHOW GANTRY QUERIES", "admin").orElseThrow());
        assertThat(rows.columns()).extracting(AdminResult.Column::name).containsExactlyElementsOf(
                AdminSqlRunner.QUERY_COLUMNS);
        assertThat(rows.text()).extracting(row -> row.get(0)).as("by total time")
                .containsExactly("UPDATE t SET c = ? WHERE id = ?", "SELECT c FROM t WHERE id = ?");
        assertThat(rows.text().get(0)).containsExactly("UPDATE t SET c = ? WHERE id = ?", "app", "alice", "10", "3",
                "1062:1 1213:2", "0", "7", "5000", "400", "900", "1000", "1000", "10", "0", "0", "0", "not_a_read:10",
                "2026-12-07T12:00:00Z", "2026-12-07T12:00:00Z");
        rows = (AdminResult.Rows) result(handle("show gantry queries order by COUNT limit 1", "admin").orElseThrow());
        assertThat(rows.text()).extracting(row -> row.get(0)).containsExactly("SELECT c FROM t WHERE id = ?");
        assertThat(result(handle("FLUSH GANTRY QUERIES", "admin").orElseThrow()))
                .isInstanceOf(AdminResult.Done.class);
        assertThat(calls).contains("flush queries by admin");
    }

    @Test
    void theClusterIsOneRowPerInstanceWithThisOneMarked() {
        AdminResult.Rows rows = (AdminResult.Rows) result(handle("show gantry cluster;", "admin").orElseThrow());
        assertThat(rows.columns()).extracting(AdminResult.Column::name).containsExactly("Instance", "Address",
                "Gantry_version", "Config_version", "Cluster_version", "Last_seen", "Seconds_since_seen",
                "This_instance", "Feed_owner");
        assertThat(rows.text()).containsExactly(
                List.of("gantry-a", "10.0.0.1:3307", "1.0", "7", "7", "2026-12-05T10:00:00Z", "0.5", "yes", "no"),
                List.of("gantry-b", "10.0.0.2:3307", "1.0", "6", "7", "2026-12-05T09:59:58Z", "2.5", "no", "yes"));
        assertThat(result(handle("SHOW GANTRY CLUSTER extra", "admin").orElseThrow()))
                .isInstanceOf(AdminResult.Failed.class);
    }

    @Test
    void blockedHostsAreRowsAndAFlushIsOneOperation() {
        AdminResult.Rows rows = (AdminResult.Rows) result(handle("SHOW GANTRY BLOCKED HOSTS", "admin")
                .orElseThrow());
        assertThat(rows.columns()).extracting(AdminResult.Column::name)
                .containsExactly("Host", "Reason", "Failures", "Blocked_since", "Seconds_left");
        assertThat(rows.text()).containsExactly(List.of("10.0.0.7", "10 failed handshakes in a row", "10",
                "2026-12-04T10:00:00Z", "42"));
        result(handle("FLUSH GANTRY HOST '10.0.0.7'", "admin").orElseThrow());
        result(runner.run("FLUSH GANTRY HOSTS", "the admin socket"));
        assertThat(calls).containsExactly("flushHosts 10.0.0.7 admin", "flushHosts * the admin socket");
        assertThat(result(handle("FLUSH GANTRY HOSTS", "app").orElseThrow()))
                .as("only admin users").isInstanceOf(AdminResult.Failed.class);
    }

    @Test
    void showTablesIsAnsweredWithoutTheOperations() {
        AdminResult.Rows rows = (AdminResult.Rows) result(handle("SHOW FULL TABLES FROM gantry LIKE 'e%'",
                "admin").orElseThrow());
        assertThat(rows.text()).containsExactly(List.of("events", "BASE TABLE"));
        assertThat(calls).isEmpty();
    }

    @Test
    void failuresBecomeTypedResults() {
        assertThat(result(handle("ALTER GANTRY SET WEIGHT 'db1:3306' TO 0", "admin")
                .orElseThrow())).isEqualTo(new AdminResult.Failed(AdminResult.Failure.INVALID_STATEMENT,
                "ALTER GANTRY SET WEIGHT expects 'host:port' TO 1..100, got 'TO 0'"));
        assertThat(result(handle("ALTER GANTRY SET WEIGHT 'nowhere:1' TO 5", "admin")
                .orElseThrow())).isEqualTo(new AdminResult.Failed(AdminResult.Failure.REFUSED, "no server nowhere:1"));
        assertThat(result(handle("SELECT * FROM gantry.nothing", "admin").orElseThrow()))
                .isEqualTo(new AdminResult.Failed(AdminResult.Failure.FAILED, "Table \"NOTHING\" not found"));
        assertThat(result(handle("SELECT 1; SELECT * FROM gantry.events", "admin")
                .orElseThrow())).isInstanceOf(AdminResult.Failed.class)
                .extracting(r -> ((AdminResult.Failed) r).failure()).isEqualTo(AdminResult.Failure.INVALID_STATEMENT);
    }

    @Test
    void aTrustedCallerRunsAdminStatementsButNothingForTheServers() {
        assertThat(result(runner.run("STOP GANTRY REPLICATION", "the admin socket")))
                .isEqualTo(new AdminResult.Done(0, "stopped"));
        assertThat(calls).containsExactly("stopReplication the admin socket");
        AdminResult refused = result(runner.run("SELECT * FROM orders", "the admin socket"));
        assertThat(refused).isInstanceOf(AdminResult.Failed.class);
        assertThat(((AdminResult.Failed) refused).failure()).isEqualTo(AdminResult.Failure.INVALID_STATEMENT);
        assertThat(((AdminResult.Failed) refused).message()).startsWith("not a Gantry admin statement");
    }

    private static AdminResult result(CompletionStage<AdminResult> stage) {
        return stage.toCompletableFuture().join();
    }

    /** Records each call; a weight for "nowhere" is refused, a query on gantry.nothing fails as H2 would. */
    private final class RecordingOperations implements AdminOperations {

        @Override
        public AdminResult.Rows query(String sql) {
            if (sql.contains("nothing")) {
                throw new io.gantry.authority.AuthorityException("Table \"NOTHING\" not found", null);
            }
            calls.add("query " + sql);
            return AdminResult.Rows.ofText(List.of("n"), List.of(List.of("1")));
        }

        @Override
        public List<PoolFigures.Pool> pools() {
            return List.of(new PoolFigures.Pool("db1:3306", "app", 12, 120, 2, 3, 4, 12, 1, 7, 12.25));
        }

        @Override
        public List<io.gantry.digest.ShapeDigest> queries() {
            return QUERIES;
        }

        @Override
        public List<io.gantry.digest.ShapeDigest> queryShapes() {
            return QUERIES;
        }

        @Override
        public List<io.gantry.digest.ShapeDigest> topQueries(int limit) {
            return QUERIES;
        }

        @Override
        public AdminResult.Done flushQueries(String by) {
            calls.add("flush queries by " + by);
            return new AdminResult.Done(0, "flushed");
        }

        @Override
        public AdminResult.Done createCache(io.gantry.cache.CacheStatement.Create create, String by) {
            calls.add("create cache " + create.name().orElse("?"));
            return new AdminResult.Done(1, "created");
        }

        @Override
        public AdminResult.Done dropCache(String name, String by) {
            calls.add("drop cache " + name);
            return new AdminResult.Done(1, "dropped");
        }

        @Override
        public AdminResult.Done dropAllCaches(String by) {
            calls.add("drop all caches");
            return new AdminResult.Done(0, "0 caches dropped");
        }

        @Override
        public io.gantry.cluster.ClusterMember.View cluster() {
            java.time.Instant at = java.time.Instant.parse("2026-12-05T10:00:00Z");
            return new io.gantry.cluster.ClusterMember.View("gantry-a", 7, List.of(
                    new io.gantry.cluster.ClusterInstance("gantry-a", "10.0.0.1:3307", "1.0", 7, at, at, 0.5),
                    new io.gantry.cluster.ClusterInstance("gantry-b", "10.0.0.2:3307", "1.0", 6, at,
                            at.minusSeconds(2), 2.5)), java.util.Optional.of("gantry-b"));
        }

        @Override
        public List<HostBlocks.BlockedHost> blockedHosts() {
            return List.of(new HostBlocks.BlockedHost("10.0.0.7", "10 failed handshakes in a row", 10,
                    java.time.Instant.parse("2026-12-04T10:00:00Z"), java.time.Duration.ofMillis(41_200)));
        }

        @Override
        public AdminResult.Done flushHosts(java.util.Optional<String> host, String by) {
            calls.add("flushHosts " + host.orElse("*") + " " + by);
            return new AdminResult.Done(1, "flushed");
        }

        @Override
        public List<StatusVariable> status() {
            return List.of(new StatusVariable("Primary", "db1:3306"));
        }

        @Override
        public AdminResult.Done setWeight(String hostPort, int weight, String by) {
            if (hostPort.startsWith("nowhere")) {
                throw new AdminException(AdminResult.Failure.REFUSED, "no server " + hostPort);
            }
            calls.add("setWeight " + hostPort + " " + weight + " " + by);
            return new AdminResult.Done(1, "weight");
        }

        @Override
        public AdminResult.Done changeUpstream(String urls, String by) {
            calls.add("changeUpstream " + urls + " " + by);
            return new AdminResult.Done(1, "list");
        }

        @Override
        public AdminResult.Done changeCdc(String urls, String by) {
            calls.add("changeCdc " + urls + " " + by);
            return new AdminResult.Done(1, "list");
        }

        @Override
        public AdminResult.Done startReplication(String by) {
            calls.add("startReplication " + by);
            return new AdminResult.Done(0, "started");
        }

        @Override
        public AdminResult.Done stopReplication(String by) {
            calls.add("stopReplication " + by);
            return new AdminResult.Done(0, "stopped");
        }

        @Override
        public List<LiveServerRow> servers() {
            return List.of();
        }

        @Override
        public HealthPage healthHistory(Instant from, Instant until, Optional<String> server, int limit) {
            return new HealthPage(List.of(), Optional.empty());
        }

        @Override
        public List<Event> events(Instant since, int limit) {
            return List.of();
        }

        @Override
        public String eventsInstance() {
            return null;
        }
    }

    private Optional<CompletionStage<AdminResult>> handle(String sql, String user) {
        return runner.handle(QueryText.of(sql, SqlMode.DEFAULT), user);
    }
}
