package io.gantry.wire;

import static io.gantry.wire.CodecAssertions.buf;
import static io.gantry.wire.CodecAssertions.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class BuffersTest {

    @ParameterizedTest
    @CsvSource({
        "0, 1", "250, 1", "251, 3", "65535, 3", "65536, 4", "16777215, 4", "16777216, 9",
        "9223372036854775807, 9", "-1, 9",
    })
    void lengthEncodedIntegersUseTheShortestFormAndRoundTrip(long value, int size) {
        byte[] encoded = bytes(b -> Buffers.writeLenEncInt(b, value));
        assertThat(encoded).hasSize(size);
        assertThat(Buffers.lenEncIntSize(value)).isEqualTo(size);
        CodecAssertions.assertDecoded(encoded, b -> Buffers.readLenEncInt(b, "x")).isEqualTo(value);
    }

    @Test
    void lengthEncodedIntegerPrefixesAreTheProtocolOnes() {
        assertThat(bytes(b -> Buffers.writeLenEncInt(b, 251))).containsExactly(0xFC, 0xFB, 0x00);
        assertThat(bytes(b -> Buffers.writeLenEncInt(b, 0x10000))).containsExactly(0xFD, 0x00, 0x00, 0x01);
        assertThat(bytes(b -> Buffers.writeLenEncInt(b, 0x1000000)))
                .containsExactly(0xFE, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00);
        assertThat(bytes(b -> Buffers.writeLenEncInt(b, -1)))
                .containsExactly(0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF);
    }

    @Test
    void nullMarkerIsRecognisedAndRefusedWhereAnIntegerIsRequired() {
        ByteBuf buf = buf(0xFB, 0x05);
        try {
            assertThat(Buffers.isNullMarker(buf)).isTrue();
            assertThatThrownBy(() -> Buffers.readLenEncInt(buf.duplicate(), "OK.affected_rows"))
                    .isInstanceOf(MalformedPacketException.class)
                    .hasMessage("OK.affected_rows: found the NULL marker 0xFB where a length-encoded integer was expected");
            assertThat(Buffers.readNullableLenEncInt(buf, "v")).isEqualTo(OptionalLong.empty());
            assertThat(Buffers.readNullableLenEncInt(buf, "v")).isEqualTo(OptionalLong.of(5));
        } finally {
            buf.release();
        }
        assertThat(bytes(Buffers::writeNullMarker)).containsExactly(0xFB);
    }

    @Test
    void undefinedPrefixAndTruncatedIntegersNameTheField() {
        assertThatThrownBy(() -> CodecAssertions.decode(new byte[] {(byte) 0xFF}, b -> Buffers.readLenEncInt(b, "n")))
                .hasMessage("n: found the undefined length-encoded integer prefix 0xFF");
        assertThatThrownBy(() -> CodecAssertions.decode(new byte[] {(byte) 0xFC, 1}, b -> Buffers.readLenEncInt(b, "n")))
                .hasMessage("n: needs 2 bytes but only 1 are left");
        assertThatThrownBy(() -> CodecAssertions.decode(new byte[0], b -> Buffers.readLenEncInt(b, "n")))
                .hasMessage("n: needs 1 bytes but only 0 are left");
    }

    @Test
    void lengthEncodedStringsRoundTripAsUtf8() {
        String text = "héllo wörld ✓";
        byte[] encoded = bytes(b -> Buffers.writeLenEncString(b, text));
        assertThat(encoded[0]).isEqualTo((byte) text.getBytes(StandardCharsets.UTF_8).length);
        CodecAssertions.assertDecoded(encoded, b -> Buffers.readLenEncString(b, "s")).isEqualTo(text);
        byte[] big = new byte[300];
        byte[] bigEncoded = bytes(b -> Buffers.writeLenEncBytes(b, big));
        assertThat(bigEncoded).hasSize(303);
        CodecAssertions.assertDecoded(bigEncoded, b -> Buffers.readLenEncBytes(b, "s")).isEqualTo(big);
    }

    @Test
    void lengthEncodedStringLongerThanThePacketNamesTheField() {
        assertThatThrownBy(() -> CodecAssertions.decode(new byte[] {5, 'a', 'b'}, b -> Buffers.readLenEncString(b, "OK.info")))
                .isInstanceOf(MalformedPacketException.class)
                .hasMessage("OK.info: length 5 exceeds the 2 bytes left");
    }

    @Test
    void nulTerminatedStringsRoundTripAndNeedTheirTerminator() {
        byte[] encoded = bytes(b -> Buffers.writeNulTerminatedString(b, "root"));
        assertThat(encoded).containsExactly('r', 'o', 'o', 't', 0);
        ByteBuf buf = Unpooled.wrappedBuffer(encoded);
        assertThat(Buffers.readNulTerminatedString(buf, "user")).isEqualTo("root");
        assertThat(buf.isReadable()).isFalse();
        buf.release();
        assertThatThrownBy(() -> CodecAssertions.decode(new byte[] {'a', 'b'}, b -> Buffers.readNulTerminatedString(b, "user")))
                .hasMessage("user: no NUL terminator in the 2 bytes left");
        assertThatThrownBy(() -> bytes(b -> Buffers.writeNulTerminatedBytes(b, new byte[] {'a', 0})))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void fixedIntegersAreLittleEndianAndRangeChecked() {
        assertThat(bytes(b -> Buffers.writeFixedInt(b, 3, 0x010203))).containsExactly(0x03, 0x02, 0x01);
        CodecAssertions.assertDecoded(new byte[] {3, 2, 1}, b -> Buffers.readFixedInt(b, 3, "x")).isEqualTo(0x010203L);
        CodecAssertions.assertDecoded(new byte[] {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF},
                b -> Buffers.readInt4(b, "x")).isEqualTo(0xFFFF_FFFFL);
        byte[] eight = bytes(b -> Buffers.writeFixedInt(b, 8, Long.MIN_VALUE));
        CodecAssertions.assertDecoded(eight, b -> Buffers.readFixedInt(b, 8, "x")).isEqualTo(Long.MIN_VALUE);
        assertThatThrownBy(() -> bytes(b -> Buffers.writeFixedInt(b, 2, 0x10000)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2-byte");
        assertThatThrownBy(() -> bytes(b -> Buffers.writeFixedInt(b, 9, 0)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> CodecAssertions.decode(new byte[] {1}, b -> Buffers.readInt2(b, "ERR.error_code")))
                .hasMessage("ERR.error_code: needs 2 bytes but only 1 are left");
    }

    @Test
    void restOfPacketAndFixedStringsReadWhatIsThere() {
        ByteBuf buf = Unpooled.copiedBuffer("12345rest", StandardCharsets.UTF_8);
        try {
            assertThat(Buffers.readFixedString(buf, 5, "state")).isEqualTo("12345");
            assertThat(Buffers.readRestString(buf)).isEqualTo("rest");
            assertThat(Buffers.readRestBytes(buf)).isEmpty();
        } finally {
            buf.release();
        }
    }
}
