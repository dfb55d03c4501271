package io.gantry.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Proxy;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** JdbcRowValues over a fake text-protocol row; {@code RowValuesConsistencyIT} checks it against a real server. */
class JdbcRowValuesTest {

    @Test
    void integersAreLongsAndOnlyHugeUnsignedBigintsAreBigIntegers() throws SQLException {
        Map<String, Object> row = new Row()
                .text("tu", "TINYINT UNSIGNED", "255").text("i", "INT", "-2147483648")
                .text("ui", "INT UNSIGNED", "4294967295").text("b", "BIGINT", "-9223372036854775808")
                .text("ub", "BIGINT UNSIGNED", "18446744073709551615")
                .text("ubSmall", "BIGINT UNSIGNED", "9223372036854775807")
                .text("y", "YEAR", "0000").text("y2", "YEAR", "2024").read();
        assertThat(row).containsExactly(Map.entry("tu", 255L), Map.entry("i", -2147483648L),
                Map.entry("ui", 4294967295L), Map.entry("b", Long.MIN_VALUE),
                Map.entry("ub", new BigInteger("18446744073709551615")), Map.entry("ubSmall", Long.MAX_VALUE),
                Map.entry("y", 0L), Map.entry("y2", 2024L));
    }

    @Test
    void floatingPointAndDecimals() throws SQLException {
        Map<String, Object> row = new Row()
                .text("f", "FLOAT", "3.14159").text("big", "FLOAT", "16777200").text("negZero", "FLOAT", "-0")
                .text("d", "DOUBLE", "1.2345678901234567e300").text("dec", "DECIMAL", "12.50", 2)
                .text("udec", "DECIMAL UNSIGNED", "0.00", 2).read();
        assertThat(row).containsExactly(Map.entry("f", 3.14159), Map.entry("big", 1.67772E7),
                Map.entry("negZero", -0.0), Map.entry("d", 1.2345678901234567e300),
                Map.entry("dec", new BigDecimal("12.50")), Map.entry("udec", new BigDecimal("0.00")));
    }

    @Test
    void floatsAgreeWithTheBinlogSide() throws SQLException {
        for (float value : new float[] {3.1415927f, 1.1f, 16777216f, 1234565f, -1.17549435e-38f, 1e-45f}) {
            Object jdbc = new Row().text("f", "FLOAT", RowValueForms.floatText(value)).read().get("f");
            assertThat(jdbc).as("%s", value)
                    .isEqualTo(RowValueForms.floatValue(RowValueForms.floatText(value)));
        }
    }

    @Test
    void datesAndTimesAreNormalised() throws SQLException {
        Map<String, Object> row = new Row()
                .text("d", "DATE", "2024-01-31").text("dt", "DATETIME", "2024-01-31 13:45:00.120")
                .text("ts", "TIMESTAMP", "2024-01-31 13:45:00").text("ts6", "TIMESTAMP", "2038-01-19 03:14:07.999999")
                .text("t", "TIME", "-00:00:00.01").text("long", "TIME", "-838:59:59").read();
        assertThat(row).containsExactly(Map.entry("d", "2024-01-31"), Map.entry("dt", "2024-01-31T13:45:00.120"),
                Map.entry("ts", "2024-01-31T13:45:00Z"), Map.entry("ts6", "2038-01-19T03:14:07.999999Z"),
                Map.entry("t", "-00:00:00.01"), Map.entry("long", "-838:59:59"));
    }

    @Test
    void zeroAndPartlyZeroDatesAreZeroStrings() throws SQLException {
        Map<String, Object> row = new Row()
                .text("d", "DATE", "0000-00-00").text("partDay", "DATE", "2024-01-00")
                .text("dt", "DATETIME", "0000-00-00 00:00:00.000").text("partMonth", "DATETIME", "2024-00-00 10:00:00")
                .text("ts", "TIMESTAMP", "0000-00-00 00:00:00.000000").text("yearZero", "DATE", "0000-01-01").read();
        assertThat(row).containsExactly(Map.entry("d", "0000-00-00"), Map.entry("partDay", "0000-00-00"),
                Map.entry("dt", "0000-00-00T00:00:00"), Map.entry("partMonth", "0000-00-00T00:00:00"),
                Map.entry("ts", "0000-00-00T00:00:00"), Map.entry("yearZero", "0000-01-01"));
    }

