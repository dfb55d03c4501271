package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static io.gantry.proxy.ProxyHarness.queryString;
import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.TopologyKinds;
import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.wire.CapabilityFlags;
import io.gantry.wire.OkPacket;
import io.netty.buffer.Unpooled;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Gantry's own session tracking (the session's GTIDs, its transactions' access mode) is invisible to clients: their
 * OK packets are byte for byte what a direct connection gets, with and without {@code CLIENT_SESSION_TRACK}; and
 * what it learns is used: exact GTIDs for read-your-writes, and read-only transactions on replicas.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SessionTrackingIT {

    private static final AtomicInteger TABLES = new AtomicInteger();
    private static final int TRACKING = CapabilityFlags.CLIENT_SESSION_TRACK;
    private static final int DEPRECATE_EOF = CapabilityFlags.CLIENT_DEPRECATE_EOF;
    /** Each statement with {@code %s} for the table; run the same on a direct connection and through Gantry. */
    private static final List<String> SCRIPT = List.of(
            "CREATE TABLE %s (id INT PRIMARY KEY, v INT)",
            "INSERT INTO %s VALUES (1, 1), (2, 2)",
            "UPDATE %s SET v = v + 1",
            "SET time_zone = '+01:00'",
            "SET SESSION TRANSACTION READ ONLY",
            "SET SESSION TRANSACTION READ WRITE",
            "SET SESSION %ro = 0",
            "BEGIN",
            "INSERT INTO %s VALUES (3, 3)",
            "COMMIT",
            "/*#mode=READWRITE*/ SELECT v FROM %s WHERE id = 1",
            "INSERT INTO %s VALUES (1, 1)",
            "DELETE FROM %s WHERE id = 3",
            "USE " + "%db",
            "SET SESSION TRANSACTION READ ONLY",
            "INSERT INTO %s VALUES (4, 4)",
            "SET SESSION %ro = OFF",
            "DROP TABLE %s");

    Topology topology;
    ProxyHarness gantry;

    TopologyKind kind() {
        return TopologyKind.MARIADB;
    }

    /** The servers' name of the session variable of the transactions' default access mode. */
    String readOnlyVariable() {
        return "transaction_read_only";
    }

    Topology startTopology() {
        return TopologyKinds.startPrivate(kind(), "session-tracking", 1);
    }

    @BeforeAll
    void start() {
        topology = startTopology();
        gantry = ProxyHarness.start(topology);
    }

    @AfterAll
    void stop() {
        if (gantry != null) {
            gantry.close();
        }
        if (topology != null) {
            topology.close();
        }
    }

    @ParameterizedTest(name = "client capabilities +0x{0}")
    @ValueSource(ints = {0, TRACKING, TRACKING | DEPRECATE_EOF, DEPRECATE_EOF})
    void everyResponseIsByteForByteWhatADirectConnectionGets(int extra) throws Exception {
        int capabilities = WireClient.BASE_CAPABILITIES | extra;
        String table = newTable(); // the script drops it at the end, and column definitions name it
        List<String> direct = run(topology.primary().port(), capabilities, table);
        List<String> proxied = run(gantry.port(), capabilities, table);
        assertThat(proxied).containsExactlyElementsOf(direct);
    }

    @Test
    void aClientThatTracksLastGtidItselfSeesIt() throws Exception {
        String table = newTable();
        try (WireClient client = login(gantry.port(), WireClient.BASE_CAPABILITIES | TRACKING)) {
            client.query("CREATE TABLE " + table + " (id INT PRIMARY KEY)");
            client.query("SET SESSION session_track_system_variables = 'last_gtid'");
            byte[] ok = client.lastPacket("INSERT INTO " + table + " VALUES (1)");
            OkPacket decoded = OkPacket.decode(Unpooled.wrappedBuffer(ok), client.capabilities());
            assertThat(decoded.systemVariable("last_gtid")).as("OK %s", HexFormat.of().formatHex(ok)).isPresent();
        }
    }

    @Test
    void readYourWritesWaitsForExactlyTheSessionsOwnGtid() throws Exception {
        String table = newTable();
        try (Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            execute(session, "CREATE TABLE " + table + " (id INT PRIMARY KEY)");
            execute(session, "INSERT INTO " + table + " VALUES (1)");
            List<List<String>> explained = explain(session, "SELECT id FROM " + table);
            assertThat(row(explained, "pending")).as("no write waits for a sample: its GTID is known")
                    .isEqualTo("none");
            assertFloorIsTheLastWrite(row(explained, "floor"), session);
        }
    }

    @Test
    void aSessionWhoseTransactionsAreReadOnlyRunsThemOnAReplica() throws Exception {
        String table = newTable();
        try (Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            execute(session, "CREATE TABLE " + table + " (id INT PRIMARY KEY)");
            awaitOnReplica(table);
            List<String> readOnlyStatements = new ArrayList<>(List.of("SET SESSION TRANSACTION READ ONLY",
                    "SET SESSION " + readOnlyVariable() + " = 1", "SET @@session." + readOnlyVariable() + " = ON"));
            if (kind() == TopologyKind.MARIADB && !readOnlyVariable().equals("tx_read_only")) {
                readOnlyStatements.add("SET SESSION tx_read_only = 1"); // MariaDB's older name; MySQL 8 has none
            }
            for (String readOnly : readOnlyStatements) {
                execute(session, readOnly);
                awaitSettled(); // what the last transaction read on the primary: a replica must have it too
                execute(session, "BEGIN");
                assertThat(serverInTransaction(session)).as("after %s", readOnly).isEqualTo(replica());
                execute(session, "COMMIT");
                execute(session, "SET SESSION TRANSACTION READ WRITE");
                execute(session, "BEGIN");
                assertThat(serverInTransaction(session)).isEqualTo(topology.primary());
                execute(session, "COMMIT");
            }
        }
    }

    @Test
    void aReadOnlyJdbcConnectionWithAutocommitOffReadsFromAReplica() throws Exception {
        String table = newTable();
        try (Connection session = gantry.connect(Driver.MYSQL_CONNECTOR_J)) {
            execute(session, "CREATE TABLE " + table + " (id INT PRIMARY KEY)");
            awaitOnReplica(table);
            session.setReadOnly(true); // Connector/J sends SET SESSION TRANSACTION READ ONLY
            session.setAutoCommit(false);
            assertThat(serverInTransaction(session)).as("the implicit transaction").isEqualTo(replica());
            assertThat(queryString(session, "SELECT COUNT(*) FROM " + table)).isEqualTo("0");
            session.commit();
            session.setReadOnly(false);
            assertThat(serverInTransaction(session)).isEqualTo(topology.primary());
            execute(session, "INSERT INTO " + table + " VALUES (1)");
            session.commit();
        }
    }

    @Test
    void setTransactionReadOnlyAppliesToTheNextTransactionOnly() throws Exception {
        String table = newTable();
        try (Connection session = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
            execute(session, "CREATE TABLE " + table + " (id INT PRIMARY KEY)");
            awaitOnReplica(table);
            execute(session, "SET TRANSACTION READ ONLY");
            execute(session, "START TRANSACTION");
            assertThat(serverInTransaction(session)).isEqualTo(replica());
            execute(session, "COMMIT");
            execute(session, "BEGIN");
            assertThat(serverInTransaction(session)).as("the next one may write").isEqualTo(topology.primary());
            execute(session, "INSERT INTO " + table + " VALUES (1)");
            execute(session, "COMMIT");
            execute(session, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED, READ ONLY");
            awaitOnReplica(table);
            execute(session, "BEGIN");
            assertThat(serverInTransaction(session)).isEqualTo(replica());
            execute(session, "COMMIT");
        }
    }

    @Test
    void accessModeErrorsAreTheServersOwn() throws Exception {
        String table = newTable();
        List<String> statements = List.of(
                "CREATE TABLE %s (id INT PRIMARY KEY)",
                "SET TRANSACTION READ ONLY",
                "INSERT INTO %s VALUES (1)",
                "INSERT INTO %s VALUES (2)",
                "BEGIN",
                "SET TRANSACTION READ ONLY",
                "COMMIT",
                "SET TRANSACTION READ ONLY",
                "BEGIN",
                "INSERT INTO %s VALUES (3)",
                "COMMIT",
                "SELECT COUNT(*) FROM %s",
                "SET TRANSACTION READ SIDEWAYS",
                "DROP TABLE %s");
        int capabilities = WireClient.BASE_CAPABILITIES | TRACKING | DEPRECATE_EOF;
        List<String> direct = run(topology.primary().port(), capabilities, table, statements);
        List<String> proxied = run(gantry.port(), capabilities, table, statements);
        assertThat(proxied).containsExactlyElementsOf(direct);
        assertThat(direct.get(2)).contains("Cannot execute statement in a READ ONLY transaction");
    }

    /** The floor is the GTID of the session's last commit, and nothing more. */
    void assertFloorIsTheLastWrite(String floor, Connection session) throws SQLException {
        assertThat(floor).isEqualTo(queryString(session, "SELECT @@last_gtid"));
    }

    // ---- helpers -------------------------------------------------------------------------------------------------

    private List<String> run(int port, int capabilities, String table) throws Exception {
        return run(port, capabilities, table, SCRIPT);
    }

    /** Each statement's response: its packets in hex, and the text of an error, one string per statement. */
    private List<String> run(int port, int capabilities, String table, List<String> statements) throws Exception {
        List<String> responses = new ArrayList<>();
        try (WireClient client = login(port, capabilities)) {
            for (String statement : statements) {
                String sql = statement.replace("%db", topology.database()).replace("%ro", readOnlyVariable())
                        .replace("%s", table);
                StringBuilder response = new StringBuilder(statement).append(" ->");
                for (byte[] packet : client.query(sql)) {
                    response.append(' ').append(HexFormat.of().formatHex(packet));
                    if ((packet[0] & 0xFF) == 0xFF) {
                        response.append(" (").append(new String(packet, 9, packet.length - 9)).append(')');
                    }
                }
                responses.add(response.toString());
            }
        }
        return responses;
    }

    private WireClient login(int port, int capabilities) throws Exception {
        return WireClient.login(port, topology.appAccount().user(), topology.appAccount().password(),
                topology.database(), capabilities);
    }

    private DatabaseServer replica() {
        return topology.replicas().get(0);
    }

    /** The server the session's open transaction runs on: every statement in it goes there. */
    DatabaseServer serverInTransaction(Connection session) throws SQLException {
        return gantry.serverOf(Long.parseLong(queryString(session, "SELECT @@server_id")));
    }

    private void awaitOnReplica(String table) throws Exception {
        topology.awaitReplicasCaughtUp(java.time.Duration.ofSeconds(30));
        awaitSettled();
    }

    /** Two position samples: the replicas are seen to hold what the session wrote and read. */
    private static void awaitSettled() throws InterruptedException {
        Thread.sleep(600);
    }

    private static List<List<String>> explain(Connection session, String statement) throws SQLException {
        List<List<String>> rows = new ArrayList<>();
        try (var query = session.createStatement(); var result = query.executeQuery("EXPLAIN GANTRY ROUTE " + statement)) {
            while (result.next()) {
                rows.add(List.of(result.getString(1), result.getString(2)));
            }
        }
        return rows;
    }

    private static String row(List<List<String>> rows, String item) {
        return rows.stream().filter(r -> r.get(0).equals(item)).map(r -> r.get(1)).findFirst().orElseThrow();
    }

    static String newTable() {
        return "tracking_" + TABLES.incrementAndGet();
    }
}
