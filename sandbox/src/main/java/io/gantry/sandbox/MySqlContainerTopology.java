package io.gantry.sandbox;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * MySQL 8.4 primary and replicas in Docker containers (GTID auto-positioning), for running the same tests against
 * MySQL. Each container's port is bound to a fixed loopback port so it stays the same across a stop and start.
 */
public final class MySqlContainerTopology implements Topology {

    private static final Logger LOG = LoggerFactory.getLogger(MySqlContainerTopology.class);
    private static final DockerImageName IMAGE = DockerImageName.parse("mysql:8.4");
    private static final String ROOT_PASSWORD = "root";

    private final Network network;
    private final List<Node> nodes;
    private volatile Node primary;
    /** The replication statements of the image's version, known once the primary runs. */
    private volatile MySqlReplicationSql sql;

    private MySqlContainerTopology(Network network, List<Node> nodes) {
        this.network = network;
        this.nodes = List.copyOf(nodes);
        this.primary = nodes.get(0);
    }

    /** Why MySQL containers cannot run here, or empty when a Docker engine answers. */
    static Optional<String> unavailableBecause() {
        try {
            return DockerClientFactory.instance().isDockerAvailable()
                    ? Optional.empty()
                    : Optional.of("MySQL 8.4 runs need a Docker engine, and none answers on this machine");
        } catch (RuntimeException e) {
            return Optional.of("MySQL 8.4 runs need a Docker engine: " + e.getMessage());
        }
    }

    /** Starts a primary and {@code replicaCount} replicas and sets up replication. */
    static MySqlContainerTopology start(int replicaCount) {
        Network network = Network.newNetwork();
        List<Node> nodes = new ArrayList<>();
        for (int i = 0; i <= replicaCount; i++) {
            nodes.add(new Node(i == 0 ? "primary" : "replica" + i, LocalServer.freePort(), i + 1, network));
        }
        MySqlContainerTopology topology = new MySqlContainerTopology(network, nodes);
        try {
            nodes.parallelStream().forEach(node -> node.container.start());
            topology.sql = MySqlReplicationSql.forVersion(topology.primary.query("SELECT VERSION()"));
            for (Node node : nodes) {
                // The entrypoint's own set-up must not count as replicated transactions.
                node.execute(topology.sql.resetBinaryLogs());
            }
            topology.primary.execute(
                    "CREATE USER '" + SandboxAccounts.REPLICATION.user() + "'@'%' IDENTIFIED BY '"
                            + SandboxAccounts.REPLICATION.password() + "'",
                    "GRANT REPLICATION SLAVE ON *.* TO '" + SandboxAccounts.REPLICATION.user() + "'@'%'",
                    "GRANT REPLICATION SLAVE, REPLICATION CLIENT, RELOAD, PROCESS, SELECT ON *.* TO '"
                            + SandboxAccounts.APP.user() + "'@'%'");
            for (Node replica : nodes.subList(1, nodes.size())) {
                replica.execute("SET GLOBAL read_only = ON");
                topology.replicateFromPrimary(replica);
            }
            topology.awaitReplicasCaughtUp(Duration.ofSeconds(60));
        } catch (RuntimeException e) {
            topology.close();
            throw e;
        }
        return topology;
    }

    @Override
    public String flavour() {
        return "MySQL " + IMAGE.getVersionPart() + " (Testcontainers)";
    }

    @Override
    public String database() {
        return SandboxAccounts.DATABASE;
    }

    @Override
    public Credentials appAccount() {
        return SandboxAccounts.APP;
    }

    @Override
    public DatabaseServer primary() {
        return primary;
    }

    @Override
    public List<DatabaseServer> replicas() {
        Node current = primary;
        return nodes.stream().filter(n -> n != current).map(DatabaseServer.class::cast).toList();
    }

    @Override
    public void stop(DatabaseServer server) {
        own(server).docker().stopContainerCmd(own(server).container.getContainerId()).withTimeout(30).exec();
    }

    @Override
    public void kill(DatabaseServer server) {
        own(server).docker().killContainerCmd(own(server).container.getContainerId()).withSignal("KILL").exec();
    }

