package io.gantry.wire;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;

/**
 * Reading and writing the protocol's basic data types on a {@link ByteBuf}.
 *
 * <p>Every read checks the bytes left first and throws {@link MalformedPacketException} naming
 * the {@code field} passed in, so a truncated or corrupt packet never surfaces as an
 * {@link IndexOutOfBoundsException}. Strings are UTF-8. Integers are little endian and unsigned;
 * an 8-byte integer above {@link Long#MAX_VALUE} comes back as a negative {@code long} with the
 * same bits (use {@link Long#toUnsignedString(long)} to print it).
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_dt_integers.html">Integer Types</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_dt_strings.html">String Types</a>
 */
public final class Buffers {

    /** First byte of a length-encoded value that stands for SQL NULL (only in text rows). */
    public static final int NULL_MARKER = 0xFB;

    private static final int TWO_BYTE_PREFIX = 0xFC;
    private static final int THREE_BYTE_PREFIX = 0xFD;
    private static final int EIGHT_BYTE_PREFIX = 0xFE;

    private Buffers() {
    }

    // ---- fixed-length integers -------------------------------------------------------------

    /** Reads an unsigned little-endian integer of {@code width} bytes (1 to 8). */
    public static long readFixedInt(ByteBuf buf, int width, String field) {
        checkWidth(width);
        require(buf, width, field);
        long value = 0;
        for (int i = 0; i < width; i++) {
            value |= (long) buf.readUnsignedByte() << (8 * i);
        }
        return value;
    }

    /** Reads {@code int<1>}. */
    public static int readInt1(ByteBuf buf, String field) {
        require(buf, 1, field);
        return buf.readUnsignedByte();
    }

    /** Reads {@code int<2>}. */
    public static int readInt2(ByteBuf buf, String field) {
        require(buf, 2, field);
        return buf.readUnsignedShortLE();
    }

    /** Reads {@code int<3>}. */
    public static int readInt3(ByteBuf buf, String field) {
        require(buf, 3, field);
        return buf.readUnsignedMediumLE();
    }

    /** Reads {@code int<4>} as an unsigned value. */
    public static long readInt4(ByteBuf buf, String field) {
        require(buf, 4, field);
        return buf.readUnsignedIntLE();
    }

    /**
     * Writes the low {@code width} bytes of {@code value}, little endian.
     *
     * @throws IllegalArgumentException if the value does not fit in {@code width} unsigned bytes
     */
    public static void writeFixedInt(ByteBuf buf, int width, long value) {
        checkWidth(width);
        if (width < 8 && (value >>> (8 * width)) != 0) {
            throw new IllegalArgumentException(
                    "value " + value + " does not fit in an unsigned " + width + "-byte integer");
        }
        for (int i = 0; i < width; i++) {
            buf.writeByte((int) (value >>> (8 * i)));
        }
    }

    /** Writes {@code int<4>}; negative values are written as their unsigned bit pattern. */
    public static void writeInt4(ByteBuf buf, int value) {
        buf.writeIntLE(value);
    }

    // ---- length-encoded integers -------------------------------------------------------------

    /** True if the next byte is the {@link #NULL_MARKER 0xFB} NULL marker. Consumes nothing. */
    public static boolean isNullMarker(ByteBuf buf) {
        return buf.isReadable() && buf.getUnsignedByte(buf.readerIndex()) == NULL_MARKER;
    }

    /**
     * Reads {@code int<lenenc>}: one byte below 0xFB, or 0xFC + 2, 0xFD + 3, 0xFE + 8 bytes.
     *
     * @throws MalformedPacketException on a NULL marker (0xFB), the undefined prefix 0xFF, or too
     *                                  few bytes
     */
    public static long readLenEncInt(ByteBuf buf, String field) {
        require(buf, 1, field);
        int first = buf.readUnsignedByte();
        if (first < NULL_MARKER) {
            return first;
        }
        return switch (first) {
            case NULL_MARKER -> throw new MalformedPacketException(field,
                    "found the NULL marker 0xFB where a length-encoded integer was expected");
            case TWO_BYTE_PREFIX -> readInt2(buf, field);
            case THREE_BYTE_PREFIX -> readInt3(buf, field);
            case EIGHT_BYTE_PREFIX -> readFixedInt(buf, 8, field);
            default -> throw new MalformedPacketException(field,
                    "found the undefined length-encoded integer prefix 0xFF");
        };
    }

    /** Reads {@code int<lenenc>} or the NULL marker, which gives an empty result. */
    public static OptionalLong readNullableLenEncInt(ByteBuf buf, String field) {
        if (isNullMarker(buf)) {
            buf.skipBytes(1);
            return OptionalLong.empty();
        }
        return OptionalLong.of(readLenEncInt(buf, field));
    }

    /** How many bytes {@link #writeLenEncInt} uses for {@code value} (treated as unsigned). */
    public static int lenEncIntSize(long value) {
        if (value >= 0 && value < NULL_MARKER) {
            return 1;
        }
        if (value >= 0 && value < (1L << 16)) {
            return 3;
        }
        if (value >= 0 && value < (1L << 24)) {
            return 4;
        }
        return 9;
    }

