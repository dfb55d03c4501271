package io.gantry.wire;

/**
 * What {@link PacketFrameDecoder} emits, instead of a {@link Packet}, when the input cannot be
 * framed. After emitting one the decoder discards all further input; the handler should answer
 * with an ERR packet (e.g. {@code ER_NET_PACKET_TOO_LARGE}, 1153, SQL state {@code 08S01}) and
 * close the connection.
 *
 * @param reason     why framing stopped
 * @param sizeFound  the reassembled payload size the offending frame header announced
 * @param cap        the decoder's cap on a reassembled payload, in bytes
 * @param sequenceId sequence id of the offending frame
 * @param message    a sentence naming the size found and the cap (or the sequence ids)
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_packets.html">MySQL Packets</a>
 */
public record PacketDecodeFailure(Reason reason, long sizeFound, int cap, int sequenceId, String message) {

    /** Why framing failed. */
    public enum Reason {
        /** The reassembled payload would exceed the cap (max_allowed_packet). */
        TOO_LARGE,
        /** A continuation frame did not carry the next sequence id. */
        SEQUENCE_OUT_OF_ORDER
    }

    static PacketDecodeFailure tooLarge(long sizeFound, int cap, int sequenceId) {
        return new PacketDecodeFailure(Reason.TOO_LARGE, sizeFound, cap, sequenceId,
                "packet payload of at least " + sizeFound + " bytes exceeds the cap of " + cap
                        + " bytes (max_allowed_packet)");
    }

    static PacketDecodeFailure sequenceOutOfOrder(int found, int expected, long sizeSoFar, int cap) {
        return new PacketDecodeFailure(Reason.SEQUENCE_OUT_OF_ORDER, sizeSoFar, cap, found,
                "continuation frame has sequence id " + found + ", expected " + expected
                        + " (after " + sizeSoFar + " bytes of payload; cap " + cap + " bytes)");
    }
}
