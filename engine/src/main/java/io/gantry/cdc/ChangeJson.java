package io.gantry.cdc;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * The JSON-lines form of a row change: one JSON object per row, on one line, written by hand because the engine has
 * no JSON library and the format is small and fixed. A line reads
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
 * MySQL cannot store, become {@code null} rather than invalid JSON.
 */
public final class ChangeJson {

    /** Deeper nesting than this is no line of ours; the cap keeps a damaged line from overflowing the stack. */
    private static final int MAX_DEPTH = 32;
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private ChangeJson() {
    }

    /** What {@link #parse(String)} makes of a line: its {@link LineMark} or why it is not a line of ours. */
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
     * Reads a line's {@code gtid}, {@code txn_row} and {@code txn_rows}. The whole line is checked as one JSON
     * object (strings, escapes, nesting, numbers), so that a torn or damaged line is found wherever it is cut; other
     * fields are checked but not kept. The line is given without its line end; nothing may follow the closing
     * brace.
     */
    public static ParsedLine parse(String line) {
        Objects.requireNonNull(line, "line");
        try {
            return new Parser(line).line();
        } catch (Malformed e) {
            return new BadLine(e.getMessage());
        }
    }

    /** A parse failure inside {@link Parser}; it never leaves {@link #parse(String)}. */
    private static final class Malformed extends Exception {
        Malformed(String message) {
            super(message, null, false, false);
        }
    }

    /** A recursive-descent reader of one JSON object that keeps the three top-level fields recovery needs. */
    private static final class Parser {
        private final String s;
        private int at;

        Parser(String s) {
            this.s = s;
        }

        ParsedLine line() throws Malformed {
            if (s.isEmpty()) {
                throw new Malformed("empty line");
            }
            if (s.charAt(0) != '{') {
                throw new Malformed("line does not start with '{'");
            }
            if (s.charAt(s.length() - 1) != '}') {
                throw new Malformed("line does not end with '}'");
            }
            String gtid = null;
            Long txnRow = null;
            Long txnRows = null;
            boolean txnRowsSeen = false;
            at = 1;
            skipBlanks();
            if (peek() == '}') {
                at++;
            } else {
                while (true) {
                    skipBlanks();
                    String key = string();
                    skipBlanks();
                    expect(':');
                    skipBlanks();
                    switch (key) {
                        case "gtid" -> {
                            if (gtid != null) {
                                throw new Malformed("gtid twice");
                            }
                            if (peek() != '"') {
                                throw new Malformed("gtid is not a string at " + at);
                            }
                            gtid = string();
                        }
                        case "txn_row" -> {
                            if (txnRow != null) {
                                throw new Malformed("txn_row twice");
                            }
                            txnRow = count("txn_row");
                        }
                        case "txn_rows" -> {
                            if (txnRowsSeen) {
                                throw new Malformed("txn_rows twice");
                            }
                            txnRowsSeen = true;
                            if (s.startsWith("null", at)) {
                                at += 4;
                            } else {
                                txnRows = count("txn_rows");
                            }
                        }
                        default -> value(1);
                    }
                    skipBlanks();
                    char c = next();
                    if (c == '}') {
                        break;
                    }
                    if (c != ',') {
                        throw new Malformed("expected ',' or '}' at " + (at - 1));
                    }
                }
            }
            if (at != s.length()) {
                throw new Malformed("text after the object at " + at);
            }
            if (gtid == null || txnRow == null || !txnRowsSeen) {
                throw new Malformed("missing gtid, txn_row or txn_rows");
            }
            if (txnRow < 1 || txnRows != null && txnRows < txnRow) {
                throw new Malformed("txn_row " + txnRow + " out of range of txn_rows " + txnRows);
            }
            return new LineMark(gtid, txnRow, txnRows == null ? OptionalLong.empty() : OptionalLong.of(txnRows));
        }

