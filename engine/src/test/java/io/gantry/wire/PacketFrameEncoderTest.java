package io.gantry.wire;

import static io.gantry.wire.PacketFrameDecoderTest.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PacketFrameEncoderTest {

    private static final int MAX = Packet.MAX_FRAME_PAYLOAD;

    @Test
    void writesHeaderAndPayload() {
        EmbeddedChannel channel = new EmbeddedChannel(new PacketFrameEncoder());
        channel.writeOutbound(new Packet(2, Unpooled.wrappedBuffer(new byte[] {0x0E})));
        ByteBuf out = channel.readOutbound();
        assertThat(CodecAssertions.bytes(b -> b.writeBytes(out))).containsExactly(0x01, 0x00, 0x00, 0x02, 0x0E);
        out.release();
        assertThat(channel.finish()).isFalse();
    }

    @Test
    void emptyPayloadIsAHeaderAlone() {
        ByteBuf out = frame(new Packet(9, Unpooled.EMPTY_BUFFER));
        assertThat(CodecAssertions.bytes(b -> b.writeBytes(out))).containsExactly(0, 0, 0, 9);
        out.release();
    }

    @Test
    void payloadOfExactly0xFFFFFFGetsAnEmptyTrailingFrame() {
        Packet packet = new Packet(0, Unpooled.wrappedBuffer(new byte[MAX]));
        ByteBuf out = frame(packet);
        assertThat(out.readableBytes()).isEqualTo(MAX + 8);
        assertThat(out.getUnsignedMediumLE(0)).isEqualTo(MAX);
        assertThat(out.getUnsignedByte(3)).isZero();
        assertThat(out.getUnsignedMediumLE(MAX + 4)).isZero();
        assertThat(out.getUnsignedByte(MAX + 7)).isEqualTo((short) 1);
        out.release();
        assertThat(packet.refCnt()).as("framing leaves the packet's own reference alone").isEqualTo(1);
        packet.release();
    }

    @Test
    void exactMultipleOfTheFrameSizeEndsWithAnEmptyFrame() {
        Packet packet = new Packet(255, Unpooled.wrappedBuffer(new byte[2 * MAX]));
        ByteBuf out = frame(packet);
        assertThat(out.readableBytes()).isEqualTo(2 * MAX + 12);
        assertThat(out.getUnsignedByte(3)).isEqualTo((short) 255);
        assertThat(out.getUnsignedByte(MAX + 7)).isEqualTo((short) 0);
        assertThat(out.getUnsignedMediumLE(2 * MAX + 8)).isZero();
        assertThat(out.getUnsignedByte(2 * MAX + 11)).isEqualTo((short) 1);
        out.release();
        packet.release();
    }

    @Test
    void slicedAndCopiedFramingProduceTheSameBytes() {
        byte[] payload = pattern(MAX + 100);
        Packet packet = new Packet(42, Unpooled.wrappedBuffer(payload));
        ByteBuf sliced = frame(packet);
        ByteBuf copied = Unpooled.buffer();
        PacketFrameEncoder.writeFramed(packet, copied);
        assertThat(ByteBufUtil.equals(sliced, copied)).isTrue();
        sliced.release();
        copied.release();
        packet.release();
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 8192, 8193, MAX - 1, MAX, MAX + 1})
    void encoderAndDecoderRoundTrip(int length) {
        byte[] payload = pattern(length);
        EmbeddedChannel out = new EmbeddedChannel(new PacketFrameEncoder());
        out.writeOutbound(new Packet(17, Unpooled.wrappedBuffer(payload)));
        EmbeddedChannel in = new EmbeddedChannel(new PacketFrameDecoder(PacketFrameDecoder.MAX_CAP));
        for (Object chunk; (chunk = out.readOutbound()) != null; ) {
            in.writeInbound(chunk);
        }
        Packet packet = in.readInbound();
        assertThat(packet.sequenceId()).isEqualTo(17);
        assertThat(packet.lastSequenceId()).isEqualTo(17 + Packet.frameCount(length) - 1);
        assertThat(PacketFrameDecoderTest.ByteBufEquals.same(packet.payload(), payload)).isTrue();
        packet.release();
        assertThat(out.finish()).isFalse();
        assertThat(in.finish()).isFalse();
    }

    @Test
    void encoderReleasesThePacketOnceWritten() {
        ByteBuf payload = Unpooled.wrappedBuffer(new byte[20_000]);
        EmbeddedChannel channel = new EmbeddedChannel(new PacketFrameEncoder());
        channel.writeOutbound(new Packet(0, payload));
        assertThat(channel.finishAndReleaseAll()).isTrue();
        assertThat(payload.refCnt()).isZero();
    }

    private static ByteBuf frame(Packet packet) {
        return PacketFrameEncoder.frame(packet, ByteBufAllocator.DEFAULT);
    }
}
