package io.gantry.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Binary result rows built and read by hand, after the protocol page (Binary Protocol Resultset Row), for tests of
 * the code that reads and rewrites them: the header 0x00, the NULL bitmap with its offset of 2 bits, the values.
 * Only the types the tests use, and strings under 251 bytes.
 */
public final class BinaryRows {

    private BinaryRows() {
    }

    /** A binary row: integers as {@code Long}/{@code Integer}, strings, DOUBLE as {@code Double}, dates as bytes. */
    public static ByteBuf encode(List<ColumnDefinition> columns, Object... values) {
        ByteBuf row = Unpooled.buffer();
        row.writeByte(0x00);
        byte[] bitmap = new byte[(columns.size() + 9) / 8];
        for (int i = 0; i < values.length; i++) {
            if (values[i] == null) {
                bitmap[(i + 2) / 8] |= (byte) (1 << ((i + 2) % 8));
            }
        }
        row.writeBytes(bitmap);
        for (int i = 0; i < values.length; i++) {
            Object value = values[i];
            if (value == null) {
                continue;
            }
            switch (columns.get(i).fieldType().orElseThrow()) {
                case LONGLONG -> row.writeLongLE(((Number) value).longValue());
                case LONG, INT24 -> row.writeIntLE(((Number) value).intValue());
                case SHORT, YEAR -> row.writeShortLE(((Number) value).intValue());
                case TINY -> row.writeByte(((Number) value).intValue());
                case DOUBLE -> row.writeLongLE(Double.doubleToLongBits((Double) value));
                case DATETIME -> {
                    row.writeByte(((byte[]) value).length);
                    row.writeBytes((byte[]) value);
                }
                default -> {
                    byte[] bytes = ((String) value).getBytes(StandardCharsets.UTF_8);
                    row.writeByte(bytes.length); // short strings only
                    row.writeBytes(bytes);
                }
            }
        }
        return row;
    }

    /** The values of a binary row, as {@link #encode} takes them (every integer as a {@code Long}). */
    public static List<Object> decode(List<ColumnDefinition> columns, ByteBuf row) {
        ByteBuf in = row.duplicate();
        assertThat(in.readByte()).isZero();
        byte[] bitmap = new byte[(columns.size() + 9) / 8];
        in.readBytes(bitmap);
        List<Object> values = new ArrayList<>();
        for (int i = 0; i < columns.size(); i++) {
            if ((bitmap[(i + 2) / 8] & (1 << ((i + 2) % 8))) != 0) {
                values.add(null);
                continue;
            }
            values.add(switch (columns.get(i).fieldType().orElseThrow()) {
                case LONGLONG -> in.readLongLE();
                case LONG, INT24 -> (long) in.readIntLE();
                case SHORT, YEAR -> (long) in.readShortLE();
                case TINY -> (long) in.readByte();
                case DOUBLE -> Double.longBitsToDouble(in.readLongLE());
                case DATETIME -> {
                    byte[] bytes = new byte[in.readUnsignedByte()];
                    in.readBytes(bytes);
                    yield bytes;
                }
                default -> {
                    byte[] bytes = new byte[in.readUnsignedByte()];
                    in.readBytes(bytes);
                    yield new String(bytes, StandardCharsets.UTF_8);
                }
            });
        }
        assertThat(in.isReadable()).as("nothing after the last value").isFalse();
        return values;
    }
}