    @Override
    public void freeze(DatabaseServer server) {
        own(server).docker().pauseContainerCmd(own(server).container.getContainerId()).exec();
    }

    @Override
    public void thaw(DatabaseServer server) {
        own(server).docker().unpauseContainerCmd(own(server).container.getContainerId()).exec();
    }

    @Override
    public void start(DatabaseServer server) {
        Node node = own(server);
        node.docker().startContainerCmd(node.container.getContainerId()).exec();
        node.awaitConnectable(Duration.ofSeconds(120));
    }

    @Override
    public void pauseReplication(DatabaseServer replica) {
        own(replica).execute(sql.stopSqlThread());
    }

    @Override
    public void resumeReplication(DatabaseServer replica) {
        own(replica).execute(sql.startSqlThread());
    }

    @Override
    public void writeOnReplica(DatabaseServer replica, boolean logged, String... statements) {
        Node node = own(replica);
        if (node == primary) {
            throw new IllegalArgumentException(replica.name() + " is the primary, not a replica");
        }
        List<String> all = new ArrayList<>();
        all.add("SET SESSION sql_log_bin = " + (logged ? 1 : 0));
        all.add("USE " + database());
        all.addAll(List.of(statements));
        node.execute(all.toArray(String[]::new));
    }

    @Override
    public String replicationSqlError(DatabaseServer replica) {
        try (Connection connection = connectAsAdmin(replica);
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery(sql.showStatus())) {
            if (!rows.next() || rows.getInt("Last_SQL_Errno") == 0) {
                return "";
            }
            return rows.getInt("Last_SQL_Errno") + ": " + rows.getString("Last_SQL_Error");
        } catch (SQLException e) {
            throw new IllegalStateException(replica.name() + ": cannot read its replication status: "
                    + e.getMessage(), e);
        }
    }

    @Override
    public synchronized void promote(DatabaseServer replica) {
        Node promoted = own(replica);
        Node old = primary;
        if (promoted == old) {
            throw new IllegalArgumentException(replica.name() + " is already the primary");
        }
        if (old.isRunning()) {
            old.execute("SET GLOBAL read_only = ON");
            awaitReplicasCaughtUp(Duration.ofSeconds(60));
        }
        promoted.execute(sql.stop(), sql.resetAll(), "SET GLOBAL read_only = OFF");
        primary = promoted;
        for (Node node : nodes) {
            if (node != promoted && node.isRunning()) {
                replicateFromPrimary(node);
            }
        }
    }

    @Override
    public void awaitReplicasCaughtUp(Duration timeout) {
        String executed = primary.query("SELECT @@GLOBAL.gtid_executed");
        for (Node node : nodes) {
            if (node != primary && node.isRunning()) {
                String result = node.query(MySqlReplicationSql.awaitExecuted(executed, timeout));
                if (!"0".equals(result)) {
                    throw new IllegalStateException(node.name() + " did not reach the primary's GTID set " + executed
                            + " within " + timeout.toSeconds() + " s; it has " + executedGtids(node));
                }
            }
        }
    }

    @Override
    public String executedGtids(DatabaseServer server) {
        return own(server).query("SELECT @@GLOBAL.gtid_executed");
    }

    @Override
    public long transactionsBehind(DatabaseServer replica) {
        String missing = primary.query(MySqlReplicationSql.subtract(primary.query("SELECT @@GLOBAL.gtid_executed"),
                executedGtids(replica)));
        return MySqlReplicationSql.countTransactions(missing);
    }

    @Override
    public Connection connectAsAdmin(DatabaseServer server) throws SQLException {
        return DriverManager.getConnection(own(server).url(""), "root", ROOT_PASSWORD);
    }

    @Override
    public Connection connectAsApp(DatabaseServer server) throws SQLException {
        return DriverManager.getConnection(jdbcUrl(server), appAccount().user(), appAccount().password());
    }

    @Override
    public String jdbcUrl(DatabaseServer server) {
        return own(server).url(database());
    }

