package io.gantry.cdc;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class ChangeJsonTest {

    private static final Instant AT = Instant.parse("2026-12-01T03:04:05Z");

    private static Map<String, Object> row(Object... namesAndValues) {
        Map<String, Object> row = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            row.put((String) namesAndValues[i], namesAndValues[i + 1]);
        }
        return row;
    }

    private static String valueJson(Object value) {
        String line = ChangeJson.line("g", "s", AT, new RowChange("d", "t", ChangeOp.INSERT, null, row("c", value)),
                1, 1);
        String prefix = ",\"after\":{\"c\":";
        int start = line.indexOf(prefix) + prefix.length();
        int end = line.indexOf("},\"commit_time\"");
        return line.substring(start, end);
    }

    private static ChangeJson.ParsedLine parse(String line) {
        return ChangeJson.parse(line.getBytes(UTF_8));
    }

    private static ChangeJson.LineMark mark(String line) {
        ChangeJson.ParsedLine parsed = parse(line);
        assertThat(parsed).as(line).isInstanceOf(ChangeJson.LineMark.class);
        return (ChangeJson.LineMark) parsed;
    }

    @Test
    void writesTheDocumentedLineWithFieldsInOrder() {
        RowChange change = new RowChange("app", "t1", ChangeOp.INSERT, null, row("id", 1L, "name", "x"));

        assertThat(ChangeJson.line("0-3306-42", "127.0.0.1:3306", AT, change, 1, 3)).isEqualTo(
                "{\"gtid\":\"0-3306-42\",\"server\":\"127.0.0.1:3306\",\"database\":\"app\",\"table\":\"t1\","
                        + "\"op\":\"insert\",\"before\":null,\"after\":{\"id\":1,\"name\":\"x\"},"
                        + "\"commit_time\":\"2026-12-01T03:04:05Z\",\"txn_row\":1,\"txn_rows\":3}");
    }

    @Test
    void writesBeforeAndAfterOfAnUpdateAndNullAfterOfADelete() {
        RowChange update = new RowChange("app", "t", ChangeOp.UPDATE, row("id", 1L, "v", "a"), row("id", 1L, "v", "b"));
        RowChange delete = new RowChange("app", "t", ChangeOp.DELETE, row("id", 1L), null);

        assertThat(ChangeJson.line("g", "s", AT, update, 1, 1))
                .contains("\"op\":\"update\",\"before\":{\"id\":1,\"v\":\"a\"},\"after\":{\"id\":1,\"v\":\"b\"},");
        assertThat(ChangeJson.line("g", "s", AT, delete, 1, 1))
                .contains("\"op\":\"delete\",\"before\":{\"id\":1},\"after\":null,");
    }

    @Test
    void escapesStringsAsRfc8259Says() {
        assertThat(valueJson("a\"b\\c/d")).isEqualTo("\"a\\\"b\\\\c/d\"");
        assertThat(valueJson("\n\r\t\b\f")).isEqualTo("\"\\n\\r\\t\\b\\f\"");
        assertThat(valueJson("\u0000\u0001\u001f\u007f")).isEqualTo("\"\\u0000\\u0001\\u001f\u007f\"");
        assertThat(valueJson("é€😀")).isEqualTo("\"é€😀\"");
        assertThat(valueJson("x\ud800y\udc00")).isEqualTo("\"x\\ud800y\\udc00\"");
    }

    @Test
    void escapesNamesOfDatabasesTablesAndColumnsToo() {
        RowChange change = new RowChange("d\"b", "t\n", ChangeOp.INSERT, null, row("c\\", 1L));

        assertThat(ChangeJson.line("g\"", "s", AT, change, 1, 1))
                .startsWith("{\"gtid\":\"g\\\"\",\"server\":\"s\",\"database\":\"d\\\"b\",\"table\":\"t\\n\",")
                .contains("\"after\":{\"c\\\\\":1}");
    }

    @Test
    void writesEachValueTypeAsRowChangeDescribes() {
        assertThat(valueJson(null)).isEqualTo("null");
        assertThat(valueJson(Long.MIN_VALUE)).isEqualTo("-9223372036854775808");
        assertThat(valueJson(7)).isEqualTo("7");
        assertThat(valueJson((short) -3)).isEqualTo("-3");
        assertThat(valueJson((byte) 5)).isEqualTo("5");
        assertThat(valueJson(new BigInteger("18446744073709551615"))).isEqualTo("18446744073709551615");
        assertThat(valueJson(new BigDecimal("1E+3"))).isEqualTo("1000");
        assertThat(valueJson(new BigDecimal("-0.00000001"))).isEqualTo("-0.00000001");
        assertThat(valueJson(1.5d)).isEqualTo("1.5");
        assertThat(valueJson(1.1f)).isEqualTo("1.1");
        assertThat(valueJson(Double.NaN)).isEqualTo("null");
        assertThat(valueJson(Double.NEGATIVE_INFINITY)).isEqualTo("null");
        assertThat(valueJson(Float.POSITIVE_INFINITY)).isEqualTo("null");
        assertThat(valueJson(Float.NaN)).isEqualTo("null");
        assertThat(valueJson(true)).isEqualTo("true");
        assertThat(valueJson(false)).isEqualTo("false");
        assertThat(valueJson(new byte[] {0, (byte) 0xff, 'a', (byte) 0xfb})).isEqualTo("\"AP9h+w==\"");
        assertThat(valueJson(new byte[0])).isEqualTo("\"\"");
    }

    @Test
    void writesFloatingPointValuesAsValidJsonNumbers() {
        for (Object value : List.of(1e300, -1e-300, 0.0d, -0.0d, 1e10, 3.4e38f, 1e-5f)) {
            String json = valueJson(value);
            assertThat(json).as(value.toString()).matches("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?");
            if (value instanceof Float f) {
                assertThat(Float.parseFloat(json)).isEqualTo(f);
            } else {
                assertThat(Double.parseDouble(json)).isEqualTo(value);
            }
        }
    }

    @Test
    void rejectsOtherTypesNamingTheColumnAndTheClass() {
        RowChange change = new RowChange("d", "t", ChangeOp.INSERT, null, row("born", LocalDate.of(2000, 1, 1)));

        assertThatThrownBy(() -> ChangeJson.line("g", "s", AT, change, 1, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("born")
                .hasMessageContaining("java.time.LocalDate");
    }

    @Test
    void appendsNothingOfATransactionWithAnUnwritableValue() {
        ChangeTransaction tx = new ChangeTransaction("g", "s", AT, List.of(
                new RowChange("d", "t", ChangeOp.INSERT, null, row("id", 1L)),
                new RowChange("d", "t", ChangeOp.INSERT, null, row("id", new Object()))));
        StringBuilder out = new StringBuilder("kept\n");

        assertThatThrownBy(() -> ChangeJson.appendTransaction(out, tx)).isInstanceOf(IllegalArgumentException.class);
        assertThat(out.toString()).isEqualTo("kept\n");
    }

    @Test
    void numbersTheRowsOfATransaction() {
        ChangeTransaction tx = new ChangeTransaction("0-1-9", "s", AT, List.of(
                new RowChange("d", "t", ChangeOp.INSERT, null, row("id", 1L)),
                new RowChange("d", "t", ChangeOp.DELETE, row("id", 2L), null)));
        StringBuilder out = new StringBuilder();

        ChangeJson.appendTransaction(out, tx);

        String[] lines = out.toString().split("\n", -1);
        assertThat(lines).hasSize(3);
        assertThat(lines[2]).isEmpty();
        assertThat(mark(lines[0])).isEqualTo(new ChangeJson.LineMark("0-1-9", 1, OptionalLong.of(2)));
        assertThat(mark(lines[1])).isEqualTo(new ChangeJson.LineMark("0-1-9", 2, OptionalLong.of(2)));
        assertThat(mark(lines[1]).endsTransaction()).isTrue();
        assertThat(mark(lines[0]).endsTransaction()).isFalse();
    }

    @Test
    void rejectsRowNumbersOutOfRange() {
        RowChange change = new RowChange("d", "t", ChangeOp.INSERT, null, row("id", 1L));

        assertThatThrownBy(() -> ChangeJson.line("g", "s", AT, change, 0, 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ChangeJson.line("g", "s", AT, change, 3, 2))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void writesSnapshotLinesWithoutATotal() {
        RowChange read = new RowChange("d", "t", ChangeOp.SNAPSHOT, null, row("id", 1L));

        String line = ChangeJson.snapshotLine("0-1-100,1-2-5", "s", AT, read, 42);

        assertThat(line).contains("\"op\":\"snapshot\",\"before\":null,").endsWith("\"txn_row\":42,\"txn_rows\":null}");
        ChangeJson.LineMark mark = mark(line);
        assertThat(mark).isEqualTo(new ChangeJson.LineMark("0-1-100,1-2-5", 42, OptionalLong.empty()));
        assertThat(mark.endsTransaction()).isFalse();
    }

    @Test
    void refusesAChangeAsASnapshotLine() {
        RowChange insert = new RowChange("d", "t", ChangeOp.INSERT, null, row("id", 1L));

        assertThatThrownBy(() -> ChangeJson.snapshotLine("p", "s", AT, insert, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("SNAPSHOT");
    }

    @Test
    void parsesBackGtidAndRowNumbersWhateverTheValuesHold() {
        String tricky = "\"}{\\\"txn_row\\\":99,\\\"gtid\\\":\\\"evil\\\"}\n\u0001é😀\ud800";
        Map<String, Object> values = row("a", tricky, "\"txn_rows\"", "{\"gtid\":\"x\"}", "n", -1.5e-7d,
                "bin", new byte[] {'}', '"'});
        for (String gtid : List.of("0-3306-42", "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-23", "q\"u}o{t\\e",
                "\u0000\u001f€")) {
            RowChange change = new RowChange("d}", "t\"", ChangeOp.UPDATE, values, values);

            String line = ChangeJson.line(gtid, "h:1", AT, change, 2, 7);

            assertThat(mark(line)).isEqualTo(new ChangeJson.LineMark(gtid, 2, OptionalLong.of(7)));
        }
    }

    @Test
    void acceptsOtherValidJsonInFieldsItDoesNotKeep() {
        assertThat(mark("{ \"x\" : [1, -0.5e+3, {\"y\": [true, false, null, \"]\"]}, []], \"gtid\":\"g\","
                + "\"txn_row\":1,\"txn_rows\":1, \"z\":{}}"))
                .isEqualTo(new ChangeJson.LineMark("g", 1, OptionalLong.of(1)));
        assertThat(mark("{\"txn_rows\":null,\"txn_row\":3,\"gtid\":\"\\u0041\\/\"}"))
                .isEqualTo(new ChangeJson.LineMark("A/", 3, OptionalLong.empty()));
    }

    @Test
    void rejectsEveryCutOfALine() {
        RowChange change = new RowChange("d", "t", ChangeOp.INSERT, null, row("s", "}\"}", "n", 12L));
        String line = ChangeJson.line("0-1-2", "s", AT, change, 1, 12);

        for (int cut = 0; cut < line.length(); cut++) {
            assertThat(parse(line.substring(0, cut))).as("cut at %d", cut)
                    .isInstanceOf(ChangeJson.BadLine.class);
        }
    }

    @Test
    void rejectsLinesThatAreNotACompleteObjectOfOurs() {
        List<String> bad = List.of(
                "",
                "[]",
                "{\"gtid\":\"g\",\"txn_row\":1,\"txn_rows\":1} ",
                "{\"gtid\":\"g\",\"txn_row\":1,\"txn_rows\":1}}",
                "{\"gtid\":\"g\",\"txn_row\":1,\"txn_rows\":1}{}",
                "{\"gtid\":\"g\",\"txn_row\":1}",
                "{\"txn_row\":1,\"txn_rows\":1}",
                "{\"gtid\":\"g\",\"txn_rows\":1}",
                "{\"gtid\":7,\"txn_row\":1,\"txn_rows\":1}",
                "{\"gtid\":\"g\",\"gtid\":\"h\",\"txn_row\":1,\"txn_rows\":1}",
                "{\"gtid\":\"g\",\"txn_row\":0,\"txn_rows\":1}",
                "{\"gtid\":\"g\",\"txn_row\":2,\"txn_rows\":1}",
                "{\"gtid\":\"g\",\"txn_row\":1.0,\"txn_rows\":1}",
                "{\"gtid\":\"g\",\"txn_row\":01,\"txn_rows\":1}",
                "{\"gtid\":\"g\",\"txn_row\":\"1\",\"txn_rows\":1}",
                "{\"gtid\":\"g\",\"txn_row\":99999999999999999999,\"txn_rows\":1}",
                "{\"gtid\":\"g\\x\",\"txn_row\":1,\"txn_rows\":1}",
                "{\"gtid\":\"g\\u12\",\"txn_row\":1,\"txn_rows\":1}",
                "{\"gtid\":\"g\\u١٢٣٤\",\"txn_row\":1,\"txn_rows\":1}",
                "{\"gtid\":\"g\u0001\",\"txn_row\":1,\"txn_rows\":1}",
                "{\"gtid\":\"g\",\"txn_row\":1,\"txn_rows\":1,}",
                "{\"gtid\":\"g\",\"txn_row\":1,\"txn_rows\":1,\"x\":tru}",
                "{\"gtid\":\"g\",\"txn_row\":1,\"txn_rows\":1,\"x\":[1,]}",
                "{\"gtid\":\"g\",\"txn_row\":1,\"txn_rows\":1,\"x\":{\"a\" 1}}",
                "{\"gtid\":\"g\",\"txn_row\":1,\"txn_rows\":1,\"x\":-}",
                "{\"gtid\":\"g\",\"txn_row\":1,\"txn_rows\":1,\"x\":1.}",
                "{\"gtid\":\"g\",\"txn_row\":1,\"txn_rows\":1,\"x\":1e}",
                "{\"gtid\":\"g\",\"txn_row\":1,\"txn_rows\":1,\"x\":" + "[".repeat(100) + "]".repeat(100) + "}",
                "{\"gtid\":\"g\",\"txn_row\":1,\"txn_rows\":1,\"x\":\"}");
        for (String line : bad) {
            assertThat(parse(line)).as(line).isInstanceOf(ChangeJson.BadLine.class);
        }
    }

    @Test
    void rejectsBytesThatAreNotUtf8AnywhereInTheLine() {
        byte[] line = ChangeJson.line("0-1-2", "s", AT, new RowChange("d", "t", ChangeOp.INSERT, null,
                row("v", "ab")), 1, 1).getBytes(UTF_8);
        int at = new String(line, UTF_8).indexOf("ab");
        List<byte[]> damages = List.of(new byte[] {(byte) 0xff}, new byte[] {(byte) 0xc3},
                new byte[] {(byte) 0xc0, (byte) 0x80}, new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80},
                new byte[] {(byte) 0xf4, (byte) 0x90, (byte) 0x80, (byte) 0x80});

        for (byte[] damage : damages) {
            byte[] bad = new byte[line.length - 2 + damage.length];
            System.arraycopy(line, 0, bad, 0, at);
            System.arraycopy(damage, 0, bad, at, damage.length);
            System.arraycopy(line, at + 2, bad, at + damage.length, line.length - at - 2);

            assertThat(ChangeJson.parse(bad)).as(java.util.HexFormat.of().formatHex(damage))
                    .isEqualTo(new ChangeJson.BadLine("not UTF-8"));
        }
    }

    @Test
    void readsAValueLongerThanJacksonsDefaultStringCap() {
        String big = "x".repeat(21_000_000);
        String line = ChangeJson.line("0-1-2", "s", AT, new RowChange("d", "t", ChangeOp.INSERT, null,
                row("blob", big)), 1, 1);

        assertThat(mark(line)).isEqualTo(new ChangeJson.LineMark("0-1-2", 1, OptionalLong.of(1)));
    }
}
