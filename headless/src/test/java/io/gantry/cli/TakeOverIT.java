package io.gantry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.authority.Authority;
import io.gantry.handover.HandOverProtocol;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gantry run --take-over} as an operator runs it: two processes of the built jar on one data directory and
 * one port, and a client that connects every few milliseconds all the while: the listening socket and the data
 * directory move (the change stream's position with it). Sessions moving is {@link SessionTakeOverIT}'s.
 */
class TakeOverIT {

    private static final String SERVICE_USER = "gantry_takeover";
    private static final String SERVICE_PASSWORD = "Pw-3b9e51f0-take-over";
    private static final Map<String, String> PASSWORD = Map.of("GANTRY_UPSTREAM_PASSWORD", SERVICE_PASSWORD);
    private static final Pattern PAUSED_AT = Pattern.compile("cdc: paused for a take-over; position saved: GTID (\\S*)");
    private static final Pattern RESUMED_FROM = Pattern.compile("cdc: starting; .*; saved position (\\S*);");

    private static Topology topology;

    @TempDir
    Path directory;

    private final List<GantryProcess> started = new ArrayList<>();

    @BeforeAll
    static void serviceAccount() throws SQLException {
        topology = Sandboxes.shared(TopologyKind.MARIADB);
        GantryProcess.createServiceAccount(topology, SERVICE_USER, SERVICE_PASSWORD);
    }

    @AfterEach
    void stopLeftovers() {
        started.forEach(gantry -> gantry.process().destroyForcibly());
    }

    @Test
    void theListenerMovesWithNoConnectionRefusedAndTheStreamGoesOnWhereItPaused() throws Exception {
        int port = freePort();
        GantryProcess old = start(runFlags(directory.resolve("data"), port));
        try (ConnectingClient client = new ConnectingClient(port)) {
            client.awaitSuccesses(20);
            GantryProcess taking = start(runFlags(directory.resolve("data"), port, "--take-over"));
            assertThat(old.awaitExit(Duration.ofSeconds(60))).as(old.output()).isZero();
            int beforeExit = client.successes();
            client.awaitSuccesses(beforeExit + 20);
            client.stop();
            System.out.printf("take-over: %d connections tried, %d refused, %d failed otherwise %s%n",
                    client.attempts(), client.refused(), client.otherFailures().size(), client.otherFailures());
            assertThat(client.refused()).as("connections refused during the take-over").isZero();

            assertThat(old.output()).contains("hand-over: passed the listening socket (127.0.0.1:" + port + ")")
                    .contains("gantry: taken over by the Gantry taking over (pid " + taking.process().pid() + ")")
                    .contains("gantry: stopped");
            assertThat(taking.output()).contains("proxy: listening on 127.0.0.1:" + port + " (the socket taken over")
                    .contains("native epoll");
            // The change stream goes on exactly where the old one saved it, from the Authority it passed on.
            assertThat(taking.matchOf(RESUMED_FROM)).isEqualTo(old.matchOf(PAUSED_AT));
            try (Connection admin = taking.connect(SERVICE_USER, SERVICE_PASSWORD);
                 Statement statement = admin.createStatement();
                 ResultSet events = statement.executeQuery("SELECT reason FROM gantry.events WHERE reason LIKE "
                         + "'Gantry started%taken over from pid " + old.process().pid() + "'")) {
                assertThat(events.next()).as("the take-over on the timeline").isTrue();
            }
        }
    }

    @Test
    void aTakeOverThatFailsAfterTheReleaseLeavesTheRunningGantryServingAndTakableAgain() throws Exception {
        int port = freePort();
        GantryProcess old = start(runFlags(directory.resolve("data"), port));
        try (ConnectingClient client = new ConnectingClient(port);
             ServerSocket metricsPortTaken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            client.awaitSuccesses(10);
            // It fails once the running Gantry has let go of the data directory: its metrics port is taken.
            GantryProcess failing = GantryProcess.launch(PASSWORD, runFlags(directory.resolve("data"), port,
                    "--take-over", "--metrics-listen", "127.0.0.1:" + metricsPortTaken.getLocalPort()));
            started.add(failing);
            assertThat(failing.awaitExit(Duration.ofSeconds(60))).as(failing.output()).isEqualTo(1);
            assertThat(failing.output()).contains("--metrics-listen");
            old.awaitLine("gantry: took the data directory back from the Gantry taking over (pid "
                    + failing.process().pid() + ")");
            int before = client.successes();
            client.awaitSuccesses(before + 10);
            try (Connection admin = old.connect(SERVICE_USER, SERVICE_PASSWORD);
                 Statement statement = admin.createStatement();
                 ResultSet status = statement.executeQuery("SHOW GANTRY STATUS")) {
                assertThat(status.next()).as("the Authority is back").isTrue();
            }
            assertThat(directory.resolve("data").resolve("admin.sock")).exists();

            GantryProcess taking = start(runFlags(directory.resolve("data"), port, "--take-over"));
            assertThat(old.awaitExit(Duration.ofSeconds(60))).as(old.output()).isZero();
            client.awaitSuccesses(client.successes() + 10);
            client.stop();
            System.out.printf("failed take-over, then one that worked: %d connections tried, %d refused, %d failed "
                    + "otherwise %s%n", client.attempts(), client.refused(), client.otherFailures().size(),
                    client.otherFailures());
            assertThat(client.refused()).isZero();
            assertThat(taking.output()).contains("(the socket taken over");
        }
    }

    @Test
    void aTakeOverKilledInTheMiddleLeavesTheRunningGantryServing() throws Exception {
        int port = freePort();
        GantryProcess old = start(runFlags(directory.resolve("data"), port));
        // The new Gantry reads its TLS certificate once it has the data directory, before it accepts: from a pipe
        // nobody writes to, it waits there until it is killed.
        Path pipe = directory.resolve("certificate.pipe");
        assertThat(new ProcessBuilder("mkfifo", pipe.toString()).start().waitFor()).isZero();
        try (ConnectingClient client = new ConnectingClient(port)) {
            client.awaitSuccesses(10);
            GantryProcess taking = GantryProcess.launch(PASSWORD, runFlags(directory.resolve("data"), port,
                    "--take-over", "--tls-cert", pipe.toString(), "--tls-key", pipe.toString()));
            started.add(taking);
            old.awaitLine("lent to the Gantry taking over (pid " + taking.process().pid() + ")");
            Thread.sleep(500);
            taking.process().destroyForcibly(); // SIGKILL
            assertThat(taking.process().waitFor(10, TimeUnit.SECONDS)).isTrue();
            old.awaitLine("gantry: took the data directory back from the Gantry taking over (pid "
                    + taking.process().pid() + ")");
            client.awaitSuccesses(client.successes() + 10);
            client.stop();
            System.out.printf("take-over killed in the middle: %d connections tried, %d refused, %d failed "
                    + "otherwise %s%n", client.attempts(), client.refused(), client.otherFailures().size(),
                    client.otherFailures());
            assertThat(client.refused()).isZero();
            assertThat(client.otherFailures()).isEmpty();
            assertThat(old.process().isAlive()).isTrue();
            try (Connection admin = old.connect(SERVICE_USER, SERVICE_PASSWORD);
                 Statement statement = admin.createStatement();
                 ResultSet status = statement.executeQuery("SHOW GANTRY STATUS")) {
                assertThat(status.next()).as("the Authority is back").isTrue();
            }
        }
    }

    @Test
    void aGantryOfAnotherHandOverVersionIsToldSoAndNothingIsTouched() throws Exception {
        Path dataDir = Files.createDirectory(directory.resolve("data"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        try (ServerSocketChannel newer = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            newer.bind(UnixDomainSocketAddress.of(HandOverProtocol.socketIn(dataDir)));
            CompletableFuture<byte[]> asked = CompletableFuture.supplyAsync(() -> {
                try (SocketChannel peer = newer.accept()) {
                    OutputStream out = Channels.newOutputStream(peer);
                    out.write(("gantry-hand-over " + (HandOverProtocol.VERSION + 1) + " pid=4242 gantry=9.0 "
                            + "listen=127.0.0.1:1 transport=epoll\n").getBytes(StandardCharsets.UTF_8));
                    out.flush();
                    InputStream in = Channels.newInputStream(peer);
                    return in.readAllBytes();
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            GantryProcess taking = GantryProcess.launch(PASSWORD, runFlags(dataDir, freePort(), "--take-over"));
            started.add(taking);
            assertThat(taking.awaitExit(Duration.ofSeconds(60))).as(taking.output()).isEqualTo(1);
            assertThat(taking.output()).contains("the running Gantry speaks hand-over version "
                    + (HandOverProtocol.VERSION + 1) + " and this one speaks version " + HandOverProtocol.VERSION)
                    .contains("nothing was taken over");
            assertThat(asked.get(10, TimeUnit.SECONDS)).as("what the new Gantry asked").isEmpty();
        }
        assertThat(Authority.exists(dataDir)).as("an Authority made in " + dataDir).isFalse();
    }

    @Test
    void aTakeOverWithNoGantryRunningSaysSoAndMakesNoDataDirectory() throws Exception {
        Path dataDir = directory.resolve("data");
        GantryProcess taking = GantryProcess.launch(PASSWORD, runFlags(dataDir, freePort(), "--take-over"));
        started.add(taking);
        assertThat(taking.awaitExit(Duration.ofSeconds(60))).as(taking.output()).isEqualTo(1);
        assertThat(taking.output()).contains("gantry: --take-over: there is no hand-over socket")
                .contains("--data-dir " + dataDir);
        assertThat(dataDir).doesNotExist();
    }

    // ---- helpers ------------------------------------------------------------------------------------------------

    private GantryProcess start(String... arguments) throws Exception {
        GantryProcess gantry = GantryProcess.launch(PASSWORD, arguments);
        started.add(gantry);
        return gantry.awaitServing();
    }

    private static String[] runFlags(Path dataDir, int port, String... more) {
        return Stream.concat(Stream.of("--upstream-db-url", "mysql://" + SERVICE_USER + "@"
                + topology.primary().address() + "/app", "--listen", "127.0.0.1:" + port, "--data-dir",
                dataDir.toString(), "--drain-timeout-secs", "10"), Stream.of(more)).toArray(String[]::new);
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /**
     * A client that opens a new connection every 5 ms, runs {@code SELECT 1} and closes it, counting the
     * connections refused apart from other failures (a login the old Gantry's drain cut).
     */
    private static final class ConnectingClient implements AutoCloseable {

        private final int port;
        private final Thread thread;
        private final AtomicInteger attempts = new AtomicInteger();
        private final AtomicInteger successes = new AtomicInteger();
        private final AtomicInteger refused = new AtomicInteger();
        private final List<String> otherFailures = new CopyOnWriteArrayList<>();
        private volatile boolean running = true;

        ConnectingClient(int port) {
            this.port = port;
            this.thread = new Thread(this::loop, "connecting-client");
            thread.start();
        }

        private void loop() {
            while (running) {
                attempts.incrementAndGet();
                try (Connection connection = DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + port
                        + "/app?sslMode=DISABLED&connectTimeout=5000", SERVICE_USER, SERVICE_PASSWORD);
                     Statement statement = connection.createStatement();
                     ResultSet one = statement.executeQuery("SELECT 1")) {
                    one.next();
                    successes.incrementAndGet();
                } catch (SQLException e) {
                    if (refusedConnection(e)) {
                        refused.incrementAndGet();
                    } else {
                        otherFailures.add(e.getErrorCode() + " " + e.getMessage().lines().findFirst().orElse(""));
                    }
                }
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        private static boolean refusedConnection(Throwable failure) {
            for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
                if (cause instanceof ConnectException) {
                    return true;
                }
            }
            return false;
        }

        void awaitSuccesses(int count) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (successes.get() < count) {
                assertThat(System.nanoTime()).as("%d connections of %d succeeded; refused %d; failed %s",
                        successes.get(), attempts.get(), refused.get(), otherFailures).isLessThan(deadline);
                Thread.sleep(10);
            }
        }

        int attempts() {
            return attempts.get();
        }

        int successes() {
            return successes.get();
        }

        int refused() {
            return refused.get();
        }

        List<String> otherFailures() {
            return otherFailures;
        }

        void stop() throws InterruptedException {
            running = false;
            thread.join(10_000);
        }

        @Override
        public void close() throws InterruptedException {
            stop();
        }
    }
}
