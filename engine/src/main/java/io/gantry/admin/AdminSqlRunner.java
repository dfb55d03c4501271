package io.gantry.admin;

import io.gantry.cache.CacheException;
import io.gantry.cache.CacheStatement;
import io.gantry.cache.CacheStatements;
import io.gantry.cache.QueryCaches;
import io.gantry.cluster.ClusterInstance;
import io.gantry.cluster.ClusterMember;
import io.gantry.digest.RanOn;
import io.gantry.digest.ShapeDigest;
import io.gantry.route.QueryText;
import io.gantry.route.SqlMode;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gantry's admin SQL, the same statements and results on the proxy port and the admin socket: parses the text
 * ({@link AdminStatements}), checks the account on the proxy port, and runs the statement as {@link AdminOperations}
 * calls on the admin executor, never on an event loop.
 */
public final class AdminSqlRunner implements AdminSql {

    private static final Logger LOG = LoggerFactory.getLogger(AdminSqlRunner.class);
    private static final List<String> TABLES = List.of("events", "health_history", "queries", "upstream_servers");
    /** The columns of {@code SHOW GANTRY QUERIES}. */
    static final List<String> QUERY_COLUMNS = List.of("Query", "Schema", "Account", "Count", "Errors",
            "Error_codes", "Rows_sent", "Rows_affected", "Total_time_us", "P50_us", "P95_us", "P99_us", "Max_us",
            "On_primary", "On_replica", "On_cache", "On_gantry", "Routing_reasons", "First_seen", "Last_seen");

    private final AdminOperations operations;
    private final Set<String> adminUsers;
    private final Executor executor;
    private final QueryCaches caches;

    /**
     * Without query caches: their statements are refused.
     *
     * @param adminUsers the accounts that may run admin statements on the proxy port
     * @param executor   where statements run (one thread, {@code gantry-admin}, in Gantry)
     */
    public AdminSqlRunner(AdminOperations operations, Set<String> adminUsers, Executor executor) {
        this(operations, adminUsers, executor, null);
    }

    /** @param caches runs {@code CREATE CACHE}, {@code SHOW CACHES} and the rest; null for none */
    public AdminSqlRunner(AdminOperations operations, Set<String> adminUsers, Executor executor,
                          QueryCaches caches) {
        this.operations = operations;
        this.adminUsers = Set.copyOf(adminUsers);
        this.executor = executor;
        this.caches = caches;
    }

    @Override
    public Optional<CompletionStage<AdminResult>> handle(QueryText text, String user) {
        Optional<AdminStatement> statement = AdminStatements.parse(text);
        Optional<CacheStatement> cacheStatement = statement.isEmpty() ? CacheStatements.parse(text)
                : Optional.empty();
        if (statement.isEmpty() && cacheStatement.isEmpty()) {
            return Optional.empty();
        }
        if (!adminUsers.contains(user)) {
            LOG.warn("admin: '{}' is not an admin user; refused: {}", user, statement.isPresent()
                    ? statement.get().getClass().getSimpleName() : cacheStatement.get().getClass().getSimpleName());
            return Optional.of(CompletableFuture.completedFuture(new AdminResult.Failed(
                    AdminResult.Failure.ACCESS_DENIED,
                    "Access denied; only the --admin-users accounts may run Gantry admin statements")));
        }
        return Optional.of(statement.isPresent() ? run(statement.get(), user) : run(cacheStatement.get(), user));
    }

    /**
     * Runs admin SQL for a caller that is trusted already (the admin socket, which only its owner can open). Text
     * that is not an admin statement is refused: there is no server behind this door.
     *
     * @param by who asked, for the log and the timeline
     */
    public CompletionStage<AdminResult> run(String sql, String by) {
        Optional<AdminStatement> statement = AdminStatements.parse(sql);
        if (statement.isEmpty()) {
            Optional<CacheStatement> cacheStatement = CacheStatements.parse(sql, SqlMode.DEFAULT);
            if (cacheStatement.isPresent()) {
                return run(cacheStatement.get(), by);
            }
            return CompletableFuture.completedFuture(new AdminResult.Failed(AdminResult.Failure.INVALID_STATEMENT,
                    "not a Gantry admin statement: only SHOW GANTRY STATUS, SHOW GANTRY POOLS, SHOW GANTRY CLUSTER, SHOW GANTRY QUERIES, ALTER GANTRY ..., START|STOP GANTRY "
                            + "REPLICATION, SHOW GANTRY BLOCKED HOSTS, FLUSH GANTRY HOST[S], FLUSH GANTRY QUERIES, SHOW TABLES FROM gantry, "
                            + "queries on the gantry tables and the cache "
                            + "statements (CREATE CACHE, SHOW CACHES, DROP CACHE, ...) run here"));
        }
        return run(statement.get(), by);
    }

