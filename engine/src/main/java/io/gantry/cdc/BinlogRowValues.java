package io.gantry.cdc;

import com.github.shyiko.mysql.binlog.event.EventType;
import com.github.shyiko.mysql.binlog.event.LRUCache;
import com.github.shyiko.mysql.binlog.event.TableMapEventData;
import com.github.shyiko.mysql.binlog.event.TableMapEventMetadata;
import com.github.shyiko.mysql.binlog.event.deserialization.AnnotateRowsEventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.BinlogCheckpointEventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.ColumnType;
import com.github.shyiko.mysql.binlog.event.deserialization.EventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.EventDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.EventDeserializer.CompatibilityMode;
import com.github.shyiko.mysql.binlog.event.deserialization.EventHeaderV4Deserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.FormatDescriptionEventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.GtidEventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.IntVarEventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.MariadbGtidEventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.MariadbGtidListEventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.NullEventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.PreviousGtidSetDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.QueryEventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.RotateEventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.RowsQueryEventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.TableMapEventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.TransactionPayloadEventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.XAPrepareEventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.XidEventDataDeserializer;
import java.io.IOException;
import java.io.Serializable;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.BitSet;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Typed column values of a binlog row image, the same values {@link JdbcRowValues} reads from a snapshot of the
 * same row (see {@link RowChange} for the value domain).
 *
 * <h2>Deserializer configuration</h2>
 * The conversions expect the Java objects that {@link #newEventDeserializer()} produces; a {@code BinaryLogClient}
 * must use it ({@code client.setEventDeserializer(BinlogRowValues.newEventDeserializer())}). It sets the
 * compatibility modes
 * <ul>
 *   <li>{@code DATE_AND_TIME_AS_LONG_MICRO}: temporal columns as a {@link Long} of microseconds;</li>
 *   <li>{@code CHAR_AND_BINARY_AS_BYTE_ARRAY}: CHAR, VARCHAR, BINARY, VARBINARY as {@code byte[]}, decoded here
 *       with the column's charset (TEXT and BLOB are {@code byte[]} in any mode);</li>
 *   <li>{@code INVALID_DATE_AND_TIME_AS_MIN_VALUE}: a date with a zero month or day as {@link Long#MIN_VALUE};
 *       without it such a date arrives as {@code null}, indistinguishable from SQL NULL;</li>
 * </ul>
 * and reads TIME columns with their sign and dates in year 0 and before 1582 in the proleptic Gregorian calendar
 * (the library drops the sign, makes {@code 0000-01-01} a zero date and uses Julian dates before 1582; see
 * {@link TemporalRowsDeserializers}).
 *
 * <p>What the configured deserializer returns, and what {@link #row} makes of it:
 * <table>
 *   <caption>binlog objects and typed values</caption>
 *   <tr><th>column</th><th>deserialized</th><th>value</th></tr>
 *   <tr><td>TINYINT, SMALLINT, MEDIUMINT, INT</td><td>{@code Integer}, sign-extended even when UNSIGNED</td>
 *       <td>{@code Long}, unsigned ones masked by the metadata's signedness bit</td></tr>
 *   <tr><td>BIGINT</td><td>{@code Long}, signed</td><td>{@code Long}; UNSIGNED above 2<sup>63</sup>-1 a
 *       {@code BigInteger}</td></tr>
 *   <tr><td>YEAR</td><td>{@code Integer} 1900 + stored byte (so 1900 for year 0000)</td><td>{@code Long}, 0 for
 *       0000</td></tr>
 *   <tr><td>FLOAT</td><td>{@code Float}, exact</td><td>{@code Double}, rounded to 6 significant digits as the
 *       server's text protocol prints it (see below)</td></tr>
 *   <tr><td>DOUBLE</td><td>{@code Double}</td><td>{@code Double}</td></tr>
 *   <tr><td>DECIMAL</td><td>{@code BigDecimal}</td><td>{@code BigDecimal} with the column's scale</td></tr>
 *   <tr><td>BIT(n)</td><td>{@code BitSet}, bit 0 the least significant</td><td>{@code byte[]} big-endian,
 *       (n + 7) / 8 bytes</td></tr>
 *   <tr><td>DATE</td><td>{@code Long} micros of midnight UTC (proleptic Gregorian); {@code Long.MIN_VALUE}
 *       when the month or day is zero</td>
 *       <td>{@code "2024-01-31"} or {@code "0000-00-00"}</td></tr>
 *   <tr><td>DATETIME(fsp)</td><td>{@code Long} micros, the fields read as UTC (proleptic Gregorian);
 *       {@code Long.MIN_VALUE} when the month or day is zero</td>
 *       <td>{@code "2024-01-31T13:45:00.120"} (fsp digits) or {@code "0000-00-00T00:00:00"}</td></tr>
 *   <tr><td>TIMESTAMP(fsp)</td><td>{@code Long} micros since the epoch; 0 when zero</td>
 *       <td>{@code "2024-01-31T13:45:00.120Z"} or {@code "0000-00-00T00:00:00"}</td></tr>
 *   <tr><td>TIME(fsp)</td><td>{@code Long} signed micros (our deserializer)</td><td>{@code "-838:59:59"},
 *       {@code "13:45:00.50"}</td></tr>
 *   <tr><td>CHAR, VARCHAR, TEXT types (also JSON on MariaDB, a LONGTEXT)</td><td>{@code byte[]}</td>
 *       <td>{@code String} decoded with the column's charset</td></tr>
 *   <tr><td>BINARY(n)</td><td>{@code byte[]} without trailing zero bytes</td><td>{@code byte[]} padded back to n
 *       bytes, as the table holds it</td></tr>
 *   <tr><td>VARBINARY, BLOB types, GEOMETRY</td><td>{@code byte[]}</td><td>{@code byte[]}</td></tr>
 *   <tr><td>ENUM</td><td>{@code Integer} 1-based index, 0 for the invalid value</td><td>{@code String} name,
 *       {@code ""} for 0 (names as the library decodes them: with the JVM's default charset)</td></tr>
 *   <tr><td>SET</td><td>{@code Long} bit mask</td><td>{@code String} of names joined by commas</td></tr>
 *   <tr><td>JSON (MySQL's binary JSON)</td><td>{@code byte[]}</td><td>{@code String} as MySQL prints it
 *       ({@link MySqlJsonText})</td></tr>
 * </table>
 *
 * <p><b>FLOAT.</b> MariaDB's text protocol, which a snapshot reads, prints a FLOAT with 6 significant digits
 * ({@code 3.1415927} shows as {@code 3.14159}, {@code 16777216} as {@code 16777200}); the binlog has the exact
 * float. Both sides therefore round to 6 significant digits, half-even like the server, and then take the float
 * through its shortest decimal string ({@code Double.parseDouble(Float.toString(f))}). A FLOAT(M,D) column with more
 * than 6 significant digits is printed with D decimals instead and may differ.
 *
 * <h2>Server requirements</h2>
 * {@code binlog_row_metadata=FULL}: column names, ENUM and SET names come only from the table map's full
 * metadata, and {@link #row} throws {@link IllegalStateException} without them. Row images may be partial
 * ({@code binlog_row_image=MINIMAL}): only the included columns are returned.
 */
public final class BinlogRowValues {

    /** Table-map entries kept for row events, as the library's default deserializer keeps them. */
    private static final int TABLE_MAP_CACHE = 10_000;

    private BinlogRowValues() {
    }

    /**
     * A new event deserializer for one {@code BinaryLogClient}: the library's defaults for every event type, row
     * events read with signed TIME values, and the compatibility modes {@code DATE_AND_TIME_AS_LONG_MICRO},
     * {@code CHAR_AND_BINARY_AS_BYTE_ARRAY} and {@code INVALID_DATE_AND_TIME_AS_MIN_VALUE}. Not shared between
     * clients: it holds the stream's table maps.
     */
    public static EventDeserializer newEventDeserializer() {
        Map<Long, TableMapEventData> tableMaps = new LRUCache<>(100, 0.75f, TABLE_MAP_CACHE);
        Map<EventType, EventDataDeserializer> deserializers = new EnumMap<>(EventType.class);
        // The same registrations as EventDeserializer's default constructor (0.40.3), with our row deserializers.
        deserializers.put(EventType.FORMAT_DESCRIPTION, new FormatDescriptionEventDataDeserializer());
        deserializers.put(EventType.ROTATE, new RotateEventDataDeserializer());
        deserializers.put(EventType.INTVAR, new IntVarEventDataDeserializer());
        deserializers.put(EventType.QUERY, new QueryEventDataDeserializer());
        deserializers.put(EventType.TABLE_MAP, new TableMapEventDataDeserializer());
        deserializers.put(EventType.XID, new XidEventDataDeserializer());
        deserializers.put(EventType.WRITE_ROWS, new TemporalRowsDeserializers.Write(tableMaps));
        deserializers.put(EventType.UPDATE_ROWS, new TemporalRowsDeserializers.Update(tableMaps));
        deserializers.put(EventType.DELETE_ROWS, new TemporalRowsDeserializers.Delete(tableMaps));
        deserializers.put(EventType.EXT_WRITE_ROWS,
                new TemporalRowsDeserializers.Write(tableMaps).setMayContainExtraInformation(true));
        deserializers.put(EventType.EXT_UPDATE_ROWS,
                new TemporalRowsDeserializers.Update(tableMaps).setMayContainExtraInformation(true));
        deserializers.put(EventType.EXT_DELETE_ROWS,
                new TemporalRowsDeserializers.Delete(tableMaps).setMayContainExtraInformation(true));
        deserializers.put(EventType.ROWS_QUERY, new RowsQueryEventDataDeserializer());
        deserializers.put(EventType.GTID, new GtidEventDataDeserializer());
        deserializers.put(EventType.PREVIOUS_GTIDS, new PreviousGtidSetDeserializer());
        deserializers.put(EventType.XA_PREPARE, new XAPrepareEventDataDeserializer());
        deserializers.put(EventType.ANNOTATE_ROWS, new AnnotateRowsEventDataDeserializer());
        deserializers.put(EventType.MARIADB_GTID, new MariadbGtidEventDataDeserializer());
        deserializers.put(EventType.BINLOG_CHECKPOINT, new BinlogCheckpointEventDataDeserializer());
        deserializers.put(EventType.MARIADB_GTID_LIST, new MariadbGtidListEventDataDeserializer());
        deserializers.put(EventType.TRANSACTION_PAYLOAD, new TransactionPayloadEventDataDeserializer());
        EventDeserializer deserializer = new EventDeserializer(new EventHeaderV4Deserializer(),
                new NullEventDataDeserializer(), deserializers, tableMaps);
        deserializer.setCompatibilityMode(CompatibilityMode.DATE_AND_TIME_AS_LONG_MICRO,
                CompatibilityMode.CHAR_AND_BINARY_AS_BYTE_ARRAY, CompatibilityMode.INVALID_DATE_AND_TIME_AS_MIN_VALUE);
        return deserializer;
    }

    /**
     * The typed values of one row image.
     *
     * @param table           the row event's table map, with full metadata
     * @param includedColumns the columns present in the image ({@code getIncludedColumns()}, or
     *                        {@code getIncludedColumnsBeforeUpdate()} for an update's before image)
     * @param values          the image's values, one per included column, from {@link #newEventDeserializer()}
     * @return column name to value, in table column order, only the included columns
     * @throws IllegalStateException when the table map has no column names (the server does not run with
     *                               {@code binlog_row_metadata=FULL}), or a value is not what the configured
     *                               deserializer produces
     */
    public static Map<String, Object> row(TableMapEventData table, BitSet includedColumns, Serializable[] values) {
        return row(columnsOf(table), includedColumns, values);
    }

    /**
     * A table map's columns with what each conversion needs, worked out once for all the rows of the events that
     * use that map (a multi-row event would otherwise redo it per row).
     *
     * @throws IllegalStateException as {@link #row(TableMapEventData, BitSet, Serializable[])}
     */
    static TableColumns columnsOf(TableMapEventData table) {
        return new TableColumns(table, columns(table));
    }

    /** The typed values of one row image, with the columns from {@link #columnsOf}. */
    static Map<String, Object> row(TableColumns layout, BitSet includedColumns, Serializable[] values) {
        TableMapEventData table = layout.table();
        Map<String, Object> row = new LinkedHashMap<>();
        int next = 0;
        for (Column column : layout.columns()) {
            if (!includedColumns.get(column.index())) {
                continue;
            }
            if (next >= values.length) {
                throw new IllegalStateException(qualified(table) + ": the row image has " + values.length
                        + " values but " + includedColumns.cardinality() + " included columns");
            }
            Serializable value = values[next++];
            row.put(column.name(), value == null ? null : convert(table, column, value));
        }
        return row;
    }

    /** See {@link #columnsOf}. */
    record TableColumns(TableMapEventData table, Column[] columns) {
    }

    /** One column of a table map, with what its conversion needs from the full metadata. */
    private record Column(int index, String name, ColumnType type, int meta, boolean unsigned, int collation,
                          String[] names) {
    }

    private static Column[] columns(TableMapEventData table) {
        TableMapEventMetadata metadata = table.getEventMetadata();
        List<String> names = metadata == null ? null : metadata.getColumnNames();
        if (names == null) {
            throw new IllegalStateException(qualified(table) + ": the binlog's TABLE_MAP event has no column names;"
                    + " binlog_row_metadata=FULL is required on that server");
        }
        byte[] types = table.getColumnTypes();
        int[] meta = table.getColumnMetadata();
        if (names.size() != types.length) {
            throw new IllegalStateException(qualified(table) + ": the TABLE_MAP event names " + names.size()
                    + " columns but has " + types.length + " column types");
        }
        // The metadata lists signedness by column index (the library spreads the numeric columns' bits out), but
        // charsets only for character columns and names only for ENUM/SET columns, each in column order.
        BitSet unsigned = metadata.getSignedness() == null ? new BitSet() : metadata.getSignedness();
        int characterColumn = 0;
        int enumColumn = 0;
        int setColumn = 0;
        Column[] columns = new Column[types.length];
        for (int i = 0; i < types.length; i++) {
            ColumnType type = realType(table, i, types[i] & 0xFF, meta[i]);
            int collation = -1;
            String[] valueNames = null;
            switch (type) {
                case STRING, VARCHAR, VAR_STRING, BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB, GEOMETRY ->
                        collation = collation(metadata, characterColumn++);
                case ENUM -> valueNames = valueNames(table, names.get(i), metadata.getEnumStrValues(), enumColumn++);
                case SET -> valueNames = valueNames(table, names.get(i), metadata.getSetStrValues(), setColumn++);
                default -> {
                }
            }
            columns[i] = new Column(i, names.get(i), type, meta[i], unsigned.get(i), collation, valueNames);
        }
        return columns;
    }

    /** The type a column really has: the table map reports ENUM and SET as STRING with the type in the metadata. */
    private static ColumnType realType(TableMapEventData table, int index, int code, int meta) {
        ColumnType type = ColumnType.byCode(code);
        if (type == null) {
            throw new IllegalStateException(qualified(table) + ": column " + index + " has unknown type code " + code);
        }
        if (type == ColumnType.STRING && meta >= 256) {
            int real = meta >> 8;
            if (real == ColumnType.ENUM.getCode() || real == ColumnType.SET.getCode()) {
                return ColumnType.byCode(real);
            }
        }
        return type;
    }

    /** The collation of the n-th character column: COLUMN_CHARSET lists each, DEFAULT_CHARSET the exceptions. */
    private static int collation(TableMapEventMetadata metadata, int characterColumn) {
        List<Integer> perColumn = metadata.getColumnCharsets();
        if (perColumn != null && characterColumn < perColumn.size()) {
            return perColumn.get(characterColumn);
        }
        TableMapEventMetadata.DefaultCharset defaults = metadata.getDefaultCharset();
        if (defaults != null) {
            Map<Integer, Integer> exceptions = defaults.getCharsetCollations();
            Integer exception = exceptions == null ? null : exceptions.get(characterColumn);
            return exception != null ? exception : defaults.getDefaultCharsetCollation();
        }
        return -1;
    }

    private static String[] valueNames(TableMapEventData table, String column, List<String[]> all, int ordinal) {
        if (all == null || ordinal >= all.size()) {
            throw new IllegalStateException(qualified(table) + ": the TABLE_MAP event has no value names for ENUM/SET"
                    + " column " + column + "; binlog_row_metadata=FULL is required on that server");
        }
        return all.get(ordinal);
    }

    private static Object convert(TableMapEventData table, Column column, Serializable value) {
        return switch (column.type()) {
            case TINY -> column.unsigned() ? (long) (integer(table, column, value) & 0xFF)
                    : (long) integer(table, column, value);
            case SHORT -> column.unsigned() ? (long) (integer(table, column, value) & 0xFFFF)
                    : (long) integer(table, column, value);
            case INT24 -> column.unsigned() ? (long) (integer(table, column, value) & 0xFFFFFF)
                    : (long) integer(table, column, value);
            case LONG -> column.unsigned() ? Integer.toUnsignedLong(integer(table, column, value))
                    : (long) integer(table, column, value);
            case LONGLONG -> {
                long signed = expect(table, column, value, Long.class);
                yield column.unsigned() && signed < 0 ? new BigInteger(Long.toUnsignedString(signed)) : signed;
            }
            case YEAR -> {
                // The library adds 1900 to the stored byte, and the stored 0 is the year 0000.
                int year = integer(table, column, value);
                yield year == 1900 ? 0L : (long) year;
            }
            case FLOAT -> RowValueForms.floatValue(RowValueForms.floatText(expect(table, column, value, Float.class)));
            case DOUBLE -> expect(table, column, value, Double.class);
            case NEWDECIMAL -> expect(table, column, value, BigDecimal.class).setScale(column.meta() >> 8,
                    RoundingMode.UNNECESSARY);
            case BIT -> bits(expect(table, column, value, BitSet.class), column.meta());
            case DATE -> {
                long micros = expect(table, column, value, Long.class);
                yield micros == Long.MIN_VALUE ? RowValueForms.ZERO_DATE : RowValueForms.date(civil(micros));
            }
            case DATETIME, DATETIME_V2 -> {
                long micros = expect(table, column, value, Long.class);
                yield micros == Long.MIN_VALUE ? RowValueForms.ZERO_DATETIME
                        : RowValueForms.dateTime(civil(micros), fsp(column));
            }
            case TIMESTAMP, TIMESTAMP_V2 -> {
                long micros = expect(table, column, value, Long.class);
                // 1970-01-01 00:00:00 UTC is outside TIMESTAMP's range: 0 is the zero timestamp.
                yield micros == 0 ? RowValueForms.ZERO_DATETIME
                        : RowValueForms.dateTime(civil(micros), fsp(column)) + "Z";
            }
            case TIME, TIME_V2 -> RowValueForms.time(expect(table, column, value, Long.class), fsp(column));
            case ENUM -> enumName(table, column, integer(table, column, value));
            case SET -> setNames(table, column, expect(table, column, value, Long.class));
            case STRING -> {
                byte[] bytes = expect(table, column, value, byte[].class);
                yield MySqlCollations.isBinary(column.collation())
                        ? padded(bytes, stringLength(column.meta())) : text(bytes, column);
            }
            case VARCHAR, VAR_STRING, BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB -> {
                byte[] bytes = expect(table, column, value, byte[].class);
                yield MySqlCollations.isBinary(column.collation()) ? bytes : text(bytes, column);
            }
            case JSON -> json(table, column, expect(table, column, value, byte[].class));
            case GEOMETRY, VECTOR -> expect(table, column, value, byte[].class);
            default -> throw new IllegalStateException(qualified(table) + ": column " + column.name() + " has type "
                    + column.type() + ", which this reader does not support");
        };
    }

    private static int integer(TableMapEventData table, Column column, Serializable value) {
        return expect(table, column, value, Integer.class);
    }

    private static <T> T expect(TableMapEventData table, Column column, Serializable value, Class<T> type) {
        if (!type.isInstance(value)) {
            throw new IllegalStateException(qualified(table) + ": column " + column.name() + " (" + column.type()
                    + ") came as " + value.getClass().getName() + ", expected " + type.getSimpleName()
                    + "; read the binlog with BinlogRowValues.newEventDeserializer()");
        }
        return type.cast(value);
    }

    /** Fractional-second digits: the metadata of the 5.6 temporal types; the old types have none. */
    private static int fsp(Column column) {
        return switch (column.type()) {
            case DATETIME_V2, TIMESTAMP_V2, TIME_V2 -> column.meta();
            default -> 0;
        };
    }

    /**
     * The fields of a DATE, DATETIME or TIMESTAMP from its micros: since the epoch, proleptic Gregorian, UTC (our
     * deserializers compute DATE and DATETIME that way; see {@link TemporalRowsDeserializers}).
     */
    private static LocalDateTime civil(long micros) {
        return LocalDateTime.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
                (int) Math.floorMod(micros, 1_000_000L) * 1000, ZoneOffset.UTC);
    }

    /** BIT(n) as big-endian bytes, (n + 7) / 8 of them; the metadata holds n as (bytes, bits) = (n / 8, n % 8). */
    private static byte[] bits(BitSet value, int meta) {
        int length = ((meta >> 8) * 8 + (meta & 0xFF) + 7) / 8;
        byte[] littleEndian = value.toByteArray();
        byte[] bigEndian = new byte[length];
        for (int i = 0; i < littleEndian.length && i < length; i++) {
            bigEndian[length - 1 - i] = littleEndian[i];
        }
        return bigEndian;
    }

    /** The byte length of a CHAR/BINARY column from its table-map metadata (long CHARs spill into the type byte). */
    private static int stringLength(int meta) {
        if (meta < 256) {
            return meta;
        }
        int type = meta >> 8;
        int low = meta & 0xFF;
        return (type & 0x30) != 0x30 ? low | (((type & 0x30) ^ 0x30) << 4) : low;
    }

    /** BINARY(n) as stored: the binlog drops trailing zero bytes, the table and a SELECT keep them. */
    private static byte[] padded(byte[] bytes, int length) {
        return bytes.length >= length ? bytes : Arrays.copyOf(bytes, length);
    }

    private static String text(byte[] bytes, Column column) {
        Charset charset = column.collation() < 0 ? StandardCharsets.UTF_8 : MySqlCollations.charset(column.collation());
        return new String(bytes, charset);
    }

    private static String enumName(TableMapEventData table, Column column, int index) {
        if (index == 0) {
            return "";
        }
        if (index < 0 || index > column.names().length) {
            throw new IllegalStateException(qualified(table) + ": ENUM column " + column.name() + " has index " + index
                    + " but " + column.names().length + " names");
        }
        return column.names()[index - 1];
    }

    private static String setNames(TableMapEventData table, Column column, long mask) {
        String[] names = column.names();
        if (names.length < 64 && (mask >>> names.length) != 0) {
            throw new IllegalStateException(qualified(table) + ": SET column " + column.name() + " has bits 0x"
                    + Long.toHexString(mask) + " but " + names.length + " names");
        }
        StringBuilder joined = new StringBuilder();
        for (int bit = 0; bit < names.length; bit++) {
            if ((mask & (1L << bit)) != 0) {
                if (joined.length() > 0) {
                    joined.append(',');
                }
                joined.append(names[bit]);
            }
        }
        return joined.toString();
    }

    private static String json(TableMapEventData table, Column column, byte[] bytes) {
        try {
            return MySqlJsonText.of(bytes);
        } catch (IOException e) {
            throw new IllegalStateException(qualified(table) + ": JSON column " + column.name() + " could not be read: "
                    + e.getMessage(), e);
        }
    }

    private static String qualified(TableMapEventData table) {
        return table.getDatabase() + "." + table.getTable();
    }
}
