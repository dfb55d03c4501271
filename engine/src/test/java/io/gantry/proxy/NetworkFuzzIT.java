package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.TopologyKinds;
import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.proxy.login.LoginLimits;
import io.gantry.sandbox.Credentials;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.wire.CapabilityFlags;
import io.gantry.wire.ChangeUser;
import io.gantry.wire.Fuzzing;
import io.gantry.wire.HandshakeResponse41;
import io.gantry.wire.HandshakeV10;
import io.gantry.wire.NativePassword;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Mutated handshakes and commands sent to a running Gantry over real sockets, in batches. Each probe is a complete
 * frame (a mutated HandshakeResponse41 before login, a mutated command after a real login) or a mutated byte stream
 * followed by a half-close; each must be answered or closed within {@link #PROBE_TIMEOUT}. After every batch a
 * normal JDBC login and {@code SELECT 1} still work, no session is left open, every server still answers, and the
 * JVM's thread count, heap after GC and Netty's pooled direct memory stay within bounds of where they started.
 *
 * <p>The servers are the test's own: a command Gantry passes on may crash one (MariaDB 11.4.5 once died of a
 * {@code SIGSEGV} in {@code insert_params} under this test, a server bug), and that must fail this test, naming the
 * server and the last commands sent, rather than the tests that share servers after it.
 *
 * <p>{@code -Dgantry.fuzz.connections=N} sets how many connections the run makes in total (default 1000, in 10
 * batches); {@code -Dgantry.fuzz.seed=S} replays a run (the seed is logged and named in every failure).
 */
class NetworkFuzzIT {

    private static final Logger LOG = LoggerFactory.getLogger(NetworkFuzzIT.class);
    private static final int CONNECTIONS = Integer.getInteger("gantry.fuzz.connections", 1000);
    private static final int BATCHES = 10;
    private static final long SEED = Long.getLong("gantry.fuzz.seed", System.nanoTime());
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(5);
    private static final int COMMANDS_PER_SESSION = 8;
    private static final int SMALL_PACKET_LIMIT = 64 * 1024;
    private static final int MAX_EXTRA_THREADS = 32;
    private static final long MAX_EXTRA_HEAP = 64L << 20;
    private static final long MAX_EXTRA_DIRECT = 64L << 20;

    /** How many of the last command payloads sent a failure names. */
    private static final int COMMANDS_REMEMBERED = 40;

    private static Topology topology;
    private static ProxyHarness gantry;
    /** The last command payloads sent after a login, in hex, oldest first. */
    private static final ArrayDeque<String> lastCommands = new ArrayDeque<>();

    @BeforeAll
    static void startProxy() {
        topology = TopologyKinds.startPrivate(TopologyKind.MARIADB, "fuzz", 2);
        // Every probe comes from 127.0.0.1 and half of them fail their login on purpose: no host blocking here
        // (LoginDoorsIT tests it), and room for every probe that is logging in at once.
        gantry = ProxyHarness.start(topology, c -> c.withMaxClientConnections(50).withMaxPacketSize(SMALL_PACKET_LIMIT)
                .withLogin(new LoginLimits(java.time.Duration.ofSeconds(10), 4096, 4096, 0,
                        java.time.Duration.ofSeconds(1), 0, java.time.Duration.ZERO)), l -> l);
    }

    @AfterAll
    static void stopProxy() {
        gantry.close();
        topology.close();
    }

    private record Baseline(int threads, long heap, long direct) {
    }

    private static final class Counts {
        int connections;
        int handshakeProbes;
        int commandProbes;
        int streamProbes;
        int answered;
        int closed;
        int desynchronised;
    }

