package io.gantry.admin;

import io.gantry.authority.Authority;
import io.gantry.authority.LiveServerRow;
import io.gantry.authority.Purpose;
import io.gantry.authority.QueryResult;
import io.gantry.authority.StoredServer;
import io.gantry.cdc.CdcStream;
import io.gantry.proxy.AdminHandler;
import io.gantry.proxy.AdminReply;
import io.gantry.route.SqlMode;
import io.gantry.topology.ServerValidator;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.UpstreamUrl;
import io.gantry.topology.Upstreams;
import io.gantry.wire.ErrPacket;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs Gantry's admin SQL: {@code SELECT} over {@code gantry.upstream_servers}, {@code gantry.events} and
 * {@code gantry.health_history} (executed by H2 in the Authority, over the live state copied in first),
 * {@code SHOW GANTRY STATUS}, and the {@code ALTER GANTRY} statements. Only the accounts in {@code --admin-users}
 * may run them; the work runs on its own thread ({@code gantry-admin}), never on an event loop.
 */
public final class AdminService implements AdminHandler, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(AdminService.class);
    private static final List<String> TABLES = List.of("events", "health_history", "upstream_servers");

    private final Upstreams upstreams;
    private final Authority authority;
    private final ServerValidator validator;
    private final Set<String> adminUsers;
    private final Supplier<Map<String, String>> engineStatus;
    private final ExecutorService executor = Executors.newSingleThreadExecutor(runnable -> {
        Thread thread = new Thread(runnable, "gantry-admin");
        thread.setDaemon(true);
        return thread;
    });
    private final Optional<CdcStream> cdc;
    private volatile List<UpstreamUrl> cdcList;

    /**
     * @param cdcList      the CDC server list (the upstream list when none was given)
     * @param cdc          the change stream, empty when it is turned off ({@code --no-cdc})
     * @param engineStatus rows for {@code SHOW GANTRY STATUS} that only the engine knows (listen address,
     *                     sessions, uptime), in display order
     */
    public AdminService(Upstreams upstreams, Authority authority, ServerValidator validator, Set<String> adminUsers,
                        List<UpstreamUrl> cdcList, Optional<CdcStream> cdc,
                        Supplier<Map<String, String>> engineStatus) {
        this.upstreams = upstreams;
        this.authority = authority;
        this.validator = validator;
        this.adminUsers = Set.copyOf(adminUsers);
        this.cdcList = List.copyOf(cdcList);
        this.cdc = cdc;
        this.engineStatus = engineStatus;
    }

    @Override
    public Optional<CompletionStage<AdminReply>> handle(String sql, String user, SqlMode mode) {
        Optional<AdminStatement> statement = AdminStatements.parse(sql, mode);
        if (statement.isEmpty()) {
            return Optional.empty();
        }
        if (!adminUsers.contains(user)) {
            LOG.warn("admin: '{}' is not an admin user; refused: {}", user, statement.get().getClass().getSimpleName());
            return Optional.of(CompletableFuture.completedFuture(new AdminReply.Error(ErrPacket.of(1227, "42000",
                    "Access denied; only the --admin-users accounts may run Gantry admin statements"))));
        }
        return Optional.of(CompletableFuture.supplyAsync(() -> execute(statement.get(), user), executor));
    }

    private AdminReply execute(AdminStatement statement, String user) {
        try {
            if (statement instanceof AdminStatement.TableQuery query) {
                authority.replaceLiveServers(liveRows());
                QueryResult result = authority.select(query.sql());
                return new AdminReply.Rows(result.columns(), result.rows());
            }
            if (statement instanceof AdminStatement.ShowTables show) {
                return showTables(show);
            }
            if (statement instanceof AdminStatement.ShowStatus) {
                return status();
            }
            if (statement instanceof AdminStatement.SetWeight setWeight) {
                return setWeight(setWeight, user);
            }
            if (statement instanceof AdminStatement.ChangeUpstream change) {
                return changeList(Purpose.PROXY, change.urls(), user);
            }
            if (statement instanceof AdminStatement.ChangeCdc change) {
                return changeList(Purpose.CDC, change.urls(), user);
            }
            if (statement instanceof AdminStatement.StopReplication) {
                return replication(false, user);
            }
            if (statement instanceof AdminStatement.StartReplication) {
                return replication(true, user);
            }
            return error(1064, "42000", ((AdminStatement.Invalid) statement).message());
        } catch (IllegalArgumentException e) {
            return error(1064, "42000", e.getMessage());
        } catch (RuntimeException e) {
            LOG.error("admin: {} failed: {}", statement.getClass().getSimpleName(), e.toString(), e);
            return error(1105, "HY000", e.getMessage() == null ? e.toString() : e.getMessage());
        }
    }

    private AdminReply showTables(AdminStatement.ShowTables show) {
        List<List<String>> rows = new ArrayList<>();
        for (String table : TABLES) {
            if (show.pattern() == null || matchesLike(table, show.pattern())) {
                rows.add(show.full() ? List.of(table, "BASE TABLE") : List.of(table));
            }
        }
        return new AdminReply.Rows(show.full() ? List.of("Tables_in_gantry", "Table_type")
                : List.of("Tables_in_gantry"), rows);
    }

    private AdminReply status() {
        Map<String, String> values = new LinkedHashMap<>(engineStatus.get());
        values.put("Primary", upstreams.primary().map(UpstreamServer::address)
                .orElse("none (" + upstreams.noPrimaryReason() + ")"));
        List<UpstreamServer> servers = upstreams.servers();
        values.put("Upstream Servers", servers.size() + " (" + servers.stream().filter(UpstreamServer::isUp).count()
                + " up)");
        values.put("Replicas Up", String.join(", ", upstreams.upReplicas().stream()
                .map(UpstreamServer::address).toList()));
        values.putAll(cdcStatus());
        values.put("CDC Servers", String.join(", ", cdcList.stream().map(u -> u.address() + "|" + u.weight())
                .toList()));
        values.put("Data Directory", authority.dataDir().toAbsolutePath().toString());
        List<List<String>> rows = new ArrayList<>();
        values.forEach((name, value) -> rows.add(List.of(name, value)));
        return new AdminReply.Rows(List.of("Variable_name", "Value"), rows);
    }

    private Map<String, String> cdcStatus() {
        Map<String, String> values = new LinkedHashMap<>();
        if (cdc.isEmpty()) {
            values.put("CDC Server", "none (the change stream is off: --no-cdc)");
            values.put("CDC Status", "off");
            return values;
        }
        CdcStream.Status status = cdc.get().status();
        values.put("CDC Server", status.server().orElse("none"));
        values.put("CDC Status", status.state().displayName());
        values.put("CDC Position", status.position());
        values.put("Snapshot Status", status.snapshot());
        values.put("CDC Events/s", String.format(Locale.ROOT, "%.1f", status.rowsPerSecond()));
        values.put("CDC Transactions/s", String.format(Locale.ROOT, "%.1f", status.transactionsPerSecond()));
        values.put("Last CDC Error", status.lastError());
        return values;
    }

    private AdminReply replication(boolean start, String user) {
        if (cdc.isEmpty()) {
            return error(1105, "HY000", "the change stream is off in this Gantry (--no-cdc), so there is no "
                    + "replication to " + (start ? "start" : "stop"));
        }
        if (start) {
            return cdc.get().startReplication(user)
                    ? new AdminReply.Ok(0, "the change stream starts from the highest-weight CDC server")
                    : new AdminReply.Ok(0, "the change stream is already running");
        }
        return cdc.get().stopReplication(user)
                ? new AdminReply.Ok(0, "the change stream is stopped at " + cdc.get().positionText())
                : new AdminReply.Ok(0, "the change stream was already stopped");
    }

    /** The weight applies to every list that has the server: read shares on the proxy list, preference for CDC. */
    private AdminReply setWeight(AdminStatement.SetWeight statement, String user) {
        String hostPort = statement.hostPort();
        boolean onProxyList = upstreams.find(hostPort).isPresent();
        boolean onCdcList = cdcList.stream().anyMatch(u -> u.address().equalsIgnoreCase(hostPort.strip()));
        if (!onProxyList && !onCdcList) {
            return error(1105, "HY000", "no server " + hostPort + " in the upstream or CDC list (see SELECT "
                    + "host, port FROM gantry.upstream_servers)");
        }
        authority.setWeight(hostPort, statement.weight());
        if (onProxyList) {
            upstreams.setWeight(hostPort, statement.weight());
        }
        if (onCdcList) {
            cdcList = cdcList.stream().map(u -> u.address().equalsIgnoreCase(hostPort.strip())
                    ? u.withWeight(statement.weight()) : u).toList();
            cdc.ifPresent(stream -> stream.changeServers(cdcList, user));
        }
        LOG.info("admin: '{}' set the weight of {} to {}", user, hostPort, statement.weight());
        return new AdminReply.Ok(1, "weight of " + hostPort + " is now " + statement.weight());
    }

    /** Validates first: a list that fails any check is refused, and the old one stays. */
    private AdminReply changeList(Purpose purpose, String text, String user) {
        List<UpstreamUrl> urls = UpstreamUrl.parseList(List.of(text));
        ServerValidator.Report report = validator.validate(urls);
        String problem = report.fatalProblem();
        if (problem != null) {
            LOG.warn("admin: '{}' tried to change the {} list; refused: {}", user, purpose.sqlName(), problem);
            return error(1105, "HY000", "the new list was refused and the old one stays: " + problem);
        }
        String reason = "ALTER GANTRY CHANGE " + (purpose == Purpose.PROXY ? "UPSTREAM" : "CDC") + " by '" + user
                + "'";
        authority.replaceServerList(purpose, stored(urls), reason);
        if (purpose == Purpose.PROXY) {
            upstreams.replace(urls, reason);
        } else {
            cdcList = List.copyOf(urls);
            cdc.ifPresent(stream -> stream.changeServers(urls, user));
        }
        String unreachable = String.join(", ", report.unreachable().stream().map(u -> u.url().address()).toList());
        return new AdminReply.Ok(urls.size(), urls.size() + " servers in the " + purpose.sqlName() + " list"
                + (unreachable.isEmpty() ? "" : "; unreachable now: " + unreachable));
    }

    /** The live state of every server of either list, for {@code gantry.upstream_servers}. */
    private List<LiveServerRow> liveRows() {
        Map<String, LiveServerRow> rows = new LinkedHashMap<>();
        List<UpstreamUrl> cdc = cdcList;
        String activeCdc = this.cdc.flatMap(CdcStream::activeServer).orElse(null);
        for (UpstreamServer server : upstreams.servers()) {
            EnumSet<Purpose> purposes = EnumSet.of(Purpose.PROXY);
            if (cdc.stream().anyMatch(u -> u.address().equals(server.address()))) {
                purposes.add(Purpose.CDC);
            }
            UpstreamUrl url = server.url();
            rows.put(server.address(), new LiveServerRow(url.host(), url.port(), url.database(), url.user(),
                    server.weight(), Purpose.describe(purposes), server.address().equals(activeCdc),
                    server.health().sqlName(),
                    server.downSince(), server.lastOk(), server.connections(), server.role().name().toLowerCase(),
                    server.lagMillis() < 0 ? null : server.lagMillis(),
                    server.rttMicros() < 0 ? null : server.rttMicros() / 1000.0));
        }
        // Servers only on the CDC list are not health-checked until CDC runs: their health says so.
        for (UpstreamUrl url : cdc) {
            rows.putIfAbsent(url.address(), new LiveServerRow(url.host(), url.port(), url.database(), url.user(),
                    url.weight(), Purpose.describe(EnumSet.of(Purpose.CDC)), url.address().equals(activeCdc),
                    url.address().equals(activeCdc) ? "streaming" : "unchecked", null, null, 0,
                    "unknown", null, null));
        }
        return new ArrayList<>(rows.values());
    }

    static List<StoredServer> stored(List<UpstreamUrl> urls) {
        return urls.stream().map(u -> new StoredServer(u.host(), u.port(), u.database(), u.user(), u.weight(),
                Optional.of(u.tls().query()))).toList();
    }

    private static boolean matchesLike(String value, String pattern) {
        String regex = pattern.replace("\\", "\\\\").replace(".", "\\.").replace("%", ".*").replace("_", ".");
        return value.matches("(?i)" + regex);
    }

    private static AdminReply error(int code, String state, String message) {
        return new AdminReply.Error(ErrPacket.of(code, state, message));
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
