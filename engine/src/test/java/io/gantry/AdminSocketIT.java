package io.gantry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gantry.admin.AdminSocket;
import io.gantry.admin.client.AdminClient;
import io.gantry.admin.protocol.AdminProtocol;
import io.gantry.admin.protocol.QueryShape;
import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Request;
import io.gantry.admin.protocol.ServerState;
import io.gantry.admin.protocol.Topic;
import io.gantry.authority.Retention;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.UpstreamUrl;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The admin socket of a real engine on real servers: who may open it, what it answers, what it pushes. */
class AdminSocketIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    /** A private topology: a test kills one of its replicas. */
    private static Topology topology;

    @TempDir
    Path dataDir;

    private Gantry gantry;

    @BeforeAll
    static void topology() {
        topology = TopologyKinds.startPrivate(TopologyKind.MARIADB, "admin-socket", 2);
    }

    @AfterAll
    static void stopTopology() {
        if (topology != null) {
            topology.close();
        }
    }

    @BeforeEach
    void start() throws Exception {
        for (DatabaseServer server : topology.servers()) {
            if (!isUp(server)) {
                topology.start(server);
            }
        }
        gantry = Gantry.start(options());
    }

    @AfterEach
    void stop() {
        if (gantry != null) {
            gantry.close();
        }
    }

    private Gantry.Options options() {
        ProxyConfig proxy = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0))
                .withConnectTimeout(Duration.ofSeconds(1)).withConnectRetries(0);
        List<UpstreamUrl> urls = topology.servers().stream()
                .map(s -> new UpstreamUrl(s.host(), s.port(), "app", "app", "app", 50)).toList();
        return new Gantry.Options(proxy, urls, List.of(), dataDir, Duration.ofSeconds(1), Retention.DEFAULT, Set.of(),
                Optional.empty());
    }

    @Test
    void theSocketIsOwnerOnlyAndAnotherUserCannotConnect() throws Exception {
        assertThat(gantry.adminSocket()).isEqualTo(dataDir.resolve("admin.sock").toAbsolutePath());
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(gantry.adminSocket())))
                .isEqualTo("rw-------");
        gantry.close();
        assertThat(gantry.adminSocket()).doesNotExist();

        // In a directory anyone may enter, so that only the socket's own mode keeps others out.
        Path open = Files.createTempDirectory("gantry-admin-it");
        try {
            Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxr-xr-x"));
            Path socket = open.resolve("admin.sock");
            gantry = Gantry.start(options().withAdminSocket(socket));
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket))).isEqualTo("rw-------");
            try (AdminClient owner = AdminClient.connect(socket, "test", TIMEOUT, push -> { })) {
                assertThat(owner.welcome().protocol()).isEqualTo(AdminProtocol.VERSION);
            }
            assumeTrue("root".equals(System.getProperty("user.name")),
                    "connecting as another OS user needs root to switch to nobody");
            assertThat(connectAs("nobody", socket, open)).contains("Permission denied");
        } finally {
            gantry.close();
            gantry = null;
            try (var files = Files.list(open)) {
                for (Path file : files.toList()) {
                    Files.deleteIfExists(file);
                }
            }
            Files.deleteIfExists(open);
        }
    }

    @Test
    void aMalformedLineGetsAnErrorAndTheConnectionStaysUsable() throws Exception {
        try (RawClient raw = new RawClient(gantry.adminSocket())) {
            raw.send("{\"type\":\"servers\",\"id\":\"early\"}");
            assertThat(raw.read()).contains("\"error\":\"hello_first\"").contains("\"id\":\"early\"");
            raw.send("{\"type\":\"hello\",\"protocol\":1,\"client\":\"raw\"}");
            assertThat(raw.read()).startsWith("{\"type\":\"hello\",\"protocol\":1");

            raw.send("{\"type\":\"sql\",\"id\":\"1\",\"sql\":");
            assertThat(raw.read()).contains("\"type\":\"error\"").contains("\"error\":\"malformed_json\"");
            raw.send("{\"type\":\"sql\",\"id\":\"2\"}");
            assertThat(raw.read()).contains("\"id\":\"2\"").contains("'sql' must be a string, not missing");
            raw.send("{\"type\":\"teleport\",\"id\":\"3\"}");
            assertThat(raw.read()).contains("\"error\":\"unknown_type\"");
            raw.send("{\"type\":\"sql\",\"id\":\"4\",\"sql\":\"ALTER GANTRY SET WEIGHT 'x' TO 0\"}");
            assertThat(raw.read()).contains("\"error\":\"invalid_statement\"");
            raw.send("x".repeat(AdminProtocol.MAX_REQUEST_BYTES + 10));
            assertThat(raw.read()).contains("\"error\":\"line_too_long\"");

            raw.send("{\"type\":\"sql\",\"id\":\"5\",\"sql\":\"SELECT COUNT(*) AS n FROM gantry.upstream_servers\"}");
            assertThat(raw.read()).isEqualTo("{\"type\":\"rows\",\"id\":\"5\",\"columns\":[{\"name\":\"n\","
                    + "\"type\":\"integer\"}],\"rows\":[[3]]}");
        }
    }

    @Test
    void adminSqlServersHealthAndEventsAreTypedAnswers() throws Exception {
        try (AdminClient client = AdminClient.connect(gantry.adminSocket(), "test", TIMEOUT, push -> { })) {
            Reply rows = client.call(id -> new Request.Sql(id, "SELECT port, active_cdc, rtt_ms, last_ok FROM "
                    + "gantry.upstream_servers ORDER BY port"), TIMEOUT);
            assertThat(rows).isInstanceOf(Reply.Rows.class);
            List<Object> first = ((Reply.Rows) rows).rows().get(0);
            assertThat(first.get(0)).isInstanceOf(Long.class);
            assertThat(first.get(1)).isInstanceOf(Boolean.class);
            assertThat(first.get(3)).isInstanceOf(Instant.class);

            Reply servers = client.call(Request.Servers::new, TIMEOUT);
            assertThat(((Reply.Servers) servers).servers()).extracting(ServerState::address)
                    .containsExactlyInAnyOrderElementsOf(topology.servers().stream().map(DatabaseServer::address)
                            .toList());
            assertThat(((Reply.Servers) servers).servers()).allSatisfy(s -> assertThat(s.connectMs()).isNotNull());

            String replica = topology.replicas().get(0).address();
            // A login takes several round trips and a ping one, but one sample of each on a loaded machine may come
            // out the other way (CI: a connect of 5.1 ms against a ping of 5.4): three samples.
            Awaitility.await().atMost(TIMEOUT).until(() -> ((Reply.Health) client.call(id -> new Request.Health(id,
                    null, null, replica, 100), TIMEOUT)).samples().size() >= 3);
            Reply.Health health = (Reply.Health) client.call(id -> new Request.Health(id, null, null, replica, 100),
                    TIMEOUT);
            assertThat(health.samples()).allSatisfy(s -> assertThat(s.server()).isEqualTo(replica))
                    .anySatisfy(s -> assertThat(s.connectMs()).isGreaterThan(s.rttMs()));

            Awaitility.await().atMost(TIMEOUT).until(() -> ((Reply.Events) client.call(id -> new Request.Events(id,
                    null, 10), TIMEOUT)).events().stream().anyMatch(e -> e.kind().equals("startup")));

            Reply refused = client.call(id -> new Request.Sql(id, "SELECT * FROM orders"), TIMEOUT);
            assertThat(((Reply.Error) refused).error()).isEqualTo("invalid_statement");
            Reply unknown = client.call(id -> new Request.Sql(id, "ALTER GANTRY SET WEIGHT 'nowhere:1' TO 5"),
                    TIMEOUT);
            assertThat(((Reply.Error) unknown).error()).isEqualTo("refused");
        }
    }

    @Test
    void aWeightChangeIsPushedAsAnEventAndAsTheServersNewState() throws Exception {
        BlockingQueue<Reply> pushes = new LinkedBlockingQueue<>();
        String replica = topology.replicas().get(1).address();
        try (AdminClient watcher = AdminClient.connect(gantry.adminSocket(), "watcher", TIMEOUT, pushes::add);
             AdminClient operator = AdminClient.connect(gantry.adminSocket(), "operator", TIMEOUT, push -> { })) {
            watcher.call(id -> new Request.Subscribe(id, EnumSet.allOf(Topic.class)), TIMEOUT);
            // First the state of every server as it is.
            List<String> initial = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                initial.add(((Reply.ServerChanged) pushes.poll(5, TimeUnit.SECONDS)).server().address());
            }
            assertThat(initial).hasSize(3);

            Reply done = operator.call(id -> new Request.Sql(id, "ALTER GANTRY SET WEIGHT '" + replica + "' TO 70"),
                    TIMEOUT);
            assertThat(done).isInstanceOf(Reply.Done.class);
            boolean sawEvent = false;
            boolean sawState = false;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (!(sawEvent && sawState) && System.nanoTime() < deadline) {
                Reply push = pushes.poll(1, TimeUnit.SECONDS);
                if (push instanceof Reply.Event event && event.event().kind().equals("weight_changed")) {
                    assertThat(event.event().server()).isEqualTo(replica);
                    sawEvent = true;
                } else if (push instanceof Reply.ServerChanged changed && changed.server().address().equals(replica)
                        && changed.server().weight() == 70) {
                    sawState = true;
                }
            }
            assertThat(sawEvent).as("weight_changed event pushed").isTrue();
            assertThat(sawState).as("the server's new weight pushed").isTrue();
        }
    }

    @Test
    void aSubscriberOfServersAloneGetsEveryServerThenOnlyChanges() throws Exception {
        BlockingQueue<Reply> pushes = new LinkedBlockingQueue<>();
        try (AdminClient watcher = AdminClient.connect(gantry.adminSocket(), "servers only", TIMEOUT, pushes::add)) {
            Reply subscribed = watcher.call(id -> new Request.Subscribe(id, Set.of(Topic.SERVERS)), TIMEOUT);
            assertThat(((Reply.Subscribed) subscribed).topics()).containsExactly(Topic.SERVERS);
            List<String> initial = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Reply push = pushes.poll(5, TimeUnit.SECONDS);
                assertThat(push).isInstanceOf(Reply.ServerChanged.class);
                initial.add(((Reply.ServerChanged) push).server().address());
            }
            assertThat(initial).containsExactlyInAnyOrderElementsOf(topology.servers().stream()
                    .map(DatabaseServer::address).toList());
            Reply unsubscribed = watcher.call(id -> new Request.Unsubscribe(id, Set.of(Topic.SERVERS)), TIMEOUT);
            assertThat(((Reply.Subscribed) unsubscribed).topics()).isEmpty();
        }
    }

    @Test
    void aSubscriberOfQueriesGetsTheDigestsAtOnceThenEveryTwoSeconds() throws Exception {
        try (Connection session = DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + gantry.address().getPort()
                + "/app", "app", "app"); Statement statement = session.createStatement()) {
            for (int i = 0; i < 5; i++) {
                try (ResultSet rows = statement.executeQuery("SELECT 'queries topic', " + i)) {
                    rows.next();
                }
            }
        }
        BlockingQueue<Reply> pushes = new LinkedBlockingQueue<>();
        try (AdminClient watcher = AdminClient.connect(gantry.adminSocket(), "queries", TIMEOUT, pushes::add)) {
            Reply subscribed = watcher.call(id -> new Request.Subscribe(id, Set.of(Topic.QUERIES)), TIMEOUT);
            assertThat(((Reply.Subscribed) subscribed).topics()).containsExactly(Topic.QUERIES);
            Reply first = pushes.poll(1, TimeUnit.SECONDS);
            assertThat(first).as("a push at once").isInstanceOf(Reply.Queries.class);
            QueryShape select = ((Reply.Queries) first).shapes().stream()
                    .filter(q -> q.shape().equals("SELECT ? , ?") && q.account().equals("app")).findFirst()
                    .orElseThrow();
            assertThat(select.count()).isGreaterThanOrEqualTo(5);
            assertThat(select.schema()).isEqualTo("app");
            assertThat(select.onReplica() + select.onPrimary()).isEqualTo(select.count());
            assertThat(select.totalMicros()).isPositive();
            Reply second = pushes.poll(5, TimeUnit.SECONDS);
            assertThat(second).as("the next push").isInstanceOf(Reply.Queries.class);
            assertThat(Duration.between(((Reply.Queries) first).at(), ((Reply.Queries) second).at()))
                    .isBetween(Duration.ofMillis(500), Duration.ofSeconds(3));
        }
    }

    @Test
    void aSubscriberHearsOfAKilledReplicaWithinTwoSeconds() throws Exception {
        BlockingQueue<Reply> pushes = new LinkedBlockingQueue<>();
        DatabaseServer victim = topology.replicas().get(0);
        try (AdminClient watcher = AdminClient.connect(gantry.adminSocket(), "watcher", TIMEOUT, pushes::add)) {
            watcher.call(id -> new Request.Subscribe(id, EnumSet.allOf(Topic.class)), TIMEOUT);
            long killed = System.nanoTime();
            topology.kill(victim);
            long eventAt = 0;
            long stateAt = 0;
            while ((eventAt == 0 || stateAt == 0) && System.nanoTime() - killed < TimeUnit.SECONDS.toNanos(10)) {
                Reply push = pushes.poll(200, TimeUnit.MILLISECONDS);
                if (eventAt == 0 && push instanceof Reply.Event event && event.event().kind().equals("down")
                        && victim.address().equals(event.event().server())) {
                    eventAt = System.nanoTime();
                } else if (stateAt == 0 && push instanceof Reply.ServerChanged changed
                        && changed.server().address().equals(victim.address())
                        && changed.server().health().equals("down")) {
                    stateAt = System.nanoTime();
                }
            }
            assertThat(eventAt).as("a down event").isPositive();
            assertThat(stateAt).as("the server's state pushed as down").isPositive();
            long eventMillis = (eventAt - killed) / 1_000_000;
            long stateMillis = (stateAt - killed) / 1_000_000;
            System.out.printf("AdminSocketIT: kill -9 of %s to its down event pushed: %d ms, to its state pushed "
                    + "as down: %d ms (health interval 1 s)%n", victim.address(), eventMillis, stateMillis);
            assertThat(eventMillis).isLessThanOrEqualTo(2_000);
            assertThat(stateMillis).isLessThanOrEqualTo(2_000);
        } finally {
            topology.start(victim);
        }
    }

    @Test
    void aSubscriberThatDoesNotReadIsDisconnected() throws Exception {
        gantry.close();
        gantry = Gantry.start(options().withAdminSocketSettings(new AdminSocket.Settings(16 << 10,
                Duration.ofMillis(500), Duration.ofSeconds(2))));
        String replica = topology.replicas().get(1).address();
        try (RawClient slow = new RawClient(gantry.adminSocket());
             AdminClient operator = AdminClient.connect(gantry.adminSocket(), "operator", TIMEOUT, push -> { })) {
            slow.send("{\"type\":\"hello\",\"protocol\":1,\"client\":\"slow\"}");
            slow.read();
            slow.send("{\"type\":\"subscribe\",\"id\":\"1\",\"topics\":[\"servers\",\"events\"]}");
            slow.read();
            // From here on it reads nothing: every weight change is an event and a server state for it, about
            // 600 bytes; 800 of them fill the kernel's socket buffer (some 200 KiB) and the 16 KiB allowed.
            for (int i = 0; i < 800; i++) {
                int weight = 1 + i % 100;
                operator.call(id -> new Request.Sql(id, "ALTER GANTRY SET WEIGHT '" + replica + "' TO " + weight),
                        TIMEOUT);
            }
            long received = slow.drainUntilClosed(Duration.ofSeconds(5));
            assertThat(received).as("bytes the slow subscriber got before the engine closed its connection")
                    .isPositive().isLessThan(800L * 600);
            // The engine and its other clients go on.
            assertThat(operator.call(Request.Ping::new, TIMEOUT)).isInstanceOf(Reply.Pong.class);
        }
    }

    @Test
    void manyClientsAtOnce() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(50);
        try {
            List<Callable<Object>> clients = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                String name = "client-" + i;
                clients.add(() -> {
                    try (AdminClient client = AdminClient.connect(gantry.adminSocket(), name, TIMEOUT, push -> { })) {
                        client.call(id -> new Request.Subscribe(id, Set.of(Topic.EVENTS)), TIMEOUT);
                        return ((Reply.Rows) client.call(id -> new Request.Sql(id, "SELECT COUNT(*) FROM "
                                + "gantry.upstream_servers"), TIMEOUT)).rows().get(0).get(0);
                    }
                });
            }
            for (Future<Object> answer : pool.invokeAll(clients, 60, TimeUnit.SECONDS)) {
                assertThat(answer.get()).isEqualTo(3L);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static boolean isUp(DatabaseServer server) {
        try (java.net.Socket probe = new java.net.Socket()) {
            probe.connect(new InetSocketAddress(server.host(), server.port()), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Tries to connect to the socket as another OS user; what it printed. */
    private static String connectAs(String user, Path socket, Path directory) throws Exception {
        Path source = directory.resolve("Connect.java");
        Files.writeString(source, """
                import java.net.StandardProtocolFamily;
                import java.net.UnixDomainSocketAddress;
                import java.nio.channels.SocketChannel;
                public class Connect {
                    public static void main(String[] args) {
                        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                            channel.connect(UnixDomainSocketAddress.of(args[0]));
                            System.out.println("connected");
                        } catch (Exception e) {
                            System.out.println("refused: " + e.getMessage());
                        }
                    }
                }
                """);
        Files.setPosixFilePermissions(source, PosixFilePermissions.fromString("rw-r--r--"));
        String java = ProcessHandle.current().info().command().orElse("java");
        Process process = new ProcessBuilder("runuser", "-u", user, "--", java, source.toString(), socket.toString())
                .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        System.out.println("AdminSocketIT: connecting as " + user + ": " + output.strip());
        assertThat(output).doesNotContain("connected\n");
        return output;
    }

    /** Lines in and out, nothing more: for what a well-behaved client would never send. */
    private static final class RawClient implements AutoCloseable {
        private final SocketChannel channel;
        private final BufferedReader reader;

        RawClient(Path socket) throws IOException {
            channel = SocketChannel.open(StandardProtocolFamily.UNIX);
            channel.connect(UnixDomainSocketAddress.of(socket));
            reader = new BufferedReader(new InputStreamReader(Channels.newInputStream(channel),
                    StandardCharsets.UTF_8));
        }

        void send(String line) throws IOException {
            ByteBuffer bytes = ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8));
            while (bytes.hasRemaining()) {
                channel.write(bytes);
            }
        }

        String read() throws IOException {
            return reader.readLine();
        }

        /**
         * Reads what is there until the engine closes the connection.
         *
         * @return the bytes read
         * @throws AssertionError when the connection is still open after {@code quiet} without data
         */
        long drainUntilClosed(Duration quiet) throws IOException, InterruptedException {
            channel.configureBlocking(false);
            ByteBuffer buffer = ByteBuffer.allocate(1 << 16);
            long total = 0;
            long lastData = System.nanoTime();
            while (System.nanoTime() - lastData < quiet.toNanos()) {
                int read;
                try {
                    read = channel.read(buffer);
                } catch (IOException reset) {
                    return total;
                }
                if (read < 0) {
                    return total;
                }
                if (read > 0) {
                    total += read;
                    lastData = System.nanoTime();
                    buffer.clear();
                } else {
                    Thread.sleep(10);
                }
            }
            throw new AssertionError("the connection is still open after " + total + " bytes");
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }
}