    @Test
    void mutatedHandshakesAndCommandsNeverHangLeakOrBreakNormalLogins() throws Exception {
        LOG.info("NetworkFuzzIT: seed {} ({} connections in {} batches)", SEED, CONNECTIONS, BATCHES);
        Random random = new Random(SEED);
        normalLoginWorks();
        Baseline baseline = measure();
        Counts counts = new Counts();
        long started = System.nanoTime();
        int perBatch = Math.max(1, CONNECTIONS / BATCHES);
        for (int batch = 0; batch < BATCHES; batch++) {
            int target = counts.connections + perBatch;
            while (counts.connections < target) {
                int pick = random.nextInt(10);
                if (pick < 5) {
                    handshakeProbe(random, counts);
                } else if (pick < 7) {
                    streamProbe(random, counts);
                } else {
                    commandSession(random, counts);
                }
            }
            String where = "after batch " + (batch + 1) + " (seed " + SEED + ")";
            everyServerAnswers(where);
            normalLoginWorks();
            Awaitility.await(where + ": every fuzz session closed").atMost(Duration.ofSeconds(15))
                    .until(() -> gantry.proxy.openSessions() == 0);
            Baseline now = measure();
            LOG.info("NetworkFuzzIT: {}: {} connections, threads {} (from {}), heap {} MB (from {}), pooled direct {} MB"
                            + " (from {})", where, counts.connections, now.threads(), baseline.threads(), now.heap() >> 20,
                    baseline.heap() >> 20, now.direct() >> 20, baseline.direct() >> 20);
            assertThat(now.threads()).as("threads %s", where).isLessThanOrEqualTo(baseline.threads() + MAX_EXTRA_THREADS);
            assertThat(now.heap()).as("heap after GC %s", where).isLessThanOrEqualTo(baseline.heap() + MAX_EXTRA_HEAP);
            assertThat(now.direct()).as("pooled direct memory %s", where)
                    .isLessThanOrEqualTo(baseline.direct() + MAX_EXTRA_DIRECT);
        }
        long seconds = (System.nanoTime() - started) / 1_000_000_000L;
        LOG.info("NetworkFuzzIT: {} connections ({} handshake probes, {} command probes, {} stream probes; {} answered, "
                        + "{} closed by Gantry, {} command sessions ended out of step) in {} s", counts.connections,
                counts.handshakeProbes, counts.commandProbes, counts.streamProbes, counts.answered, counts.closed,
                counts.desynchronised, seconds);
    }

    // ---- probes ------------------------------------------------------------------------------

    /** Before login: a mutated HandshakeResponse41 (or SSLRequest) in one complete frame. */
    private static void handshakeProbe(Random random, Counts counts) throws IOException {
        counts.connections++;
        counts.handshakeProbes++;
        try (Probe probe = Probe.open(gantry.port())) {
            byte[] greeting = probe.readPacket();
            byte[] valid = handshakeResponse(HandshakeV10.decode(Unpooled.wrappedBuffer(greeting)), random);
            byte[] payload = Fuzzing.mutate(valid, random);
            probe.sendPacket(random.nextInt(8) == 0 ? random.nextInt(256) : 1, payload);
            probe.expectAnswerOrClose("handshake response " + Fuzzing.hex(payload), counts);
        }
    }

    /** Before or after login: mutated bytes with no regard for framing, then a half-close; Gantry must close. */
    private static void streamProbe(Random random, Counts counts) throws IOException {
        counts.connections++;
        counts.streamProbes++;
        boolean loggedIn = random.nextBoolean();
        try (Probe probe = loggedIn ? Probe.login(gantry.port(), random) : Probe.open(gantry.port())) {
            if (!loggedIn) {
                probe.readPacket();
            }
            byte[] valid = WireClient.framed(random.nextInt(256), loggedIn ? command(random) : new byte[40]);
            byte[] stream = Fuzzing.mutate(valid, random);
            probe.send(stream);
            probe.socket.shutdownOutput();
            probe.expectClose("stream " + Fuzzing.hex(stream), counts);
        }
    }

    /**
     * After a real login: mutated commands, each followed by a marker query; the first packet back (or the close) must
     * come within the timeout, and the session goes on with the next command once the marker's row is back. A command
     * that leaves the session waiting for something else (an auth exchange after COM_CHANGE_USER) ends the session.
     */
    private static void commandSession(Random random, Counts counts) throws IOException {
        counts.connections++;
        try (Probe probe = Probe.login(gantry.port(), random)) {
            for (int i = 0; i < COMMANDS_PER_SESSION && !probe.closed; i++) {
                counts.commandProbes++;
                byte[] payload = Fuzzing.mutate(command(random), random);
                remember(Fuzzing.hex(payload));
                String marker = "fuzz-marker-" + counts.commandProbes;
                // now and then a sequence id other than 0, which ends the session ("Got packets out of order")
                probe.sendPacket(random.nextInt(30) == 0 ? random.nextInt(256) : 0, payload);
                probe.sendPacket(0, ("\u0003SELECT '" + marker + "'").getBytes(StandardCharsets.UTF_8));
                probe.expectAnswerOrClose("command " + Fuzzing.hex(payload), counts);
                if (!probe.skipPast(marker.getBytes(StandardCharsets.UTF_8))) {
                    counts.desynchronised++;
                    break;
                }
            }
        }
    }

