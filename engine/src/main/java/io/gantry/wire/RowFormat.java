package io.gantry.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;

/**
 * How the rows of one result set carry their values, for the few answers Gantry reads or corrects a value of in
 * passing: one value of a row is read as text, or replaced, and every other byte of the row stays as the server sent
 * it. The same row is encoded two ways, chosen by the command that asked:
 * <ul>
 * <li>{@link Text} (COM_QUERY): each value a length-encoded string, SQL NULL the byte 0xFB.</li>
 * <li>{@link Binary} (COM_STMT_EXECUTE, COM_STMT_BULK_EXECUTE, COM_STMT_FETCH): the header 0x00, a NULL bitmap of
 *     {@code (columns + 7 + 2) / 8} bytes whose first two bits are unused (column {@code i} is bit {@code i + 2}),
 *     then each non-NULL value in its column type's encoding: TINY, SHORT and YEAR, INT24 and LONG, LONGLONG in 1, 2,
 *     4 and 8 bytes little endian, FLOAT 4 and DOUBLE 8, dates and times a length byte and that many bytes, every
 *     other type (strings, DECIMAL, BIT, ENUM, SET, JSON, GEOMETRY) a length-encoded string. A value's place therefore
 *     depends on the types of the columns before it.</li>
 * </ul>
 * A value is read and written as text only for the columns {@link #readsAsText} accepts (integers and the types
 * carried as strings): what the corrections need, without rendering floats and dates as the server would.
 *
 * <p>The readers throw {@link MalformedPacketException} for a row that is not of this shape (too short, a binary row
 * without its header); a caller that corrects rows in passing lets such a row go as it came.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_query_response_text_resultset_row.html">Text Resultset Row</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_binary_resultset.html#sect_protocol_binary_resultset_row">Binary Protocol Resultset Row</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_binary_resultset.html#sect_protocol_binary_resultset_row_value">Binary Protocol Value</a>
 */
public sealed interface RowFormat permits RowFormat.Text, RowFormat.Binary {

    /** The text rows of every COM_QUERY result set. */
    RowFormat TEXT = new Text();

    /** The rows of a result set answering {@code command}, whose columns are {@code columns}. */
    static RowFormat of(CommandType command, List<ColumnDefinition> columns) {
        return switch (command) {
            case COM_STMT_EXECUTE, COM_STMT_BULK_EXECUTE, COM_STMT_FETCH -> new Binary(columns);
            default -> TEXT;
        };
    }

    /**
     * Whether a value of {@code column} is read and written as text in both formats: the integer types (as decimal
     * digits, unsigned when the column says so) and the types a binary row carries as a length-encoded string.
     */
    static boolean readsAsText(ColumnDefinition column) {
        int width = Binary.width(column.type());
        return width != Binary.DATE_OR_TIME && width != 0 && !Binary.isFloatingPoint(column.type());
    }

    /**
     * The value of column {@code column} (from 0) of {@code row} as a text row carries it, or null for SQL NULL.
     * {@code row} is read, not consumed.
     *
     * @throws MalformedPacketException if the row is not of this shape
     * @throws IllegalArgumentException if the column does not {@link #readsAsText read as text}
     */
    String value(ByteBuf row, int column);

    /**
     * A new buffer holding {@code row} with the value of {@code column} replaced by {@code value} (null: SQL NULL),
     * written as the column carries it; every other byte is copied. {@code row} is read, not consumed or released.
     *
     * @throws MalformedPacketException if the row is not of this shape
     * @throws IllegalArgumentException if the column does not {@link #readsAsText read as text}, or {@code value} is
     *                                  not a number an integer column can carry
     */
    ByteBuf withValue(ByteBuf row, int column, String value, ByteBufAllocator alloc);

    /** Text rows: every value a length-encoded string, NULL the byte 0xFB. */
    record Text() implements RowFormat {

        @Override
        public String value(ByteBuf row, int column) {
            ByteBuf view = row.duplicate();
            skip(view, column);
            return Buffers.isNullMarker(view) ? null : Buffers.readLenEncString(view, "text row value " + column);
        }

