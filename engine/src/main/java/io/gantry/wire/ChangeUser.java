package io.gantry.wire;

import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_ATTRS;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH;
import static io.gantry.wire.CapabilityFlags.CLIENT_PROTOCOL_41;
import static io.gantry.wire.CapabilityFlags.CLIENT_SECURE_CONNECTION;

import io.netty.buffer.ByteBuf;
import java.util.Objects;

/**
 * COM_CHANGE_USER: log in again as another (or the same) account on the open connection, resetting the session.
 * Connection attributes at the end are read past, not kept.
 *
 * @param username       the account to switch to
 * @param authResponse   the auth plugin's answer to the connection's original seed
 * @param database       the initial database, or empty
 * @param characterSet   the collation id (0 when the client sent none)
 * @param authPluginName the plugin the response was made with, or empty
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_change_user.html">COM_CHANGE_USER</a>
 */
public record ChangeUser(String username, byte[] authResponse, String database, int characterSet,
                         String authPluginName) {

    public ChangeUser {
        Objects.requireNonNull(username, "username");
        authResponse = authResponse.clone();
        Objects.requireNonNull(database, "database");
        Objects.requireNonNull(authPluginName, "authPluginName");
    }

    @Override
    public byte[] authResponse() {
        return authResponse.clone();
    }

    /**
     * Reads the command (the command byte included) under the session's negotiated capabilities.
     *
     * @throws MalformedPacketException naming the field that could not be read
     */
    public static ChangeUser decode(ByteBuf buf, int capabilities) {
        int command = Buffers.readInt1(buf, "COM_CHANGE_USER.command");
        if (command != CommandType.COM_CHANGE_USER.code()) {
            throw new MalformedPacketException("COM_CHANGE_USER.command", "expected 0x11, found 0x"
                    + Integer.toHexString(command));
        }
        String username = Buffers.readNulTerminatedString(buf, "COM_CHANGE_USER.user");
        byte[] authResponse;
        if ((capabilities & CLIENT_SECURE_CONNECTION) != 0) {
            int length = Buffers.readInt1(buf, "COM_CHANGE_USER.auth_plugin_data_len");
            authResponse = Buffers.readFixedBytes(buf, length, "COM_CHANGE_USER.auth_plugin_data");
        } else {
            authResponse = Buffers.readNulTerminatedBytes(buf, "COM_CHANGE_USER.auth_plugin_data");
        }
        String database = Buffers.readNulTerminatedString(buf, "COM_CHANGE_USER.database");
        int characterSet = 0;
        String plugin = "";
        // The optional tail: older clients stop after the database.
        if (buf.isReadable() && (capabilities & CLIENT_PROTOCOL_41) != 0) {
            characterSet = Buffers.readInt2(buf, "COM_CHANGE_USER.character_set") & 0xFF;
            if (buf.isReadable() && (capabilities & CLIENT_PLUGIN_AUTH) != 0) {
                plugin = Buffers.readNulTerminatedString(buf, "COM_CHANGE_USER.auth_plugin_name");
            }
            if (buf.isReadable() && (capabilities & CLIENT_CONNECT_ATTRS) != 0) {
                buf.skipBytes(buf.readableBytes());
            }
        }
        return new ChangeUser(username, authResponse, database, characterSet, plugin);
    }

    /** Writes the command, command byte included, with CLIENT_SECURE_CONNECTION and CLIENT_PLUGIN_AUTH framing. */
    public void encode(ByteBuf buf) {
        buf.writeByte(CommandType.COM_CHANGE_USER.code());
        Buffers.writeNulTerminatedString(buf, username);
        buf.writeByte(authResponse.length);
        buf.writeBytes(authResponse);
        Buffers.writeNulTerminatedString(buf, database);
        buf.writeShortLE(characterSet);
        Buffers.writeNulTerminatedString(buf, authPluginName);
    }
}
