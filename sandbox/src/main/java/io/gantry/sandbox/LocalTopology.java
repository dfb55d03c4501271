package io.gantry.sandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A primary and replicas as real server processes on loopback ports, each server in its own directory under one
 * topology directory, made from copies of one template data directory. What is the same for every flavour lives
 * here: starting, stopping, killing, freezing, connecting, the shape of a promotion. The replication statements,
 * which differ, are the subclasses' ({@link MariaDbTopology}, {@link MySqlTopology}).
 */
public abstract sealed class LocalTopology implements Topology permits MariaDbTopology, MySqlTopology {

    static final Logger LOG = LoggerFactory.getLogger(LocalTopology.class);

    /** Makes the flavour's topology object around servers that are created but not started yet. */
    interface Factory<T extends LocalTopology> {
        T create(Path directory, List<LocalServer> servers);
    }

    private final ServerInstallation installation;
    private final Path directory;
    final List<LocalServer> all;
    volatile LocalServer primary;

    LocalTopology(ServerInstallation installation, Path directory, List<LocalServer> all) {
        this.installation = installation;
        this.directory = directory;
        this.all = List.copyOf(all);
        this.primary = all.get(0);
    }

    /**
     * Starts a primary and {@code replicaCount} replicas in fresh directories under {@code directory}, from copies
     * of the install's template data directory, and sets up replication.
     *
     * @param basePort     the primary's port, replicas on the following ones; 0 picks free ports
     * @param extraOptions {@code my.cnf} lines for every server, last, so they override the sandbox's settings
     */
    static <T extends LocalTopology> T start(ServerInstallation installation, Path directory, int replicaCount,
                                             int basePort, List<String> extraOptions, Factory<T> factory) {
        if (replicaCount < 0 || replicaCount > 9) {
            throw new IllegalArgumentException("replicas must be between 0 and 9, not " + replicaCount);
        }
        long started = System.nanoTime();
        ServerProcesses.sweepOrphans(directory);
        List<Long> stillRunning = ServerProcesses.liveServersUnder(directory);
        if (!stillRunning.isEmpty()) {
            throw new IllegalStateException("server processes " + stillRunning + " still run on data under "
                    + directory + " for another live process; stop that first or choose another directory");
        }
        try {
            SandboxCache.deleteRecursively(directory);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot clear " + directory, e);
        }
        Path template = TemplateDataDirectory.obtain(installation);
        List<LocalServer> servers = new ArrayList<>();
        for (int i = 0; i <= replicaCount; i++) {
            String name = i == 0 ? "primary" : "replica" + i;
            int port = basePort == 0 ? LocalServer.freePort() : basePort + i;
            Path serverDirectory = directory.resolve(name);
            TemplateDataDirectory.copyTo(template, serverDirectory.resolve("data"));
            servers.add(new LocalServer(name, serverDirectory, port, installation, i > 0, extraOptions));
        }
        boolean portsMayMove = basePort == 0;
        T topology = factory.create(directory, servers);
        try {
            // Servers start in parallel: start-up is mostly waiting on InnoDB, not CPU.
            CompletableFuture.allOf(servers.stream()
                    .map(s -> CompletableFuture.runAsync(() -> s.start(portsMayMove)))
                    .toArray(CompletableFuture[]::new)).join();
            for (LocalServer replica : servers.subList(1, servers.size())) {
                topology.replicateFromPrimary(replica, false);
            }
            topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        } catch (RuntimeException e) {
            topology.close();
            throw e instanceof CompletionException && e.getCause() instanceof RuntimeException cause ? cause : e;
        }
        LOG.info("sandbox: {} with 1 primary and {} replicas up in {} ms under {}", installation.label(),
                replicaCount, (System.nanoTime() - started) / 1_000_000, directory);
        return topology;
    }

    // ---- what the flavours do differently ------------------------------------------------------------------

    /**
     * Points a replica at the current primary and starts replicating.
     *
     * @param demotedOrDiverged the replica is a former primary (its own writes are in its binary log)
     */
    abstract void replicateFromPrimary(LocalServer replica, boolean demotedOrDiverged);

    /** {@code host:port} a replica replicates from, or "" when it does not replicate. */
    abstract String sourceAddress(LocalServer replica) throws SQLException;

    /** The statements that make a replica stop replicating and forget its source, before it is promoted. */
    abstract List<String> forgetSourceStatements();

    /** One line on a replica's replication threads and errors, for failure messages. */
    abstract String replicationStatus(LocalServer replica);

    /** A ready-to-paste command line of a client that connects to {@code host:port} as the app account. */
    public abstract String clientCommand(String host, int port);

    // ---- the same for every flavour ------------------------------------------------------------------------

    @Override
    public String flavour() {
        return installation.label();
    }

    /** The install the servers run from. */
    public ServerInstallation serverInstallation() {
        return installation;
    }

    @Override
    public String database() {
        return SandboxAccounts.DATABASE;
    }

    @Override
    public Credentials appAccount() {
        return SandboxAccounts.APP;
    }

    /** The directory holding one sub-directory per server. */
    public Path directory() {
        return directory;
    }

    @Override
    public DatabaseServer primary() {
        return primary;
    }

    @Override
    public List<DatabaseServer> replicas() {
        LocalServer current = primary;
        return all.stream().filter(s -> s != current).map(DatabaseServer.class::cast).toList();
    }

