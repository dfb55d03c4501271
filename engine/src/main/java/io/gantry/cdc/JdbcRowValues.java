package io.gantry.cdc;

import com.mysql.cj.MysqlType;
import com.mysql.cj.result.Field;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Typed column values of a snapshot's current row, equal to what {@link BinlogRowValues} gives for the same row read
 * from the binlog (see {@link RowChange} for the value domain).
 *
 * <p>Numbers and dates and times are parsed from the exact text the server sent ({@code getBytes} of a
 * text-protocol row is that text), not through the driver's conversions: {@code getString} of a TIME drops the
 * minus sign of {@code -00:00:00.01}, and the driver's temporal types cannot hold {@code 0000-00-00}. Character
 * columns are read with {@code getString} (the driver decodes with the column's charset, as {@link BinlogRowValues}
 * does), binary columns and BIT with {@code getBytes}.
 *
 * <h2>What the snapshot connection must do</h2>
 * <ul>
 *   <li>Connect with mysql-connector-j and read with the text protocol: a plain {@code Statement}, streaming or
 *       not, or client-side prepared statements (the driver's default {@code useServerPrepStmts=false}). With
 *       binary-protocol rows numbers and dates fail to parse, with an {@link IllegalStateException}.</li>
 *   <li>Run {@link #SESSION_TIME_ZONE_SQL} ({@code SET time_zone = '+00:00'}) before reading: the server prints a
 *       TIMESTAMP in the session time zone, and the value must be the instant in UTC, as the binlog has it.</li>
 *   <li>Connect with the driver properties in {@link #URL_PARAMETERS}: {@code tinyInt1isBit=false} (else the driver
 *       reports TINYINT(1) as BIT; {@link #row} still returns a {@link Long} for it, recognising the column by the
 *       driver's wire type, but other getters would see a Boolean) and {@code yearIsDateType=false} (YEAR as a
 *       number).</li>
 * </ul>
 *
 * <p>Value forms: integers and YEAR are {@link Long} (BIGINT UNSIGNED above 2<sup>63</sup>-1 a {@link BigInteger});
 * DECIMAL a {@link BigDecimal} with the column's scale; DOUBLE a {@link Double}; FLOAT a {@link Double} through the
 * float's shortest decimal string (the server prints FLOAT with 6 significant digits; {@link BinlogRowValues} rounds
 * the binlog's exact float the same way); DATE {@code 2024-01-31}; DATETIME {@code 2024-01-31T13:45:00.120} with the
 * column's fractional digits; TIMESTAMP the same in UTC with a {@code Z}; TIME as printed ({@code -838:59:59}); a
 * date with a zero month or day {@code 0000-00-00} or {@code 0000-00-00T00:00:00} (the binlog cannot tell
 * {@code 2024-01-00} from {@code 0000-00-00}); ENUM, SET, JSON and text as {@link String}; binary types, GEOMETRY and
 * BIT as {@code byte[]}.
 */
public final class JdbcRowValues {

    /** Driver properties for the snapshot connection, ready to append to a {@code jdbc:mysql:} URL. */
    public static final String URL_PARAMETERS = "tinyInt1isBit=false&yearIsDateType=false";

    /** The statement the snapshot session runs before reading, so TIMESTAMP values print in UTC. */
    public static final String SESSION_TIME_ZONE_SQL = "SET time_zone = '+00:00'";

    private JdbcRowValues() {
    }

    /**
     * The typed values of the result set's current row.
     *
     * @return column label to value, in result set column order
     * @throws IllegalStateException when a column has a type this reader does not know, or a value is not the text
     *                               protocol's form
     */
    public static Map<String, Object> row(ResultSet rows) throws SQLException {
        ResultSetMetaData metadata = rows.getMetaData();
        int count = metadata.getColumnCount();
        Map<String, Object> row = new LinkedHashMap<>();
        for (int column = 1; column <= count; column++) {
            String name = metadata.getColumnLabel(column);
            row.put(name, value(rows, metadata, column, name));
        }
        return row;
    }

    private static Object value(ResultSet rows, ResultSetMetaData metadata, int column, String name)
            throws SQLException {
        String typeName = metadata.getColumnTypeName(column).toUpperCase(Locale.ROOT);
        boolean unsigned = typeName.endsWith(" UNSIGNED");
        String base = unsigned ? typeName.substring(0, typeName.length() - " UNSIGNED".length()) : typeName;
        if ((base.equals("BIT") || base.equals("BOOLEAN")) && isTinyOnTheWire(metadata, column)) {
            base = "TINYINT";
        }
        return switch (base) {
            case "TINYINT", "SMALLINT", "MEDIUMINT", "INT", "INTEGER", "BIGINT", "YEAR" ->
                    parse(rows, column, name, typeName, JdbcRowValues::integer);
            case "FLOAT" -> parse(rows, column, name, typeName, RowValueForms::floatValue);
            case "DOUBLE", "REAL" -> parse(rows, column, name, typeName, Double::valueOf);
            case "DECIMAL", "NUMERIC" -> {
                int scale = metadata.getScale(column);
                yield parse(rows, column, name, typeName,
                        text -> new BigDecimal(text).setScale(scale, RoundingMode.UNNECESSARY));
            }
            case "DATE" -> parse(rows, column, name, typeName, text -> zeroInDate(text) ? RowValueForms.ZERO_DATE
                    : text);
            case "DATETIME" -> parse(rows, column, name, typeName,
                    text -> zeroInDate(text) ? RowValueForms.ZERO_DATETIME : text.replace(' ', 'T'));
            case "TIMESTAMP" -> parse(rows, column, name, typeName,
                    text -> zeroInDate(text) ? RowValueForms.ZERO_DATETIME : text.replace(' ', 'T') + "Z");
            case "TIME" -> parse(rows, column, name, typeName, text -> text);
            case "BIT", "BINARY", "VARBINARY", "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB", "GEOMETRY", "VECTOR" -> {
                byte[] bytes = rows.getBytes(column);
                // A text-protocol row hands out its own buffer: copy it.
                yield bytes == null ? null : bytes.clone();
            }
            case "CHAR", "VARCHAR", "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT", "JSON", "ENUM", "SET" ->
                    rows.getString(column);
            case "NULL" -> null;
            default -> throw new IllegalStateException("column " + name + " has type " + typeName
                    + ", which JdbcRowValues does not support");
        };
    }

    private interface TextParser {
        Object parse(String text);
    }

    /** Parses the column's raw text-protocol value; {@code null} for SQL NULL. */
    private static Object parse(ResultSet rows, int column, String name, String typeName, TextParser parser)
            throws SQLException {
        byte[] raw = rows.getBytes(column);
        if (raw == null) {
            return null;
        }
        String text = new String(raw, StandardCharsets.US_ASCII);
        try {
            return parser.parse(text);
        } catch (RuntimeException e) {
            throw new IllegalStateException("column " + name + " (" + typeName + "): cannot read '" + text
                    + "'; JdbcRowValues needs text-protocol rows (a plain Statement, useServerPrepStmts=false)", e);
        }
    }

    /** An integer as a Long, or a BigInteger when it does not fit (only BIGINT UNSIGNED can overflow). */
    private static Object integer(String text) {
        if (text.length() < 19) {
            return Long.parseLong(text);
        }
        BigInteger value = new BigInteger(text);
        return value.bitLength() < 64 ? (Object) value.longValue() : value;
    }

    /** Whether {@code yyyy-MM-dd...} has a zero month or day: the binlog reports such dates as zero dates. */
    private static boolean zeroInDate(String text) {
        if (text.length() < 10 || text.charAt(4) != '-' || text.charAt(7) != '-') {
            throw new IllegalArgumentException("not a date");
        }
        return text.startsWith("00", 5) || text.startsWith("00", 8);
    }

    /** Whether connector-j reports a TINYINT(1) (wire type TINY) as BIT or BOOLEAN ({@code tinyInt1isBit=true}). */
    private static boolean isTinyOnTheWire(ResultSetMetaData metadata, int column) throws SQLException {
        if (!metadata.isWrapperFor(com.mysql.cj.jdbc.result.ResultSetMetaData.class)) {
            return false;
        }
        Field field = metadata.unwrap(com.mysql.cj.jdbc.result.ResultSetMetaData.class).getFields()[column - 1];
        return field.getMysqlTypeId() == MysqlType.FIELD_TYPE_TINY;
    }
}