    private CompletionStage<AdminResult> run(AdminStatement statement, String by) {
        return CompletableFuture.supplyAsync(() -> execute(statement, by), executor);
    }

    private CompletionStage<AdminResult> run(CacheStatement statement, String by) {
        return CompletableFuture.supplyAsync(() -> execute(statement, by), executor);
    }

    /** Runs one cache statement; never throws. */
    AdminResult execute(CacheStatement statement, String by) {
        if (statement instanceof CacheStatement.Invalid invalid) {
            return new AdminResult.Failed(AdminResult.Failure.INVALID_STATEMENT, invalid.message());
        }
        if (caches == null) {
            return new AdminResult.Failed(AdminResult.Failure.REFUSED, "this Gantry has no query caches");
        }
        try {
            if (statement instanceof CacheStatement.Create create) {
                return operations.createCache(create, by);
            }
            if (statement instanceof CacheStatement.Drop drop) {
                return operations.dropCache(drop.name(), by);
            }
            if (statement instanceof CacheStatement.DropAll) {
                return operations.dropAllCaches(by);
            }
            QueryCaches.Table table = statement instanceof CacheStatement.ShowProxied
                    ? caches.proxiedQueries(operations.queryShapes()) : caches.show();
            return AdminResult.Rows.ofText(table.columns(), table.rows());
        } catch (CacheException e) {
            return new AdminResult.Failed(AdminResult.Failure.REFUSED, e.getMessage());
        } catch (AdminException e) {
            return e.result();
        } catch (RuntimeException e) {
            LOG.error("admin: {} failed: {}", statement.getClass().getSimpleName(), e.toString(), e);
            return new AdminResult.Failed(AdminResult.Failure.FAILED,
                    e.getMessage() == null ? e.toString() : e.getMessage());
        }
    }

    /** Runs one statement; never throws. */
    AdminResult execute(AdminStatement statement, String by) {
        try {
            if (statement instanceof AdminStatement.TableQuery query) {
                return operations.query(query.sql());
            }
            if (statement instanceof AdminStatement.ShowTables show) {
                return showTables(show);
            }
            if (statement instanceof AdminStatement.ShowStatus) {
                List<List<String>> rows = new ArrayList<>();
                for (AdminOperations.StatusVariable variable : operations.status()) {
                    rows.add(List.of(variable.name(), variable.value()));
                }
                return AdminResult.Rows.ofText(List.of("Variable_name", "Value"), rows);
            }
            if (statement instanceof AdminStatement.WriteToGantryTables write) {
                return new AdminResult.Failed(AdminResult.Failure.READ_ONLY, "The gantry tables are read only ("
                        + write.verb() + " refused): they show Gantry's own state; change it with ALTER GANTRY ..., "
                        + "START|STOP GANTRY REPLICATION, FLUSH GANTRY HOST[S] or the cache statements");
            }
            if (statement instanceof AdminStatement.ShowBlockedHosts) {
                return blockedHosts();
            }
            if (statement instanceof AdminStatement.ShowPools) {
                return pools();
            }
            if (statement instanceof AdminStatement.ShowCluster) {
                return cluster();
            }
            if (statement instanceof AdminStatement.ShowQueries show) {
                return queries(show);
            }
            if (statement instanceof AdminStatement.FlushQueries) {
                return operations.flushQueries(by);
            }
            if (statement instanceof AdminStatement.FlushHosts flush) {
                return operations.flushHosts(flush.host(), by);
            }
            if (statement instanceof AdminStatement.SetWeight setWeight) {
                return operations.setWeight(setWeight.hostPort(), setWeight.weight(), by);
            }
            if (statement instanceof AdminStatement.ChangeUpstream change) {
                return operations.changeUpstream(change.urls(), by);
            }
            if (statement instanceof AdminStatement.ChangeCdc change) {
                return operations.changeCdc(change.urls(), by);
            }
            if (statement instanceof AdminStatement.StopReplication) {
                return operations.stopReplication(by);
            }
            if (statement instanceof AdminStatement.StartReplication) {
                return operations.startReplication(by);
            }
            return new AdminResult.Failed(AdminResult.Failure.INVALID_STATEMENT,
                    ((AdminStatement.Invalid) statement).message());
        } catch (AdminException e) {
            return e.result();
        } catch (IllegalArgumentException e) {
            return new AdminResult.Failed(AdminResult.Failure.INVALID_STATEMENT, e.getMessage());
        } catch (RuntimeException e) {
            LOG.error("admin: {} failed: {}", statement.getClass().getSimpleName(), e.toString(), e);
            return new AdminResult.Failed(AdminResult.Failure.FAILED,
                    e.getMessage() == null ? e.toString() : e.getMessage());
        }
    }