    @Override
    public void stop(DatabaseServer server) {
        LOG.info("sandbox: stopping {}", server);
        own(server).stop();
    }

    @Override
    public void kill(DatabaseServer server) {
        LOG.info("sandbox: kill -9 {}", server);
        own(server).kill();
    }

    @Override
    public void freeze(DatabaseServer server) {
        LOG.info("sandbox: freezing {} (SIGSTOP)", server);
        own(server).signal("STOP");
        own(server).awaitStopped();
    }

    @Override
    public void thaw(DatabaseServer server) {
        LOG.info("sandbox: thawing {} (SIGCONT)", server);
        own(server).signal("CONT");
    }

    @Override
    public void start(DatabaseServer server) {
        LocalServer own = own(server);
        LOG.info("sandbox: starting {}", server);
        own.setReadOnly(own != primary);
        own.start(false);
        if (own != primary) {
            // A replica remembers its primary and resumes by itself, unless the primary moved while it was down.
            try {
                if (!primary.address().equals(sourceAddress(own))) {
                    replicateFromPrimary(own, true);
                }
            } catch (SQLException e) {
                throw new IllegalStateException(server.name() + ": cannot check its replication after restart: "
                        + e.getMessage(), e);
            }
        }
    }

    @Override
    public void writeOnReplica(DatabaseServer replica, boolean logged, String... statements) {
        LocalServer server = own(replica);
        if (server == primary) {
            throw new IllegalArgumentException(replica.name() + " is the primary, not a replica");
        }
        LOG.info("sandbox: writing on replica {} directly ({}): {}", replica, logged ? "binlogged" : "sql_log_bin=0",
                String.join("; ", statements));
        List<String> sql = new ArrayList<>();
        sql.add("SET SESSION sql_log_bin = " + (logged ? 1 : 0));
        sql.add("USE " + database());
        sql.addAll(List.of(statements));
        execute(server, sql.toArray(String[]::new));
    }

    @Override
    public synchronized void promote(DatabaseServer replica) {
        LocalServer promoted = own(replica);
        LocalServer old = primary;
        if (promoted == old) {
            throw new IllegalArgumentException(replica.name() + " is already the primary");
        }
        LOG.info("sandbox: promoting {} (primary was {})", promoted, old);
        if (old.isRunning()) {
            // A planned switch: stop writes on the old primary and let everyone catch up, so nothing is lost.
            execute(old, "SET GLOBAL read_only = ON");
            old.setReadOnly(true);
            awaitReplicasCaughtUp(Duration.ofSeconds(60));
        }
        List<String> statements = new ArrayList<>(forgetSourceStatements());
        statements.add("SET GLOBAL read_only = OFF");
        execute(promoted, statements.toArray(String[]::new));
        promoted.setReadOnly(false);
        primary = promoted;
        for (LocalServer server : all) {
            if (server != promoted && server.isRunning()) {
                replicateFromPrimary(server, server == old);
            }
        }
    }

    @Override
    public Connection connectAsAdmin(DatabaseServer server) throws SQLException {
        return own(server).connectAsRoot();
    }

    @Override
    public Connection connectAsApp(DatabaseServer server) throws SQLException {
        return own(server).connect(database(), appAccount());
    }

    @Override
    public String jdbcUrl(DatabaseServer server) {
        return own(server).jdbcUrl(database());
    }

    /** A ready-to-paste client command line that connects to a server as the app account. */
    public String clientCommand(DatabaseServer server) {
        return clientCommand(server.host(), server.port());
    }

    /**
     * Runs {@code stop} when the JVM shuts down (SIGTERM, Ctrl-C), before the sandbox stops its servers, so that
     * what uses them (a proxy, a change stream) stops in order instead of seeing them vanish.
     */
    public void stopFirstOnExit(Runnable stop) {
        ServerProcesses.stopFirstOnExit(stop);
    }

    /** Takes back {@link #stopFirstOnExit}: true if {@code stop} had not started, and now never will on exit. */
    public boolean cancelStopFirstOnExit(Runnable stop) {
        return ServerProcesses.cancelStopFirstOnExit(stop);
    }

    @Override
    public void close() {
        List<LocalServer> running = all.stream().filter(LocalServer::isRunning).toList();
        CompletableFuture.allOf(running.stream()
                .map(s -> CompletableFuture.runAsync(s::stop))
                .toArray(CompletableFuture[]::new)).join();
        if (!running.isEmpty()) {
            LOG.info("sandbox: stopped {} servers under {}", running.size(), directory);
        }
    }

    LocalServer own(DatabaseServer server) {
        for (LocalServer candidate : all) {
            if (candidate == server) {
                return candidate;
            }
        }
        throw new IllegalArgumentException(server + " is not a server of this topology");
    }

    static void execute(LocalServer server, String... statements) {
        try (Connection connection = server.connectAsRoot(); Statement statement = connection.createStatement()) {
            for (String sql : statements) {
                statement.execute(sql);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(server.name() + ": " + e.getMessage(), e);
        }
    }

    static String query(LocalServer server, String sql) {
        try (Connection connection = server.connectAsRoot();
             PreparedStatement statement = connection.prepareStatement(sql);
             ResultSet rows = statement.executeQuery()) {
            rows.next();
            return rows.getString(1);
        } catch (SQLException e) {
            throw new IllegalStateException(server.name() + ": " + sql + ": " + e.getMessage(), e);
        }
    }
}