        @Override
        public ByteBuf withValue(ByteBuf row, int column, String value, ByteBufAllocator alloc) {
            ByteBuf view = row.duplicate();
            skip(view, column);
            int start = view.readerIndex();
            skip(view, 1);
            int end = view.readerIndex();
            byte[] bytes = value == null ? null : value.getBytes(StandardCharsets.UTF_8);
            ByteBuf out = alloc.buffer(row.readableBytes() + (bytes == null ? 1 : bytes.length + 9));
            out.writeBytes(row, row.readerIndex(), start - row.readerIndex());
            if (bytes == null) {
                Buffers.writeNullMarker(out);
            } else {
                Buffers.writeLenEncBytes(out, bytes);
            }
            out.writeBytes(row, end, row.writerIndex() - end);
            return out;
        }

        private static void skip(ByteBuf view, int values) {
            for (int i = 0; i < values; i++) {
                if (Buffers.isNullMarker(view)) {
                    view.skipBytes(1);
                } else {
                    Buffers.readLenEncSlice(view, "text row value " + i);
                }
            }
        }
    }

    /**
     * Binary rows of result sets whose columns are {@code columns}.
     *
     * @param columns the result set's column definitions, in order
     */
    record Binary(List<ColumnDefinition> columns) implements RowFormat {

        /** {@link #width} of a length-encoded string. */
        static final int LENGTH_ENCODED = -1;
        /** {@link #width} of a date or time: a length byte, then that many bytes. */
        static final int DATE_OR_TIME = -2;
        private static final int HEADER = 0x00;
        /** The NULL bitmap's first two bits are unused in a result row. */
        private static final int BITMAP_OFFSET = 2;

        public Binary {
            columns = List.copyOf(columns);
        }

        /** The bytes of a value of {@code type}, or {@link #LENGTH_ENCODED}, or {@link #DATE_OR_TIME}. */
        static int width(int type) {
            return switch (ColumnDefinition.FieldType.of(type).orElse(ColumnDefinition.FieldType.STRING)) {
                case TINY -> 1;
                case SHORT, YEAR -> 2;
                case INT24, LONG, FLOAT -> 4;
                case LONGLONG, DOUBLE -> 8;
                case NULL -> 0;
                case DATE, NEWDATE, DATETIME, DATETIME2, TIMESTAMP, TIMESTAMP2, TIME, TIME2 -> DATE_OR_TIME;
                default -> LENGTH_ENCODED;
            };
        }

        static boolean isFloatingPoint(int type) {
            return type == ColumnDefinition.FieldType.FLOAT.code() || type == ColumnDefinition.FieldType.DOUBLE.code();
        }

        /** Bytes of the NULL bitmap of a row of {@code columns} columns. */
        public static int nullBitmapLength(int columns) {
            return (columns + 7 + BITMAP_OFFSET) / 8;
        }

        @Override
        public String value(ByteBuf row, int column) {
            ColumnDefinition definition = readable(column);
            ByteBuf view = row.duplicate();
            if (isNull(view, column)) {
                return null;
            }
            seek(view, column);
            int width = width(definition.type());
            if (width == LENGTH_ENCODED) {
                return Buffers.readLenEncString(view, field(column));
            }
            long value = Buffers.readFixedInt(view, width, field(column));
            if (definition.hasFlag(ColumnDefinition.UNSIGNED_FLAG)) {
                return Long.toUnsignedString(value);
            }
            int unused = 64 - 8 * width;
            return Long.toString(value << unused >> unused); // the sign of a narrower integer
        }

