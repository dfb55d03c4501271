package io.gantry.cdc;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The sink's files byte for byte: every value type, escapes, updates and deletes, rotation and a committed snapshot,
 * compared with files the sink wrote before its JSON handling moved to Jackson (in {@code golden-sink/}). A change
 * to the format must change these files on purpose. The files written by the run are left in
 * {@code target/golden-sink-actual/} to compare by hand.
 */
class JsonlSinkGoldenTest {

    private static final Path ACTUAL = Path.of("target", "golden-sink-actual");
    private static final List<String> FILES = List.of("changes.jsonl", "changes.jsonl.000001",
            "changes.jsonl.000002", "changes.jsonl.000003");
    private static final Instant COMMITTED = Instant.parse("2026-12-01T03:04:05Z");
    /** A snapshot's read time comes from a clock, with a fraction of a second. */
    private static final Instant READ = Instant.parse("2026-12-01T03:04:06.123456789Z");

    @Test
    void writesTheSameBytesAsTheGoldenFiles() throws IOException {
        Path path = fresh(ACTUAL).resolve("changes.jsonl");
        try (JsonlSink sink = new JsonlSink(path, 400)) {
            sink.recover();
            sink.append(new ChangeTransaction("0-3306-1", "127.0.0.1:3306", COMMITTED, List.of(
                    new RowChange("app", "every_type", ChangeOp.INSERT, null, everyType()))));
            sink.append(new ChangeTransaction("0-3306-2", "127.0.0.1:3306", COMMITTED, List.of()));
            sink.flush();
            sink.rotateIfDue();
            sink.append(new ChangeTransaction("0-3306-3", "127.0.0.1:3306", COMMITTED, List.of(
                    new RowChange("app", "t1", ChangeOp.UPDATE, row("id", 1L, "v", "a"), row("id", 1L, "v", "b")),
                    new RowChange("app", "t1", ChangeOp.DELETE, row("id", 2L, "v", null), null),
                    new RowChange("d\"b", "t\n", ChangeOp.INSERT, null, row("c\\", 3L)))));
            sink.flush();

            try (SnapshotWriter snapshot = sink.beginSnapshot("0-3306-3,1-3307-9")) {
                snapshot.add("127.0.0.1:3307", READ, new RowChange("app", "t1", ChangeOp.SNAPSHOT, null,
                        row("id", 1L, "v", "b")));
                snapshot.add("127.0.0.1:3307", READ, new RowChange("app", "t1", ChangeOp.SNAPSHOT, null,
                        row("id", 5L, "v", "snap\u0000shot")));
                snapshot.commit();
            }

            sink.append(new ChangeTransaction("3E11FA47-71CA-11E1-9E33-C80AA9429562:23", "db2:3306", COMMITTED,
                    List.of(new RowChange("app", "t1", ChangeOp.INSERT, null, row("id", 6L, "v", "é€😀")))));
            sink.flush();
        }

        for (String name : FILES) {
            assertThat(Files.readAllBytes(path.resolveSibling(name))).as(name).isEqualTo(golden(name));
        }
        try (Stream<Path> written = Files.list(ACTUAL)) {
            assertThat(written.map(p -> p.getFileName().toString())).containsExactlyInAnyOrderElementsOf(FILES);
        }
    }

    @Test
    void readsEveryGoldenLineBack() throws IOException {
        List<ChangeJson.LineMark> marks = new ArrayList<>();
        for (String name : FILES) {
            for (String line : new String(golden(name), UTF_8).split("\n")) {
                ChangeJson.ParsedLine parsed = ChangeJson.parse(line.getBytes(UTF_8));
                assertThat(parsed).as(line).isInstanceOf(ChangeJson.LineMark.class);
                marks.add((ChangeJson.LineMark) parsed);
            }
        }

        assertThat(marks).extracting(ChangeJson.LineMark::gtid).containsExactly(
                "3E11FA47-71CA-11E1-9E33-C80AA9429562:23", "0-3306-1", "0-3306-3", "0-3306-3", "0-3306-3",
                "0-3306-3,1-3307-9", "0-3306-3,1-3307-9");
        assertThat(marks).extracting(ChangeJson.LineMark::txnRow).containsExactly(1L, 1L, 1L, 2L, 3L, 1L, 2L);
    }

    private static Map<String, Object> everyType() {
        return row("null", null,
                "long_min", Long.MIN_VALUE, "long_max", Long.MAX_VALUE, "int", 7, "short", (short) -3,
                "byte", (byte) 5, "unsigned_bigint", new BigInteger("18446744073709551615"),
                "decimal_exponent", new BigDecimal("1E+3"), "decimal_small", new BigDecimal("-0.00000001"),
                "decimal_scale", new BigDecimal("12.3400"),
                "double", 1.5d, "double_big", 1e300, "double_tiny", -1e-300, "double_negative_zero", -0.0d,
                "double_1e10", 1e10, "double_nan", Double.NaN, "double_infinite", Double.NEGATIVE_INFINITY,
                "float", 1.1f, "float_big", 3.4e38f, "float_tiny", 1e-5f, "float_nan", Float.NaN,
                "true", true, "false", false,
                "escapes", "a\"b\\c/d\n\r\t\b\f", "controls", "\u0000\u0001\u001f\u007f",
                "unicode", "é€😀\u2028\u2029\ufeff", "lone_surrogates", "x\ud800y\udc00",
                "json_document", "{\"k\":[1,2,{\"n\":null}]}",
                "bytes", new byte[] {0, (byte) 0xff, 'a', (byte) 0xfb, '\n', '}'}, "empty_bytes", new byte[0],
                "empty_string", "");
    }

    private static Map<String, Object> row(Object... namesAndValues) {
        Map<String, Object> row = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            row.put((String) namesAndValues[i], namesAndValues[i + 1]);
        }
        return row;
    }

    private static byte[] golden(String name) throws IOException {
        try (InputStream in = JsonlSinkGoldenTest.class.getResourceAsStream("golden-sink/" + name)) {
            assertThat(in).as("golden file golden-sink/%s", name).isNotNull();
            return in.readAllBytes();
        }
    }

    private static Path fresh(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (Stream<Path> old = Files.list(dir)) {
                old.forEach(file -> {
                    try {
                        Files.delete(file);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
            }
        }
        return Files.createDirectories(dir);
    }
}
