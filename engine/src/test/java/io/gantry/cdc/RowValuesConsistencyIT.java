package io.gantry.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.shyiko.mysql.binlog.BinaryLogClient;
import com.github.shyiko.mysql.binlog.event.DeleteRowsEventData;
import com.github.shyiko.mysql.binlog.event.EventData;
import com.github.shyiko.mysql.binlog.event.TableMapEventData;
import com.github.shyiko.mysql.binlog.event.UpdateRowsEventData;
import com.github.shyiko.mysql.binlog.event.WriteRowsEventData;
import com.github.shyiko.mysql.binlog.network.SSLMode;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.TopologyKinds;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.io.Serializable;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The same rows read by a snapshot ({@link JdbcRowValues}) and from the binlog ({@link BinlogRowValues}) give equal
 * maps, for a column of every type, against the real MariaDB and MySQL sandboxes.
 *
 * <p>The snapshot connection is set up as {@link JdbcRowValues} requires: connector-j with
 * {@link JdbcRowValues#URL_PARAMETERS} and the session time zone set to UTC with
 * {@link JdbcRowValues#SESSION_TIME_ZONE_SQL}. The rows are written from a session in {@code +05:00}, so TIMESTAMP
 * values really are converted.
 */
class RowValuesConsistencyIT {

    private static final long BINLOG_WAIT_SECONDS = 30;

    private static final String UPDATE = """
            UPDATE %s SET ti = -1, tiu = 254, biu = 18446744073709551614, f = -2.5, da = '1999-12-31',
              tm = '-01:02:03', e = 'small', s = '', vc = 'changed', bn = 'x', ts = NULL, j = '{}', b10 = b'11'
            WHERE id = 1""";

    private Topology topology;

    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void binlogRowsEqualSnapshotRowsForEveryColumnType(TopologyKind kind) throws Exception {
        topology = TopologyKinds.shared(kind);
        String table = uniqueName("row_values");
        DatabaseServer primary = topology.primary();
        try (Connection writer = writer(primary)) {
            execute(writer, "CREATE TABLE " + table + " (" + CdcTestTable.COLUMNS + ")");
            try {
                // Where the binlog client starts: after every transaction executed so far.
                String start = query(writer, kind == TopologyKind.MARIADB ? "SELECT @@gtid_binlog_pos"
                        : "SELECT @@GLOBAL.gtid_executed");
                for (String insert : CdcTestTable.INSERTS) {
                    execute(writer, insert.formatted(table));
                }
                List<Map<String, Object>> inserted = snapshot(table, true);
                execute(writer, UPDATE.formatted(table));
                List<Map<String, Object>> updated = snapshot(table, false);
                execute(writer, "DELETE FROM " + table + " WHERE id = 3");

                BinlogRows binlog = readBinlog(primary, start, table);

                assertThat(inserted).hasSize(4);
                assertSameRows("inserted", binlog.writes, inserted);
                assertThat(binlog.updates).hasSize(1);
                assertSameRows("before the update", List.of(binlog.updates.get(0).get(0)), inserted.subList(0, 1));
                assertSameRows("after the update", List.of(binlog.updates.get(0).get(1)), updated.subList(0, 1));
                assertSameRows("deleted", binlog.deletes, inserted.subList(2, 3));

                assertExpectedValues(kind, inserted, updated.get(0));
            } finally {
                execute(writer, "DROP TABLE IF EXISTS " + table);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    @Timeout(value = 1, unit = TimeUnit.MINUTES)
    void driverDefaultsForTinyint1AndYearGiveTheSameValues(TopologyKind kind) throws Exception {
        topology = TopologyKinds.shared(kind);
        String table = uniqueName("row_values_defaults");
        DatabaseServer primary = topology.primary();
        try (Connection writer = writer(primary)) {
            execute(writer, "CREATE TABLE " + table + " (id INT PRIMARY KEY, flag TINYINT(1), y YEAR, b BIT(1))");
            try {
                execute(writer, "INSERT INTO " + table + " VALUES (1, 1, 2024, b'1'), (2, -5, 0, b'0'), (3, NULL,"
                        + " NULL, NULL)");
                List<Map<String, Object>> documented = snapshot(table, false);
                List<Map<String, Object>> defaults = new ArrayList<>();
                // The sandbox URL leaves tinyInt1isBit and yearIsDateType at the driver's defaults (true).
                try (Connection connection = topology.connectAsApp(primary);
                     Statement statement = connection.createStatement()) {
                    statement.execute(JdbcRowValues.SESSION_TIME_ZONE_SQL);
                    try (ResultSet rows = statement.executeQuery("SELECT * FROM " + table + " ORDER BY id")) {
                        while (rows.next()) {
                            defaults.add(JdbcRowValues.row(rows));
                        }
                    }
                }
                assertSameRows("driver defaults", defaults, documented);
                assertThat(documented.get(0)).containsEntry("flag", 1L).containsEntry("y", 2024L);
                assertThat(documented.get(1)).containsEntry("flag", -5L).containsEntry("y", 0L);
                assertThat((byte[]) documented.get(0).get("b")).containsExactly(1);
            } finally {
                execute(writer, "DROP TABLE IF EXISTS " + table);
            }
        }
    }

    /**
     * MySQL keeps JSON in a binary form of its own, which the change stream prints; a snapshot gets the server's
     * text. Documents of every value type the binary form has, doubles of every magnitude, strings that need
     * escaping, temporals and opaque values must come out as the server prints them.
     */
    @Test
    @Timeout(value = 1, unit = TimeUnit.MINUTES)
    void mySqlJsonFromTheBinlogIsTheTextTheServerPrints() throws Exception {
        topology = TopologyKinds.shared(TopologyKind.MYSQL);
        String table = uniqueName("json_values");
        List<String> documents = new ArrayList<>(List.of(
                "'{\"a\":1,\"b\":[1,2,{}],\"c\":{},\"d\":[]}'",
                "'[1.5, 0.1, 1e300, -0.0, 3.14159265358979, 1e-7, 1e15, 1e14, 1e-15, 1e-16, 5e-324, "
                        + "1.7976931348623157e308, 0.30000000000000004, 123456789012345678e0, 2e0]'",
                "'[\"\\\\u0001\\\\u001f\\\\\\\\ \\\\\\\"q\\\\\\\" \\\\n\\\\t\\\\r\\\\b\\\\f é 😀 "
                        + "\\\\u007f \\\\u2028 /\"]'",
                "JSON_OBJECT('k\"ey', 1, 'é', 'ü', '', 2, 'longer key', JSON_ARRAY())",
                "'[18446744073709551615, -9223372036854775808, 4294967296, 4294967295, -2147483649, -1, 0, 65535, "
                        + "-32768, 32767, 65536]'",
                "JSON_ARRAY(CAST('2024-01-31' AS DATE), CAST('2024-01-31 13:45:00.12' AS DATETIME(2)), "
                        + "CAST('-12:34:56.7' AS TIME(1)), CAST('-00:00:01' AS TIME), CAST('838:59:59' AS TIME), "
                        + "CAST('-838:59:59' AS TIME), TIMESTAMP'2024-01-31 13:45:00', CAST('12:00:00.000001' AS TIME(6)))",
                "JSON_ARRAY(CAST(1.50 AS DECIMAL(5,2)), CAST(0.00000001 AS DECIMAL(20,10)), CAST(-5 AS DECIMAL(3,0)), "
                        + "12345678901234567.0, CAST(-0.5 AS DECIMAL(4,3)))",
                "JSON_ARRAY(UNHEX('00FF'), b'101', CAST('ab' AS BINARY), ST_AsGeoJSON(POINT(1, 2.5)))",
                "'true'", "'null'", "'\"just a string\"'", "'3'", "'1.5'", "'[[[[[]]]]]'", "'{}'"));
        // Doubles of every magnitude, as Java prints them (which MySQL parses); the server prints them its own way.
        java.util.Random random = new java.util.Random(16);
        // -1.25e-200: MySQL 8.0.15's JSON parser reads it as the neighbouring double, -1.2500000000000001e-200.
        StringBuilder doubles = new StringBuilder("'[-1.25e-200, ");
        for (int i = 0; i < 300; i++) {
            double value = switch (i % 3) {
                case 0 -> (random.nextDouble() - 0.5) * Math.pow(10, random.nextInt(40) - 20);
                case 1 -> Double.longBitsToDouble(random.nextLong() & 0x7FEF_FFFF_FFFF_FFFFL);
                default -> Math.round(random.nextDouble() * 1e6) / Math.pow(10, random.nextInt(8));
            };
            doubles.append(i == 0 ? "" : ", ").append(value);
        }
        documents.add(doubles.append("]'").toString());
        try (Connection writer = writer(topology.primary())) {
            execute(writer, "CREATE TABLE " + table + " (id INT PRIMARY KEY, j JSON)");
            try {
                String start = query(writer, "SELECT @@GLOBAL.gtid_executed");
                for (int i = 0; i < documents.size(); i++) {
                    execute(writer, "INSERT INTO " + table + " VALUES (" + (i + 1) + ", " + documents.get(i) + ")");
                }
                List<Map<String, Object>> inserted = snapshot(table, false);
                execute(writer, "DELETE FROM " + table + " WHERE id = 1");
                BinlogRows binlog = readBinlog(topology.primary(), start, table);
                assertSameRows("JSON documents", binlog.writes, inserted);
                assertThat(inserted.get(1).get("j")).as("the server's own text, as seen by the snapshot")
                        .isEqualTo("[1.5, 0.1, 1e300, -0.0, 3.14159265358979, 0.0000001, 1e15, 100000000000000.0, "
                                + "0.000000000000001, 1e-16, 5e-324, 1.7976931348623157e308, 0.30000000000000004, "
                                + "1.2345678901234568e17, 2.0]");
            } finally {
                execute(writer, "DROP TABLE IF EXISTS " + table);
            }
        }
    }

    /** Spot checks, so that both readers cannot be wrong the same way. */
    private static void assertExpectedValues(TopologyKind kind, List<Map<String, Object>> rows,
                                             Map<String, Object> updated) {
        Map<String, Object> first = rows.get(0);
        assertThat(first).containsEntry("ti", -128L).containsEntry("tiu", 255L).containsEntry("ti1", 1L)
                .containsEntry("siu", 65535L).containsEntry("miu", 16777215L).containsEntry("iu", 4294967295L)
                .containsEntry("bi", Long.MIN_VALUE).containsEntry("biu", new BigInteger("18446744073709551615"))
                .containsEntry("y", 0L).containsEntry("dec1", new BigDecimal("-123456.7891"))
                .containsEntry("decu", new BigDecimal("99999")).containsEntry("f", 3.14159)
                .containsEntry("d", 0.30000000000000004)
                .containsEntry("c", "héllo").containsEntry("vc", "Привет 👋 — ok")
                .containsEntry("vl1", "café €")
                .containsEntry("vu3", "naïve").containsEntry("e", "large").containsEntry("s", "read,admin")
                .containsEntry("el", "ö")
                .containsEntry("j", "{\"a\": [1, 2, {\"b\": null}], \"c\": \"ü\"}")
                .containsEntry("da", "2024-01-31").containsEntry("dtm", "2024-01-31T13:45:00")
                .containsEntry("dtm3", "2024-01-31T13:45:00.120").containsEntry("dtm6", "9999-12-31T23:59:59.999999")
                .containsEntry("ts", "2024-01-31T13:45:00Z").containsEntry("ts3", "2024-01-31T13:45:00.120Z")
                .containsEntry("ts6", "2038-01-19T03:14:07.999999Z").containsEntry("tm", "-838:59:59")
                .containsEntry("tm2", "-00:00:00.01").containsEntry("tm4", "-12:34:56.7891")
                // MySQL's TIME ends at 838:59:59.000000 and clips the fraction beyond it; MariaDB's does not.
                .containsEntry("tm6", kind == TopologyKind.MARIADB ? "838:59:59.999999" : "838:59:59.000000");
        assertThat((String) first.get("lt")).hasSize(70000);
        assertThat((byte[]) first.get("b10")).containsExactly(0x02, 0x01);
        assertThat((byte[]) first.get("b64")).containsExactly(-1, -1, -1, -1, -1, -1, -1, -1);
        assertThat((byte[]) first.get("bn")).containsExactly('a', 'b', 0, 0);
        assertThat((byte[]) first.get("vb")).containsExactly(0x00, 0xFF, 0x10);
        assertThat((byte[]) first.get("mb")).isEmpty();

        Map<String, Object> second = rows.get(1);
        assertThat(second).containsEntry("ti1", -128L).containsEntry("biu", new BigInteger("9223372036854775808"))
                .containsEntry("bi", Long.MAX_VALUE).containsEntry("y", 2155L)
                .containsEntry("dec2", new BigDecimal("-0.000000000000000000000000000001"))
                .containsEntry("f", -0.0).containsEntry("d", -1.2345678901234567e300)
                .containsEntry("c", "").containsEntry("s", "").containsEntry("el", "ä")
                .containsEntry("da", "0000-00-00").containsEntry("dtm", "0000-00-00T00:00:00")
                .containsEntry("dtm3", "0000-00-00T00:00:00").containsEntry("dtm6", "0000-01-01T00:00:00.000001")
                .containsEntry("ts", "0000-00-00T00:00:00").containsEntry("ts3", "0000-00-00T00:00:00")
                .containsEntry("ts6", "1970-01-01T00:00:01.000000Z").containsEntry("tm", "00:00:00")
                .containsEntry("tm2", "-01:00:00.50").containsEntry("tm4", "100:00:00.0000")
                .containsEntry("tm6", "-00:00:01.000001");
        assertThat((byte[]) second.get("bn")).containsExactly(0, 0, 0, 0);

        assertThat(rows.get(2)).containsEntry("id", 3L).allSatisfy((name, value) -> {
            if (!name.equals("id")) {
                assertThat(value).as(name).isNull();
            }
        });

        assertThat(rows.get(3)).containsEntry("y", 1901L).containsEntry("f", 1.67772E7)
                .containsEntry("d", 9007199254740992.0).containsEntry("e", "").containsEntry("da", "0001-01-01")
                .containsEntry("dtm", "1582-10-04T12:00:00").containsEntry("dtm3", "1000-01-01T00:00:00.500")
                .containsEntry("dtm6", "0000-02-28T23:59:59.999999")
                .containsEntry("ts", "2024-06-30T19:00:00Z");

        assertThat(updated).containsEntry("ti", -1L).containsEntry("tiu", 254L)
                .containsEntry("biu", new BigInteger("18446744073709551614")).containsEntry("f", -2.5)
                .containsEntry("tm", "-01:02:03").containsEntry("e", "small").containsEntry("s", "")
                .containsEntry("ts", null).containsEntry("j", "{}");
        assertThat((byte[]) updated.get("bn")).containsExactly('x', 0, 0, 0);
        assertThat((byte[]) updated.get("b10")).containsExactly(0x00, 0x03);
    }

    /** The rows, read the way a snapshot reads them. */
    private List<Map<String, Object>> snapshot(String table, boolean streaming) throws SQLException {
        DatabaseServer primary = topology.primary();
        List<Map<String, Object>> rows = new ArrayList<>();
        try (Connection connection = DriverManager.getConnection(
                topology.jdbcUrl(primary) + "&" + JdbcRowValues.URL_PARAMETERS, topology.appAccount().user(),
                topology.appAccount().password());
             Statement statement = connection.createStatement(ResultSet.TYPE_FORWARD_ONLY,
                     ResultSet.CONCUR_READ_ONLY)) {
            statement.execute(JdbcRowValues.SESSION_TIME_ZONE_SQL);
            if (streaming) {
                statement.setFetchSize(Integer.MIN_VALUE);
            }
            try (ResultSet result = statement.executeQuery("SELECT * FROM " + table + " ORDER BY id")) {
                while (result.next()) {
                    rows.add(JdbcRowValues.row(result));
                }
            }
        }
        return rows;
    }

    /** Row images of one table from the primary's binlog, from {@code start} up to its first DELETE. */
    private static final class BinlogRows {
        final List<Map<String, Object>> writes = new CopyOnWriteArrayList<>();
        final List<List<Map<String, Object>>> updates = new CopyOnWriteArrayList<>();
        final List<Map<String, Object>> deletes = new CopyOnWriteArrayList<>();
    }

    private BinlogRows readBinlog(DatabaseServer server, String start, String table) throws Exception {
        BinlogRows rows = new BinlogRows();
        Map<Long, TableMapEventData> tableMaps = new ConcurrentHashMap<>();
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<Exception> failure = new AtomicReference<>();
        BinaryLogClient client = new BinaryLogClient(server.host(), server.port(), topology.appAccount().user(),
                topology.appAccount().password());
        client.setSSLMode(SSLMode.DISABLED);
        client.setServerId(1_000_000 + ProcessHandle.current().pid() % 1_000_000);
        client.setKeepAlive(false);
        client.setGtidSet(start);
        client.setEventDeserializer(BinlogRowValues.newEventDeserializer());
        client.registerEventListener(event -> {
            try {
                EventData data = event.getData();
                if (data instanceof TableMapEventData map) {
                    tableMaps.put(map.getTableId(), map);
                } else if (data instanceof WriteRowsEventData write && ours(tableMaps, write.getTableId(), table)) {
                    TableMapEventData map = tableMaps.get(write.getTableId());
                    for (Serializable[] row : write.getRows()) {
                        rows.writes.add(BinlogRowValues.row(map, write.getIncludedColumns(), row));
                    }
                } else if (data instanceof UpdateRowsEventData update && ours(tableMaps, update.getTableId(), table)) {
                    TableMapEventData map = tableMaps.get(update.getTableId());
                    for (Map.Entry<Serializable[], Serializable[]> row : update.getRows()) {
                        rows.updates.add(List.of(
                                BinlogRowValues.row(map, update.getIncludedColumnsBeforeUpdate(), row.getKey()),
                                BinlogRowValues.row(map, update.getIncludedColumns(), row.getValue())));
                    }
                } else if (data instanceof DeleteRowsEventData delete && ours(tableMaps, delete.getTableId(), table)) {
                    TableMapEventData map = tableMaps.get(delete.getTableId());
                    for (Serializable[] row : delete.getRows()) {
                        rows.deletes.add(BinlogRowValues.row(map, delete.getIncludedColumns(), row));
                    }
                    done.countDown();
                }
            } catch (RuntimeException e) {
                failure.compareAndSet(null, e);
                done.countDown();
            }
        });
        client.registerLifecycleListener(new BinaryLogClient.AbstractLifecycleListener() {
            @Override
            public void onEventDeserializationFailure(BinaryLogClient client, Exception e) {
                failure.compareAndSet(null, e);
                done.countDown();
            }

            @Override
            public void onCommunicationFailure(BinaryLogClient client, Exception e) {
                failure.compareAndSet(null, e);
                done.countDown();
            }
        });
        client.connect(TimeUnit.SECONDS.toMillis(10));
        try {
            boolean finished = done.await(BINLOG_WAIT_SECONDS, TimeUnit.SECONDS);
            if (failure.get() != null) {
                throw new AssertionError("reading the binlog failed", failure.get());
            }
            assertThat(finished).as("the DELETE arrived from the binlog within %d s", BINLOG_WAIT_SECONDS).isTrue();
        } finally {
            client.disconnect();
        }
        return rows;
    }

    private boolean ours(Map<Long, TableMapEventData> tableMaps, long tableId, String table) {
        TableMapEventData map = tableMaps.get(tableId);
        return map != null && map.getTable().equals(table) && map.getDatabase().equals(topology.database());
    }

    /** A session that writes the rows: TIMESTAMP literals in +05:00, and non-strict so an invalid ENUM is ''. */
    private Connection writer(DatabaseServer server) throws SQLException {
        Connection connection = topology.connectAsApp(server);
        try {
            execute(connection, "SET time_zone = '+05:00'");
            execute(connection, "SET sql_mode = 'NO_ENGINE_SUBSTITUTION'");
            return connection;
        } catch (SQLException | RuntimeException e) {
            connection.close();
            throw e;
        }
    }

    private static void execute(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    private static String query(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            result.next();
            return result.getString(1);
        }
    }

    private static String uniqueName(String prefix) {
        return prefix + "_" + Long.toHexString(System.nanoTime());
    }

    /**
     * Asserts equal rows: the same columns in the same order, and per column equal values of the same class (byte
     * arrays by content). A failure lists every differing column of every row, with long values shortened.
     */
    private static void assertSameRows(String what, List<Map<String, Object>> binlog,
                                       List<Map<String, Object>> snapshot) {
        assertThat(binlog).as("%s: rows from the binlog", what).hasSameSizeAs(snapshot);
        List<String> differences = new ArrayList<>();
        for (int i = 0; i < snapshot.size(); i++) {
            Map<String, Object> expected = snapshot.get(i);
            Map<String, Object> actual = binlog.get(i);
            if (!List.copyOf(actual.keySet()).equals(List.copyOf(expected.keySet()))) {
                differences.add("row " + i + ": columns " + actual.keySet() + " vs " + expected.keySet());
                continue;
            }
            for (String column : expected.keySet()) {
                Object a = comparable(actual.get(column));
                Object e = comparable(expected.get(column));
                if (!java.util.Objects.equals(a, e)) {
                    differences.add("row " + i + " column " + column + ": binlog " + describe(a) + ", snapshot "
                            + describe(e));
                }
            }
        }
        assertThat(differences).as("%s: binlog and snapshot values differ", what).isEmpty();
    }

    private static Object comparable(Object value) {
        return value instanceof byte[] bytes ? "bytes:" + HexFormat.of().formatHex(bytes) : value;
    }

    private static String describe(Object value) {
        if (value == null) {
            return "null";
        }
        String text = value.toString();
        if (text.length() > 60) {
            text = text.substring(0, 60) + "...(" + text.length() + " chars)";
        }
        return text + " (" + value.getClass().getSimpleName() + ")";
    }
}
