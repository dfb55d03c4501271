package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static io.gantry.proxy.ProxyHarness.queryString;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.wire.CapabilityFlags;
import io.gantry.wire.HandshakeResponse41;
import io.gantry.wire.HandshakeV10;
import io.gantry.wire.NativePassword;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Failures stay contained: a dead replica costs its sessions an error, bad input costs only its own session. */
class ProxyFailureIT {

    private static final int SMALL_PACKET_LIMIT = 64 * 1024;
    private static Topology shared;
    private static ProxyHarness gantry;

    @BeforeAll
    static void startProxy() {
        shared = Sandboxes.shared(TopologyKind.MARIADB);
        gantry = ProxyHarness.start(shared, c -> c.withMaxClientConnections(5).withMaxPacketSize(SMALL_PACKET_LIMIT),
                l -> l);
    }

    @AfterAll
    static void stopProxy() {
        gantry.close();
    }

    @Test
    void killedReplicaFailsItsSessionWithTheServerNameAndNewSessionsAvoidIt() throws Exception {
        try (Topology topology = Sandboxes.startPrivate(TopologyKind.MARIADB, "replica-death", 2);
             ProxyHarness proxy = ProxyHarness.start(topology)) {
            Connection victimSession = proxy.connect(Driver.MYSQL_CONNECTOR_J);
            // In a read-only transaction the session holds its replica connection whatever the time between its
            // statements (an idle autocommit session's connection goes to the pool after the retention, and its
            // next read then simply runs elsewhere), so the server's death reaches the session.
            execute(victimSession, "START TRANSACTION READ ONLY");
            DatabaseServer replica = proxy.whereRuns(victimSession, "SELECT @@server_id");
            assertThat(topology.replicas()).contains(replica);

            topology.kill(replica);

            assertThatThrownBy(() -> queryString(victimSession, "SELECT @@server_id"))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining(replica.address());
            victimSession.close();

            long started = System.nanoTime();
            for (int i = 0; i < 10; i++) {
                try (Connection fresh = proxy.connect(Driver.MARIADB_CONNECTOR_J)) {
                    DatabaseServer server = proxy.whereRuns(fresh, "SELECT @@server_id");
                    assertThat(server).isNotEqualTo(replica);
                    assertThat(topology.replicas()).contains(server);
                }
            }
            assertThat((System.nanoTime() - started) / 1_000_000).as("10 new sessions, in ms").isLessThan(5_000);
        }
    }

