package io.gantry.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class AuthExchangePacketTest {

    private static final int CAPS = CapabilityFlags.CLIENT_PROTOCOL_41 | CapabilityFlags.CLIENT_SESSION_TRACK;
    private static final byte[] SEED_WITH_NUL = "abcdefghijklmnopqrst\0".getBytes(StandardCharsets.US_ASCII);

    @Test
    void authSwitchRequestRoundTripsAndExposesTheSeedWithoutItsNul() {
        AuthSwitchRequest request = new AuthSwitchRequest(NativePassword.PLUGIN_NAME, SEED_WITH_NUL);
        byte[] wire = CodecAssertions.bytes(request::encode);
        assertThat(wire[0]).isEqualTo((byte) 0xFE);
        AuthSwitchRequest decoded = CodecAssertions.decode(wire, AuthSwitchRequest::decode);
        assertThat(decoded).isEqualTo(request);
        assertThat(decoded.pluginData()).hasSize(21);
        assertThat(decoded.seed()).hasSize(20).isEqualTo("abcdefghijklmnopqrst".getBytes(StandardCharsets.US_ASCII));
        assertThat(decoded.toString()).contains("mysql_native_password").doesNotContain("abcdef");
    }

    @Test
    void oldStyleSwitchAndMissingTerminatorAreNamed() {
        assertThatThrownBy(() -> CodecAssertions.decode(new byte[] {(byte) 0xFE}, AuthSwitchRequest::decode))
                .isInstanceOf(MalformedPacketException.class)
                .hasMessage("AuthSwitchRequest.plugin_name: missing: the old switch to mysql_old_password is not supported");
        assertThatThrownBy(() -> CodecAssertions.decode(new byte[] {(byte) 0xFE, 'a'}, AuthSwitchRequest::decode))
                .hasMessageStartingWith("AuthSwitchRequest.plugin_name: no NUL terminator");
        assertThatThrownBy(() -> CodecAssertions.decode(new byte[] {1}, AuthSwitchRequest::decode))
                .hasMessage("AuthSwitchRequest.header: expected 0xFE, found 0x1");
    }

    @Test
    void authMoreDataRoundTripsAndRecognisesCachingSha2Markers() {
        AuthMoreData fast = new AuthMoreData(new byte[] {CachingSha2Password.FAST_AUTH_SUCCESS});
        byte[] wire = CodecAssertions.bytes(fast::encode);
        assertThat(wire).containsExactly(0x01, 0x03);
        AuthMoreData decoded = CodecAssertions.decode(wire, AuthMoreData::decode);
        assertThat(decoded).isEqualTo(fast);
        assertThat(decoded.isFastAuthSuccess()).isTrue();
        assertThat(decoded.isPerformFullAuthentication()).isFalse();
        AuthMoreData full = new AuthMoreData(new byte[] {CachingSha2Password.PERFORM_FULL_AUTHENTICATION});
        assertThat(full.isPerformFullAuthentication()).isTrue();
        assertThat(new AuthMoreData("-----BEGIN PUBLIC KEY-----".getBytes(StandardCharsets.US_ASCII)).isFastAuthSuccess())
                .isFalse();
    }

    @Test
    void dispatchesOnTheFirstByte() {
        assertThat(decode(CodecAssertions.bytes(b -> OkPacket.of(0, 0, 2, 0).encode(b, CAPS))))
                .isEqualTo(OkPacket.of(0, 0, 2, 0));
        assertThat(decode(CodecAssertions.bytes(ErrPacket.of(1045, "28000", "Access denied")::encode)))
                .isEqualTo(ErrPacket.of(1045, "28000", "Access denied"));
        assertThat(decode(new byte[] {1, 4})).isInstanceOf(AuthMoreData.class);
        assertThat(decode(CodecAssertions.bytes(new AuthSwitchRequest("x", new byte[0])::encode)))
                .isInstanceOf(AuthSwitchRequest.class);
        assertThatThrownBy(() -> decode(new byte[] {7}))
                .isInstanceOf(MalformedPacketException.class)
                .hasMessage("auth exchange header: expected 0x00, 0x01, 0xFE or 0xFF, found 0x7");
        assertThatThrownBy(() -> decode(new byte[0])).hasMessageStartingWith("auth exchange header: needs 1 bytes");
    }

    @Test
    void flippedBytesFailClearly() {
        byte[] wire = CodecAssertions.bytes(new AuthSwitchRequest(CachingSha2Password.PLUGIN_NAME, SEED_WITH_NUL)::encode);
        CodecAssertions.assertFlipsFailClearly(wire, b -> AuthExchangePacket.decode(b, CAPS));
        CodecAssertions.assertTruncationsFailClearly(wire, b -> AuthExchangePacket.decode(b, CAPS));
    }

    private static AuthExchangePacket decode(byte[] wire) {
        return CodecAssertions.decode(wire, b -> AuthExchangePacket.decode(b, CAPS));
    }
}
