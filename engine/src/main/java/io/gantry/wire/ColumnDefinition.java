package io.gantry.wire;

import io.netty.buffer.ByteBuf;
import java.util.Objects;
import java.util.Optional;

/**
 * {@code Protocol::ColumnDefinition41}: the description of one column of a result set, sent after
 * the column count of a text or binary result set (and for parameters of a prepared statement).
 *
 * <p>Layout: six length-encoded strings (catalog, always {@code "def"}; schema; table alias;
 * original table; column alias; original column), the length of the fixed fields as a
 * length-encoded integer (always 0x0C), then character set {@code int<2>}, column length
 * {@code int<4>}, type {@code int<1>}, flags {@code int<2>}, decimals {@code int<1>} and two
 * filler bytes. The default values a server appends in an answer to COM_FIELD_LIST are not read
 * and stay in the buffer. MariaDB's extended type information
 * ({@code MARIADB_CLIENT_EXTENDED_METADATA}) is not supported: Gantry does not negotiate it for
 * the result sets it builds itself.
 *
 * @param catalog      always {@code "def"} in practice
 * @param schema       the database of the table, empty for computed columns
 * @param table        the table alias, empty for computed columns
 * @param orgTable     the table name before aliasing
 * @param name         the column alias: the header a client shows
 * @param orgName      the column name before aliasing
 * @param characterSet collation id of the values ({@link #UTF8MB4_GENERAL_CI}, {@link #BINARY}
 *                     for numbers and dates), 0 to 0xFFFF
 * @param columnLength maximum length in bytes of a value, unsigned 32 bits
 * @param type         a {@link FieldType} code, 0 to 0xFF; unknown codes are kept as they are
 * @param flags        column flags ({@link #NOT_NULL_FLAG} and others), 0 to 0xFFFF
 * @param decimals     digits after the point: 0 for integers and strings, 0x1F for
 *                     floating-point columns without a fixed number, fractional seconds for dates
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_query_response_text_resultset_column_definition.html">Column Definition</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/field__types_8h.html">enum_field_types</a>
 */
