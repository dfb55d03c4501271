package io.gantry.proxy;

import io.gantry.events.EventBus;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Topology;
import io.gantry.topology.UpstreamUrl;
import java.net.InetSocketAddress;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/** A Gantry proxy started in-process in front of a sandbox topology, and ways for tests to talk through it. */
final class ProxyHarness implements AutoCloseable {

    /** The JDBC drivers the proxy suite runs with. */
    enum Driver {
        MYSQL_CONNECTOR_J("jdbc:mysql://", "sslMode=DISABLED&allowPublicKeyRetrieval=true&useServerPrepStmts=false"),
        MYSQL_CONNECTOR_J_SERVER_PREPARED("jdbc:mysql://",
                "sslMode=DISABLED&allowPublicKeyRetrieval=true&useServerPrepStmts=true"),
        // allowPublicKeyRetrieval: a caching_sha2_password account (MySQL's) without TLS sends its password
        // RSA-encrypted with Gantry's key, which the driver may fetch; MariaDB's accounts never need it.
        MARIADB_CONNECTOR_J("jdbc:mariadb://", "sslMode=disable&allowPublicKeyRetrieval=true&useServerPrepStmts=false"),
        MARIADB_CONNECTOR_J_SERVER_PREPARED("jdbc:mariadb://",
                "sslMode=disable&allowPublicKeyRetrieval=true&useServerPrepStmts=true");

        private final String prefix;
        private final String options;

        Driver(String prefix, String options) {
            this.prefix = prefix;
            this.options = options;
        }
    }

    final Topology topology;
    final RunningProxy proxy;
    private final EventBus bus;

    private ProxyHarness(Topology topology, RunningProxy proxy, EventBus bus) {
        this.topology = topology;
        this.proxy = proxy;
        this.bus = bus;
    }

    static ProxyHarness start(Topology topology) {
        return start(topology, config -> config, servers -> servers);
    }

    /**
     * @param tuneConfig change the default test configuration
     * @param tuneList   change the upstream list (weights, extra or missing servers)
     */
    static ProxyHarness start(Topology topology, UnaryOperator<ProxyConfig> tuneConfig,
                              UnaryOperator<List<UpstreamUrl>> tuneList) {
        return start(topology, tuneConfig, tuneList, event -> { });
    }

    /** @param events hears the proxy's events (servers down and up, hosts blocked), on the bus's thread */
    static ProxyHarness start(Topology topology, UnaryOperator<ProxyConfig> tuneConfig,
                              UnaryOperator<List<UpstreamUrl>> tuneList, EventBus.Subscriber events) {
        return start(topology, tuneConfig, tuneList, events, Duration.ofSeconds(1));
    }

    /** @param healthInterval how often the health loop checks every server ({@code --upstream-health-interval-secs}) */
    static ProxyHarness start(Topology topology, UnaryOperator<ProxyConfig> tuneConfig,
                              UnaryOperator<List<UpstreamUrl>> tuneList, EventBus.Subscriber events,
                              Duration healthInterval) {
        ProxyConfig config = tuneConfig.apply(ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0))
                .withMaxClientConnections(100)
                .withConnectTimeout(Duration.ofSeconds(2))
                .withConnectRetries(0));
        EventBus bus = new EventBus();
        bus.subscribe("test", 10_000, events);
        try {
            return new ProxyHarness(topology, RunningProxy.start(config, tuneList.apply(urls(topology)),
                    healthInterval, bus), bus);
        } catch (InterruptedException e) {
            bus.close();
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (RuntimeException e) {
            bus.close();
            throw e;
        }
    }

    static List<UpstreamUrl> urls(Topology topology) {
        List<UpstreamUrl> urls = new ArrayList<>();
        for (DatabaseServer server : topology.servers()) {
            urls.add(new UpstreamUrl(server.host(), server.port(), topology.database(),
                    topology.appAccount().user(), topology.appAccount().password(), UpstreamUrl.DEFAULT_WEIGHT));
        }
        return urls;
    }

    int port() {
        return proxy.address().getPort();
    }

    Connection connect(Driver driver) throws SQLException {
        return connect(driver, "");
    }

    Connection connect(Driver driver, String extraOptions) throws SQLException {
        String url = driver.prefix + "127.0.0.1:" + port() + "/" + topology.database() + "?" + driver.options
                + (extraOptions.isEmpty() ? "" : "&" + extraOptions);
        return DriverManager.getConnection(url, topology.appAccount().user(), topology.appAccount().password());
    }

    /** A connection through Gantry as another account than the app's. */
    Connection connect(Driver driver, String user, String password) throws SQLException {
        String url = driver.prefix + "127.0.0.1:" + port() + "/" + topology.database() + "?" + driver.options;
        return DriverManager.getConnection(url, user, password);
    }

    /** A connection with the same driver and options straight to a server, to compare with. */
    Connection connectDirect(Driver driver, DatabaseServer server) throws SQLException {
        String url = driver.prefix + server.address() + "/" + topology.database() + "?" + driver.options;
        return DriverManager.getConnection(url, topology.appAccount().user(), topology.appAccount().password());
    }

    /** The server a statement ran on, from {@code @@server_id} (the sandbox sets it to the server's port). */
    DatabaseServer serverOf(long serverId) {
        return topology.servers().stream().filter(s -> s.port() == serverId).findFirst()
                .orElseThrow(() -> new AssertionError("no sandbox server has server_id " + serverId));
    }

    /**
     * Where a SELECT of {@code @@server_id} runs. Through a prepared statement, so that drivers with server-side
     * prepared statements on send COM_STMT_PREPARE/EXECUTE (the others send the text).
     */
    DatabaseServer whereRuns(Connection connection, String select) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(select);
             ResultSet rows = statement.executeQuery()) {
            rows.next();
            return serverOf(rows.getLong(1));
        }
    }

    /**
     * Where a read runs once the session's read guarantees let a replica serve it again. Right after the session
     * read or wrote on the primary, only the primary may serve it until the next position sample shows the replicas
     * hold what it saw (monotonic reads, read-your-writes): a few milliseconds. Tries for up to 2 s and returns the
     * last server the read ran on.
     */
    DatabaseServer whereRunsOnceSettled(Connection connection, String select) throws SQLException {
        long deadline = System.nanoTime() + Duration.ofSeconds(2).toNanos();
        DatabaseServer server = whereRuns(connection, select);
        while (!topology.replicas().contains(server) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            server = whereRuns(connection, select);
        }
        return server;
    }

    static String queryString(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
            return rows.next() ? rows.getString(1) : null;
        }
    }

    /** The value of a row of {@code SHOW GANTRY SESSION}. */
    static String sessionRow(Connection connection, String name) throws SQLException {
        try (Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SHOW GANTRY SESSION")) {
            while (rows.next()) {
                if (rows.getString(1).equals(name)) {
                    return rows.getString(2);
                }
            }
        }
        throw new AssertionError("SHOW GANTRY SESSION has no row " + name);
    }

    static void execute(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    @Override
    public void close() {
        proxy.close();
        bus.close();
    }
}
