package io.gantry.wire;

import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_ATTRS;
import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_WITH_DB;
import static io.gantry.wire.CapabilityFlags.CLIENT_MYSQL;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA;
import static io.gantry.wire.CapabilityFlags.CLIENT_PROTOCOL_41;
import static io.gantry.wire.CapabilityFlags.CLIENT_SECURE_CONNECTION;
import static io.gantry.wire.CapabilityFlags.CLIENT_ZSTD_COMPRESSION_ALGORITHM;

import io.netty.buffer.ByteBuf;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * {@code Protocol::HandshakeResponse41}: the client's credentials and options.
 *
 * <p>The auth response travels in one of three encodings, chosen by the capabilities: length-encoded
 * (CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA), one length byte (CLIENT_SECURE_CONNECTION), or
 * NUL-terminated (neither). Optional fields are present exactly when their flag is set; an absent
 * string is empty and absent attributes are an empty map, never {@code null}.
 *
 * @param capabilities         client capabilities; CLIENT_PROTOCOL_41 must be set
 * @param maxPacketSize        largest packet the client will send, unsigned 32 bits
 * @param characterSet         client collation id
 * @param mariaDbCapabilities  MariaDB extended capabilities; 0 when CLIENT_MYSQL is set
 * @param username             the login name
 * @param authResponse         the auth plugin's answer to the seed (e.g. a 20-byte scramble)
 * @param database             initial schema (CLIENT_CONNECT_WITH_DB), else empty
 * @param authPluginName       plugin the response was made with (CLIENT_PLUGIN_AUTH), else empty
 * @param connectAttributes    connection attributes in wire order (CLIENT_CONNECT_ATTRS)
 * @param zstdCompressionLevel zstd level (CLIENT_ZSTD_COMPRESSION_ALGORITHM), else 0
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_connection_phase_packets_protocol_handshake_response.html">Protocol::HandshakeResponse</a>
 */
