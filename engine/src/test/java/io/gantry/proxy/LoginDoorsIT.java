package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.queryString;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import io.gantry.events.EngineEvent;
import io.gantry.proxy.ProxyFailureIT.RawClient;
import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.proxy.login.LoginLimits;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a peer can do to Gantry before it has logged in: hold a slot only until the handshake timeout, never lock
 * logged-in clients out, make Gantry hold no more than a login needs, be blocked after malformed handshakes (never
 * for wrong passwords, which only slow that account down), and not flood the log.
 */
class LoginDoorsIT {

    private static final int MAX_HANDSHAKE_ERRORS = 3;
    private static final Duration BLOCK_FOR = Duration.ofSeconds(2);
    private static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(2);

    private static Topology topology;
    private static ProxyHarness gantry;

    @BeforeAll
    static void startProxy() {
        topology = Sandboxes.shared(TopologyKind.MARIADB);
        // Blocking off here, so one test's failed logins cannot lock the others out; blocking has its own proxy.
        gantry = ProxyHarness.start(topology, c -> c.withMaxClientConnections(5)
                .withLogin(new LoginLimits(HANDSHAKE_TIMEOUT, 200, 100, 0, BLOCK_FOR, 0, Duration.ZERO)),
                l -> l);
    }

    @AfterAll
    static void stopProxy() {
        gantry.close();
    }

    @Test
    void connectionsThatNeverLogInDoNotLockClientsOutAndAreClosedAfterTheHandshakeTimeout() throws Exception {
        List<Socket> idle = new ArrayList<>();
        try {
            for (int i = 0; i < 50; i++) {
                Socket socket = new Socket("127.0.0.1", gantry.port());
                socket.setSoTimeout((int) HANDSHAKE_TIMEOUT.toMillis() * 3);
                idle.add(socket);
            }
            // Ten times --max-client-connections are connected and silent: a real client still gets in.
            try (Connection client = gantry.connect(Driver.MYSQL_CONNECTOR_J)) {
                assertThat(queryString(client, "SELECT 'in'")).isEqualTo("in");
            }
            long started = System.nanoTime();
            for (Socket socket : idle) {
                assertThat(readsToEndOfStream(socket.getInputStream())).as("closed by Gantry").isTrue();
            }
            assertThat(Duration.ofNanos(System.nanoTime() - started))
                    .isLessThan(HANDSHAKE_TIMEOUT.plusSeconds(3));
        } finally {
            for (Socket socket : idle) {
                socket.close();
            }
        }
    }

    /**
     * More connections than may log in at once from one host wait for their turn instead of being refused: a burst
     * of 60 logins with room for 4 at a time all get in, and a client behind 4 silent connections gets in once
     * they are timed out.
     */
    @Test
    void loginsBeyondTheLimitOfOneHostWaitForTheirTurn() throws Exception {
        try (ProxyHarness narrow = ProxyHarness.start(topology, c -> c.withLogin(new LoginLimits(HANDSHAKE_TIMEOUT,
                8, 4, 0, BLOCK_FOR, 0, Duration.ZERO)), l -> l)) {
            List<Throwable> failures = new CopyOnWriteArrayList<>();
            List<Thread> burst = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                Thread thread = new Thread(() -> {
                    try (Connection client = narrow.connect(Driver.MYSQL_CONNECTOR_J)) {
                        assertThat(queryString(client, "SELECT 'in'")).isEqualTo("in");
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                });
                burst.add(thread);
                thread.start();
            }
            for (Thread thread : burst) {
                thread.join(30_000);
            }
            assertThat(failures).as("logins of the burst that failed").isEmpty();

            List<Socket> silent = new ArrayList<>();
            try {
                for (int i = 0; i < 4; i++) {
                    Socket socket = new Socket("127.0.0.1", narrow.port());
                    silent.add(socket);
                    // Greeted: it holds one of the host's four places until its timeout.
                    socket.setSoTimeout(5000);
                    assertThat(socket.getInputStream().read()).as("the greeting's first byte").isNotNegative();
                }
                long started = System.nanoTime();
                // A peer that talks before its greeting is not heard while it waits: no answer, no login.
                try (Socket early = new Socket("127.0.0.1", narrow.port())) {
                    early.getOutputStream().write(new byte[] {8, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8});
                    early.setSoTimeout(700);
                    assertThatThrownBy(() -> early.getInputStream().read()).as("nothing sent to a waiting peer")
                            .isInstanceOf(SocketTimeoutException.class);
                }
                try (Connection client = narrow.connect(Driver.MYSQL_CONNECTOR_J, "connectTimeout=10000")) {
                    assertThat(queryString(client, "SELECT 'in'")).isEqualTo("in");
                }
                assertThat(Duration.ofNanos(System.nanoTime() - started)).as("waited for the silent ones' timeout")
                        .isBetween(HANDSHAKE_TIMEOUT.minusMillis(500), HANDSHAKE_TIMEOUT.plusSeconds(3));
            } finally {
                for (Socket socket : silent) {
                    socket.close();
                }
            }
        }
    }

