package io.gantry.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ErrPacketTest {

    @Test
    void roundTripsWithTheSqlStateMarker() {
        ErrPacket err = ErrPacket.of(1045, "28000", "Access denied for user 'bob'@'localhost' (using password: YES)");
        byte[] wire = CodecAssertions.bytes(err::encode);
        assertThat(wire).startsWith(0xFF, 0x15, 0x04, '#', '2', '8', '0', '0', '0');
        CodecAssertions.assertDecoded(wire, ErrPacket::decode).isEqualTo(err);
        CodecAssertions.assertDecoded(wire, b -> ErrPacket.decode(b, CapabilityFlags.CLIENT_PROTOCOL_41))
                .isEqualTo(err);
    }

    @Test
    void errorWithoutMarkerGetsTheGeneralSqlState() {
        ErrPacket err = ErrPacket.of(1040, "08004", "Too many connections");
        byte[] wire = CodecAssertions.bytes(b -> err.encode(b, 0));
        ErrPacket decoded = CodecAssertions.decode(wire, ErrPacket::decode);
        assertThat(decoded).isEqualTo(ErrPacket.of(1040, "HY000", "Too many connections"));
    }

    @Test
    void mariaDbProgressReportsAreRecognised() {
        byte[] wire = {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 1, 1, 2, 0x10, 0x27, 0, 3, 's', 't', 'g'};
        ErrPacket decoded = CodecAssertions.decode(wire, ErrPacket::decode);
        assertThat(decoded.isProgressReport()).isTrue();
        assertThat(ErrPacket.of(1064, "42000", "syntax").isProgressReport()).isFalse();
    }

    @Test
    void fieldsAreValidated() {
        assertThatThrownBy(() -> ErrPacket.of(70_000, "HY000", "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("errorCode");
        assertThatThrownBy(() -> ErrPacket.of(1, "HY00", "x")).hasMessageContaining("5 ASCII characters");
        assertThatThrownBy(() -> ErrPacket.of(1, "HY00é", "x")).hasMessageContaining("5 ASCII characters");
    }

    @Test
    void truncationsAndFlippedBytesFailWithTheFieldNamed() {
        byte[] wire = CodecAssertions.bytes(ErrPacket.of(1146, "42S02", "Table 'shop.x' doesn't exist")::encode);
        var failures = CodecAssertions.assertTruncationsFailClearly(wire, ErrPacket::decode);
        assertThat(failures).extracting(MalformedPacketException::field)
                .containsExactly("ERR.header", "ERR.error_code", "ERR.error_code", "ERR.sql_state", "ERR.sql_state",
                        "ERR.sql_state", "ERR.sql_state", "ERR.sql_state");
        CodecAssertions.assertFlipsFailClearly(wire, ErrPacket::decode);
        byte[] control = CodecAssertions.bytes(b -> {
            b.writeByte(0xFF);
            b.writeShortLE(1);
            b.writeCharSequence("#42\u000100", StandardCharsets.ISO_8859_1);
        });
        assertThatThrownBy(() -> CodecAssertions.decode(control, ErrPacket::decode))
                .hasMessage("ERR.sql_state: non-printable byte 0x1 in the SQL state");
    }
}
