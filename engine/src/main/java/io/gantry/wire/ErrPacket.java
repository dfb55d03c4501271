package io.gantry.wire;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * {@code ERR_Packet}: a command failed.
 *
 * <p>With CLIENT_PROTOCOL_41 the five-character SQL state follows a {@code '#'} marker. Servers
 * leave the marker and state out in errors sent before capabilities are known (e.g. "too many
 * connections" in place of the greeting); such packets decode with SQL state {@code HY000}.
 * MariaDB uses error code 0xFFFF for progress reports, which are not errors
 * ({@link #isProgressReport()}).
 *
 * @param errorCode server error number, e.g. 1045
 * @param sqlState  five-character SQL state, e.g. {@code 28000}
 * @param message   human-readable message
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_err_packet.html">ERR_Packet</a>
 */
public record ErrPacket(int errorCode, String sqlState, String message) implements AuthExchangePacket {

    /** First byte of the packet. */
    public static final int HEADER = 0xFF;
    /** SQL state used when the packet carries none. */
    public static final String GENERAL_ERROR_STATE = "HY000";
    /** MariaDB's error code for progress report packets. */
    public static final int PROGRESS_REPORT_CODE = 0xFFFF;

    private static final int SQL_STATE_LENGTH = 5;

    /**
     * @throws IllegalArgumentException if the code is not 0 to 65535 or the SQL state is not five
     *                                  ASCII characters
     */
    public ErrPacket {
        Checks.range("errorCode", errorCode, 0xFFFF);
        Objects.requireNonNull(sqlState, "sqlState");
        Objects.requireNonNull(message, "message");
        if (sqlState.length() != SQL_STATE_LENGTH
                || sqlState.getBytes(StandardCharsets.UTF_8).length != SQL_STATE_LENGTH) {
            throw new IllegalArgumentException("sqlState must be 5 ASCII characters, was '" + sqlState + "'");
        }
    }

    /** An ERR packet, e.g. {@code ErrPacket.of(1045, "28000", "Access denied for user 'x'")}. */
    public static ErrPacket of(int code, String sqlState, String message) {
        return new ErrPacket(code, sqlState, message);
    }

    /** True for a MariaDB progress report (error code 0xFFFF), which does not end a command. */
    public boolean isProgressReport() {
        return errorCode == PROGRESS_REPORT_CODE;
    }

    /**
     * Reads an ERR packet, with or without the SQL state marker.
     *
     * @throws MalformedPacketException naming the field that could not be read
     */
    public static ErrPacket decode(ByteBuf buf) {
        int header = Buffers.readInt1(buf, "ERR.header");
        if (header != HEADER) {
            throw new MalformedPacketException("ERR.header", "expected 0xFF, found 0x" + Integer.toHexString(header));
        }
        int code = Buffers.readInt2(buf, "ERR.error_code");
        String state = GENERAL_ERROR_STATE;
        if (code != PROGRESS_REPORT_CODE && buf.isReadable() && buf.getByte(buf.readerIndex()) == '#') {
            buf.skipBytes(1);
            byte[] raw = Buffers.readFixedBytes(buf, SQL_STATE_LENGTH, "ERR.sql_state");
            for (byte b : raw) {
                if (b < 0x20 || b > 0x7E) {
                    throw new MalformedPacketException("ERR.sql_state", "non-printable byte 0x"
                            + Integer.toHexString(b & 0xFF) + " in the SQL state");
                }
            }
            state = new String(raw, StandardCharsets.US_ASCII);
        }
        return new ErrPacket(code, state, Buffers.readRestString(buf));
    }

    /** Reads an ERR packet; the capabilities do not change its layout beyond the optional marker. */
    public static ErrPacket decode(ByteBuf buf, int capabilities) {
        return decode(buf);
    }

    /** Writes this packet in the 4.1 form, with the SQL state marker. */
    public void encode(ByteBuf buf) {
        buf.writeByte(HEADER);
        buf.writeShortLE(errorCode);
        buf.writeByte('#');
        buf.writeCharSequence(sqlState, StandardCharsets.US_ASCII);
        buf.writeCharSequence(message, StandardCharsets.UTF_8);
    }

    /** Writes this packet; without CLIENT_PROTOCOL_41 the SQL state is left out. */
    public void encode(ByteBuf buf, int capabilities) {
        if (CapabilityFlags.has(capabilities, CapabilityFlags.CLIENT_PROTOCOL_41)) {
            encode(buf);
            return;
        }
        buf.writeByte(HEADER);
        buf.writeShortLE(errorCode);
        buf.writeCharSequence(message, StandardCharsets.UTF_8);
    }
}