public record HandshakeResponse41(
        int capabilities,
        long maxPacketSize,
        int characterSet,
        int mariaDbCapabilities,
        String username,
        byte[] authResponse,
        String database,
        String authPluginName,
        Map<String, String> connectAttributes,
        int zstdCompressionLevel) implements ClientHandshake {

    /**
     * @throws IllegalArgumentException if a field is out of range or cannot be encoded under
     *                                  {@code capabilities} (e.g. a database without
     *                                  CLIENT_CONNECT_WITH_DB)
     */
    public HandshakeResponse41 {
        Objects.requireNonNull(username, "username");
        Objects.requireNonNull(authResponse, "authResponse");
        Objects.requireNonNull(database, "database");
        Objects.requireNonNull(authPluginName, "authPluginName");
        Objects.requireNonNull(connectAttributes, "connectAttributes");
        authResponse = authResponse.clone();
        connectAttributes = Collections.unmodifiableMap(new LinkedHashMap<>(connectAttributes));
        if (!has(capabilities, CLIENT_PROTOCOL_41)) {
            throw new IllegalArgumentException("HandshakeResponse41 needs CLIENT_PROTOCOL_41");
        }
        Checks.range("maxPacketSize", maxPacketSize, 0xFFFF_FFFFL);
        Checks.range("characterSet", characterSet, 0xFF);
        Checks.range("zstdCompressionLevel", zstdCompressionLevel, 0xFF);
        if (has(capabilities, CLIENT_MYSQL) && mariaDbCapabilities != 0) {
            throw new IllegalArgumentException("MariaDB capabilities need CLIENT_MYSQL cleared");
        }
        requireFlag(capabilities, CLIENT_CONNECT_WITH_DB, !database.isEmpty(), "a database");
        requireFlag(capabilities, CLIENT_PLUGIN_AUTH, !authPluginName.isEmpty(), "an auth plugin name");
        requireFlag(capabilities, CLIENT_CONNECT_ATTRS, !connectAttributes.isEmpty(), "connect attributes");
        requireFlag(capabilities, CLIENT_ZSTD_COMPRESSION_ALGORITHM, zstdCompressionLevel != 0, "a zstd level");
        if (!has(capabilities, CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA)) {
            if (has(capabilities, CLIENT_SECURE_CONNECTION) && authResponse.length > 0xFF) {
                throw new IllegalArgumentException("an auth response over 255 bytes needs "
                        + "CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA, was " + authResponse.length);
            }
            if (!has(capabilities, CLIENT_SECURE_CONNECTION) && indexOfNul(authResponse) >= 0) {
                throw new IllegalArgumentException("a NUL-terminated auth response cannot contain NUL");
            }
        }
    }

    /** The auth response (a copy). */
    @Override
    public byte[] authResponse() {
        return authResponse.clone();
    }

    /**
     * Reads a full handshake response.
     *
     * @throws MalformedPacketException naming the field that could not be read; a client without
     *                                  CLIENT_PROTOCOL_41 is reported as unsupported
     */
    public static HandshakeResponse41 decode(ByteBuf buf) {
        int capabilities = (int) Buffers.readInt4(buf, "HandshakeResponse41.client_flag");
        if (!has(capabilities, CLIENT_PROTOCOL_41)) {
            throw new MalformedPacketException("HandshakeResponse41.client_flag",
                    "CLIENT_PROTOCOL_41 not set (found " + CapabilityFlags.describe(capabilities)
                            + "); the pre-4.1 HandshakeResponse320 is not supported");
        }
        long maxPacket = Buffers.readInt4(buf, "HandshakeResponse41.max_packet_size");
        int charset = Buffers.readInt1(buf, "HandshakeResponse41.character_set");
        Buffers.readFixedBytes(buf, SslRequest.FILLER, "HandshakeResponse41.filler");
        int extended = (int) Buffers.readInt4(buf, "HandshakeResponse41.filler/mariadb_capabilities");
        int mariaDb = has(capabilities, CLIENT_MYSQL) ? 0 : extended;
        String user = Buffers.readNulTerminatedString(buf, "HandshakeResponse41.username");
        byte[] auth;
        if (has(capabilities, CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA)) {
            auth = Buffers.readLenEncBytes(buf, "HandshakeResponse41.auth_response");
        } else if (has(capabilities, CLIENT_SECURE_CONNECTION)) {
            int length = Buffers.readInt1(buf, "HandshakeResponse41.auth_response_length");
            auth = Buffers.readFixedBytes(buf, length, "HandshakeResponse41.auth_response");
        } else {
            auth = Buffers.readNulTerminatedBytes(buf, "HandshakeResponse41.auth_response");
        }
        String database = has(capabilities, CLIENT_CONNECT_WITH_DB)
                ? Buffers.readNulTerminatedString(buf, "HandshakeResponse41.database")
                : "";
        String plugin = "";
        if (has(capabilities, CLIENT_PLUGIN_AUTH) && buf.isReadable()) {
            // Like mysqld, accept a response that stops before the plugin name.
            plugin = Buffers.readNulTerminatedString(buf, "HandshakeResponse41.client_plugin_name");
        }
        Map<String, String> attributes = new LinkedHashMap<>();
        if (has(capabilities, CLIENT_CONNECT_ATTRS) && buf.isReadable()) {
            ByteBuf block = Buffers.readLenEncSlice(buf, "HandshakeResponse41.connect_attrs");
            while (block.isReadable()) {
                String key = Buffers.readLenEncString(block, "HandshakeResponse41.connect_attrs.key");
                attributes.put(key, Buffers.readLenEncString(block, "HandshakeResponse41.connect_attrs.value"));
            }
        }
        int zstd = has(capabilities, CLIENT_ZSTD_COMPRESSION_ALGORITHM)
                ? Buffers.readInt1(buf, "HandshakeResponse41.zstd_compression_level")
                : 0;
        return new HandshakeResponse41(capabilities, maxPacket, charset, mariaDb, user, auth, database,
                plugin, attributes, zstd);
    }

    @Override
    public void encode(ByteBuf buf) {
        SslRequest.writeFixedPart(buf, capabilities, maxPacketSize, characterSet, mariaDbCapabilities);
        Buffers.writeNulTerminatedString(buf, username);
        if (has(capabilities, CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA)) {
            Buffers.writeLenEncBytes(buf, authResponse);
        } else if (has(capabilities, CLIENT_SECURE_CONNECTION)) {
            buf.writeByte(authResponse.length);
            buf.writeBytes(authResponse);
        } else {
            Buffers.writeNulTerminatedBytes(buf, authResponse);
        }
        if (has(capabilities, CLIENT_CONNECT_WITH_DB)) {
            Buffers.writeNulTerminatedString(buf, database);
        }
        if (has(capabilities, CLIENT_PLUGIN_AUTH)) {
            Buffers.writeNulTerminatedString(buf, authPluginName);
        }
        if (has(capabilities, CLIENT_CONNECT_ATTRS)) {
            ByteBuf block = buf.alloc().buffer();
            try {
                connectAttributes.forEach((key, value) -> {
                    Buffers.writeLenEncString(block, key);
                    Buffers.writeLenEncString(block, value);
                });
                Buffers.writeLenEncInt(buf, block.readableBytes());
                buf.writeBytes(block);
            } finally {
                block.release();
            }
        }
        if (has(capabilities, CLIENT_ZSTD_COMPRESSION_ALGORITHM)) {
            buf.writeByte(zstdCompressionLevel);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HandshakeResponse41 r
                && capabilities == r.capabilities
                && maxPacketSize == r.maxPacketSize
                && characterSet == r.characterSet
                && mariaDbCapabilities == r.mariaDbCapabilities
                && username.equals(r.username)
                && Arrays.equals(authResponse, r.authResponse)
                && database.equals(r.database)
                && authPluginName.equals(r.authPluginName)
                && connectAttributes.equals(r.connectAttributes)
                && zstdCompressionLevel == r.zstdCompressionLevel;
    }

    @Override
    public int hashCode() {
        return Objects.hash(capabilities, maxPacketSize, characterSet, mariaDbCapabilities, username,
                Arrays.hashCode(authResponse), database, authPluginName, connectAttributes, zstdCompressionLevel);
    }

    /** Never prints the auth response itself, only its length: it is a password equivalent. */
    @Override
    public String toString() {
        return "HandshakeResponse41[capabilities=" + CapabilityFlags.describe(capabilities)
                + ", maxPacketSize=" + maxPacketSize + ", characterSet=" + characterSet
                + ", mariaDbCapabilities=0x" + Integer.toHexString(mariaDbCapabilities)
                + ", username=" + username + ", authResponse=<" + authResponse.length + " bytes>"
                + ", database=" + database + ", authPluginName=" + authPluginName
                + ", connectAttributes=" + connectAttributes + ", zstdCompressionLevel=" + zstdCompressionLevel + "]";
    }

    private static boolean has(int capabilities, int flag) {
        return CapabilityFlags.has(capabilities, flag);
    }

    private static void requireFlag(int capabilities, int flag, boolean present, String what) {
        if (present && !has(capabilities, flag)) {
            throw new IllegalArgumentException(what + " needs " + CapabilityFlags.describe(flag));
        }
    }

    private static int indexOfNul(byte[] bytes) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == 0) {
                return i;
            }
        }
        return -1;
    }
}