    private static void remember(String command) {
        if (lastCommands.size() == COMMANDS_REMEMBERED) {
            lastCommands.removeFirst();
        }
        lastCommands.addLast(command);
    }

    /** Each server still answers a query: none was crashed by a command Gantry passed on. */
    private static void everyServerAnswers(String where) {
        for (DatabaseServer server : topology.servers()) {
            try (Connection connection = topology.connectAsAdmin(server);
                 Statement statement = connection.createStatement()) {
                statement.execute("SELECT 1");
            } catch (SQLException e) {
                throw new AssertionError(server.name() + " (" + server.address() + ") no longer answers " + where
                        + ": " + e.getMessage() + "; see its error.log in the sandbox; the last commands sent, oldest "
                        + "first: " + String.join(" ", lastCommands), e);
            }
        }
    }

    private static final String[] QUERIES = {
        "SELECT 1", "SELECT @@version, @@server_id", "SELECT 'a' AS x UNION SELECT 'b'", "SET @fuzz = 1", "SELECT @fuzz",
        "/*#mode=READWRITE*/ SELECT 1", "BEGIN", "COMMIT", "SELECT ? + 1", "SHOW DATABASES", "DO 1", "SELECT CONNECTION_ID()",
    };

    /** A valid command payload of one of the kinds a client sends. */
    private static byte[] command(Random random) {
        String query = QUERIES[random.nextInt(QUERIES.length)];
        byte[] text = query.getBytes(StandardCharsets.UTF_8);
        return switch (random.nextInt(12)) {
            case 0 -> new byte[] {0x0E};
            case 1 -> concat(new byte[] {0x02}, topology.database().getBytes(StandardCharsets.UTF_8));
            case 2 -> concat(new byte[] {0x16}, text);
            case 3 -> new byte[] {0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 8, 0, 5, 0, 0, 0, 0, 0, 0, 0};
            case 4 -> new byte[] {0x19, 1, 0, 0, 0};
            case 5 -> new byte[] {0x18, 1, 0, 0, 0, 0, 0, 'a', 'b'};
            case 6 -> new byte[] {0x1A, 1, 0, 0, 0};
            case 7 -> new byte[] {0x1C, 1, 0, 0, 0, 10, 0, 0, 0};
            case 8 -> concat(new byte[] {0x04}, "t\0".getBytes(StandardCharsets.UTF_8));
            case 9 -> Fuzzing.encode(new ChangeUser(topology.appAccount().user(), new byte[20], topology.database(), 45,
                    NativePassword.PLUGIN_NAME)::encode);
            case 10 -> new byte[] {0x1B, 0, 0};
            default -> concat(new byte[] {0x03}, text);
        };
    }

    private static byte[] handshakeResponse(HandshakeV10 greeting, Random random) {
        Credentials account = topology.appAccount();
        byte[] seed = java.util.Arrays.copyOf(greeting.authPluginData(), NativePassword.SEED_LENGTH);
        int capabilities = CapabilityFlags.CLIENT_PROTOCOL_41 | CapabilityFlags.CLIENT_SECURE_CONNECTION
                | CapabilityFlags.CLIENT_PLUGIN_AUTH | CapabilityFlags.CLIENT_LONG_PASSWORD
                | CapabilityFlags.CLIENT_TRANSACTIONS | CapabilityFlags.CLIENT_CONNECT_WITH_DB
                | CapabilityFlags.CLIENT_CONNECT_ATTRS | CapabilityFlags.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
                | (random.nextBoolean() ? CapabilityFlags.CLIENT_DEPRECATE_EOF | CapabilityFlags.CLIENT_SESSION_TRACK : 0);
        HandshakeResponse41 response = new HandshakeResponse41(capabilities, 1 << 24, 45, 0, account.user(),
                NativePassword.scramble(account.password().getBytes(StandardCharsets.UTF_8), seed), topology.database(),
                NativePassword.PLUGIN_NAME, Map.of("_client_name", "fuzz", "_pid", "1"), 0);
        return Fuzzing.encode(response::encode);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    // ---- checks ------------------------------------------------------------------------------

    private static void normalLoginWorks() throws Exception {
        try (Connection connection = gantry.connect(Driver.MARIADB_CONNECTOR_J, "connectTimeout=5000&socketTimeout=5000")) {
            assertThat(ProxyHarness.queryString(connection, "SELECT 1")).isEqualTo("1");
        }
    }

    private static Baseline measure() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        int threads = ManagementFactory.getThreadMXBean().getThreadCount();
        long direct = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
        return new Baseline(threads, heap, direct);
    }