    /** Writes {@code int<lenenc>}; {@code value} is unsigned (negative means above 2^63). */
    public static void writeLenEncInt(ByteBuf buf, long value) {
        switch (lenEncIntSize(value)) {
            case 1 -> buf.writeByte((int) value);
            case 3 -> {
                buf.writeByte(TWO_BYTE_PREFIX);
                buf.writeShortLE((int) value);
            }
            case 4 -> {
                buf.writeByte(THREE_BYTE_PREFIX);
                buf.writeMediumLE((int) value);
            }
            default -> {
                buf.writeByte(EIGHT_BYTE_PREFIX);
                buf.writeLongLE(value);
            }
        }
    }

    /** Writes the {@link #NULL_MARKER 0xFB} NULL marker. */
    public static void writeNullMarker(ByteBuf buf) {
        buf.writeByte(NULL_MARKER);
    }

    // ---- length-encoded strings --------------------------------------------------------------

    /** Reads {@code string<lenenc>} as a slice of {@code buf} (no copy, no extra reference). */
    public static ByteBuf readLenEncSlice(ByteBuf buf, String field) {
        long length = readLenEncInt(buf, field);
        if (length < 0 || length > buf.readableBytes()) {
            throw new MalformedPacketException(field, "length " + Long.toUnsignedString(length)
                    + " exceeds the " + buf.readableBytes() + " bytes left");
        }
        return buf.readSlice((int) length);
    }

    /** Reads {@code string<lenenc>} as bytes. */
    public static byte[] readLenEncBytes(ByteBuf buf, String field) {
        return toBytes(readLenEncSlice(buf, field));
    }

    /** Reads {@code string<lenenc>} as UTF-8 text. */
    public static String readLenEncString(ByteBuf buf, String field) {
        return readLenEncSlice(buf, field).toString(StandardCharsets.UTF_8);
    }

    /** Writes {@code string<lenenc>}. */
    public static void writeLenEncBytes(ByteBuf buf, byte[] value) {
        writeLenEncInt(buf, value.length);
        buf.writeBytes(value);
    }

    /** Writes {@code string<lenenc>} as UTF-8. */
    public static void writeLenEncString(ByteBuf buf, String value) {
        writeLenEncBytes(buf, value.getBytes(StandardCharsets.UTF_8));
    }

    // ---- NUL-terminated strings --------------------------------------------------------------

    /** Reads {@code string<NUL>} as bytes, consuming the terminator. */
    public static byte[] readNulTerminatedBytes(ByteBuf buf, String field) {
        int length = buf.bytesBefore((byte) 0);
        if (length < 0) {
            throw new MalformedPacketException(field,
                    "no NUL terminator in the " + buf.readableBytes() + " bytes left");
        }
        byte[] value = new byte[length];
        buf.readBytes(value);
        buf.skipBytes(1);
        return value;
    }

    /** Reads {@code string<NUL>} as UTF-8 text, consuming the terminator. */
    public static String readNulTerminatedString(ByteBuf buf, String field) {
        return new String(readNulTerminatedBytes(buf, field), StandardCharsets.UTF_8);
    }

    /**
     * Writes {@code string<NUL>}.
     *
     * @throws IllegalArgumentException if {@code value} contains a NUL byte
     */
    public static void writeNulTerminatedBytes(ByteBuf buf, byte[] value) {
        for (byte b : value) {
            if (b == 0) {
                throw new IllegalArgumentException("a NUL-terminated string cannot contain a NUL byte");
            }
        }
        buf.writeBytes(value);
        buf.writeByte(0);
    }

    /** Writes {@code string<NUL>} as UTF-8. */
    public static void writeNulTerminatedString(ByteBuf buf, String value) {
        writeNulTerminatedBytes(buf, value.getBytes(StandardCharsets.UTF_8));
    }

    // ---- fixed-length and rest-of-packet strings ----------------------------------------------

    /** Reads {@code string[length]} as bytes. */
    public static byte[] readFixedBytes(ByteBuf buf, int length, String field) {
        require(buf, length, field);
        byte[] value = new byte[length];
        buf.readBytes(value);
        return value;
    }

    /** Reads {@code string[length]} as UTF-8 text. */
    public static String readFixedString(ByteBuf buf, int length, String field) {
        return new String(readFixedBytes(buf, length, field), StandardCharsets.UTF_8);
    }

    /** Reads {@code string<EOF>}: everything left in the buffer. */
    public static byte[] readRestBytes(ByteBuf buf) {
        byte[] value = new byte[buf.readableBytes()];
        buf.readBytes(value);
        return value;
    }

    /** Reads {@code string<EOF>} as UTF-8 text. */
    public static String readRestString(ByteBuf buf) {
        return new String(readRestBytes(buf), StandardCharsets.UTF_8);
    }

    // ---- checks ------------------------------------------------------------------------------

    /**
     * Throws {@link MalformedPacketException} naming {@code field} if fewer than {@code length}
     * bytes are readable.
     */
    public static void require(ByteBuf buf, int length, String field) {
        if (buf.readableBytes() < length) {
            throw new MalformedPacketException(field, "needs " + length + " bytes but only "
                    + buf.readableBytes() + " are left");
        }
    }

    private static byte[] toBytes(ByteBuf slice) {
        byte[] value = new byte[slice.readableBytes()];
        slice.getBytes(slice.readerIndex(), value);
        return value;
    }

    private static void checkWidth(int width) {
        if (width < 1 || width > 8) {
            throw new IllegalArgumentException("integer width must be 1 to 8 bytes, was " + width);
        }
    }
}
