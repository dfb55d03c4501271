package io.gantry.wire;

import io.netty.buffer.ByteBuf;
import java.util.Arrays;
import java.util.Objects;

/**
 * {@code Protocol::AuthSwitchRequest}: the server asks the client to authenticate with another
 * plugin, sending that plugin's first data (for the native and caching_sha2 plugins, a new
 * 20-byte seed followed by a NUL).
 *
 * @param pluginName the plugin to switch to, e.g. {@code mysql_native_password}
 * @param pluginData the plugin's initial data, as sent (see {@link #seed()})
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_connection_phase_packets_protocol_auth_switch_request.html">Protocol::AuthSwitchRequest</a>
 */
public record AuthSwitchRequest(String pluginName, byte[] pluginData) implements AuthExchangePacket {

    /** First byte of the packet. */
    public static final int HEADER = 0xFE;

    public AuthSwitchRequest {
        Objects.requireNonNull(pluginName, "pluginName");
        pluginData = Objects.requireNonNull(pluginData, "pluginData").clone();
    }

    /** The plugin data (a copy). */
    @Override
    public byte[] pluginData() {
        return pluginData.clone();
    }

    /** The plugin data without the trailing NUL servers add after a seed. */
    public byte[] seed() {
        int length = pluginData.length;
        if (length > 0 && pluginData[length - 1] == 0) {
            length--;
        }
        return Arrays.copyOf(pluginData, length);
    }

    /**
     * Reads an auth switch request.
     *
     * @throws MalformedPacketException if the header is not 0xFE or the plugin name is missing
     *                                  (the pre-4.1 one-byte "switch to mysql_old_password" form
     *                                  is reported this way)
     */
    public static AuthSwitchRequest decode(ByteBuf buf) {
        int header = Buffers.readInt1(buf, "AuthSwitchRequest.header");
        if (header != HEADER) {
            throw new MalformedPacketException("AuthSwitchRequest.header", "expected 0xFE, found 0x"
                    + Integer.toHexString(header));
        }
        if (!buf.isReadable()) {
            throw new MalformedPacketException("AuthSwitchRequest.plugin_name",
                    "missing: the old switch to mysql_old_password is not supported");
        }
        String plugin = Buffers.readNulTerminatedString(buf, "AuthSwitchRequest.plugin_name");
        return new AuthSwitchRequest(plugin, Buffers.readRestBytes(buf));
    }

    /** Writes this request. */
    public void encode(ByteBuf buf) {
        buf.writeByte(HEADER);
        Buffers.writeNulTerminatedString(buf, pluginName);
        buf.writeBytes(pluginData);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AuthSwitchRequest r && pluginName.equals(r.pluginName)
                && Arrays.equals(pluginData, r.pluginData);
    }

    @Override
    public int hashCode() {
        return 31 * pluginName.hashCode() + Arrays.hashCode(pluginData);
    }

    @Override
    public String toString() {
        return "AuthSwitchRequest[pluginName=" + pluginName + ", pluginData=<" + pluginData.length + " bytes>]";
    }
}
