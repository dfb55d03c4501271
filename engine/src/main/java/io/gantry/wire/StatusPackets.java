package io.gantry.wire;

import io.netty.buffer.ByteBuf;

/**
 * The OK and EOF packets as {@link ResponseFraming} reads them: whether a 0xFE packet ends the rows, and the status
 * flags an OK or EOF carries, read in place. Every response ends with one of them, so nothing is decoded into a
 * record and the buffer's reader index is left where it was.
 */
final class StatusPackets {

    private static final int EOF_PACKET_LENGTH = 5;
    private static final int MIN_OK_LENGTH = 7;

    private StatusPackets() {
    }

    /** A 0xFE packet short enough to be an EOF, or the OK that replaces it under CLIENT_DEPRECATE_EOF. */
    static boolean isTerminator(ByteBuf payload, boolean deprecateEof) {
        int length = payload.readableBytes();
        int limit = deprecateEof ? Packet.MAX_FRAME_PAYLOAD : EofPacket.MAX_LENGTH_EXCLUSIVE;
        return length > 0 && length < limit && payload.getUnsignedByte(payload.readerIndex()) == EofPacket.HEADER;
    }

    static ResponseFraming.PacketKind terminatorKind(ByteBuf payload) {
        return payload.readableBytes() >= MIN_OK_LENGTH ? ResponseFraming.PacketKind.OK
                : ResponseFraming.PacketKind.EOF;
    }

    /** Status of an EOF (5 bytes) or of an OK with header 0xFE (7 bytes or more). */
    static int terminatorStatus(ByteBuf payload) {
        // The two layouts differ; with CLIENT_PROTOCOL_41 their lengths tell them apart.
        return payload.readableBytes() >= MIN_OK_LENGTH ? statusOfOk(payload) : statusOfEof(payload, "EOF");
    }

    /** Status of a 4.1 EOF packet where one must be; anything else is malformed. */
    static int requireEof(ByteBuf payload, String what) {
        int length = payload.readableBytes();
        int header = payload.getUnsignedByte(payload.readerIndex());
        if (length >= EofPacket.MAX_LENGTH_EXCLUSIVE || header != EofPacket.HEADER) {
            throw new MalformedPacketException(what, "expected an EOF packet, found header 0x"
                    + Integer.toHexString(header) + " in " + length + " bytes");
        }
        return statusOfEof(payload, what);
    }

    /** Status of an OK packet, read in place: no view, no field names built. */
    static int statusOfOk(ByteBuf payload) {
        int start = payload.readerIndex();
        try {
            payload.skipBytes(1);
            Buffers.readLenEncInt(payload, "OK.affected_rows");
            Buffers.readLenEncInt(payload, "OK.last_insert_id");
            return Buffers.readInt2(payload, "OK.status_flags");
        } finally {
            payload.readerIndex(start);
        }
    }

    /** The {@code affected_rows} of an OK packet (header 0x00, or 0xFE under CLIENT_DEPRECATE_EOF). */
    static long affectedRowsOfOk(ByteBuf payload) {
        int start = payload.readerIndex();
        try {
            payload.skipBytes(1);
            return Buffers.readLenEncInt(payload, "OK.affected_rows");
        } finally {
            payload.readerIndex(start);
        }
    }

    /**
     * Adds {@code flags} to the status of an OK packet (header 0x00, or 0xFE under CLIENT_DEPRECATE_EOF) or an EOF
     * packet, in place; the reader index does not move.
     */
    static void addStatusFlags(ByteBuf payload, int flags) {
        int start = payload.readerIndex();
        int at;
        if (payload.getUnsignedByte(start) == EofPacket.HEADER && payload.readableBytes() < MIN_OK_LENGTH) {
            at = start + 3; // EOF: header, warnings, status
        } else {
            try {
                payload.skipBytes(1);
                Buffers.readLenEncInt(payload, "OK.affected_rows");
                Buffers.readLenEncInt(payload, "OK.last_insert_id");
                at = payload.readerIndex();
            } finally {
                payload.readerIndex(start);
            }
        }
        payload.setShortLE(at, payload.getUnsignedShortLE(at) | flags);
    }

    /**
     * Warnings of an OK (header 0x00, or 0xFE under CLIENT_DEPRECATE_EOF) or EOF packet, read in place; 0 when the
     * packet is too short to carry them (a pre-4.1 OK).
     */
    static int warningsOf(ByteBuf payload) {
        int start = payload.readerIndex();
        if (payload.getUnsignedByte(start) == EofPacket.HEADER && payload.readableBytes() < MIN_OK_LENGTH) {
            return payload.readableBytes() >= EOF_PACKET_LENGTH ? payload.getUnsignedShortLE(start + 1) : 0;
        }
        try {
            payload.skipBytes(1);
            Buffers.readLenEncInt(payload, "OK.affected_rows");
            Buffers.readLenEncInt(payload, "OK.last_insert_id");
            payload.skipBytes(2);
            return payload.readableBytes() >= 2 ? payload.readUnsignedShortLE() : 0;
        } finally {
            payload.readerIndex(start);
        }
    }

    private static int statusOfEof(ByteBuf payload, String what) {
        if (payload.readableBytes() < EOF_PACKET_LENGTH) {
            throw new MalformedPacketException(what + ".status_flags", "needs " + EOF_PACKET_LENGTH
                    + " bytes of EOF packet but only " + payload.readableBytes() + " are there");
        }
        return payload.getUnsignedShortLE(payload.readerIndex() + 3);
    }
}