    @Test
    void bytesAreCopiedAndTextIsReadAsStrings() throws SQLException {
        byte[] raw = {0x02, 0x01};
        Map<String, Object> row = new Row()
                .bytes("bits", "BIT", raw).bytes("bin", "BINARY", new byte[] {'a', 'b', 0, 0})
                .bytes("geo", "GEOMETRY", new byte[] {1}).string("name", "VARCHAR", "Привет")
                .string("e", "CHAR", "b").string("j", "LONGTEXT", "{\"a\": 1}").read();
        assertThat((byte[]) row.get("bits")).containsExactly(0x02, 0x01).isNotSameAs(raw);
        assertThat((byte[]) row.get("bin")).containsExactly('a', 'b', 0, 0);
        assertThat((byte[]) row.get("geo")).containsExactly(1);
        assertThat(row).containsEntry("name", "Привет").containsEntry("e", "b").containsEntry("j", "{\"a\": 1}");
    }

    @Test
    void nullsStayNull() throws SQLException {
        Map<String, Object> row = new Row().text("i", "INT", null).text("d", "DATETIME", null)
                .bytes("b", "BLOB", null).string("s", "TEXT", null).read();
        assertThat(row).containsOnlyKeys("i", "d", "b", "s").allSatisfy((name, value) -> assertThat(value).isNull());
    }

    @Test
    void binaryProtocolValuesAreRejectedWithAHint() {
        Row row = new Row().bytes("i", "INT", new byte[] {1, 0, 0, 0});
        assertThatThrownBy(row::read).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("column i (INT)").hasMessageContaining("text-protocol");
    }

    @Test
    void unknownTypesAreAnError() {
        Row row = new Row().text("x", "INTERVAL", "1");
        assertThatThrownBy(row::read).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("column x has type INTERVAL");
    }

    /** One text-protocol row behind JDBC interfaces: what connector-j's getBytes and getString hand out. */
    private static final class Row {
        private final List<String> labels = new ArrayList<>();
        private final List<String> typeNames = new ArrayList<>();
        private final List<Integer> scales = new ArrayList<>();
        private final List<byte[]> raw = new ArrayList<>();
        private final List<String> strings = new ArrayList<>();

        Row text(String label, String typeName, String text) {
            return text(label, typeName, text, 0);
        }

        Row text(String label, String typeName, String text, int scale) {
            return add(label, typeName, scale, text == null ? null : text.getBytes(StandardCharsets.US_ASCII), text);
        }

        Row bytes(String label, String typeName, byte[] bytes) {
            return add(label, typeName, 0, bytes, null);
        }

        Row string(String label, String typeName, String text) {
            return add(label, typeName, 0, text == null ? null : text.getBytes(StandardCharsets.UTF_8), text);
        }

        private Row add(String label, String typeName, int scale, byte[] bytes, String text) {
            labels.add(label);
            typeNames.add(typeName);
            scales.add(scale);
            raw.add(bytes);
            strings.add(text);
            return this;
        }

        Map<String, Object> read() throws SQLException {
            ResultSetMetaData metadata = (ResultSetMetaData) Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[] {ResultSetMetaData.class}, (proxy, method, args) -> switch (method.getName()) {
                        case "getColumnCount" -> labels.size();
                        case "getColumnLabel", "getColumnName" -> labels.get((Integer) args[0] - 1);
                        case "getColumnTypeName" -> typeNames.get((Integer) args[0] - 1);
                        case "getScale" -> scales.get((Integer) args[0] - 1);
                        case "isWrapperFor" -> false;
                        default -> throw new UnsupportedOperationException(method.getName());
                    });
            ResultSet rows = (ResultSet) Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[] {ResultSet.class}, (proxy, method, args) -> switch (method.getName()) {
                        case "getMetaData" -> metadata;
                        case "getBytes" -> raw.get((Integer) args[0] - 1);
                        case "getString" -> strings.get((Integer) args[0] - 1);
                        default -> throw new UnsupportedOperationException(method.getName());
                    });
            return JdbcRowValues.row(rows);
        }
    }
}
