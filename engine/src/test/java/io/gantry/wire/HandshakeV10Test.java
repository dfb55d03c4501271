package io.gantry.wire;

import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_ATTRS;
import static io.gantry.wire.CapabilityFlags.CLIENT_DEPRECATE_EOF;
import static io.gantry.wire.CapabilityFlags.CLIENT_LONG_PASSWORD;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH;
import static io.gantry.wire.CapabilityFlags.CLIENT_PROTOCOL_41;
import static io.gantry.wire.CapabilityFlags.CLIENT_SECURE_CONNECTION;
import static io.gantry.wire.CapabilityFlags.CLIENT_SESSION_TRACK;
import static io.gantry.wire.CapabilityFlags.CLIENT_SSL;
import static io.gantry.wire.CapabilityFlags.CLIENT_TRANSACTIONS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class HandshakeV10Test {

    private static final int MYSQL_CAPS = CLIENT_LONG_PASSWORD | CLIENT_PROTOCOL_41 | CLIENT_SSL | CLIENT_TRANSACTIONS
            | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH | CLIENT_CONNECT_ATTRS | CLIENT_SESSION_TRACK
            | CLIENT_DEPRECATE_EOF;
    private static final byte[] SEED = "abcdefghijklmnopqrst".getBytes(StandardCharsets.US_ASCII);

    static HandshakeV10 mysqlGreeting() {
        return new HandshakeV10("8.4.3", 42, SEED, MYSQL_CAPS, 255, ServerStatus.SERVER_STATUS_AUTOCOMMIT, 0,
                CachingSha2Password.PLUGIN_NAME);
    }

    @Test
    void decodesAGreetingBuiltByteByByteFromTheSpecification() {
        byte[] wire = CodecAssertions.bytes(b -> {
            b.writeByte(10);
            b.writeBytes("8.4.3\0".getBytes(StandardCharsets.US_ASCII));
            b.writeIntLE(42);
            b.writeBytes("abcdefgh".getBytes(StandardCharsets.US_ASCII));
            b.writeByte(0);
            b.writeShortLE(MYSQL_CAPS & 0xFFFF);
            b.writeByte(255);
            b.writeShortLE(2);
            b.writeShortLE(MYSQL_CAPS >>> 16);
            b.writeByte(21);
            b.writeZero(10);
            b.writeBytes("ijklmnopqrst\0".getBytes(StandardCharsets.US_ASCII));
            b.writeBytes("caching_sha2_password\0".getBytes(StandardCharsets.US_ASCII));
        });
        HandshakeV10 greeting = CodecAssertions.decode(wire, HandshakeV10::decode);
        assertThat(greeting).isEqualTo(mysqlGreeting());
        assertThat(greeting.authPluginData()).hasSize(20).isEqualTo(SEED);
        assertThat(CodecAssertions.bytes(greeting::encode)).isEqualTo(wire);
    }

    @Test
    void mariaDbExtendedCapabilitiesRoundTripWhenClientMysqlIsCleared() {
        int caps = MYSQL_CAPS & ~CapabilityFlags.CLIENT_MYSQL;
        int extended = CapabilityFlags.MARIADB_CLIENT_PROGRESS | CapabilityFlags.MARIADB_CLIENT_STMT_BULK_OPERATIONS
                | CapabilityFlags.MARIADB_CLIENT_EXTENDED_METADATA;
        HandshakeV10 greeting = new HandshakeV10("5.5.5-11.4.5-MariaDB-log", 0xFFFF_FFFFL, SEED, caps, 45, 2,
                extended, NativePassword.PLUGIN_NAME);
        byte[] wire = CodecAssertions.bytes(greeting::encode);
        HandshakeV10 decoded = CodecAssertions.decode(wire, HandshakeV10::decode);
        assertThat(decoded).isEqualTo(greeting);
        assertThat(decoded.mariaDbCapabilities()).isEqualTo(extended);
        assertThat(decoded.fullCapabilities() >>> 32).isEqualTo(extended);
    }

    @Test
    void reservedBytesAreIgnoredForMysqlServers() {
        byte[] wire = CodecAssertions.bytes(mysqlGreeting()::encode);
        int extendedOffset = 1 + 6 + 4 + 8 + 1 + 2 + 1 + 2 + 2 + 1 + 6;
        wire[extendedOffset] = 0x7F;
        assertThat(CodecAssertions.decode(wire, HandshakeV10::decode).mariaDbCapabilities()).isZero();
    }

    @Test
    void oldServersWithoutPluginAuthStillYieldTheTwentyByteSeed() {
        int caps = CLIENT_LONG_PASSWORD | CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION;
        HandshakeV10 greeting = new HandshakeV10("5.1.73", 7, SEED, caps, 8, 0, 0, "");
        byte[] wire = CodecAssertions.bytes(greeting::encode);
        CodecAssertions.assertDecoded(wire, HandshakeV10::decode).isEqualTo(greeting);
    }

    /** Found by PacketDecoderFuzzTest: this greeting escaped as IllegalArgumentException ("the seed is 20 bytes, was 39"). */
    @Test
    void aLengthByteWithoutPluginAuthStillYieldsTheTwentyByteSeed() {
        int caps = CLIENT_LONG_PASSWORD | CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION;
        byte[] wire = CodecAssertions.bytes(new HandshakeV10("5.1.73", 7, SEED, caps, 8, 0, 0, "")::encode);
        int dataLengthOffset = 1 + "5.1.73".length() + 1 + 4 + 8 + 1 + 2 + 1 + 2 + 2;
        assertThat(wire[dataLengthOffset]).as("auth_plugin_data_len as encoded").isZero();
        wire[dataLengthOffset] = 40; // announces a 39-byte seed, and 32 bytes of part 2
        byte[] longer = Arrays.copyOf(wire, wire.length + 19);
        HandshakeV10 decoded = CodecAssertions.decode(longer, HandshakeV10::decode);
        assertThat(decoded.authPluginData()).isEqualTo(SEED);
    }

    @Test
    void pluginNameWithoutTerminatorIsReadToTheEnd() {
        byte[] wire = CodecAssertions.bytes(mysqlGreeting()::encode);
        byte[] unterminated = Arrays.copyOf(wire, wire.length - 1);
        assertThat(CodecAssertions.decode(unterminated, HandshakeV10::decode).authPluginName())
                .isEqualTo(CachingSha2Password.PLUGIN_NAME);
    }

    @Test
    void otherProtocolVersionsAndErrPacketsAreNamed() {
        assertThatThrownBy(() -> CodecAssertions.decode(new byte[] {9, 0}, HandshakeV10::decode))
                .isInstanceOf(MalformedPacketException.class)
                .hasMessage("HandshakeV10.protocol_version: expected 10, found 9");
        byte[] err = CodecAssertions.bytes(ErrPacket.of(1040, "08004", "Too many connections")::encode);
        assertThatThrownBy(() -> CodecAssertions.decode(err, HandshakeV10::decode))
                .hasMessageContaining("found 255 (the server sent an ERR packet instead)");
    }

    @Test
    void truncationsAndFlippedBytesFailWithTheFieldNamed() {
        byte[] wire = CodecAssertions.bytes(mysqlGreeting()::encode);
        var failures = CodecAssertions.assertTruncationsFailClearly(wire, HandshakeV10::decode);
        assertThat(failures).extracting(MalformedPacketException::field)
                .contains("HandshakeV10.protocol_version", "HandshakeV10.server_version", "HandshakeV10.thread_id",
                        "HandshakeV10.auth_plugin_data_part_1", "HandshakeV10.capability_flags_1",
                        "HandshakeV10.status_flags", "HandshakeV10.auth_plugin_data_part_2");
        assertThat(CodecAssertions.assertFlipsFailClearly(wire, HandshakeV10::decode)).isPositive();
    }

    @Test
    void constructorRefusesValuesTheWireCannotCarry() {
        assertThatThrownBy(() -> new HandshakeV10("x", -1, SEED, MYSQL_CAPS, 1, 0, 0, ""))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("connectionId");
        assertThatThrownBy(() -> new HandshakeV10("x", 1, new byte[7], MYSQL_CAPS, 1, 0, 0, ""))
                .hasMessageContaining("8 to 254");
        assertThatThrownBy(() -> new HandshakeV10("x", 1, SEED, MYSQL_CAPS, 1, 0, 5, ""))
                .hasMessageContaining("CLIENT_MYSQL");
        assertThatThrownBy(() -> new HandshakeV10("x", 1, SEED, CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION, 1, 0, 0,
                "mysql_native_password")).hasMessageContaining("CLIENT_PLUGIN_AUTH");
    }

    @Test
    void seedIsCopiedInAndOut() {
        byte[] seed = SEED.clone();
        HandshakeV10 greeting = new HandshakeV10("8", 1, seed, MYSQL_CAPS, 1, 0, 0, "");
        seed[0] = 'X';
        greeting.authPluginData()[1] = 'Y';
        assertThat(greeting.authPluginData()).isEqualTo(SEED);
        assertThat(greeting.toString()).contains("CLIENT_PROTOCOL_41").contains("6162636465");
    }
}
