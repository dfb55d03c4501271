package io.gantry.wire;

import io.netty.buffer.ByteBuf;

/**
 * {@code EOF_Packet}: ends column definitions or rows when CLIENT_DEPRECATE_EOF is not
 * negotiated. A payload starting with 0xFE is an EOF only if it is shorter than 9 bytes; longer
 * ones are data (a length-encoded integer with the 0xFE prefix).
 *
 * @param warnings    warning count
 * @param statusFlags {@link ServerStatus} flags
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_eof_packet.html">EOF_Packet</a>
 */
public record EofPacket(int warnings, int statusFlags) {

    /** First byte of the packet. */
    public static final int HEADER = 0xFE;
    /** An EOF payload is always shorter than this. */
    public static final int MAX_LENGTH_EXCLUSIVE = 9;

    public EofPacket {
        Checks.range("warnings", warnings, 0xFFFF);
        Checks.range("statusFlags", statusFlags, 0xFFFF);
    }

    /** True if {@code payload} (not consumed) is an EOF packet: header 0xFE and under 9 bytes. */
    public static boolean isEof(ByteBuf payload) {
        return payload.isReadable() && payload.readableBytes() < MAX_LENGTH_EXCLUSIVE
                && payload.getUnsignedByte(payload.readerIndex()) == HEADER;
    }

    /**
     * Reads a 4.1 EOF packet.
     *
     * @throws MalformedPacketException naming the field, or if the payload is 9 bytes or longer
     */
    public static EofPacket decode(ByteBuf buf) {
        return decode(buf, CapabilityFlags.CLIENT_PROTOCOL_41);
    }

    /**
     * Reads an EOF packet; without CLIENT_PROTOCOL_41 it is the header byte alone.
     *
     * @throws MalformedPacketException naming the field, or if the payload is 9 bytes or longer
     */
    public static EofPacket decode(ByteBuf buf, int capabilities) {
        if (buf.readableBytes() >= MAX_LENGTH_EXCLUSIVE) {
            throw new MalformedPacketException("EOF", "payload of " + buf.readableBytes()
                    + " bytes is too long for an EOF packet (under 9 bytes)");
        }
        int header = Buffers.readInt1(buf, "EOF.header");
        if (header != HEADER) {
            throw new MalformedPacketException("EOF.header", "expected 0xFE, found 0x" + Integer.toHexString(header));
        }
        if (!CapabilityFlags.has(capabilities, CapabilityFlags.CLIENT_PROTOCOL_41)) {
            return new EofPacket(0, 0);
        }
        int warnings = Buffers.readInt2(buf, "EOF.warnings");
        int status = Buffers.readInt2(buf, "EOF.status_flags");
        return new EofPacket(warnings, status);
    }

    /** Writes a 4.1 EOF packet. */
    public void encode(ByteBuf buf) {
        encode(buf, CapabilityFlags.CLIENT_PROTOCOL_41);
    }

    /** Writes an EOF packet; without CLIENT_PROTOCOL_41 only the header. */
    public void encode(ByteBuf buf, int capabilities) {
        buf.writeByte(HEADER);
        if (CapabilityFlags.has(capabilities, CapabilityFlags.CLIENT_PROTOCOL_41)) {
            buf.writeShortLE(warnings);
            buf.writeShortLE(statusFlags);
        }
    }
}
