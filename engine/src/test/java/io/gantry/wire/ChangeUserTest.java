package io.gantry.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

class ChangeUserTest {

    private static final int CAPABILITIES = CapabilityFlags.CLIENT_PROTOCOL_41 | CapabilityFlags.CLIENT_SECURE_CONNECTION
            | CapabilityFlags.CLIENT_PLUGIN_AUTH | CapabilityFlags.CLIENT_CONNECT_ATTRS;

    @Test
    void roundTrips() {
        ChangeUser original = new ChangeUser("reader", new byte[] {1, 2, 3, 4}, "shop", 45,
                NativePassword.PLUGIN_NAME);
        ByteBuf buf = Unpooled.buffer();
        original.encode(buf);
        ChangeUser decoded = ChangeUser.decode(buf, CAPABILITIES);
        assertThat(decoded.username()).isEqualTo("reader");
        assertThat(decoded.authResponse()).containsExactly(1, 2, 3, 4);
        assertThat(decoded.database()).isEqualTo("shop");
        assertThat(decoded.characterSet()).isEqualTo(45);
        assertThat(decoded.authPluginName()).isEqualTo(NativePassword.PLUGIN_NAME);
        buf.release();
    }

    @Test
    void olderClientsMayStopAfterTheDatabase() {
        ByteBuf buf = Unpooled.buffer().writeByte(0x11).writeBytes("u\0".getBytes()).writeByte(0)
                .writeBytes("\0".getBytes());
        ChangeUser decoded = ChangeUser.decode(buf, CAPABILITIES);
        assertThat(decoded.username()).isEqualTo("u");
        assertThat(decoded.authPluginName()).isEmpty();
        assertThat(decoded.characterSet()).isZero();
        buf.release();
    }

    @Test
    void truncatedCommandNamesTheField() {
        ByteBuf buf = Unpooled.buffer().writeByte(0x11).writeBytes("user\0".getBytes()).writeByte(20).writeByte(1);
        assertThatThrownBy(() -> ChangeUser.decode(buf, CAPABILITIES))
                .isInstanceOf(MalformedPacketException.class)
                .hasMessageContaining("COM_CHANGE_USER.auth_plugin_data");
        buf.release();
    }
}