    /** Reads (the greeting, then nothing) until the peer closes; false if it is still open after the timeout. */
    private static boolean readsToEndOfStream(InputStream in) throws Exception {
        byte[] buffer = new byte[512];
        try {
            while (in.read(buffer) >= 0) {
                // the greeting
            }
            return true;
        } catch (SocketTimeoutException stillOpen) {
            return false;
        }
    }

    @Test
    void aLoginPacketLargerThanALoginNeedsIsRefusedBeforeItsBodyArrives() throws Exception {
        try (Socket socket = new Socket("127.0.0.1", gantry.port())) {
            socket.setSoTimeout(5000);
            RawClient raw = new RawClient(socket);
            raw.readPacket(); // greeting
            // A header announcing 8 MB and 1 KB of it: Gantry answers without waiting for (or buffering) the rest.
            byte[] start = new byte[4 + 1024];
            start[0] = 0;
            start[1] = 0;
            start[2] = (byte) 0x80;
            start[3] = 1;
            raw.send(start);
            byte[] error = raw.readPacket();
            assertThat(error[0] & 0xFF).isEqualTo(0xFF);
            assertThat((error[1] & 0xFF) | (error[2] & 0xFF) << 8).isEqualTo(1153);
            assertThat(new String(error, StandardCharsets.UTF_8)).contains("before login");
            assertThat(raw.isClosedByPeer()).isTrue();
        }
    }

