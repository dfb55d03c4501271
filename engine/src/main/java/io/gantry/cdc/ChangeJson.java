package io.gantry.cdc;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * The JSON-lines form of a row change: one JSON object per row, on one line. A line reads
 *
 * <pre>{@code
 * {"gtid":"0-3306-42","server":"127.0.0.1:3306","database":"app","table":"t1","op":"insert","before":null,
 *  "after":{"id":1,"name":"x"},"commit_time":"2026-12-01T03:04:05Z","txn_row":1,"txn_rows":3}
 * }</pre>
 *
 * (without the line break), fields always in this order. {@code txn_row} (1-based) and {@code txn_rows} say where a
 * transaction ends, for readers and for {@link JsonlSink#recover() recovery}: a transaction is complete when its
 * line with {@code txn_row == txn_rows} is there. Snapshot lines carry {@code "txn_rows":null}: their total is not
 * known while the snapshot streams, and a snapshot becomes visible only as a whole file (see
 * {@link JsonlSink#beginSnapshot(String)}), so the file is the unit that is complete, not a line count.
 *
 * <p>Values are written as {@link RowChange} describes them; {@code NaN} and infinite floating-point values, which
 * MySQL cannot store, become {@code null} rather than invalid JSON. Lines are written here by hand and read with
 * Jackson: Jackson's writer would change the bytes of the format (it writes a lone surrogate as {@code ?} or as an
 * upper-case <code>&#92;uD800</code> escape, and control characters with upper-case hex digits), while its reader checks a
 * line at least as strictly as the format needs.
 */
public final class ChangeJson {

    /**
     * Reads one line as a tree, strictly: a key twice in one object, or anything after the object, is an error.
     * Nesting deeper than 32 is no line of ours (a row is at depth 2), and the cap keeps a damaged line from costing
     * a deep stack. Strings are not capped: Jackson's default cap (20 million characters) is less than one
     * {@code MEDIUMBLOB} as base64.
     */
    private static final ObjectReader LINE_READER = new ObjectMapper(JsonFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNestingDepth(32)
                    .maxStringLength(Integer.MAX_VALUE)
                    .build())
            .build())
            .reader()
            .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private ChangeJson() {
    }

    /** What {@link #parse(byte[])} makes of a line: its {@link LineMark} or why it is not a line of ours. */
    public sealed interface ParsedLine permits LineMark, BadLine {
    }

    /**
     * The fields of a line that recovery needs.
     *
     * @param txnRow  the 1-based index of the row in its transaction (or snapshot)
     * @param txnRows the number of rows in the transaction; empty for a snapshot line
     */
    public record LineMark(String gtid, long txnRow, OptionalLong txnRows) implements ParsedLine {

        public LineMark {
            Objects.requireNonNull(gtid, "gtid");
            Objects.requireNonNull(txnRows, "txnRows");
        }

        /** Whether this is the last line of its transaction; never for a snapshot line. */
        public boolean endsTransaction() {
            return txnRows.isPresent() && txnRow == txnRows.getAsLong();
        }
    }

    /** A line that is not a complete line of this format, and why. */
    public record BadLine(String reason) implements ParsedLine {
    }

    /**
     * One change line, without its line end.
     *
     * @param txnRow  the 1-based index of the row in its transaction
     * @param txnRows the number of rows in the transaction, at least {@code txnRow}
     * @throws IllegalArgumentException when a value has a type the format does not know (naming the column and the
     *                                  class), or the row numbers are out of range
     */
    public static String line(String gtid, String server, Instant commitTime, RowChange row, long txnRow,
                              long txnRows) {
        if (txnRow < 1 || txnRows < txnRow) {
            throw new IllegalArgumentException("txn_row must be 1.." + txnRows + ", was " + txnRow);
        }
        StringBuilder out = new StringBuilder(256);
        appendLine(out, gtid, server, commitTime, row, txnRow, txnRows);
        return out.toString();
    }

    /**
     * One snapshot line, without its line end: op {@code snapshot}, the snapshot's position as {@code gtid},
     * {@code at} as {@code commit_time} and {@code "txn_rows":null}.
     *
     * @param position  the snapshot's position, as GTID set text
     * @param rowNumber the 1-based running count of the row in the snapshot
     * @throws IllegalArgumentException when the row is not a {@link ChangeOp#SNAPSHOT} row, or a value has a type
     *                                  the format does not know
     */
    public static String snapshotLine(String position, String server, Instant at, RowChange row, long rowNumber) {
        if (row.op() != ChangeOp.SNAPSHOT) {
            throw new IllegalArgumentException("a snapshot line needs a " + ChangeOp.SNAPSHOT + " row, not "
                    + row.op() + " (" + row.database() + "." + row.table() + ")");
        }
        if (rowNumber < 1) {
            throw new IllegalArgumentException("snapshot row number must be at least 1, was " + rowNumber);
        }
        StringBuilder out = new StringBuilder(256);
        appendLine(out, position, server, at, row, rowNumber, -1);
        return out.toString();
    }

    /**
     * Appends every row of a transaction as lines, each ending in {@code '\n'}. Nothing is appended when a value
     * cannot be written, so a half transaction never reaches {@code out}.
     */
    static void appendTransaction(StringBuilder out, ChangeTransaction tx) {
        int start = out.length();
        int rows = tx.changes().size();
        try {
            for (int i = 0; i < rows; i++) {
                appendLine(out, tx.gtid(), tx.server(), tx.commitTime(), tx.changes().get(i), i + 1, rows);
                out.append('\n');
            }
        } catch (RuntimeException e) {
            out.setLength(start);
            throw e;
        }
    }

    /** {@code txnRows < 0} writes {@code "txn_rows":null}. */
    private static void appendLine(StringBuilder out, String gtid, String server, Instant commitTime, RowChange row,
                                   long txnRow, long txnRows) {
        Objects.requireNonNull(gtid, "gtid");
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(commitTime, "commitTime");
        out.append("{\"gtid\":");
        appendString(out, gtid);
        out.append(",\"server\":");
        appendString(out, server);
        out.append(",\"database\":");
        appendString(out, row.database());
        out.append(",\"table\":");
        appendString(out, row.table());
        out.append(",\"op\":");
        appendString(out, row.op().jsonName());
        out.append(",\"before\":");
        appendRow(out, row.before());
        out.append(",\"after\":");
        appendRow(out, row.after());
        out.append(",\"commit_time\":");
        appendString(out, commitTime.toString());
        out.append(",\"txn_row\":").append(txnRow);
        out.append(",\"txn_rows\":");
        if (txnRows < 0) {
            out.append("null");
        } else {
            out.append(txnRows);
        }
        out.append('}');
    }

    private static void appendRow(StringBuilder out, Map<String, Object> row) {
        if (row == null) {
            out.append("null");
            return;
        }
        out.append('{');
        boolean first = true;
        for (Map.Entry<String, Object> column : row.entrySet()) {
            if (column.getKey() == null) {
                throw new IllegalArgumentException("a column has no name");
            }
            if (!first) {
                out.append(',');
            }
            first = false;
            appendString(out, column.getKey());
            out.append(':');
            appendValue(out, column.getKey(), column.getValue());
        }
        out.append('}');
    }

    private static void appendValue(StringBuilder out, String column, Object value) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof Long || value instanceof Integer || value instanceof Short
                || value instanceof Byte || value instanceof BigInteger) {
            out.append(value);
        } else if (value instanceof BigDecimal decimal) {
            // toString() could write 1E+3, which JSON accepts but readers of DECIMAL columns should not have to.
            out.append(decimal.toPlainString());
        } else if (value instanceof Double d) {
            out.append(d.isNaN() || d.isInfinite() ? "null" : d.toString());
        } else if (value instanceof Float f) {
            // Float.toString, not a widening to double: FLOAT 1.1 stays 1.1 instead of 1.100000023841858.
            out.append(f.isNaN() || f.isInfinite() ? "null" : f.toString());
        } else if (value instanceof Boolean b) {
            out.append(b.booleanValue());
        } else if (value instanceof String s) {
            appendString(out, s);
        } else if (value instanceof byte[] bytes) {
            out.append('"').append(Base64.getEncoder().encodeToString(bytes)).append('"');
        } else {
            throw new IllegalArgumentException("column " + column + " holds a " + value.getClass().getName()
                    + ", which the change sink cannot write as JSON");
        }
    }

    /** A JSON string as RFC 8259 section 7 has it. */
    static void appendString(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20 || isLoneSurrogate(s, i)) {
                        // A lone surrogate would become '?' in UTF-8; escaped, it reaches the reader unchanged.
                        appendUnicodeEscape(out, c);
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    private static boolean isLoneSurrogate(String s, int i) {
        char c = s.charAt(i);
        if (Character.isHighSurrogate(c)) {
            return i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1));
        }
        if (Character.isLowSurrogate(c)) {
            return i == 0 || !Character.isHighSurrogate(s.charAt(i - 1));
        }
        return false;
    }

    private static void appendUnicodeEscape(StringBuilder out, char c) {
        out.append("\\u").append(HEX[(c >> 12) & 0xF]).append(HEX[(c >> 8) & 0xF]).append(HEX[(c >> 4) & 0xF])
                .append(HEX[c & 0xF]);
    }

    /**
     * Reads a line's {@code gtid}, {@code txn_row} and {@code txn_rows}. The whole line is read as one JSON object
     * in UTF-8 (strings, escapes, nesting, numbers, no key twice in one object), so that a torn or damaged line is
     * found wherever it is cut; other fields are checked but not kept. The line is given without its line end; it
     * starts with its opening brace and nothing may follow the closing one, not even a blank.
     *
     * <p>Bytes, not a {@code String}: from a {@code String}, Jackson 2.22 reads the digits of a <code>&#92;u</code>
     * escape by their low eight bits only, so that four Arabic-Indic digits would pass for <code>&#92;uabcd</code>;
     * from bytes it refuses them. The UTF-8 check comes first because Jackson lets overlong forms and code points past
     * U+10FFFF through.
     */
    public static ParsedLine parse(byte[] line) {
        Objects.requireNonNull(line, "line");
        if (line.length == 0) {
            return new BadLine("empty line");
        }
        if (line[0] != '{' || line[line.length - 1] != '}') {
            return new BadLine("line does not start with '{' and end with '}'");
        }
        try {
            UTF_8.newDecoder().decode(ByteBuffer.wrap(line));
        } catch (CharacterCodingException e) {
            return new BadLine("not UTF-8");
        }
        JsonNode object;
        try {
            object = LINE_READER.readTree(line);
        } catch (IOException e) {
            return new BadLine(e instanceof JsonProcessingException json ? json.getOriginalMessage() : e.toString());
        }
        JsonNode gtid = object.get("gtid");
        JsonNode txnRow = object.get("txn_row");
        JsonNode txnRows = object.get("txn_rows");
        if (gtid == null || txnRow == null || txnRows == null) {
            return new BadLine("missing gtid, txn_row or txn_rows");
        }
        if (!gtid.isTextual()) {
            return new BadLine("gtid is not a string");
        }
        if (!isCount(txnRow) || !txnRows.isNull() && !isCount(txnRows)) {
            return new BadLine("txn_row or txn_rows is not a whole number: " + txnRow + ", " + txnRows);
        }
        OptionalLong total = txnRows.isNull() ? OptionalLong.empty() : OptionalLong.of(txnRows.longValue());
        if (txnRow.longValue() < 1 || total.isPresent() && total.getAsLong() < txnRow.longValue()) {
            return new BadLine("txn_row " + txnRow + " out of range of txn_rows " + txnRows);
        }
        return new LineMark(gtid.textValue(), txnRow.longValue(), total);
    }

    /** A JSON integer that fits a {@code long}: not {@code 1.0}, not a string, not 2<sup>64</sup>. */
    private static boolean isCount(JsonNode node) {
        return node.isIntegralNumber() && node.canConvertToLong();
    }
}