public record ColumnDefinition(
        String catalog,
        String schema,
        String table,
        String orgTable,
        String name,
        String orgName,
        int characterSet,
        long columnLength,
        int type,
        int flags,
        int decimals) {

    /** The catalog every server sends. */
    public static final String DEFAULT_CATALOG = "def";
    /** Collation id of {@code utf8mb4_general_ci}, the character set of Gantry's text columns. */
    public static final int UTF8MB4_GENERAL_CI = 45;
    /** Collation id of {@code binary}, used for numbers, dates and binary strings. */
    public static final int BINARY = 63;
    /** Value of the length of the fixed-length fields. */
    public static final int FIXED_FIELDS_LENGTH = 0x0C;
    /** {@link #decimals} of a FLOAT or DOUBLE column without a fixed number of decimals. */
    public static final int NOT_FIXED_DECIMALS = 0x1F;

    /** Column flag: the column cannot hold NULL. */
    public static final int NOT_NULL_FLAG = 1;
    /** Column flag: part of the primary key. */
    public static final int PRI_KEY_FLAG = 1 << 1;
    /** Column flag: part of a unique key. */
    public static final int UNIQUE_KEY_FLAG = 1 << 2;
    /** Column flag: part of a non-unique key. */
    public static final int MULTIPLE_KEY_FLAG = 1 << 3;
    /** Column flag: a BLOB or TEXT column. */
    public static final int BLOB_FLAG = 1 << 4;
    /** Column flag: an unsigned number. */
    public static final int UNSIGNED_FLAG = 1 << 5;
    /** Column flag: a number padded with zeros. */
    public static final int ZEROFILL_FLAG = 1 << 6;
    /** Column flag: binary collation (numbers and dates carry it too). */
    public static final int BINARY_FLAG = 1 << 7;
    /** Column flag: an ENUM column. */
    public static final int ENUM_FLAG = 1 << 8;
    /** Column flag: an AUTO_INCREMENT column. */
    public static final int AUTO_INCREMENT_FLAG = 1 << 9;
    /** Column flag: a TIMESTAMP column. */
    public static final int TIMESTAMP_FLAG = 1 << 10;
    /** Column flag: a SET column. */
    public static final int SET_FLAG = 1 << 11;

    private static final String FIELD = "ColumnDefinition41.";
    private static final int FIXED_FIELDS_MIN = 10;
    private static final int DEFAULT_TEXT_CHARACTERS = 255;
    private static final int UTF8MB4_MAX_BYTES = 4;
    private static final int DATETIME_LENGTH = 19;
    private static final int MAX_FRACTIONAL_DIGITS = 6;

    /**
     * MySQL field type codes ({@code enum_field_types}) as they appear in {@link #type()}. Note
     * that a VARCHAR column is sent as {@link #VAR_STRING} (0xFD) in result sets; {@link #VARCHAR}
     * (0x0F) appears in the binary log and in some MariaDB answers.
     */
    public enum FieldType {
        DECIMAL(0x00), TINY(0x01), SHORT(0x02), LONG(0x03), FLOAT(0x04), DOUBLE(0x05), NULL(0x06),
        TIMESTAMP(0x07), LONGLONG(0x08), INT24(0x09), DATE(0x0A), TIME(0x0B), DATETIME(0x0C), YEAR(0x0D),
        NEWDATE(0x0E), VARCHAR(0x0F), BIT(0x10), TIMESTAMP2(0x11), DATETIME2(0x12), TIME2(0x13),
        TYPED_ARRAY(0x14), VECTOR(0xF2), JSON(0xF5), NEWDECIMAL(0xF6), ENUM(0xF7), SET(0xF8),
        TINY_BLOB(0xF9), MEDIUM_BLOB(0xFA), LONG_BLOB(0xFB), BLOB(0xFC), VAR_STRING(0xFD), STRING(0xFE),
        GEOMETRY(0xFF);

        private static final FieldType[] BY_CODE = new FieldType[256];

        static {
            for (FieldType t : values()) {
                BY_CODE[t.code] = t;
            }
        }

        private final int code;

        FieldType(int code) {
            this.code = code;
        }

        /** The code on the wire. */
        public int code() {
            return code;
        }

        /** The type with {@code code}, if it is one MySQL or MariaDB defines. */
        public static Optional<FieldType> of(int code) {
            return code >= 0 && code < BY_CODE.length ? Optional.ofNullable(BY_CODE[code]) : Optional.empty();
        }
    }

    /**
     * @throws NullPointerException     if a string is null
     * @throws IllegalArgumentException if a number is outside its unsigned range on the wire
     */
    public ColumnDefinition {
        Objects.requireNonNull(catalog, "catalog");
        Objects.requireNonNull(schema, "schema");
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(orgTable, "orgTable");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(orgName, "orgName");
        Checks.range("characterSet", characterSet, 0xFFFF);
        Checks.range("columnLength", columnLength, 0xFFFF_FFFFL);
        Checks.range("type", type, 0xFF);
        Checks.range("flags", flags, 0xFFFF);
        Checks.range("decimals", decimals, 0xFF);
    }

    /**
     * A utf8mb4 text column of up to 255 characters ({@link FieldType#VAR_STRING}), not aliased.
     *
     * @param schema the database shown to the client, e.g. {@code "gantry"}; may be empty
     * @param table  the table shown to the client; may be empty
     * @param name   the column header
     */
    public static ColumnDefinition text(String schema, String table, String name) {
        return text(schema, table, name, DEFAULT_TEXT_CHARACTERS);
    }

    /**
     * A utf8mb4 text column of up to {@code maxCharacters} characters ({@link FieldType#VAR_STRING};
     * the column length is four bytes per character).
     *
     * @throws IllegalArgumentException if {@code maxCharacters} is negative or too large for the
     *                                  32-bit column length
     */
    public static ColumnDefinition text(String schema, String table, String name, int maxCharacters) {
        Checks.range("maxCharacters", maxCharacters, 0xFFFF_FFFFL / UTF8MB4_MAX_BYTES);
        return new ColumnDefinition(DEFAULT_CATALOG, schema, table, table, name, name, UTF8MB4_GENERAL_CI,
                (long) maxCharacters * UTF8MB4_MAX_BYTES, FieldType.VAR_STRING.code(), 0, 0);
    }

    /**
     * A signed numeric column with the display length and decimals a server sends for {@code type}.
     *
     * @param type one of TINY, SHORT, INT24, LONG, LONGLONG, YEAR, FLOAT, DOUBLE
     * @throws IllegalArgumentException for any other type (DECIMAL needs a precision: use the
     *                                  constructor)
     */
    public static ColumnDefinition numeric(String schema, String table, String name, FieldType type) {
        long length;
        int decimals = 0;
        switch (type) {
            case TINY, YEAR -> length = 4;
            case SHORT -> length = 6;
            case INT24 -> length = 9;
            case LONG -> length = 11;
            case LONGLONG -> length = 20;
            case FLOAT -> {
                length = 12;
                decimals = NOT_FIXED_DECIMALS;
            }
            case DOUBLE -> {
                length = 22;
                decimals = NOT_FIXED_DECIMALS;
            }
            default -> throw new IllegalArgumentException(type + " is not a numeric type with a fixed display length");
        }
        return new ColumnDefinition(DEFAULT_CATALOG, schema, table, table, name, name, BINARY, length,
                type.code(), BINARY_FLAG, decimals);
    }

    /**
     * A DATETIME column, sent as text {@code YYYY-MM-DD hh:mm:ss[.fraction]}.
     *
     * @param fractionalDigits digits of the seconds fraction, 0 to 6
     * @throws IllegalArgumentException if {@code fractionalDigits} is outside 0..6
     */
    public static ColumnDefinition datetime(String schema, String table, String name, int fractionalDigits) {
        Checks.range("fractionalDigits", fractionalDigits, MAX_FRACTIONAL_DIGITS);
        long length = DATETIME_LENGTH + (fractionalDigits == 0 ? 0 : fractionalDigits + 1);
        return new ColumnDefinition(DEFAULT_CATALOG, schema, table, table, name, name, BINARY, length,
                FieldType.DATETIME.code(), BINARY_FLAG, fractionalDigits);
    }

    /** A copy with other {@link #flags()}. */
    public ColumnDefinition withFlags(int newFlags) {
        return new ColumnDefinition(catalog, schema, table, orgTable, name, orgName, characterSet, columnLength,
                type, newFlags, decimals);
    }

    /** The {@link FieldType} of {@link #type()}, if the code is a known one. */
    public Optional<FieldType> fieldType() {
        return FieldType.of(type);
    }

    /** True if {@link #flags()} has every bit of {@code flag}. */
    public boolean hasFlag(int flag) {
        return (flags & flag) == flag;
    }

    /**
     * Reads a ColumnDefinition41 payload. Bytes after the filler (COM_FIELD_LIST default values)
     * are left unread.
     *
     * @throws MalformedPacketException naming the field that could not be read, e.g.
     *                                  {@code ColumnDefinition41.org_name}
     */
    public static ColumnDefinition decode(ByteBuf buf) {
        String catalog = Buffers.readLenEncString(buf, FIELD + "catalog");
        String schema = Buffers.readLenEncString(buf, FIELD + "schema");
        String table = Buffers.readLenEncString(buf, FIELD + "table");
        String orgTable = Buffers.readLenEncString(buf, FIELD + "org_table");
        String name = Buffers.readLenEncString(buf, FIELD + "name");
        String orgName = Buffers.readLenEncString(buf, FIELD + "org_name");
        long fixedLength = Buffers.readLenEncInt(buf, FIELD + "length_of_fixed_length_fields");
        if (fixedLength < FIXED_FIELDS_MIN || fixedLength > FIXED_FIELDS_LENGTH) {
            throw new MalformedPacketException(FIELD + "length_of_fixed_length_fields", "expected 0x0c, found "
                    + Long.toUnsignedString(fixedLength));
        }
        int characterSet = Buffers.readInt2(buf, FIELD + "character_set");
        long columnLength = Buffers.readInt4(buf, FIELD + "column_length");
        int type = Buffers.readInt1(buf, FIELD + "type");
        int flags = Buffers.readInt2(buf, FIELD + "flags");
        int decimals = Buffers.readInt1(buf, FIELD + "decimals");
        int filler = (int) fixedLength - FIXED_FIELDS_MIN;
        Buffers.require(buf, filler, FIELD + "filler");
        buf.skipBytes(filler);
        return new ColumnDefinition(catalog, schema, table, orgTable, name, orgName, characterSet, columnLength,
                type, flags, decimals);
    }

    /** Writes the packet as MySQL does, with the two filler bytes and no default values. */
    public void encode(ByteBuf buf) {
        Buffers.writeLenEncString(buf, catalog);
        Buffers.writeLenEncString(buf, schema);
        Buffers.writeLenEncString(buf, table);
        Buffers.writeLenEncString(buf, orgTable);
        Buffers.writeLenEncString(buf, name);
        Buffers.writeLenEncString(buf, orgName);
        Buffers.writeLenEncInt(buf, FIXED_FIELDS_LENGTH);
        buf.writeShortLE(characterSet);
        Buffers.writeFixedInt(buf, 4, columnLength);
        buf.writeByte(type);
        buf.writeShortLE(flags);
        buf.writeByte(decimals);
        buf.writeShortLE(0);
    }
}
