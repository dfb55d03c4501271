package io.gantry.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

class EofPacketTest {

    @Test
    void roundTripsInFiveBytes() {
        EofPacket eof = new EofPacket(1, ServerStatus.SERVER_MORE_RESULTS_EXISTS | ServerStatus.SERVER_STATUS_AUTOCOMMIT);
        byte[] wire = CodecAssertions.bytes(eof::encode);
        assertThat(wire).containsExactly(0xFE, 0x01, 0x00, 0x0A, 0x00);
        CodecAssertions.assertDecoded(wire, EofPacket::decode).isEqualTo(eof);
        assertThat(CodecAssertions.bytes(b -> eof.encode(b, 0))).containsExactly(0xFE);
        CodecAssertions.assertDecoded(new byte[] {(byte) 0xFE}, b -> EofPacket.decode(b, 0))
                .isEqualTo(new EofPacket(0, 0));
    }

    @Test
    void nineBytesStartingWith0xFeAreNotAnEof() {
        byte[] row = {(byte) 0xFE, 1, 2, 3, 4, 5, 6, 7, 8};
        ByteBuf buf = Unpooled.wrappedBuffer(row);
        try {
            assertThat(EofPacket.isEof(buf)).isFalse();
            assertThat(EofPacket.isEof(buf.slice(0, 5))).isTrue();
        } finally {
            buf.release();
        }
        assertThatThrownBy(() -> CodecAssertions.decode(row, EofPacket::decode))
                .isInstanceOf(MalformedPacketException.class)
                .hasMessage("EOF: payload of 9 bytes is too long for an EOF packet (under 9 bytes)");
    }

    @Test
    void truncationsAndFlippedBytesFailWithTheFieldNamed() {
        byte[] wire = CodecAssertions.bytes(new EofPacket(0, 2)::encode);
        assertThat(CodecAssertions.assertTruncationsFailClearly(wire, EofPacket::decode))
                .extracting(MalformedPacketException::field)
                .containsExactly("EOF.header", "EOF.warnings", "EOF.warnings", "EOF.status_flags", "EOF.status_flags");
        CodecAssertions.assertFlipsFailClearly(wire, EofPacket::decode);
    }
}
