package io.gantry.authority;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * The result of an admin {@code SELECT}, typed: each column has a {@link ValueType}, each value the Java type that
 * goes with it. {@link #rows()} gives the same values as text, as a MySQL text result set shows them.
 *
 * <p>Column names are as H2 labels them, except that plain identifiers H2 folded to upper case come back in lower
 * case ({@code host}, {@code rtt_ms}), as MySQL users write them. Values: SQL NULL is a Java {@code null} in every
 * type; see {@link ValueType} for the Java type of each column type.
 *
 * @param columns column names in order
 * @param types   each column's type, in column order
 * @param values  each row's values in column order; unmodifiable, may hold nulls
 */
public record QueryResult(List<String> columns, List<ValueType> types, List<List<Object>> values) {

    private static final DateTimeFormatter SQL_TIME = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSS")
            .withZone(ZoneOffset.UTC);

    /**
     * The type of a column and the Java type of its values.
     *
     * <p>{@link #INTEGER}: {@link Long}; {@link #DECIMAL}: {@link BigDecimal}; {@link #DOUBLE}: {@link Double};
     * {@link #BOOLEAN}: {@link Boolean}; {@link #TIMESTAMP}: {@link Instant} (timestamps without a zone are taken
     * as UTC, which is how Gantry stores them); {@link #BINARY}: {@code byte[]}; {@link #TEXT}: {@link String}
     * (and every type H2 has that none of the others covers, as its text).
     */
    public enum ValueType {
        TEXT, INTEGER, DECIMAL, DOUBLE, BOOLEAN, TIMESTAMP, BINARY
    }

    public QueryResult {
        columns = List.copyOf(columns);
        types = List.copyOf(types);
        if (types.size() != columns.size()) {
            throw new IllegalArgumentException(types.size() + " types for " + columns.size() + " columns");
        }
        List<List<Object>> copy = new ArrayList<>(values.size());
        for (List<Object> row : values) {
            if (row.size() != columns.size()) {
                throw new IllegalArgumentException("a row has " + row.size() + " values for " + columns.size()
                        + " columns");
            }
            copy.add(Collections.unmodifiableList(new ArrayList<>(row)));
        }
        values = Collections.unmodifiableList(copy);
    }

    /** A result whose columns are all text. */
    public static QueryResult ofText(List<String> columns, List<List<String>> rows) {
        List<List<Object>> values = new ArrayList<>(rows.size());
        for (List<String> row : rows) {
            values.add(new ArrayList<>(row));
        }
        return new QueryResult(columns, Collections.nCopies(columns.size(), ValueType.TEXT), values);
    }

    /** The values as text ({@link #text(Object)}); SQL NULL stays {@code null}. */
    public List<List<String>> rows() {
        List<List<String>> rows = new ArrayList<>(values.size());
        for (List<Object> row : values) {
            List<String> text = new ArrayList<>(row.size());
            for (Object value : row) {
                text.add(text(value));
            }
            rows.add(Collections.unmodifiableList(text));
        }
        return Collections.unmodifiableList(rows);
    }

    /**
     * A value as MySQL's text protocol shows it: timestamps as UTC {@code yyyy-MM-dd HH:mm:ss.SSS}, booleans
     * {@code 1}/{@code 0}, numbers in plain decimal notation (never {@code 1.0E-4}), binary as {@code 0x} and hex.
     */
    public static String text(Object value) {
        if (value == null) {
            return null;
        }
        if (value instanceof Instant time) {
            return SQL_TIME.format(time);
        }
        if (value instanceof Boolean flag) {
            return flag ? "1" : "0";
        }
        if (value instanceof Double number) {
            return Double.isFinite(number) ? BigDecimal.valueOf(number).stripTrailingZeros().toPlainString()
                    : number.toString();
        }
        if (value instanceof BigDecimal number) {
            return number.toPlainString();
        }
        if (value instanceof byte[] bytes) {
            return "0x" + HexFormat.of().formatHex(bytes);
        }
        return Objects.toString(value);
    }
}
