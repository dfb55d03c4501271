package io.gantry.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
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
 * and stay in the buffer.
 *
 * <p>MariaDB extended metadata: when the connection negotiated
 * {@link CapabilityFlags#MARIADB_CLIENT_EXTENDED_METADATA}, a length-encoded block follows the
 * original column name, before the length of the fixed fields. The block is a sequence of entries,
 * each a kind byte ({@code 0} the data type name, e.g. {@code uuid}, {@code inet6},
 * {@code point}; {@code 1} the format, e.g. {@code json}) and a length-encoded string. A column
 * without extended metadata still carries the block, empty (the single byte {@code 0x00}); a
 * client that negotiated the capability reads the block in every column definition and misparses
 * one without it. The codec methods that take {@code mariaDbCapabilities} follow the layout those
 * capabilities select; the others are the MySQL layout.
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
 * @param extendedTypeName MariaDB extended metadata: the data type name ({@code uuid},
 *                     {@code inet4}, {@code inet6}, a geometry kind), empty for none
 * @param extendedFormat MariaDB extended metadata: the format ({@code json}), empty for none
 * @see <a href="https://mariadb.com/kb/en/result-set-packets/#column-definition-packet">MariaDB: Column Definition Packet</a>
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
        int decimals,
        String extendedTypeName,
        String extendedFormat) {

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

    /** Kind byte of an extended-metadata entry holding the data type name. */
    public static final int EXTENDED_TYPE_NAME = 0;
    /** Kind byte of an extended-metadata entry holding the format. */
    public static final int EXTENDED_FORMAT = 1;

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
        Objects.requireNonNull(extendedTypeName, "extendedTypeName");
        Objects.requireNonNull(extendedFormat, "extendedFormat");
        Checks.range("characterSet", characterSet, 0xFFFF);
        Checks.range("columnLength", columnLength, 0xFFFF_FFFFL);
        Checks.range("type", type, 0xFF);
        Checks.range("flags", flags, 0xFFFF);
        Checks.range("decimals", decimals, 0xFF);
    }

    /** A column without MariaDB extended metadata. */
    public ColumnDefinition(String catalog, String schema, String table, String orgTable, String name, String orgName,
            int characterSet, long columnLength, int type, int flags, int decimals) {
        this(catalog, schema, table, orgTable, name, orgName, characterSet, columnLength, type, flags, decimals, "",
                "");
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
                type, newFlags, decimals, extendedTypeName, extendedFormat);
    }

    /** A copy with other MariaDB extended metadata (empty strings for none). */
    public ColumnDefinition withExtendedMetadata(String typeName, String format) {
        return new ColumnDefinition(catalog, schema, table, orgTable, name, orgName, characterSet, columnLength,
                type, flags, decimals, typeName, format);
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
     * Reads a ColumnDefinition41 payload in the MySQL layout (no extended metadata). Bytes after the
     * filler (COM_FIELD_LIST default values) are left unread.
     *
     * @throws MalformedPacketException naming the field that could not be read, e.g.
     *                                  {@code ColumnDefinition41.org_name}
     */
    public static ColumnDefinition decode(ByteBuf buf) {
        return decode(buf, 0);
    }

    /**
     * Reads a ColumnDefinition41 payload in the layout {@code mariaDbCapabilities} select: with
     * {@link CapabilityFlags#MARIADB_CLIENT_EXTENDED_METADATA}, the extended-metadata block after
     * {@code org_name} is read (entries of unknown kinds are skipped).
     *
     * @param mariaDbCapabilities the MariaDB extended capabilities in effect on the connection
     * @throws MalformedPacketException naming the field that could not be read
     */
    public static ColumnDefinition decode(ByteBuf buf, int mariaDbCapabilities) {
        String catalog = Buffers.readLenEncString(buf, FIELD + "catalog");
        String schema = Buffers.readLenEncString(buf, FIELD + "schema");
        String table = Buffers.readLenEncString(buf, FIELD + "table");
        String orgTable = Buffers.readLenEncString(buf, FIELD + "org_table");
        String name = Buffers.readLenEncString(buf, FIELD + "name");
        String orgName = Buffers.readLenEncString(buf, FIELD + "org_name");
        String typeName = "";
        String format = "";
        if (hasExtendedMetadata(mariaDbCapabilities)) {
            ByteBuf block = Buffers.readLenEncSlice(buf, FIELD + "extended_metadata");
            while (block.isReadable()) {
                int kind = Buffers.readInt1(block, FIELD + "extended_metadata.kind");
                String value = Buffers.readLenEncString(block, FIELD + "extended_metadata.value");
                if (kind == EXTENDED_TYPE_NAME) {
                    typeName = value;
                } else if (kind == EXTENDED_FORMAT) {
                    format = value;
                }
            }
        }
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
                type, flags, decimals, typeName, format);
    }

    /**
     * Writes the packet as MySQL does, with the two filler bytes and no default values; extended
     * metadata is left out, as a server leaves it out for a client that did not negotiate it.
     */
    public void encode(ByteBuf buf) {
        encode(buf, 0);
    }

    /**
     * Writes the packet in the layout {@code mariaDbCapabilities} select: with
     * {@link CapabilityFlags#MARIADB_CLIENT_EXTENDED_METADATA} the extended-metadata block is
     * written (empty when this column has none), as MariaDB does.
     *
     * @param mariaDbCapabilities the MariaDB extended capabilities negotiated with the reader
     */
    public void encode(ByteBuf buf, int mariaDbCapabilities) {
        Buffers.writeLenEncString(buf, catalog);
        Buffers.writeLenEncString(buf, schema);
        Buffers.writeLenEncString(buf, table);
        Buffers.writeLenEncString(buf, orgTable);
        Buffers.writeLenEncString(buf, name);
        Buffers.writeLenEncString(buf, orgName);
        if (hasExtendedMetadata(mariaDbCapabilities)) {
            ByteBuf block = buf.alloc().buffer();
            try {
                writeEntry(block, EXTENDED_TYPE_NAME, extendedTypeName);
                writeEntry(block, EXTENDED_FORMAT, extendedFormat);
                Buffers.writeLenEncInt(buf, block.readableBytes());
                buf.writeBytes(block);
            } finally {
                block.release();
            }
        }
        Buffers.writeLenEncInt(buf, FIXED_FIELDS_LENGTH);
        buf.writeShortLE(characterSet);
        Buffers.writeFixedInt(buf, 4, columnLength);
        buf.writeByte(type);
        buf.writeShortLE(flags);
        buf.writeByte(decimals);
        buf.writeShortLE(0);
    }

    /**
     * A copy of a column definition payload in the MySQL layout with an empty extended-metadata
     * block inserted after {@code org_name}: what the same column looks like to a client that
     * negotiated {@link CapabilityFlags#MARIADB_CLIENT_EXTENDED_METADATA}. For forwarding the
     * column definitions of a server that does not offer the capability to a client that
     * negotiated it elsewhere. {@code payload} is read, not consumed, and not released; every
     * byte after {@code org_name} (including COM_FIELD_LIST default values) is kept.
     *
     * @throws MalformedPacketException if the six names at the start cannot be read
     */
    public static ByteBuf insertEmptyExtendedMetadata(ByteBuf payload, ByteBufAllocator alloc) {
        ByteBuf names = payload.duplicate();
        Buffers.readLenEncString(names, FIELD + "catalog");
        Buffers.readLenEncString(names, FIELD + "schema");
        Buffers.readLenEncString(names, FIELD + "table");
        Buffers.readLenEncString(names, FIELD + "org_table");
        Buffers.readLenEncString(names, FIELD + "name");
        Buffers.readLenEncString(names, FIELD + "org_name");
        int namesLength = names.readerIndex() - payload.readerIndex();
        ByteBuf out = alloc.buffer(payload.readableBytes() + 1);
        out.writeBytes(payload, payload.readerIndex(), namesLength);
        out.writeByte(0);
        out.writeBytes(payload, names.readerIndex(), names.readableBytes());
        return out;
    }

    private static boolean hasExtendedMetadata(int mariaDbCapabilities) {
        return CapabilityFlags.has(mariaDbCapabilities, CapabilityFlags.MARIADB_CLIENT_EXTENDED_METADATA);
    }

    private static void writeEntry(ByteBuf block, int kind, String value) {
        if (!value.isEmpty()) {
            block.writeByte(kind);
            Buffers.writeLenEncString(block, value);
        }
    }
}
