package io.gantry.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class PacketFrameDecoderTest {

    private static final int MAX = Packet.MAX_FRAME_PAYLOAD;

    @Test
    void decodesOnePacketAsAZeroCopySliceOfTheInput() {
        EmbeddedChannel channel = new EmbeddedChannel(new PacketFrameDecoder(1024));
        channel.writeInbound(frame(3, "abc".getBytes()));
        Packet packet = channel.readInbound();
        assertThat(packet.sequenceId()).isEqualTo(3);
        assertThat(text(packet)).isEqualTo("abc");
        assertThat(packet.lastSequenceId()).isEqualTo(3);
        packet.release();
        assertThat(channel.<Object>readInbound()).isNull();
        assertThat(channel.finish()).isFalse();
    }

    @Test
    void theBytesNotYetEmittedAreHandedOverAsTheyArrivedHeaderIncluded() {
        ByteBuf whole = frame(0, "SELECT 1".getBytes());
        byte[] sent = ByteBufUtil.getBytes(whole);
        for (int cut : new int[] {0, 2, 4, 7}) {
            EmbeddedChannel first = new EmbeddedChannel(new PacketFrameDecoder(1024));
            first.writeInbound(Unpooled.wrappedBuffer(sent, 0, cut));
            ByteBuf taken = first.pipeline().get(PacketFrameDecoder.class).takeUnemittedBytes(first.alloc())
                    .orElseThrow();
            assertThat(ByteBufUtil.getBytes(taken)).as("cut after %d bytes", cut)
                    .isEqualTo(Arrays.copyOf(sent, cut));
            // Another decoder given those bytes, then the rest, emits the packet.
            EmbeddedChannel second = new EmbeddedChannel(new PacketFrameDecoder(1024));
            second.writeInbound(taken);
            second.writeInbound(Unpooled.wrappedBuffer(sent, cut, sent.length - cut));
            assertThat(readText(second)).isEqualTo("0:SELECT 1");
            // And the first starts again from a header, as if it had read nothing.
            first.writeInbound(Unpooled.wrappedBuffer(sent));
            assertThat(readText(first)).isEqualTo("0:SELECT 1");
            assertThat(first.finish()).isFalse();
            assertThat(second.finish()).isFalse();
        }
        whole.release();
    }

    @Test
    void aPayloadContinuedOverSeveralFramesIsNotHandedOverHalfReceived() {
        EmbeddedChannel channel = new EmbeddedChannel(new PacketFrameDecoder(MAX + 10));
        channel.writeInbound(frame(0, pattern(MAX)));
        PacketFrameDecoder decoder = channel.pipeline().get(PacketFrameDecoder.class);
        assertThat(decoder.takeUnemittedBytes(channel.alloc())).isEmpty();
        channel.writeInbound(frame(1, "end".getBytes()));
        Packet packet = channel.readInbound();
        assertThat(packet.payload().readableBytes()).isEqualTo(MAX + 3);
        packet.release();
        assertThat(channel.finish()).isFalse();
    }

    @Test
    void decodesSeveralPacketsInOneBufferAndPacketsSplitByteByByte() {
        ByteBuf both = Unpooled.buffer();
        both.writeBytes(frame(0, "one".getBytes()));
        both.writeBytes(frame(1, new byte[0]));
        both.writeBytes(frame(2, "three".getBytes()));
        EmbeddedChannel channel = new EmbeddedChannel(new PacketFrameDecoder(1024));
        while (both.isReadable()) {
            channel.writeInbound(both.readRetainedSlice(1));
        }
        both.release();
        assertThat(readText(channel)).isEqualTo("0:one");
        assertThat(readText(channel)).isEqualTo("1:");
        assertThat(readText(channel)).isEqualTo("2:three");
        assertThat(channel.finish()).isFalse();
    }

    @Test
    void payloadOfExactly0xFFFFFFIsFollowedByAnEmptyFrameAndReassembled() {
        byte[] payload = pattern(MAX);
        EmbeddedChannel channel = new EmbeddedChannel(new PacketFrameDecoder(MAX));
        channel.writeInbound(frame(7, payload));
        assertThat(channel.<Object>readInbound()).as("nothing until the empty trailing frame").isNull();
        channel.writeInbound(frame(8, new byte[0]));
        Packet packet = channel.readInbound();
        assertThat(packet.sequenceId()).isEqualTo(7);
        assertThat(packet.lastSequenceId()).isEqualTo(8);
        assertThat(packet.nextSequenceId()).isEqualTo(9);
        assertThat(packet.payload().readableBytes()).isEqualTo(MAX);
        assertThat(ByteBufEquals.same(packet.payload(), payload)).isTrue();
        packet.release();
        assertThat(channel.finish()).isFalse();
    }

    @Test
    void largerPayloadsAreJoinedAcrossFramesWithSequenceIdsWrappingAt255() {
        byte[] payload = pattern(2 * MAX + 10);
        ByteBuf wire = Unpooled.buffer();
        Packet source = new Packet(254, Unpooled.wrappedBuffer(payload));
        PacketFrameEncoder.writeFramed(source, wire);
        source.release();
        assertThat(wire.readableBytes()).isEqualTo(payload.length + 3 * Packet.HEADER_SIZE);
        assertThat(wire.getUnsignedByte(3 + 2 * (MAX + 4))).as("third frame's sequence id").isZero();
        EmbeddedChannel channel = new EmbeddedChannel(new PacketFrameDecoder(PacketFrameDecoder.MAX_CAP));
        channel.writeInbound(wire);
        Packet packet = channel.readInbound();
        assertThat(packet.sequenceId()).isEqualTo(254);
        assertThat(packet.lastSequenceId()).isZero();
        assertThat(ByteBufEquals.same(packet.payload(), payload)).isTrue();
        packet.release();
        assertThat(channel.finish()).isFalse();
    }

    @Test
    void payloadOfExactlyTheCapIsAcceptedAndOneByteMoreIsAFailureValue() {
        PacketFrameDecoder decoder = new PacketFrameDecoder(100);
        EmbeddedChannel channel = new EmbeddedChannel(decoder);
        channel.writeInbound(frame(0, new byte[100]));
        Packet ok = channel.readInbound();
        assertThat(ok.payload().readableBytes()).isEqualTo(100);
        ok.release();

        channel.writeInbound(frame(0, new byte[101]));
        PacketDecodeFailure failure = channel.readInbound();
        assertThat(failure.reason()).isEqualTo(PacketDecodeFailure.Reason.TOO_LARGE);
        assertThat(failure.sizeFound()).isEqualTo(101);
        assertThat(failure.cap()).isEqualTo(100);
        assertThat(failure.message()).contains("101 bytes").contains("cap of 100 bytes");
        assertThat(decoder.failed()).isTrue();

        channel.writeInbound(frame(1, "ignored".getBytes()));
        assertThat(channel.<Object>readInbound()).as("input after a failure is discarded").isNull();
        assertThat(channel.finish()).isFalse();
    }

    @Test
    void capIsCheckedOnTheHeaderBeforeThePayloadArrives() {
        EmbeddedChannel channel = new EmbeddedChannel(new PacketFrameDecoder(1000));
        channel.writeInbound(Unpooled.wrappedBuffer(new byte[] {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 5}));
        PacketDecodeFailure failure = channel.readInbound();
        assertThat(failure.sizeFound()).isEqualTo(MAX);
        assertThat(failure.sequenceId()).isEqualTo(5);
        assertThat(channel.finish()).isFalse();
    }

    @Test
    void capAppliesToTheReassembledPayloadAndReleasesTheFramesAlreadyHeld() {
        ByteBuf wire = Unpooled.buffer();
        Packet source = new Packet(0, Unpooled.wrappedBuffer(new byte[MAX + 11]));
        PacketFrameEncoder.writeFramed(source, wire);
        source.release();
        EmbeddedChannel channel = new EmbeddedChannel(new PacketFrameDecoder(MAX + 10));
        channel.writeInbound(wire);
        PacketDecodeFailure failure = channel.readInbound();
        assertThat(failure.sizeFound()).isEqualTo(MAX + 11L);
        assertThat(failure.cap()).isEqualTo(MAX + 10);
        assertThat(failure.sequenceId()).isEqualTo(1);
        assertThat(wire.refCnt()).as("the held first frame was released").isZero();
        assertThat(channel.finish()).isFalse();
    }

    @Test
    void continuationFrameOutOfSequenceIsAFailureValue() {
        ByteBuf wire = Unpooled.buffer();
        wire.writeBytes(frame(4, new byte[MAX]));
        wire.writeBytes(frame(9, new byte[3]));
        EmbeddedChannel channel = new EmbeddedChannel(new PacketFrameDecoder(PacketFrameDecoder.MAX_CAP));
        channel.writeInbound(wire);
        PacketDecodeFailure failure = channel.readInbound();
        assertThat(failure.reason()).isEqualTo(PacketDecodeFailure.Reason.SEQUENCE_OUT_OF_ORDER);
        assertThat(failure.message()).contains("sequence id 9, expected 5");
        assertThat(wire.refCnt()).isZero();
        assertThat(channel.finish()).isFalse();
    }

    @Test
    void partialContinuationIsReleasedWhenTheChannelCloses() {
        ByteBuf wire = frame(0, new byte[MAX]);
        wire.retain();
        EmbeddedChannel channel = new EmbeddedChannel(new PacketFrameDecoder(PacketFrameDecoder.MAX_CAP));
        channel.writeInbound(wire);
        assertThat(channel.finishAndReleaseAll()).isFalse();
        assertThat(wire.refCnt()).isEqualTo(1);
        wire.release();
    }

    @Test
    void constructorRejectsCapsOutsideOneByteToOneGibibyte() {
        assertThatThrownBy(() -> new PacketFrameDecoder(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("was 0");
        assertThatThrownBy(() -> new PacketFrameDecoder(-5))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("was -5");
        assertThatThrownBy(() -> new PacketFrameDecoder(PacketFrameDecoder.MAX_CAP + 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1 GiB");
        assertThat(new PacketFrameDecoder(1).maxPayloadSize()).isEqualTo(1);
        assertThat(new PacketFrameDecoder(PacketFrameDecoder.MAX_CAP).maxPayloadSize()).isEqualTo(1 << 30);
    }

    static ByteBuf frame(int sequenceId, byte[] payload) {
        ByteBuf buf = Unpooled.buffer(payload.length + 4);
        buf.writeMediumLE(payload.length);
        buf.writeByte(sequenceId);
        buf.writeBytes(payload);
        return buf;
    }

    static byte[] pattern(int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (i * 31 + (i >>> 16));
        }
        return bytes;
    }

    private static String readText(EmbeddedChannel channel) {
        Packet packet = channel.readInbound();
        try {
            return packet.sequenceId() + ":" + text(packet);
        } finally {
            packet.release();
        }
    }

    private static String text(Packet packet) {
        return packet.payload().toString(StandardCharsets.UTF_8);
    }

    /** Content comparison of a (possibly composite) buffer with an array. */
    static final class ByteBufEquals {
        private ByteBufEquals() {
        }

        static boolean same(ByteBuf buf, byte[] expected) {
            ByteBuf wrapped = Unpooled.wrappedBuffer(expected);
            try {
                return buf.readableBytes() == expected.length && buf.equals(wrapped);
            } finally {
                wrapped.release();
            }
        }
    }
}