    @Test
    void wrongPasswordsNeverBlockTheHostAndAreAnsweredAfterAGrowingDelayForThatAccountOnly() throws Exception {
        try (Connection admin = topology.connectAsAdmin(topology.primary());
             Statement statement = admin.createStatement()) {
            statement.execute("CREATE USER IF NOT EXISTS 'neighbour'@'%' IDENTIFIED BY 'neighbour-pw'");
            statement.execute("GRANT SELECT ON `" + topology.database() + "`.* TO 'neighbour'@'%'");
        }
        try (ProxyHarness guarded = ProxyHarness.start(topology, c -> c.withLogin(new LoginLimits(
                HANDSHAKE_TIMEOUT, 200, 100, MAX_HANDSHAKE_ERRORS, BLOCK_FOR, 2, Duration.ofMillis(1500))), l -> l)) {
            List<Long> refusalMillis = new ArrayList<>();
            for (int i = 0; i < 2 * MAX_HANDSHAKE_ERRORS; i++) {
                long start = System.nanoTime();
                assertThatThrownBy(() -> login(guarded, topology.appAccount().user(), "stale-password"))
                        .as("refusal %d", i + 1).isInstanceOfSatisfying(SQLException.class,
                                e -> assertThat(e.getErrorCode()).isEqualTo(1045));
                refusalMillis.add(Duration.ofNanos(System.nanoTime() - start).toMillis());
            }
            assertThat(refusalMillis.get(0)).as("the first refusal is not delayed").isLessThan(900);
            assertThat(refusalMillis.get(2)).as("the third waits 2 s, capped at 1.5 s").isGreaterThanOrEqualTo(1400);
            assertThat(refusalMillis.get(refusalMillis.size() - 1)).isGreaterThanOrEqualTo(1400);
            long start = System.nanoTime();
            try (Connection neighbour = login(guarded, "neighbour", "neighbour-pw")) {
                assertThat(queryString(neighbour, "SELECT 'next door'")).isEqualTo("next door");
            }
            try (Connection app = login(guarded, topology.appAccount().user(), topology.appAccount().password())) {
                assertThat(queryString(app, "SELECT 'right password'")).isEqualTo("right password");
            }
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("neither good login waited")
                    .isLessThan(Duration.ofMillis(1400));
            start = System.nanoTime();
            assertThatThrownBy(() -> login(guarded, topology.appAccount().user(), "stale-password"))
                    .isInstanceOf(SQLException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("the right password cleared the count")
                    .isLessThan(Duration.ofMillis(900));
        }
    }

    @Test
    void aHostIsBlockedAfterMalformedHandshakesThenLetInAgain() throws Exception {
        List<String> events = new CopyOnWriteArrayList<>();
        try (ProxyHarness guarded = ProxyHarness.start(topology, c -> c.withLogin(
                new LoginLimits(HANDSHAKE_TIMEOUT, 200, 100, MAX_HANDSHAKE_ERRORS, BLOCK_FOR, 0,
                        Duration.ZERO)), l -> l,
                event -> {
                    if (event instanceof EngineEvent.Timeline timeline) {
                        events.add(timeline.event().kind() + " " + timeline.event().server() + ": "
                                + timeline.event().reason());
                    }
                })) {
            for (int i = 0; i < MAX_HANDSHAKE_ERRORS; i++) {
                sendMalformedLogin(guarded.port());
            }
            assertThatThrownBy(() -> login(guarded, topology.appAccount().user(), topology.appAccount().password()))
                    .as("even the right password, while blocked")
                    .isInstanceOfSatisfying(SQLException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(1129);
                        assertThat(e.getMessage()).contains("blocked");
                    });
            Awaitility.await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(events).anySatisfy(
                    event -> assertThat(event).startsWith("HOST_BLOCKED 127.0.0.1")
                            .contains(MAX_HANDSHAKE_ERRORS + " malformed or unfinished handshakes")));
            Awaitility.await().atMost(BLOCK_FOR.plusSeconds(3)).ignoreExceptions().untilAsserted(() -> {
                try (Connection again = login(guarded, topology.appAccount().user(),
                        topology.appAccount().password())) {
                    assertThat(queryString(again, "SELECT 'back'")).isEqualTo("back");
                }
            });
        }
    }

    @Test
    void handshakesLeftUnfinishedCountTowardTheBlockAndAFlushLiftsIt() throws Exception {
        try (ProxyHarness guarded = ProxyHarness.start(topology, c -> c.withLogin(
                new LoginLimits(HANDSHAKE_TIMEOUT, 200, 100, MAX_HANDSHAKE_ERRORS, Duration.ofMinutes(10),
                        0, Duration.ZERO)), l -> l)) {
            List<Socket> silent = new ArrayList<>();
            try {
                for (int i = 0; i < MAX_HANDSHAKE_ERRORS; i++) {
                    Socket socket = new Socket("127.0.0.1", guarded.port());
                    socket.setSoTimeout((int) HANDSHAKE_TIMEOUT.toMillis() * 3);
                    silent.add(socket);
                }
                for (Socket socket : silent) {
                    InputStream in = socket.getInputStream();
                    while (in.read() >= 0) {
                        // the greeting, then the close at the handshake timeout
                    }
                }
            } finally {
                for (Socket socket : silent) {
                    socket.close();
                }
            }
            assertThatThrownBy(() -> login(guarded, topology.appAccount().user(), topology.appAccount().password()))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1129));
            try (Connection admin = guarded.connect(Driver.MYSQL_CONNECTOR_J)) {
                fail("blocked hosts cannot log in");
            } catch (SQLException expected) {
                assertThat(expected.getErrorCode()).isEqualTo(1129);
            }
            assertThat(guarded.proxy.hostBlocks().blockedHosts()).singleElement()
                    .satisfies(host -> assertThat(host.reason()).contains("left unfinished"));
            assertThat(guarded.proxy.hostBlocks().unblock("127.0.0.1")).isTrue();
            try (Connection again = login(guarded, topology.appAccount().user(), topology.appAccount().password())) {
                assertThat(queryString(again, "SELECT 'unblocked'")).isEqualTo("unblocked");
            }
        }
    }

    /** Capabilities and max packet size, then nothing: the user name is missing. */
    private static void sendMalformedLogin(int port) throws Exception {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(5000);
            RawClient raw = new RawClient(socket);
            raw.readPacket();
            raw.sendPacket(1, new byte[] {(byte) 0x85, (byte) 0xA6, 0x0F, 0x00, 0, 0, 0, 1});
            raw.readPacket();
        }
    }

    private static Connection login(ProxyHarness proxy, String user, String password) throws SQLException {
        return DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + proxy.port() + "/" + topology.database()
                + "?sslMode=DISABLED&allowPublicKeyRetrieval=true", user, password);
    }

    @Test
    void malformedLoginsAreLoggedInALineEachAtMostAndWithoutStackTraces() throws Exception {
        PrintStream original = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            for (int i = 0; i < 200; i++) {
                sendMalformedLogin(gantry.port());
            }
        } finally {
            System.setErr(original);
        }
        String log = captured.toString(StandardCharsets.UTF_8);
        long lines = log.lines().filter(line -> line.contains("malformed packet")).count();
        assertThat(lines).as("one line per session at most, and at most 20 a minute").isBetween(1L, 21L);
        assertThat(log).doesNotContain("IllegalReferenceCountException").doesNotContain("\tat ");
    }
}
