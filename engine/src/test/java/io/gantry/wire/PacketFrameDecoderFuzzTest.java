package io.gantry.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * {@link PacketFrameDecoder} in an {@link EmbeddedChannel}, fed byte streams split at arbitrary points: valid
 * streams come out as the packets that went in; mutated and arbitrary streams come out as packets within the cap and
 * at most one {@link PacketDecodeFailure}, last; no exception leaves the pipeline, nothing more than the cap (plus a
 * partial header) is ever held between reads, and every input buffer is released once the channel closes.
 */
class PacketFrameDecoderFuzzTest {

    /** A packet as the test sends it. */
    record Sent(int sequenceId, byte[] payload) {
    }

    @Provide
    Arbitrary<List<Sent>> packets() {
        return Combinators.combine(Arbitraries.integers().between(0, 255), WireArbitraries.bytes(300))
                .as(Sent::new).list().ofMaxSize(8).withoutEdgeCases();
    }

    private static byte[] wire(List<Sent> packets) {
        return Fuzzing.encode(out -> {
            for (Sent p : packets) {
                Packet packet = new Packet(p.sequenceId(), Unpooled.wrappedBuffer(p.payload()));
                PacketFrameEncoder.writeFramed(packet, out);
                packet.release();
            }
        });
    }

    @Property
    void validStreamsSplitAnywhereComeOutAsTheirPackets(@ForAll("packets") List<Sent> packets,
            @ForAll @Size(max = 12) List<@IntRange(min = 0, max = 4000) Integer> cuts) {
        Result result = feed(wire(packets), cuts, 300);
        assertThat(result.failure).isNull();
        assertThat(result.packets).hasSize(packets.size());
        for (int i = 0; i < packets.size(); i++) {
            assertThat(result.packets.get(i).sequenceId()).isEqualTo(packets.get(i).sequenceId());
            assertThat(result.packets.get(i).payload()).isEqualTo(packets.get(i).payload());
        }
    }

    @Provide
    Arbitrary<byte[]> streams() {
        return Fuzzing.validMutatedOrArbitrary(packets().map(PacketFrameDecoderFuzzTest::wire), 600);
    }

    @Property
    void anyStreamGivesPacketsWithinTheCapThenAtMostOneFailure(@ForAll("streams") byte[] stream,
            @ForAll @Size(max = 12) List<@IntRange(min = 0, max = 4000) Integer> cuts,
            @ForAll @IntRange(min = 1, max = 400) int cap) {
        Result result = Fuzzing.run("frame decoder", () -> feed(stream, cuts, cap)).value();
        for (Received p : result.packets) {
            assertThat(p.payload().length).as("payload within the cap of %d", cap).isLessThanOrEqualTo(cap);
        }
    }

    /** Full 16 MiB frames (continuations) with sequence ids that may break the chain, under caps around their size. */
    @Property(tries = 30)
    void continuedPayloadsAreCappedAndChecked(@ForAll @Size(min = 1, max = 3) List<@IntRange(min = 0, max = 255) Integer> ids,
            @ForAll @IntRange(min = 0, max = 20) int tail, @ForAll("bigCaps") int cap) {
        ByteBuf wire = Unpooled.buffer();
        for (int id : ids) {
            wire.writeMediumLE(Packet.MAX_FRAME_PAYLOAD);
            wire.writeByte(id);
            wire.writeZero(Packet.MAX_FRAME_PAYLOAD);
        }
        wire.writeMediumLE(tail);
        wire.writeByte((ids.get(ids.size() - 1) + 1) & 0xFF);
        wire.writeZero(tail);
        byte[] bytes = new byte[wire.readableBytes()];
        wire.readBytes(bytes);
        wire.release();
        Result result = feed(bytes, List.of(1 << 20, 9 << 20, 17 << 20, 33 << 20), cap);
        long total = (long) ids.size() * Packet.MAX_FRAME_PAYLOAD + tail;
        boolean chained = true;
        for (int i = 1; i < ids.size(); i++) {
            chained &= ids.get(i) == ((ids.get(i - 1) + 1) & 0xFF);
        }
        if (chained && total <= cap) {
            assertThat(result.failure).isNull();
            assertThat(result.packets).singleElement().satisfies(p -> assertThat(p.payload().length).isEqualTo((int) total));
        } else {
            assertThat(result.failure).isNotNull();
            assertThat(result.packets).isEmpty();
        }
    }

    @Provide
    Arbitrary<Integer> bigCaps() {
        return Arbitraries.of(Packet.MAX_FRAME_PAYLOAD - 1, Packet.MAX_FRAME_PAYLOAD, Packet.MAX_FRAME_PAYLOAD + 10,
                2 * Packet.MAX_FRAME_PAYLOAD, 2 * Packet.MAX_FRAME_PAYLOAD + 20, 3 * Packet.MAX_FRAME_PAYLOAD + 20,
                PacketFrameDecoder.MAX_CAP);
    }

    record Received(int sequenceId, byte[] payload) {
    }

    static final class Result {
        final List<Received> packets = new ArrayList<>();
        PacketDecodeFailure failure;
    }

    /**
     * Writes {@code stream} in pieces cut at {@code cuts} (offsets, sorted and clipped) and checks what every write
     * leaves behind.
     */
    private static Result feed(byte[] stream, List<Integer> cuts, int cap) {
        PacketFrameDecoder decoder = new PacketFrameDecoder(cap);
        EmbeddedChannel channel = new EmbeddedChannel(decoder);
        Result result = new Result();
        List<ByteBuf> written = new ArrayList<>();
        List<Integer> offsets = new ArrayList<>(cuts);
        offsets.add(stream.length);
        offsets.sort(null);
        int from = 0;
        for (int to : offsets) {
            to = Math.min(to, stream.length);
            if (to <= from) {
                continue; // (an empty copiedBuffer is the shared EMPTY_BUFFER, which is never released)
            }
            ByteBuf piece = Unpooled.buffer(to - from).writeBytes(stream, from, to - from);
            written.add(piece);
            // EmbeddedChannel rethrows whatever the pipeline raised: nothing may.
            channel.writeInbound(piece);
            drain(channel, result, cap);
            if (decoder.failed()) {
                assertThat(decoder.bufferedBytes()).as("bytes held after a failure").isZero();
            } else {
                assertThat(decoder.bufferedBytes()).as("bytes held under a cap of %d", cap)
                        .isLessThanOrEqualTo(cap + Packet.HEADER_SIZE - 1L);
            }
            from = to;
        }
        channel.finishAndReleaseAll();
        for (ByteBuf piece : written) {
            assertThat(piece.refCnt()).as("input buffers released once the channel is closed").isZero();
        }
        return result;
    }

    private static void drain(EmbeddedChannel channel, Result result, int cap) {
        Object message;
        while ((message = channel.readInbound()) != null) {
            assertThat(result.failure).as("nothing after a PacketDecodeFailure").isNull();
            if (message instanceof PacketDecodeFailure failure) {
                assertThat(failure.cap()).isEqualTo(cap);
                assertThat(failure.message()).isNotBlank();
                result.failure = failure;
            } else {
                Packet packet = (Packet) message;
                byte[] payload = new byte[packet.payload().readableBytes()];
                packet.payload().getBytes(packet.payload().readerIndex(), payload);
                result.packets.add(new Received(packet.sequenceId(), payload));
                packet.release();
            }
        }
    }
}
