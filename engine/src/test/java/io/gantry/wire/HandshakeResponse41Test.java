package io.gantry.wire;

import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_ATTRS;
import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_WITH_DB;
import static io.gantry.wire.CapabilityFlags.CLIENT_LONG_PASSWORD;
import static io.gantry.wire.CapabilityFlags.CLIENT_MYSQL;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA;
import static io.gantry.wire.CapabilityFlags.CLIENT_PROTOCOL_41;
import static io.gantry.wire.CapabilityFlags.CLIENT_SECURE_CONNECTION;
import static io.gantry.wire.CapabilityFlags.CLIENT_SSL;
import static io.gantry.wire.CapabilityFlags.CLIENT_ZSTD_COMPRESSION_ALGORITHM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class HandshakeResponse41Test {

    private static final int BASE = CLIENT_LONG_PASSWORD | CLIENT_PROTOCOL_41;
    private static final int FULL = BASE | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH
            | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA | CLIENT_CONNECT_WITH_DB | CLIENT_CONNECT_ATTRS;
    private static final byte[] SCRAMBLE = NativePassword.scramble("secret".getBytes(StandardCharsets.UTF_8),
            "abcdefghijklmnopqrst".getBytes(StandardCharsets.US_ASCII));

    static HandshakeResponse41 full() {
        Map<String, String> attrs = new LinkedHashMap<>();
        attrs.put("_client_name", "libmariadb");
        attrs.put("_os", "Linux");
        attrs.put("program_name", "mariadb");
        return new HandshakeResponse41(FULL, 16_777_216L, 45, 0, "app_user", SCRAMBLE, "shop",
                NativePassword.PLUGIN_NAME, attrs, 0);
    }

    @ParameterizedTest
    @ValueSource(ints = {
        BASE | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA,
        BASE | CLIENT_SECURE_CONNECTION,
        BASE,
    })
    void authResponseRoundTripsInAllThreeEncodings(int capabilities) {
        HandshakeResponse41 response = new HandshakeResponse41(capabilities, 0xFFFF_FFFFL, 8, 0, "u",
                "pw-bytes".getBytes(StandardCharsets.US_ASCII), "", "", Map.of(), 0);
        byte[] wire = CodecAssertions.bytes(response::encode);
        int userEnd = 32 + 2;
        if (capabilities == BASE) {
            assertThat(wire[wire.length - 1]).as("NUL-terminated auth response").isZero();
        } else {
            assertThat(wire[userEnd]).as("length prefix").isEqualTo((byte) 8);
        }
        CodecAssertions.assertDecoded(wire, HandshakeResponse41::decode).isEqualTo(response);
    }

    @Test
    void fullResponseWithDatabasePluginAndAttributesRoundTripsInOrder() {
        HandshakeResponse41 response = full();
        byte[] wire = CodecAssertions.bytes(response::encode);
        HandshakeResponse41 decoded = CodecAssertions.decode(wire, HandshakeResponse41::decode);
        assertThat(decoded).isEqualTo(response);
        assertThat(decoded.connectAttributes().keySet()).containsExactly("_client_name", "_os", "program_name");
        assertThat(decoded.authResponse()).isEqualTo(SCRAMBLE);
        CodecAssertions.assertDecoded(wire, ClientHandshake::decode).isEqualTo(response);
    }

    @Test
    void longAuthResponseNeedsTheLengthEncodedForm() {
        byte[] rsa = new byte[256];
        Arrays.fill(rsa, (byte) 7);
        HandshakeResponse41 response = new HandshakeResponse41(FULL, 1 << 24, 255, 0, "u", rsa, "", "", Map.of(), 0);
        CodecAssertions.assertDecoded(CodecAssertions.bytes(response::encode), HandshakeResponse41::decode)
                .isEqualTo(response);
        assertThatThrownBy(() -> new HandshakeResponse41(BASE | CLIENT_SECURE_CONNECTION, 0, 1, 0, "u", rsa, "", "",
                Map.of(), 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("255 bytes");
    }

    @Test
    void mariaDbExtendedCapabilitiesAndZstdLevelRoundTrip() {
        int caps = (FULL & ~CLIENT_MYSQL) | CLIENT_ZSTD_COMPRESSION_ALGORITHM;
        HandshakeResponse41 response = new HandshakeResponse41(caps, 1 << 30, 224, 0x1C, "root", new byte[0], "db",
                CachingSha2Password.PLUGIN_NAME, Map.of("k", "v"), 3);
        CodecAssertions.assertDecoded(CodecAssertions.bytes(response::encode), HandshakeResponse41::decode)
                .isEqualTo(response);
    }

    @Test
    void responseThatStopsBeforeThePluginNameIsAccepted() {
        int caps = BASE | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH;
        HandshakeResponse41 response = new HandshakeResponse41(caps, 0, 1, 0, "u", SCRAMBLE, "", "", Map.of(), 0);
        byte[] wire = CodecAssertions.bytes(response::encode);
        byte[] withoutPlugin = Arrays.copyOf(wire, wire.length - 1);
        CodecAssertions.assertDecoded(withoutPlugin, HandshakeResponse41::decode).isEqualTo(response);
    }

    @Test
    void sslRequestIsTheShortFormAndIsRecognised() {
        SslRequest request = new SslRequest(FULL | CLIENT_SSL, 16_777_216L, 45, 0);
        byte[] wire = CodecAssertions.bytes(request::encode);
        assertThat(wire).hasSize(SslRequest.PAYLOAD_LENGTH);
        CodecAssertions.assertDecoded(wire, ClientHandshake::decode).isEqualTo(request);
        byte[] response = CodecAssertions.bytes(full()::encode);
        assertThat(Arrays.copyOf(response, 32)).as("same fixed part without CLIENT_SSL")
                .isEqualTo(CodecAssertions.bytes(b -> SslRequest.writeFixedPart(b, FULL, 16_777_216L, 45, 0)));
        SslRequest maria = new SslRequest((FULL | CLIENT_SSL) & ~CLIENT_MYSQL, 1, 2, 0x3F);
        CodecAssertions.assertDecoded(CodecAssertions.bytes(maria::encode), SslRequest::decode).isEqualTo(maria);
    }

    @Test
    void thirtyTwoBytesWithoutClientSslAreRefused() {
        byte[] wire = CodecAssertions.bytes(b -> SslRequest.writeFixedPart(b, FULL, 1, 1, 0));
        assertThatThrownBy(() -> CodecAssertions.decode(wire, ClientHandshake::decode))
                .isInstanceOf(MalformedPacketException.class)
                .hasMessageStartingWith("SSLRequest.client_flag: CLIENT_SSL and CLIENT_PROTOCOL_41 must be set");
    }

    @Test
    void preProtocol41ClientsAreRefusedByName() {
        byte[] wire = CodecAssertions.bytes(b -> {
            b.writeIntLE(CLIENT_LONG_PASSWORD);
            b.writeZero(40);
        });
        assertThatThrownBy(() -> CodecAssertions.decode(wire, HandshakeResponse41::decode))
                .hasMessageStartingWith("HandshakeResponse41.client_flag: CLIENT_PROTOCOL_41 not set")
                .hasMessageContaining("HandshakeResponse320");
    }

    @Test
    void truncationsAndFlippedBytesFailWithTheFieldNamed() {
        byte[] wire = CodecAssertions.bytes(full()::encode);
        var failures = CodecAssertions.assertTruncationsFailClearly(wire, HandshakeResponse41::decode);
        assertThat(failures).extracting(MalformedPacketException::field).contains(
                "HandshakeResponse41.client_flag", "HandshakeResponse41.max_packet_size",
                "HandshakeResponse41.filler", "HandshakeResponse41.username", "HandshakeResponse41.auth_response",
                "HandshakeResponse41.database", "HandshakeResponse41.client_plugin_name",
                "HandshakeResponse41.connect_attrs");
        assertThat(CodecAssertions.assertFlipsFailClearly(wire, ClientHandshake::decode)).isPositive();
    }

    @Test
    void optionalFieldsNeedTheirCapability() {
        assertThatThrownBy(() -> new HandshakeResponse41(BASE, 0, 1, 0, "u", new byte[0], "db", "", Map.of(), 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("CLIENT_CONNECT_WITH_DB");
        assertThatThrownBy(() -> new HandshakeResponse41(BASE, 0, 1, 0, "u", new byte[0], "", "", Map.of("a", "b"), 0))
                .hasMessageContaining("CLIENT_CONNECT_ATTRS");
        assertThatThrownBy(() -> new HandshakeResponse41(CLIENT_SECURE_CONNECTION, 0, 1, 0, "u", new byte[0], "", "",
                Map.of(), 0)).hasMessageContaining("CLIENT_PROTOCOL_41");
    }

    @Test
    void toStringNeverShowsTheAuthResponse() {
        assertThat(full().toString()).contains("app_user").contains("<20 bytes>");
    }
}
