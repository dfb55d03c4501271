package io.gantry.wire;

import io.netty.buffer.ByteBuf;

/**
 * What a server may send after the handshake response (or after COM_CHANGE_USER) while
 * authentication is in progress: OK (logged in), ERR (refused), an auth method switch, or more
 * data for the current auth plugin.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_connection_phase.html">Connection Phase</a>
 */
public sealed interface AuthExchangePacket permits OkPacket, ErrPacket, AuthSwitchRequest, AuthMoreData {

    /**
     * Reads one authentication-phase packet, dispatching on its first byte.
     *
     * @param capabilities the capabilities negotiated for the connection
     * @throws MalformedPacketException if the first byte is none of 0x00, 0x01, 0xFE, 0xFF, or the
     *                                  packet is malformed
     */
    static AuthExchangePacket decode(ByteBuf payload, int capabilities) {
        Buffers.require(payload, 1, "auth exchange header");
        int header = payload.getUnsignedByte(payload.readerIndex());
        return switch (header) {
            case OkPacket.HEADER -> OkPacket.decode(payload, capabilities);
            case AuthMoreData.HEADER -> AuthMoreData.decode(payload);
            case AuthSwitchRequest.HEADER -> AuthSwitchRequest.decode(payload);
            case ErrPacket.HEADER -> ErrPacket.decode(payload);
            default -> throw new MalformedPacketException("auth exchange header",
                    "expected 0x00, 0x01, 0xFE or 0xFF, found 0x" + Integer.toHexString(header));
        };
    }
}