    @Override
    public void close() {
        for (Node node : nodes) {
            try {
                node.container.stop();
            } catch (RuntimeException e) {
                LOG.warn("sandbox: stopping MySQL container {} failed: {}", node.name(), e.toString());
            }
        }
        network.close();
    }

    private void replicateFromPrimary(Node replica) {
        // Containers reach each other by name on the Docker network, on MySQL's own port.
        replica.execute(sql.stop(), sql.changeSource(primary.name(), 3306, SandboxAccounts.REPLICATION),
                sql.start());
    }

    private Node own(DatabaseServer server) {
        for (Node node : nodes) {
            if (node == server) {
                return node;
            }
        }
        throw new IllegalArgumentException(server + " is not a server of this topology");
    }

    /** One MySQL container; its network alias is its name, so replicas reach the primary by name. */
    private static final class Node implements DatabaseServer {
        private final String name;
        private final int port;
        private final GenericContainer<?> container;

        Node(String name, int port, int serverId, Network network) {
            this.name = name;
            this.port = port;
            this.container = new GenericContainer<>(IMAGE)
                    .withNetwork(network)
                    .withNetworkAliases(name)
                    .withEnv("MYSQL_ROOT_PASSWORD", ROOT_PASSWORD)
                    .withEnv("MYSQL_DATABASE", SandboxAccounts.DATABASE)
                    .withEnv("MYSQL_USER", SandboxAccounts.APP.user())
                    .withEnv("MYSQL_PASSWORD", SandboxAccounts.APP.password())
                    .withCommand("--server-id=" + serverId, "--gtid-mode=ON", "--enforce-gtid-consistency=ON",
                            "--log-bin=mysql-bin", "--binlog-format=ROW", "--log-replica-updates=ON",
                            "--skip-name-resolve", "--report-host=" + name)
                    .withCreateContainerCmdModifier(cmd -> cmd.getHostConfig().withPortBindings(new PortBinding(
                            Ports.Binding.bindIpAndPort(LocalServer.HOST, port), ExposedPort.tcp(3306))))
                    // The entrypoint starts a temporary server first (port 0); wait for the real one.
                    .waitingFor(Wait.forLogMessage(".*ready for connections.*port: 3306.*", 1)
                            .withStartupTimeout(Duration.ofMinutes(3)));
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String host() {
            return LocalServer.HOST;
        }

        @Override
        public int port() {
            return port;
        }

        @Override
        public boolean isRunning() {
            return Boolean.TRUE.equals(docker().inspectContainerCmd(container.getContainerId()).exec()
                    .getState().getRunning());
        }

        DockerClient docker() {
            return DockerClientFactory.instance().client();
        }

        String url(String database) {
            return "jdbc:mysql://" + LocalServer.HOST + ":" + port + "/" + database
                    + "?allowPublicKeyRetrieval=true&sslMode=PREFERRED&connectTimeout=5000";
        }

        void awaitConnectable(Duration timeout) {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                try (Connection ignored = DriverManager.getConnection(url(""), "root", ROOT_PASSWORD)) {
                    return;
                } catch (SQLException e) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException(name + ": no connection within " + timeout.toSeconds()
                                + " s after start: " + e.getMessage(), e);
                    }
                    LocalServer.sleep(200);
                }
            }
        }

        void execute(String... statements) {
            try (Connection connection = DriverManager.getConnection(url(""), "root", ROOT_PASSWORD);
                 Statement statement = connection.createStatement()) {
                for (String sql : statements) {
                    statement.execute(sql);
                }
            } catch (SQLException e) {
                throw new IllegalStateException(name + ": " + e.getMessage(), e);
            }
        }

        String query(String sql) {
            try (Connection connection = DriverManager.getConnection(url(""), "root", ROOT_PASSWORD);
                 PreparedStatement statement = connection.prepareStatement(sql);
                 ResultSet rows = statement.executeQuery()) {
                rows.next();
                return rows.getString(1);
            } catch (SQLException e) {
                throw new IllegalStateException(name + ": " + sql + ": " + e.getMessage(), e);
            }
        }

        @Override
        public String toString() {
            return name + " (" + LocalServer.HOST + ":" + port + ")";
        }
    }
}
