package io.gantry.wire;

import static io.gantry.wire.CapabilityFlags.CLIENT_MYSQL;
import static io.gantry.wire.CapabilityFlags.CLIENT_PROTOCOL_41;
import static io.gantry.wire.CapabilityFlags.CLIENT_SSL;

import io.netty.buffer.ByteBuf;

/**
 * {@code Protocol::SSLRequest}: the first 32 bytes of a {@link HandshakeResponse41}, sent with
 * {@link CapabilityFlags#CLIENT_SSL} to ask for TLS before the credentials. Both sides start the
 * TLS handshake right after it; the full response follows encrypted, with the next sequence id.
 *
 * @param capabilities        client capabilities; CLIENT_SSL and CLIENT_PROTOCOL_41 must be set
 * @param maxPacketSize       largest packet the client will send, unsigned 32 bits
 * @param characterSet        client collation id
 * @param mariaDbCapabilities MariaDB extended capabilities; 0 when CLIENT_MYSQL is set
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_connection_phase_packets_protocol_ssl_request.html">Protocol::SSLRequest</a>
 */
public record SslRequest(int capabilities, long maxPacketSize, int characterSet, int mariaDbCapabilities)
        implements ClientHandshake {

    /** Payload length of an SSL request. */
    public static final int PAYLOAD_LENGTH = 32;

    static final int FILLER = 19;

    /**
     * @throws IllegalArgumentException if CLIENT_SSL or CLIENT_PROTOCOL_41 is missing or a field
     *                                  is out of range
     */
    public SslRequest {
        if (!CapabilityFlags.has(capabilities, CLIENT_SSL | CLIENT_PROTOCOL_41)) {
            throw new IllegalArgumentException("an SSLRequest needs CLIENT_SSL and CLIENT_PROTOCOL_41, capabilities were "
                    + CapabilityFlags.describe(capabilities));
        }
        Checks.range("maxPacketSize", maxPacketSize, 0xFFFF_FFFFL);
        Checks.range("characterSet", characterSet, 0xFF);
        if (CapabilityFlags.has(capabilities, CLIENT_MYSQL) && mariaDbCapabilities != 0) {
            throw new IllegalArgumentException("MariaDB capabilities need CLIENT_MYSQL cleared");
        }
    }

    /**
     * Reads an SSL request.
     *
     * @throws MalformedPacketException if the payload is not 32 bytes or CLIENT_SSL is not set
     */
    public static SslRequest decode(ByteBuf buf) {
        if (buf.readableBytes() != PAYLOAD_LENGTH) {
            throw new MalformedPacketException("SSLRequest", "payload must be " + PAYLOAD_LENGTH
                    + " bytes, found " + buf.readableBytes());
        }
        int capabilities = (int) Buffers.readInt4(buf, "SSLRequest.client_flag");
        if (!CapabilityFlags.has(capabilities, CLIENT_SSL | CLIENT_PROTOCOL_41)) {
            throw new MalformedPacketException("SSLRequest.client_flag", "CLIENT_SSL and CLIENT_PROTOCOL_41 must be set, found "
                    + CapabilityFlags.describe(capabilities));
        }
        long maxPacket = Buffers.readInt4(buf, "SSLRequest.max_packet_size");
        int charset = Buffers.readInt1(buf, "SSLRequest.character_set");
        Buffers.readFixedBytes(buf, FILLER, "SSLRequest.filler");
        int extended = (int) Buffers.readInt4(buf, "SSLRequest.filler/mariadb_capabilities");
        return new SslRequest(capabilities, maxPacket, charset,
                CapabilityFlags.has(capabilities, CLIENT_MYSQL) ? 0 : extended);
    }

    @Override
    public void encode(ByteBuf buf) {
        writeFixedPart(buf, capabilities, maxPacketSize, characterSet, mariaDbCapabilities);
    }

    /** The 32 bytes an SSL request and a full response start with. */
    static void writeFixedPart(ByteBuf buf, int capabilities, long maxPacketSize, int characterSet,
            int mariaDbCapabilities) {
        buf.writeIntLE(capabilities);
        Buffers.writeFixedInt(buf, 4, maxPacketSize);
        buf.writeByte(characterSet);
        buf.writeZero(FILLER);
        buf.writeIntLE(mariaDbCapabilities);
    }
}
