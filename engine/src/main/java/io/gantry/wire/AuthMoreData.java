package io.gantry.wire;

import io.netty.buffer.ByteBuf;
import java.util.Arrays;
import java.util.Objects;

/**
 * {@code Protocol::AuthMoreData}: extra data from the current auth plugin, e.g. caching_sha2's
 * one-byte fast-auth-success / perform-full-authentication markers or an RSA public key in PEM.
 *
 * @param data the plugin data after the 0x01 header
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_connection_phase_packets_protocol_auth_more_data.html">Protocol::AuthMoreData</a>
 */
public record AuthMoreData(byte[] data) implements AuthExchangePacket {

    /** First byte of the packet. */
    public static final int HEADER = 0x01;

    public AuthMoreData {
        data = Objects.requireNonNull(data, "data").clone();
    }

    /** The plugin data (a copy). */
    @Override
    public byte[] data() {
        return data.clone();
    }

    /** True for caching_sha2's "the scramble matched the cache; OK follows". */
    public boolean isFastAuthSuccess() {
        return data.length == 1 && data[0] == CachingSha2Password.FAST_AUTH_SUCCESS;
    }

    /** True for caching_sha2's "send the password in full (over TLS, or RSA-encrypted)". */
    public boolean isPerformFullAuthentication() {
        return data.length == 1 && data[0] == CachingSha2Password.PERFORM_FULL_AUTHENTICATION;
    }

    /**
     * Reads the packet.
     *
     * @throws MalformedPacketException if the header is not 0x01
     */
    public static AuthMoreData decode(ByteBuf buf) {
        int header = Buffers.readInt1(buf, "AuthMoreData.header");
        if (header != HEADER) {
            throw new MalformedPacketException("AuthMoreData.header", "expected 0x01, found 0x"
                    + Integer.toHexString(header));
        }
        return new AuthMoreData(Buffers.readRestBytes(buf));
    }

    /** Writes the packet. */
    public void encode(ByteBuf buf) {
        buf.writeByte(HEADER);
        buf.writeBytes(data);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AuthMoreData m && Arrays.equals(data, m.data);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(data);
    }

    @Override
    public String toString() {
        return "AuthMoreData[data=<" + data.length + " bytes>]";
    }
}
