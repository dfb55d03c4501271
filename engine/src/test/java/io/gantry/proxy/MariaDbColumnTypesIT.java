package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.proxy.login.ServerGreetings;
import io.gantry.sandbox.MariaDbTopology;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.TopologyKind;
import io.gantry.wire.CapabilityFlags;
import io.gantry.wire.HandshakeV10;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Column types and the greeting as a MariaDB client sees them: identical through Gantry and direct to the primary.
 * MariaDB marks JSON, UUID and INET4/6 columns only in extended metadata, which a client gets only when the greeting
 * offered MARIADB_CLIENT_EXTENDED_METADATA and the backend connection negotiated it too.
 */
class MariaDbColumnTypesIT {

    private static final String TABLE = "typed_columns";
    private static final String SELECT = "SELECT id, doc, uid, ip6, ip4, note FROM " + TABLE + " ORDER BY id";

    private static MariaDbTopology topology;
    private static ProxyHarness gantry;

    @BeforeAll
    static void start() throws Exception {
        topology = (MariaDbTopology) Sandboxes.shared(TopologyKind.MARIADB);
        gantry = ProxyHarness.start(topology);
        try (Connection primary = topology.connectAsApp(topology.primary());
             Statement statement = primary.createStatement()) {
            statement.execute("DROP TABLE IF EXISTS " + TABLE);
            statement.execute("CREATE TABLE " + TABLE + " (id INT PRIMARY KEY, doc JSON, uid UUID, ip6 INET6, "
                    + "ip4 INET4, note VARCHAR(20))");
            statement.execute("INSERT INTO " + TABLE + " VALUES (1, '{\"test\": true}', "
                    + "'123e4567-e89b-12d3-a456-426655440000', '2001:db8::1', '192.0.2.1', 'one')");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
    }

    @AfterAll
    static void stop() throws Exception {
        try (Connection primary = topology.connectAsApp(topology.primary());
             Statement statement = primary.createStatement()) {
            statement.execute("DROP TABLE IF EXISTS " + TABLE);
        } finally {
            gantry.close();
        }
    }

    @Test
    void greetingMirrorsThePrimarysVersionCollationAndCapabilities() throws IOException {
        HandshakeV10 direct = greeting(topology.primary().port());
        HandshakeV10 proxied = greeting(gantry.port());
        System.out.printf("MariaDbColumnTypesIT greeting direct:  %s%nMariaDbColumnTypesIT greeting gantry: %s%n",
                direct, proxied);
        // MariaDB 10.x greets with a "5.5.5-" prefix; 11.x (the sandbox's 11.4) dropped it. Either way: the same.
        assertThat(proxied.serverVersion()).isEqualTo(direct.serverVersion()).contains("MariaDB");
        assertThat(proxied.characterSet()).isEqualTo(direct.characterSet());
        assertThat(proxied.capabilities() & CapabilityFlags.CLIENT_MYSQL).as("CLIENT_MYSQL clear, as MariaDB's")
                .isZero();
        assertThat(proxied.capabilities()).isEqualTo(direct.capabilities() & ServerGreetings.OFFERED);
        assertThat(proxied.mariaDbCapabilities()).as("extended metadata only, of what the primary offers")
                .isEqualTo(CapabilityFlags.MARIADB_CLIENT_EXTENDED_METADATA);
        assertThat(direct.mariaDbCapabilities() & CapabilityFlags.MARIADB_CLIENT_EXTENDED_METADATA).isNotZero();
    }

    @Test
    void mariaDbConnectorJSeesTheSameColumnTypesAsDirect() throws SQLException {
        for (boolean serverPrepared : new boolean[] {false, true}) {
            String options = "sslMode=disable&useServerPrepStmts=" + serverPrepared;
            List<String> direct = describe(mariaDb(topology.primary().port(), options));
            List<String> proxied = describe(mariaDb(gantry.port(), options));
            System.out.printf("MariaDbColumnTypesIT useServerPrepStmts=%s direct: %s%n", serverPrepared, direct);
            assertThat(proxied).as("useServerPrepStmts=%s", serverPrepared).containsExactlyElementsOf(direct);
            assertThat(direct.get(1)).as("the JSON column as MariaDB marks it").startsWith("doc JSON ");
            assertThat(direct.get(2)).as("UUID, known only from extended metadata").startsWith("uid uuid ")
                    .contains("java.util.UUID=");
        }
    }

    @Test
    void aReadOnAReplicaAndAWriteOnThePrimaryCarryTheSameMetadata() throws SQLException {
        try (Connection connection = mariaDb(gantry.port(), "sslMode=disable")) {
            List<String> onReplica = describe(connection, SELECT);
            List<String> onPrimary = describe(connection, "/*#mode=READWRITE*/ " + SELECT);
            assertThat(onReplica).containsExactlyElementsOf(onPrimary);
            assertThat(onPrimary.get(1)).startsWith("doc JSON ");
        }
    }

    @Test
    void mariaDbCommandLineClientShowsTheJsonFormatThroughGantryAsDirect() throws Exception {
        String sql = "/*#mode=READWRITE*/ " + SELECT;
        String direct = client(topology.primary().port(), "-t", "--column-type-info", "-e", sql);
        String proxied = client(gantry.port(), "-t", "--column-type-info", "-e", sql);
        System.out.printf("MariaDbColumnTypesIT mariadb --column-type-info through Gantry:%n%s%n", proxied);
        assertThat(direct).contains("(format=json)");
        assertThat(proxied).isEqualTo(direct);
    }

    // ---- helpers -------------------------------------------------------------------------------------------------

    /** Reads a server's greeting from a raw socket, then hangs up. */
    static HandshakeV10 greeting(int port) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            DataInputStream in = new DataInputStream(socket.getInputStream());
            byte[] header = new byte[4];
            in.readFully(header);
            int length = (header[0] & 0xFF) | (header[1] & 0xFF) << 8 | (header[2] & 0xFF) << 16;
            byte[] payload = new byte[length];
            in.readFully(payload);
            ByteBuf buf = Unpooled.wrappedBuffer(payload);
            try {
                return HandshakeV10.decode(buf);
            } finally {
                buf.release();
            }
        }
    }

    private static Connection mariaDb(int port, String options) throws SQLException {
        return DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + port + "/" + topology.database() + "?"
                + options, topology.appAccount().user(), topology.appAccount().password());
    }

    private static List<String> describe(Connection connection) throws SQLException {
        try (connection) {
            return describe(connection, SELECT);
        }
    }

    /** Per column: label, type name, java.sql.Types code, class name, and the class and value getObject returns. */
    private static List<String> describe(Connection connection, String sql) throws SQLException {
        List<String> columns = new ArrayList<>();
        try (PreparedStatement statement = connection.prepareStatement(sql);
             ResultSet rows = statement.executeQuery()) {
            ResultSetMetaData meta = rows.getMetaData();
            assertThat(rows.next()).isTrue();
            for (int i = 1; i <= meta.getColumnCount(); i++) {
                Object value = rows.getObject(i);
                columns.add(meta.getColumnLabel(i) + " " + meta.getColumnTypeName(i) + " " + meta.getColumnType(i)
                        + " " + meta.getColumnClassName(i) + " " + meta.getPrecision(i) + " "
                        + (value == null ? "null" : value.getClass().getName() + "=" + value));
            }
        }
        return columns;
    }

    private static String client(int port, String... arguments) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(topology.installation().client().toString(), "--skip-ssl",
                "--comments", "-h", "127.0.0.1", "-P", Integer.toString(port), "-u", topology.appAccount().user(),
                "-p" + topology.appAccount().password(), topology.database()));
        command.addAll(List.of(arguments));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output;
        try (InputStream out = process.getInputStream()) {
            output = new String(out.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as("mariadb client output: %s", output).isZero();
        return output;
    }
}