    @Test
    void aReadWhoseReplicaIsKilledUnderItRunsAgainElsewhere() throws Exception {
        try (Topology topology = Sandboxes.startPrivate(TopologyKind.MARIADB, "read-again", 2);
             ProxyHarness proxy = ProxyHarness.start(topology);
             Connection session = proxy.connect(Driver.MARIADB_CONNECTOR_J)) {
            CompletableFuture<String> read = CompletableFuture.supplyAsync(() -> {
                try {
                    return queryString(session, "SELECT CONCAT(SLEEP(1.5), ':', @@port)");
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            // The replica running it, found from its process list; killed while the read runs, before any answer.
            DatabaseServer running = Awaitility.await().atMost(Duration.ofSeconds(10)).until(
                    () -> topology.replicas().stream().filter(replica -> runsTheSleep(topology, replica)).findFirst(),
                    java.util.Optional::isPresent).get();
            topology.kill(running);

            String answer = read.get(30, TimeUnit.SECONDS);
            assertThat(answer).as("answered by another server, the client none the wiser")
                    .startsWith("0:").isNotEqualTo("0:" + running.port());
        }
    }

    private static boolean runsTheSleep(Topology topology, DatabaseServer replica) {
        try (Connection direct = topology.connectAsAdmin(replica)) {
            return !queryString(direct, "SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                    + "WHERE INFO LIKE 'SELECT CONCAT(SLEEP%'").equals("0");
        } catch (SQLException e) {
            return false;
        }
    }

    @Test
    void oversizedPacketClosesOnlyThatSession() throws Exception {
        try (Connection bystander = gantry.connect(Driver.MYSQL_CONNECTOR_J); RawClient raw = RawClient.login(gantry)) {
            // A header announcing more than --max-allowed-packet: refused before the body arrives.
            raw.send(new byte[] {(byte) 0xFF, (byte) 0xFF, 0x01, 0x00, 0x03, 'S', 'E', 'L'});
            byte[] error = raw.readPacket();
            assertThat(error[0] & 0xFF).isEqualTo(0xFF);
            assertThat(errorCode(error)).isEqualTo(1153);
            assertThat(raw.isClosedByPeer()).isTrue();
            assertThat(queryString(bystander, "SELECT 'unaffected'")).isEqualTo("unaffected");
        }
    }

    @Test
    void wrongSequenceIdClosesOnlyThatSession() throws Exception {
        try (Connection bystander = gantry.connect(Driver.MARIADB_CONNECTOR_J); RawClient raw = RawClient.login(gantry)) {
            byte[] query = "\u0003SELECT 1".getBytes(StandardCharsets.ISO_8859_1);
            raw.sendPacket(5, query);
            byte[] error = raw.readPacket();
            assertThat(errorCode(error)).isEqualTo(1156);
            assertThat(raw.isClosedByPeer()).isTrue();
            assertThat(queryString(bystander, "SELECT 'unaffected'")).isEqualTo("unaffected");
        }
    }

    @Test
    void truncatedHandshakeResponseClosesOnlyThatSession() throws Exception {
        try (Connection bystander = gantry.connect(Driver.MYSQL_CONNECTOR_J);
             Socket socket = new Socket("127.0.0.1", gantry.port())) {
            RawClient raw = new RawClient(socket);
            raw.readPacket();
            // Capabilities and max packet size, then nothing: the user name is missing.
            raw.sendPacket(1, new byte[] {(byte) 0x85, (byte) 0xA6, 0x0F, 0x00, 0, 0, 0, 1});
            byte[] error = raw.readPacket();
            assertThat(errorCode(error)).isEqualTo(1835);
            assertThat(raw.isClosedByPeer()).isTrue();
            assertThat(queryString(bystander, "SELECT 'unaffected'")).isEqualTo("unaffected");
        }
    }

    @Test
    void clientsBeyondTheLimitAreRefusedWithError1040() throws Exception {
        List<Connection> open = new ArrayList<>();
        try {
            while (open.size() < 5) {
                open.add(gantry.connect(Driver.MARIADB_CONNECTOR_J));
            }
            assertThatThrownBy(() -> gantry.connect(Driver.MYSQL_CONNECTOR_J).close())
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("Too many connections");
        } finally {
            for (Connection connection : open) {
                connection.close();
            }
        }
        // Once sessions close, new ones are admitted again (the slots free as Gantry sees each close).
        Awaitility.await().atMost(Duration.ofSeconds(5)).ignoreExceptions().untilAsserted(() -> {
            try (Connection again = gantry.connect(Driver.MYSQL_CONNECTOR_J)) {
                assertThat(queryString(again, "SELECT 1")).isEqualTo("1");
            }
        });
    }

    @Test
    void unknownCommandGetsAnErrorAndTheSessionStaysUsable() throws Exception {
        try (RawClient raw = RawClient.login(gantry)) {
            raw.sendPacket(0, new byte[] {0x05, 'd', 'b'}); // COM_CREATE_DB: long obsolete, not forwarded
            byte[] error = raw.readPacket();
            assertThat(errorCode(error)).isEqualTo(1047);
            raw.sendPacket(0, new byte[] {0x0E}); // COM_PING
            assertThat(raw.readPacket()[0]).as("OK after the error").isEqualTo((byte) 0);
            raw.sendPacket(0, "\u0009".getBytes(StandardCharsets.ISO_8859_1)); // COM_STATISTICS, answered by a server
            assertThat(new String(raw.readPacket(), StandardCharsets.ISO_8859_1)).contains("Uptime");
        }
    }

    @Test
    void resultSetsAreFramedForClientsWithAndWithoutDeprecateEof() throws Exception {
        byte[] query = "\u0003SELECT 1, 'two'".getBytes(StandardCharsets.ISO_8859_1);
        try (RawClient classic = RawClient.login(gantry)) {
            classic.sendPacket(0, query);
            // Column count, two column definitions, EOF, one row, EOF.
            assertThat(classic.readPacket()[0]).isEqualTo((byte) 2);
            classic.readPacket();
            classic.readPacket();
            assertThat(classic.readPacket()[0] & 0xFF).as("EOF after the columns").isEqualTo(0xFE);
            assertThat(new String(classic.readPacket(), StandardCharsets.ISO_8859_1)).contains("two");
            byte[] end = classic.readPacket();
            assertThat(end[0] & 0xFF).isEqualTo(0xFE);
            assertThat(end.length).as("an EOF packet, not an OK").isEqualTo(5);
        }
        try (RawClient modern = RawClient.login(gantry, CapabilityFlags.CLIENT_DEPRECATE_EOF)) {
            modern.sendPacket(0, query);
            // Column count, two column definitions, one row, OK with the 0xFE header.
            assertThat(modern.readPacket()[0]).isEqualTo((byte) 2);
            modern.readPacket();
            modern.readPacket();
            assertThat(new String(modern.readPacket(), StandardCharsets.ISO_8859_1)).contains("two");
            byte[] end = modern.readPacket();
            assertThat(end[0] & 0xFF).isEqualTo(0xFE);
            assertThat(end.length).as("an OK packet in place of the EOF").isGreaterThanOrEqualTo(7);
        }
    }

    @Test
    void pipelinedCommandsAreAllAnsweredInOrderWhateverAnswersThem() throws Exception {
        // While a slow query runs, the client sends four more commands in one write: two that Gantry answers
        // itself (COM_PING), two that servers answer. Each must be answered, in order.
        try (RawClient raw = RawClient.login(gantry, CapabilityFlags.CLIENT_DEPRECATE_EOF)) {
            ByteArrayOutputStream burst = new ByteArrayOutputStream();
            for (byte[] command : List.of(query("SELECT CONCAT(SLEEP(0.3), 'slow')"), new byte[] {0x0E},
                    query("SELECT 'second'"), new byte[] {0x0E}, query("SELECT 'third'"))) {
                burst.write(new byte[] {(byte) command.length, 0, 0, 0});
                burst.write(command);
            }
            raw.send(burst.toByteArray());
            assertThat(raw.readSingleRowText()).contains("slow");
            assertThat(raw.readPacket()[0]).as("OK for the first ping").isEqualTo((byte) 0);
            assertThat(raw.readSingleRowText()).contains("second");
            assertThat(raw.readPacket()[0]).as("OK for the second ping").isEqualTo((byte) 0);
            assertThat(raw.readSingleRowText()).contains("third");
        }
    }

    private static byte[] query(String sql) {
        return ("\u0003" + sql).getBytes(StandardCharsets.ISO_8859_1);
    }

    private static int errorCode(byte[] errPacket) {
        return (errPacket[1] & 0xFF) | (errPacket[2] & 0xFF) << 8;
    }

    /** A bare-socket MySQL client for sending what no driver would. */
    static final class RawClient implements AutoCloseable {
        private final Socket socket;
        private final DataInputStream in;
        private final OutputStream out;

        RawClient(Socket socket) throws IOException {
            this.socket = socket;
            socket.setSoTimeout(5000);
            this.in = new DataInputStream(socket.getInputStream());
            this.out = socket.getOutputStream();
        }

        /** Connects and logs in as the test account with mysql_native_password. */
        static RawClient login(ProxyHarness gantry) throws IOException {
            return login(gantry, 0);
        }

        /** Logs in, asking for the given capabilities on top of the basic ones. */
        static RawClient login(ProxyHarness gantry, int extraCapabilities) throws IOException {
            return login(gantry.port(), extraCapabilities);
        }

        /** Logs in to whatever listens on a loopback port: Gantry, or a server directly to compare with. */
        static RawClient login(int port) throws IOException {
            return login(port, 0);
        }

        private static RawClient login(int port, int extraCapabilities) throws IOException {
            RawClient client = new RawClient(new Socket("127.0.0.1", port));
            ByteBuf greetingBytes = Unpooled.wrappedBuffer(client.readPacket());
            HandshakeV10 greeting = HandshakeV10.decode(greetingBytes);
            byte[] seed = new byte[20];
            System.arraycopy(greeting.authPluginData(), 0, seed, 0, 20);
            int capabilities = CapabilityFlags.CLIENT_PROTOCOL_41 | CapabilityFlags.CLIENT_SECURE_CONNECTION
                    | CapabilityFlags.CLIENT_PLUGIN_AUTH | CapabilityFlags.CLIENT_LONG_PASSWORD
                    | CapabilityFlags.CLIENT_TRANSACTIONS | extraCapabilities;
            HandshakeResponse41 response = new HandshakeResponse41(capabilities, 1 << 24, 45, 0, "app",
                    NativePassword.scramble("app".getBytes(StandardCharsets.UTF_8), seed), "",
                    NativePassword.PLUGIN_NAME, Map.of(), 0);
            ByteBuf encoded = Unpooled.buffer();
            response.encode(encoded);
            byte[] bytes = new byte[encoded.readableBytes()];
            encoded.readBytes(bytes);
            client.sendPacket(1, bytes);
            byte[] ok = client.readPacket();
            assertThat(ok[0]).as("login answer").isEqualTo((byte) 0);
            return client;
        }

        void sendPacket(int sequenceId, byte[] payload) throws IOException {
            send(WireClient.framed(sequenceId, payload));
        }

        void send(byte[] bytes) throws IOException {
            out.write(bytes);
            out.flush();
        }

        byte[] readPacket() throws IOException {
            int length = in.readUnsignedByte() | in.readUnsignedByte() << 8 | in.readUnsignedByte() << 16;
            in.readUnsignedByte();
            byte[] payload = new byte[length];
            in.readFully(payload);
            return payload;
        }

        /** A one-column, one-row result set with CLIENT_DEPRECATE_EOF; returns the row's bytes as text. */
        String readSingleRowText() throws IOException {
            assertThat(readPacket()[0]).as("column count").isEqualTo((byte) 1);
            readPacket(); // the column definition
            String row = new String(readPacket(), StandardCharsets.ISO_8859_1);
            assertThat(readPacket()[0] & 0xFF).as("the OK that ends the rows").isEqualTo(0xFE);
            return row;
        }

        boolean isClosedByPeer() throws IOException {
            InputStream stream = socket.getInputStream();
            return stream.read() == -1;
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
