package io.gantry.wire;

import io.netty.buffer.ByteBuf;

/**
 * The client's answer to {@link HandshakeV10}: either the full {@link HandshakeResponse41} or the
 * short {@link SslRequest} that asks to switch to TLS first (the full response then follows over
 * TLS).
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_connection_phase.html">Connection Phase</a>
 */
public sealed interface ClientHandshake permits HandshakeResponse41, SslRequest {

    /** The client's capability flags. */
    int capabilities();

    /** The largest packet the client will send, in bytes. */
    long maxPacketSize();

    /** The client's collation id. */
    int characterSet();

    /** MariaDB extended capabilities, 0 from MySQL clients. */
    int mariaDbCapabilities();

    /**
     * Reads either form. A payload of exactly {@value SslRequest#PAYLOAD_LENGTH} bytes is an
     * {@code SSLRequest}: a full response is always longer (it carries at least a user name
     * terminator and an auth response length).
     *
     * @throws MalformedPacketException naming the field that could not be read
     */
    static ClientHandshake decode(ByteBuf payload) {
        if (payload.readableBytes() == SslRequest.PAYLOAD_LENGTH) {
            return SslRequest.decode(payload);
        }
        return HandshakeResponse41.decode(payload);
    }

    /** Writes this handshake. */
    void encode(ByteBuf buf);
}