        private long count(String field) throws Malformed {
            int start = at;
            number();
            try {
                return Long.parseLong(s, start, at, 10);
            } catch (NumberFormatException e) {
                throw new Malformed(field + " is not a whole number: " + s.substring(start, at));
            }
        }

        private void value(int depth) throws Malformed {
            if (depth > MAX_DEPTH) {
                throw new Malformed("nested deeper than " + MAX_DEPTH);
            }
            char c = peek();
            switch (c) {
                case '"' -> string();
                case '{' -> container('}', depth, true);
                case '[' -> container(']', depth, false);
                case 't' -> literal("true");
                case 'f' -> literal("false");
                case 'n' -> literal("null");
                default -> {
                    if (c == '-' || c >= '0' && c <= '9') {
                        number();
                    } else {
                        throw new Malformed("unexpected '" + c + "' at " + at);
                    }
                }
            }
        }

        private void container(char close, int depth, boolean object) throws Malformed {
            at++;
            skipBlanks();
            if (peek() == close) {
                at++;
                return;
            }
            while (true) {
                skipBlanks();
                if (object) {
                    string();
                    skipBlanks();
                    expect(':');
                    skipBlanks();
                }
                value(depth + 1);
                skipBlanks();
                char c = next();
                if (c == close) {
                    return;
                }
                if (c != ',') {
                    throw new Malformed("expected ',' or '" + close + "' at " + (at - 1));
                }
            }
        }

        private void literal(String word) throws Malformed {
            if (!s.startsWith(word, at)) {
                throw new Malformed("bad literal at " + at);
            }
            at += word.length();
        }

        /** RFC 8259 section 6: {@code -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?}. */
        private void number() throws Malformed {
            int start = at;
            if (peek() == '-') {
                at++;
            }
            if (peek() == '0') {
                at++;
            } else if (digits() == 0) {
                throw new Malformed("bad number at " + start);
            }
            if (peek() == '.') {
                at++;
                if (digits() == 0) {
                    throw new Malformed("bad fraction at " + start);
                }
            }
            if (peek() == 'e' || peek() == 'E') {
                at++;
                if (peek() == '+' || peek() == '-') {
                    at++;
                }
                if (digits() == 0) {
                    throw new Malformed("bad exponent at " + start);
                }
            }
        }

        private int digits() {
            int start = at;
            while (at < s.length() && s.charAt(at) >= '0' && s.charAt(at) <= '9') {
                at++;
            }
            return at - start;
        }

        private String string() throws Malformed {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (true) {
                char c = next();
                if (c == '"') {
                    return out.toString();
                }
                if (c < 0x20) {
                    throw new Malformed("raw control character in a string at " + (at - 1));
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char e = next();
                switch (e) {
                    case '"', '\\', '/' -> out.append(e);
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'n' -> out.append('\n');
                    case 'r' -> out.append('\r');
                    case 't' -> out.append('\t');
                    case 'u' -> {
                        if (at + 4 > s.length()) {
                            throw new Malformed("cut \\u escape at " + at);
                        }
                        int code = 0;
                        for (int i = 0; i < 4; i++) {
                            char digit = s.charAt(at++);
                            if (!HexFormat.isHexDigit(digit)) { // ASCII only, unlike Character.digit
                                throw new Malformed("bad \\u escape at " + (at - 1));
                            }
                            code = code << 4 | HexFormat.fromHexDigit(digit);
                        }
                        out.append((char) code);
                    }
                    default -> throw new Malformed("bad escape \\" + e + " at " + (at - 1));
                }
            }
        }

        private void skipBlanks() {
            while (at < s.length()) {
                char c = s.charAt(at);
                if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                    return;
                }
                at++;
            }
        }

        private void expect(char c) throws Malformed {
            if (next() != c) {
                throw new Malformed("expected '" + c + "' at " + (at - 1));
            }
        }

        private char peek() throws Malformed {
            if (at >= s.length()) {
                throw new Malformed("line ends inside the object");
            }
            return s.charAt(at);
        }

        private char next() throws Malformed {
            char c = peek();
            at++;
            return c;
        }
    }
}