        @Override
        public ByteBuf withValue(ByteBuf row, int column, String value, ByteBufAllocator alloc) {
            ColumnDefinition definition = readable(column);
            ByteBuf view = row.duplicate();
            boolean wasNull = isNull(view, column);
            seek(view, column);
            int start = view.readerIndex();
            if (!wasNull) {
                skipValue(view, column);
            }
            int end = view.readerIndex();
            ByteBuf out = alloc.buffer(row.readableBytes() + (value == null ? 0 : value.length() * 3 + 9));
            try {
                out.writeBytes(row, row.readerIndex(), start - row.readerIndex());
                int bitmapByte = row.readerIndex() + 1 + (column + BITMAP_OFFSET) / 8;
                int bit = 1 << ((column + BITMAP_OFFSET) % 8);
                int bits = row.getUnsignedByte(bitmapByte);
                out.setByte(bitmapByte - row.readerIndex(), value == null ? bits | bit : bits & ~bit);
                if (value != null) {
                    writeValue(out, definition, value);
                }
                out.writeBytes(row, end, row.writerIndex() - end);
                return out;
            } catch (RuntimeException e) {
                out.release();
                throw e;
            }
        }

        private ColumnDefinition readable(int column) {
            Objects.checkIndex(column, columns.size());
            ColumnDefinition definition = columns.get(column);
            if (!readsAsText(definition)) {
                throw new IllegalArgumentException("column " + column + " (" + definition.name() + ") is of type 0x"
                        + Integer.toHexString(definition.type()) + ", whose binary value is not read as text");
            }
            return definition;
        }

        /** Whether {@code column} is NULL in the row {@code view} starts at; checks the header and the bitmap. */
        private boolean isNull(ByteBuf view, int column) {
            int at = view.readerIndex();
            Buffers.require(view, 1 + nullBitmapLength(columns.size()), "binary row header and NULL bitmap");
            if (view.getUnsignedByte(at) != HEADER) {
                throw new MalformedPacketException("binary row header", "expected 0x00, found 0x"
                        + Integer.toHexString(view.getUnsignedByte(at)));
            }
            int bits = view.getUnsignedByte(at + 1 + (column + BITMAP_OFFSET) / 8);
            return (bits & (1 << ((column + BITMAP_OFFSET) % 8))) != 0;
        }

        /** Moves {@code view} from the row's start to where {@code column}'s value is (or would be). */
        private void seek(ByteBuf view, int column) {
            int bitmap = view.readerIndex() + 1;
            view.skipBytes(1 + nullBitmapLength(columns.size()));
            for (int i = 0; i < column; i++) {
                int bit = i + BITMAP_OFFSET;
                if ((view.getUnsignedByte(bitmap + bit / 8) & (1 << (bit % 8))) == 0) {
                    skipValue(view, i);
                }
            }
        }

        private void skipValue(ByteBuf view, int column) {
            int width = width(columns.get(column).type());
            if (width == LENGTH_ENCODED) {
                Buffers.readLenEncSlice(view, field(column));
            } else if (width == DATE_OR_TIME) {
                int length = Buffers.readInt1(view, field(column) + " length");
                Buffers.require(view, length, field(column));
                view.skipBytes(length);
            } else {
                Buffers.require(view, width, field(column));
                view.skipBytes(width);
            }
        }

        private static void writeValue(ByteBuf out, ColumnDefinition definition, String value) {
            int width = width(definition.type());
            if (width == LENGTH_ENCODED) {
                Buffers.writeLenEncString(out, value);
                return;
            }
            boolean unsigned = definition.hasFlag(ColumnDefinition.UNSIGNED_FLAG);
            long number;
            try {
                number = unsigned ? Long.parseUnsignedLong(value) : Long.parseLong(value);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + value + "' is not a value of an integer column", e);
            }
            int unused = 64 - 8 * width;
            boolean fits = unsigned ? width == 8 || number >>> (8 * width) == 0 : number << unused >> unused == number;
            if (!fits) {
                throw new IllegalArgumentException(value + " does not fit in the column's " + width + " bytes");
            }
            for (int i = 0; i < width; i++) {
                out.writeByte((int) (number >>> (8 * i)));
            }
        }

        private static String field(int column) {
            return "binary row value " + column;
        }
    }
}
