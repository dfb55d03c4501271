package io.gantry.wire;

import static io.gantry.wire.CapabilityFlags.CLIENT_MYSQL;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH;
import static io.gantry.wire.CapabilityFlags.CLIENT_SECURE_CONNECTION;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * The server greeting, {@code Protocol::HandshakeV10}: the first packet of every connection.
 *
 * <p>The authentication seed ("scramble") travels in two parts, 8 bytes and the rest; this record
 * holds it joined (usually 20 bytes), without the trailing NUL the server adds. MariaDB servers
 * clear {@link CapabilityFlags#CLIENT_MYSQL} and put a second capability word in the last 4 of the
 * 10 reserved bytes; it is {@link #mariaDbCapabilities()}, 0 for MySQL.
 *
 * @param serverVersion       e.g. {@code 8.4.3} or {@code 5.5.5-11.4.5-MariaDB}
 * @param connectionId        the server's thread id, unsigned 32 bits
 * @param authPluginData      the seed, at least 8 bytes (exactly 8 without CLIENT_SECURE_CONNECTION,
 *                            exactly 20 with it but without CLIENT_PLUGIN_AUTH)
 * @param capabilities        the server's capability flags
 * @param characterSet        the server's default collation id (low byte)
 * @param statusFlags         server status flags
 * @param mariaDbCapabilities MariaDB extended capabilities; must be 0 when CLIENT_MYSQL is set
 * @param authPluginName      default authentication plugin, empty without CLIENT_PLUGIN_AUTH
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_connection_phase_packets_protocol_handshake_v10.html">Protocol::HandshakeV10</a>
 */
public record HandshakeV10(
        String serverVersion,
        long connectionId,
        byte[] authPluginData,
        int capabilities,
        int characterSet,
        int statusFlags,
        int mariaDbCapabilities,
        String authPluginName) {

    /** The only protocol version this record handles. */
    public static final int PROTOCOL_VERSION = 10;

    private static final int SEED_PART_1 = 8;
    private static final int RESERVED = 6;
    private static final int MIN_SEED_PART_2 = 13;

    /**
     * @throws IllegalArgumentException if a field is out of range or cannot be encoded under
     *                                  {@code capabilities}
     */
    public HandshakeV10 {
        Objects.requireNonNull(serverVersion, "serverVersion");
        Objects.requireNonNull(authPluginData, "authPluginData");
        Objects.requireNonNull(authPluginName, "authPluginName");
        authPluginData = authPluginData.clone();
        if (connectionId < 0 || connectionId > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("connectionId must fit in 32 unsigned bits, was " + connectionId);
        }
        Checks.range("characterSet", characterSet, 0xFF);
        Checks.range("statusFlags", statusFlags, 0xFFFF);
        if (authPluginData.length < SEED_PART_1 || authPluginData.length > 254) {
            throw new IllegalArgumentException("authPluginData must be 8 to 254 bytes, was " + authPluginData.length);
        }
        if (!CapabilityFlags.has(capabilities, CLIENT_SECURE_CONNECTION) && authPluginData.length != SEED_PART_1) {
            throw new IllegalArgumentException("without CLIENT_SECURE_CONNECTION the seed is 8 bytes, was "
                    + authPluginData.length);
        }
        if (CapabilityFlags.has(capabilities, CLIENT_SECURE_CONNECTION)
                && !CapabilityFlags.has(capabilities, CLIENT_PLUGIN_AUTH) && authPluginData.length != 20) {
            throw new IllegalArgumentException("without CLIENT_PLUGIN_AUTH the seed is 20 bytes, was "
                    + authPluginData.length);
        }
        if (CapabilityFlags.has(capabilities, CLIENT_MYSQL) && mariaDbCapabilities != 0) {
            throw new IllegalArgumentException("MariaDB capabilities need CLIENT_MYSQL cleared");
        }
        if (!CapabilityFlags.has(capabilities, CLIENT_PLUGIN_AUTH) && !authPluginName.isEmpty()) {
            throw new IllegalArgumentException("an auth plugin name needs CLIENT_PLUGIN_AUTH");
        }
    }

    /** The seed (a copy). */
    @Override
    public byte[] authPluginData() {
        return authPluginData.clone();
    }

    /** Where {@link #encode} writes the connection id: after the protocol version and the NUL-terminated version. */
    int connectionIdOffset() {
        return 1 + serverVersion.getBytes(StandardCharsets.UTF_8).length + 1;
    }

    /**
     * Where {@link #encode} writes the seed's second part (after the id, part 1, a filler, the capabilities, the
     * collation, the status, the data length, the reserved bytes and MariaDB's capabilities); -1 when it has none.
     */
    int seedPart2Offset() {
        return CapabilityFlags.has(capabilities, CLIENT_SECURE_CONNECTION)
                ? connectionIdOffset() + 4 + SEED_PART_1 + 1 + 2 + 1 + 2 + 2 + 1 + RESERVED + 4
                : -1;
    }

    /** The capabilities as one 64-bit value: MariaDB's extended word in the upper half. */
    public long fullCapabilities() {
        return (capabilities & 0xFFFF_FFFFL) | ((long) mariaDbCapabilities << 32);
    }

    /**
     * Reads a greeting.
     *
     * @throws MalformedPacketException naming the field, including when the packet is not
     *                                  protocol version 10 (an ERR packet sent instead of a greeting
     *                                  is reported as such)
     */
    public static HandshakeV10 decode(ByteBuf buf) {
        int protocol = Buffers.readInt1(buf, "HandshakeV10.protocol_version");
        if (protocol != PROTOCOL_VERSION) {
            throw new MalformedPacketException("HandshakeV10.protocol_version", "expected 10, found "
                    + protocol + (protocol == ErrPacket.HEADER ? " (the server sent an ERR packet instead)" : ""));
        }
        String version = Buffers.readNulTerminatedString(buf, "HandshakeV10.server_version");
        long connectionId = Buffers.readInt4(buf, "HandshakeV10.thread_id");
        byte[] part1 = Buffers.readFixedBytes(buf, SEED_PART_1, "HandshakeV10.auth_plugin_data_part_1");
        Buffers.readInt1(buf, "HandshakeV10.filler");
        int capabilities = Buffers.readInt2(buf, "HandshakeV10.capability_flags_1");
        int charset = Buffers.readInt1(buf, "HandshakeV10.character_set");
        int status = Buffers.readInt2(buf, "HandshakeV10.status_flags");
        capabilities |= Buffers.readInt2(buf, "HandshakeV10.capability_flags_2") << 16;
        int dataLength = Buffers.readInt1(buf, "HandshakeV10.auth_plugin_data_len");
        Buffers.readFixedBytes(buf, RESERVED, "HandshakeV10.reserved");
        int extended = (int) Buffers.readInt4(buf, "HandshakeV10.reserved/mariadb_capabilities");
        int mariaDb = CapabilityFlags.has(capabilities, CLIENT_MYSQL) ? 0 : extended;
        byte[] seed = part1;
        if (CapabilityFlags.has(capabilities, CLIENT_SECURE_CONNECTION)) {
            int part2Length = Math.max(MIN_SEED_PART_2, dataLength - SEED_PART_1);
            byte[] part2 = Buffers.readFixedBytes(buf, part2Length, "HandshakeV10.auth_plugin_data_part_2");
            // auth_plugin_data_len counts the seed plus its trailing NUL. Without CLIENT_PLUGIN_AUTH (or without a
            // length) the seed is 20 bytes whatever the length byte says, as libmysqlclient reads it: a length byte
            // left over from another layout must not make a seed the record refuses.
            int seedPart2 = CapabilityFlags.has(capabilities, CLIENT_PLUGIN_AUTH) && dataLength > SEED_PART_1
                    ? dataLength - SEED_PART_1 - 1
                    : MIN_SEED_PART_2 - 1;
            seed = Arrays.copyOf(part1, SEED_PART_1 + seedPart2);
            System.arraycopy(part2, 0, seed, SEED_PART_1, seedPart2);
        }
        String pluginName = "";
        if (CapabilityFlags.has(capabilities, CLIENT_PLUGIN_AUTH)) {
            // Some 5.5 servers omitted the terminating NUL; take the rest of the packet then.
            pluginName = buf.bytesBefore((byte) 0) >= 0
                    ? Buffers.readNulTerminatedString(buf, "HandshakeV10.auth_plugin_name")
                    : Buffers.readRestString(buf);
        }
        return new HandshakeV10(version, connectionId, seed, capabilities, charset, status, mariaDb, pluginName);
    }

    /** Writes this greeting. */
    public void encode(ByteBuf buf) {
        buf.writeByte(PROTOCOL_VERSION);
        Buffers.writeNulTerminatedString(buf, serverVersion);
        Buffers.writeFixedInt(buf, 4, connectionId);
        buf.writeBytes(authPluginData, 0, SEED_PART_1);
        buf.writeByte(0);
        buf.writeShortLE(capabilities & 0xFFFF);
        buf.writeByte(characterSet);
        buf.writeShortLE(statusFlags);
        buf.writeShortLE(capabilities >>> 16);
        boolean pluginAuth = CapabilityFlags.has(capabilities, CLIENT_PLUGIN_AUTH);
        int dataLength = pluginAuth ? authPluginData.length + 1 : 0;
        buf.writeByte(dataLength);
        buf.writeZero(RESERVED);
        buf.writeIntLE(mariaDbCapabilities);
        if (CapabilityFlags.has(capabilities, CLIENT_SECURE_CONNECTION)) {
            int part2Length = Math.max(MIN_SEED_PART_2, dataLength - SEED_PART_1);
            int seedPart2 = authPluginData.length - SEED_PART_1;
            buf.writeBytes(authPluginData, SEED_PART_1, seedPart2);
            buf.writeZero(part2Length - seedPart2);
        }
        if (pluginAuth) {
            Buffers.writeNulTerminatedString(buf, authPluginName);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HandshakeV10 h
                && serverVersion.equals(h.serverVersion)
                && connectionId == h.connectionId
                && Arrays.equals(authPluginData, h.authPluginData)
                && capabilities == h.capabilities
                && characterSet == h.characterSet
                && statusFlags == h.statusFlags
                && mariaDbCapabilities == h.mariaDbCapabilities
                && authPluginName.equals(h.authPluginName);
    }

    @Override
    public int hashCode() {
        return Objects.hash(serverVersion, connectionId, Arrays.hashCode(authPluginData), capabilities,
                characterSet, statusFlags, mariaDbCapabilities, authPluginName);
    }

    @Override
    public String toString() {
        return "HandshakeV10[serverVersion=" + serverVersion + ", connectionId=" + connectionId
                + ", authPluginData=" + HexFormat.of().formatHex(authPluginData)
                + ", capabilities=" + CapabilityFlags.describe(capabilities)
                + ", characterSet=" + characterSet + ", statusFlags=" + ServerStatus.describe(statusFlags)
                + ", mariaDbCapabilities=0x" + Integer.toHexString(mariaDbCapabilities)
                + ", authPluginName=" + authPluginName + "]";
    }
}
