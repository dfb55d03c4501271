package io.gantry.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.wire.ResponseFraming.Progress;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * {@link ResponseFraming} for every command type, fed valid responses, valid responses with packets mutated, and
 * arbitrary packets (headers biased to the bytes that steer it): it answers each packet or throws
 * {@link MalformedPacketException}, never consumes the packet, and once it says complete it is complete.
 */
class ResponseFramingFuzzTest {

    @Provide
    Arbitrary<Integer> framingCapabilities() {
        return WireArbitraries.capabilities().map(c -> (c | CapabilityFlags.CLIENT_PROTOCOL_41)
                & ~CapabilityFlags.CLIENT_OPTIONAL_RESULTSET_METADATA);
    }

    @Provide
    Arbitrary<CommandType> commands() {
        return Arbitraries.of(CommandType.class);
    }

    /** Packets whose first byte is one ResponseFraming dispatches on, and lengths around its limits. */
    @Provide
    Arbitrary<List<byte[]>> packetSequences() {
        Arbitrary<byte[]> steering = Combinators.combine(
                Arbitraries.of(0x00, 0x01, 0x02, 0x03, 0xFB, 0xFC, 0xFE, 0xFF, 0x10),
                Arbitraries.oneOf(Arbitraries.integers().between(0, 14), Arbitraries.integers().between(0, 60)),
                Arbitraries.bytes().array(byte[].class).ofSize(60))
                .as((first, length, body) -> {
                    byte[] out = new byte[length];
                    System.arraycopy(body, 0, out, 0, length);
                    if (length > 0) {
                        out[0] = (byte) (int) first;
                    }
                    return out;
                });
        Arbitrary<byte[]> any = Arbitraries.oneOf(steering, Fuzzing.arbitraryBytes(40),
                WireArbitraries.okPackets().map(WireArbitraries.OkCase::encoded),
                WireArbitraries.eofPackets().map(e -> Fuzzing.encode(e::encode)),
                WireArbitraries.prepareOks().map(p -> Fuzzing.encode(p::encode)),
                WireArbitraries.columns().map(c -> Fuzzing.encode(c::encode)));
        return any.list().ofMaxSize(30).withoutEdgeCases();
    }

    @Property
    void anyPacketsAreFramedOrRefusedClearly(@ForAll("commands") CommandType command,
            @ForAll("framingCapabilities") int capabilities, @ForAll("packetSequences") List<byte[]> packets) {
        Fuzzing.run("ResponseFraming " + command, () -> {
            feed(command, capabilities, packets);
            return null;
        });
    }

    /** A text result set, with its packets mutated or not. */
    @Provide
    Arbitrary<List<byte[]>> resultSets() {
        return Combinators.combine(framingCapabilities(), WireArbitraries.columns().list().ofMinSize(1).ofMaxSize(3),
                Arbitraries.integers().between(0, 0xFFFF), Arbitraries.integers().between(0, 4),
                WireArbitraries.text(20).injectNull(0.2).list().ofMaxSize(3).list().ofMaxSize(4))
                .as((caps, columns, status, ignored, values) -> {
                    List<List<String>> rows = new ArrayList<>();
                    for (List<String> row : values) {
                        List<String> fitted = new ArrayList<>();
                        for (int i = 0; i < columns.size(); i++) {
                            fitted.add(i < row.size() ? row.get(i) : "x");
                        }
                        rows.add(fitted);
                    }
                    List<byte[]> out = new ArrayList<>();
                    out.add(new byte[] {(byte) (caps >> 24), (byte) (caps >> 16), (byte) (caps >> 8), (byte) (int) caps});
                    int flags = status & ~ServerStatus.SERVER_MORE_RESULTS_EXISTS;
                    for (ByteBuf packet : TextResultSet.encode(columns, rows, caps, flags, ByteBufAllocator.DEFAULT)) {
                        byte[] bytes = new byte[packet.readableBytes()];
                        packet.readBytes(bytes);
                        packet.release();
                        out.add(bytes);
                    }
                    return out;
                }).withoutEdgeCases();
    }

    @Property
    void validResultSetsCompleteAtTheirLastPacket(@ForAll("resultSets") List<byte[]> encoded) {
        int capabilities = capabilitiesOf(encoded.get(0));
        List<byte[]> packets = encoded.subList(1, encoded.size());
        ResponseFraming framing = ResponseFraming.forCommand(CommandType.COM_QUERY, capabilities);
        for (int i = 0; i < packets.size(); i++) {
            Progress progress = framing.accept(Unpooled.wrappedBuffer(packets.get(i)));
            assertThat(progress).as("after packet %d of %d", i + 1, packets.size())
                    .isEqualTo(i == packets.size() - 1 ? Progress.COMPLETE : Progress.MORE);
        }
    }

    @Property
    void mutatedResultSetsAreFramedOrRefusedClearly(@ForAll("resultSets") List<byte[]> encoded,
            @ForAll("commands") CommandType command, @ForAll long seed) {
        int capabilities = capabilitiesOf(encoded.get(0));
        java.util.Random random = new java.util.Random(seed);
        List<byte[]> packets = new ArrayList<>();
        for (byte[] packet : encoded.subList(1, encoded.size())) {
            packets.add(random.nextInt(4) == 0 ? Fuzzing.mutate(packet, random) : packet);
        }
        Fuzzing.run("ResponseFraming", () -> {
            feed(random.nextBoolean() ? CommandType.COM_QUERY : command, capabilities, packets);
            return null;
        });
    }

    private static int capabilitiesOf(byte[] header) {
        return (header[0] & 0xFF) << 24 | (header[1] & 0xFF) << 16 | (header[2] & 0xFF) << 8 | (header[3] & 0xFF);
    }

    private static void feed(CommandType command, int capabilities, List<byte[]> packets) {
        ResponseFraming framing = ResponseFraming.forCommand(command, capabilities);
        for (byte[] bytes : packets) {
            if (framing.isComplete()) {
                return;
            }
            ByteBuf payload = Unpooled.wrappedBuffer(bytes);
            Progress progress;
            try {
                progress = framing.accept(payload);
            } catch (RuntimeException e) {
                Fuzzing.assertDocumentedFailure(e, command + " response packet " + Fuzzing.hex(bytes));
                return;
            }
            assertThat(payload.readerIndex()).as("accept reads, never consumes").isZero();
            assertThat(framing.progress()).isEqualTo(progress);
            assertThat(framing.isComplete()).isEqualTo(progress == Progress.COMPLETE);
            assertThat(framing.awaitingClient()).isEqualTo(progress == Progress.AWAITING_CLIENT);
            framing.moreResultsExist();
            framing.serverStatus();
        }
    }
}