    /** A bare socket with a short read timeout. */
    private static final class Probe implements AutoCloseable {
        final Socket socket;
        final DataInputStream in;
        final OutputStream out;
        boolean closed;

        private Probe(Socket socket) throws IOException {
            this.socket = socket;
            socket.setSoTimeout((int) PROBE_TIMEOUT.toMillis());
            this.in = new DataInputStream(socket.getInputStream());
            this.out = socket.getOutputStream();
        }

        static Probe open(int port) throws IOException {
            return new Probe(new Socket("127.0.0.1", port));
        }

        static Probe login(int port, Random random) throws IOException {
            Probe probe = open(port);
            byte[] greeting = probe.readPacket();
            probe.sendPacket(1, handshakeResponse(HandshakeV10.decode(Unpooled.wrappedBuffer(greeting)), random));
            byte[] ok = probe.readPacket();
            assertThat(ok).as("login answer").isNotNull();
            assertThat(ok[0]).as("login answer %s", Fuzzing.hex(ok)).isEqualTo((byte) 0);
            return probe;
        }

        void sendPacket(int sequenceId, byte[] payload) throws IOException {
            send(WireClient.framed(sequenceId, payload));
        }

        void send(byte[] bytes) throws IOException {
            try {
                out.write(bytes);
                out.flush();
            } catch (SocketException e) {
                closed = true; // Gantry closed first: allowed
            }
        }

        /** A packet, or null if Gantry closed the connection. Fails on timeout. */
        byte[] readPacket() throws IOException {
            try {
                int length = in.readUnsignedByte() | in.readUnsignedByte() << 8 | in.readUnsignedByte() << 16;
                in.readUnsignedByte();
                byte[] payload = new byte[length];
                in.readFully(payload);
                return payload;
            } catch (EOFException | SocketException e) {
                closed = true;
                return null;
            }
        }

        void expectAnswerOrClose(String what, Counts counts) throws IOException {
            if (closed) {
                counts.closed++;
                return;
            }
            try {
                byte[] answer = readPacket();
                if (answer == null) {
                    counts.closed++;
                } else {
                    counts.answered++;
                }
            } catch (SocketTimeoutException e) {
                throw new AssertionError("no answer and no close within " + PROBE_TIMEOUT.toSeconds() + " s after "
                        + what + " (seed " + SEED + ")");
            }
        }

        void expectClose(String what, Counts counts) throws IOException {
            try {
                List<byte[]> answers = new ArrayList<>();
                byte[] packet;
                while (!closed && (packet = readPacket()) != null) {
                    answers.add(packet);
                }
                counts.closed++;
            } catch (SocketTimeoutException e) {
                throw new AssertionError("Gantry did not close within " + PROBE_TIMEOUT.toSeconds()
                        + " s after the client half-closed, after " + what + " (seed " + SEED + ")");
            }
        }

        /**
         * Reads up to and including the row holding {@code marker} and the packet that ends its result set.
         *
         * @return false if the connection closed or went quiet first
         */
        boolean skipPast(byte[] marker) throws IOException {
            try {
                byte[] packet;
                while (!closed && (packet = readPacket()) != null) {
                    if (contains(packet, marker)) {
                        return readPacket() != null;
                    }
                }
                return false;
            } catch (SocketTimeoutException quiet) {
                return false;
            }
        }

        private static boolean contains(byte[] haystack, byte[] needle) {
            outer:
            for (int i = 0; i + needle.length <= haystack.length; i++) {
                for (int j = 0; j < needle.length; j++) {
                    if (haystack[i + j] != needle[j]) {
                        continue outer;
                    }
                }
                return true;
            }
            return false;
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