    private AdminResult blockedHosts() {
        List<List<String>> rows = new ArrayList<>();
        for (HostBlocks.BlockedHost host : operations.blockedHosts()) {
            rows.add(List.of(host.host(), host.reason(), Integer.toString(host.failures()), host.since().toString(),
                    Long.toString(Math.max(1, (host.left().toMillis() + 999) / 1000))));
        }
        return AdminResult.Rows.ofText(List.of("Host", "Reason", "Failures", "Blocked_since", "Seconds_left"), rows);
    }

    private AdminResult pools() {
        List<List<String>> rows = new ArrayList<>();
        for (PoolFigures.Pool pool : operations.pools()) {
            rows.add(List.of(pool.server(), pool.user(), Integer.toString(pool.serverConnections()),
                    pool.cap() == 0 ? "" : Integer.toString(pool.cap()), Integer.toString(pool.waiting()),
                    Long.toString(pool.idle()), Long.toString(pool.created()), Long.toString(pool.reused()),
                    String.format(java.util.Locale.ROOT, "%.3f", pool.reuseRatio()), Long.toString(pool.closedIdle()),
                    Long.toString(pool.waited()), String.format(java.util.Locale.ROOT, "%.1f", pool.waitP99Millis())));
        }
        return AdminResult.Rows.ofText(List.of("Server", "User", "Server_connections", "Cap", "Waiting", "Idle",
                "Created", "Reused", "Reuse_ratio", "Closed_idle", "Waited", "Wait_p99_ms"), rows);
    }

    /** {@code SHOW GANTRY QUERIES}: the digests in the asked order; times in microseconds. */
    private AdminResult queries(AdminStatement.ShowQueries show) {
        List<ShapeDigest> digests = new ArrayList<>(operations.queries());
        digests.sort(show.order().largestFirst());
        List<List<String>> rows = new ArrayList<>();
        for (ShapeDigest digest : digests.subList(0, Math.min(show.limit(), digests.size()))) {
            rows.add(List.of(digest.shape(), digest.schema(), digest.account(), Long.toString(digest.count()),
                    Long.toString(digest.errors()), digest.errorCodesText(), Long.toString(digest.rowsSent()),
                    Long.toString(digest.rowsAffected()), Long.toString(digest.totalMicros()),
                    Long.toString(digest.p50Micros()), Long.toString(digest.p95Micros()),
                    Long.toString(digest.p99Micros()), Long.toString(digest.maxMicros()),
                    Long.toString(digest.ran(RanOn.PRIMARY)), Long.toString(digest.ran(RanOn.REPLICA)),
                    Long.toString(digest.ran(RanOn.CACHE)), Long.toString(digest.ran(RanOn.GANTRY)),
                    digest.reasonsText(), digest.firstSeen().toString(), digest.lastSeen().toString()));
        }
        return AdminResult.Rows.ofText(QUERY_COLUMNS, rows);
    }

    private AdminResult cluster() {
        ClusterMember.View view = operations.cluster();
        List<List<String>> rows = new ArrayList<>();
        for (ClusterInstance instance : view.rows()) {
            rows.add(List.of(instance.instance(), instance.address(), instance.gantryVersion(),
                    Long.toString(instance.appliedVersion()), Long.toString(view.latest()),
                    instance.lastSeen().toString(), String.format(java.util.Locale.ROOT, "%.1f",
                            instance.secondsSinceSeen()), instance.instance().equals(view.instance()) ? "yes" : "no",
                    view.feedOwner().filter(instance.instance()::equals).isPresent() ? "yes" : "no"));
        }
        return AdminResult.Rows.ofText(List.of("Instance", "Address", "Gantry_version", "Config_version",
                "Cluster_version", "Last_seen", "Seconds_since_seen", "This_instance", "Feed_owner"), rows);
    }

    private static AdminResult showTables(AdminStatement.ShowTables show) {
        List<List<String>> rows = new ArrayList<>();
        for (String table : TABLES) {
            if (show.pattern() == null || matchesLike(table, show.pattern())) {
                rows.add(show.full() ? List.of(table, "BASE TABLE") : List.of(table));
            }
        }
        return AdminResult.Rows.ofText(show.full() ? List.of("Tables_in_gantry", "Table_type")
                : List.of("Tables_in_gantry"), rows);
    }

    private static boolean matchesLike(String value, String pattern) {
        String regex = pattern.replace("\\", "\\\\").replace(".", "\\.").replace("%", ".*").replace("_", ".");
        return value.matches("(?i)" + regex);
    }
}
