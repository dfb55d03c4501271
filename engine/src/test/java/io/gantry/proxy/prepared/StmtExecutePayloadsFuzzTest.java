package io.gantry.proxy.prepared;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.wire.Fuzzing;
import io.gantry.wire.WireArbitraries;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * {@link StmtExecutePayloads} on statement command payloads with arbitrary bodies and an arbitrary {@code num_params}
 * (0 to 65535): reading the id and the execute header gives a value or {@link io.gantry.wire.MalformedPacketException},
 * allocates no more than the payload holds (a bitmap or type list for 65535 parameters is refused before it is read
 * from a short payload), and leaves the payload as it was.
 */
class StmtExecutePayloadsFuzzTest {

    @Provide
    Arbitrary<byte[]> executes() {
        Arbitrary<byte[]> valid = Combinators.combine(Arbitraries.integers(), Arbitraries.integers().between(0, 255),
                Arbitraries.integers().between(0, 40), WireArbitraries.bytes(60))
                .as((id, flags, params, rest) -> Fuzzing.encode(buf -> {
                    buf.writeByte(0x17);
                    buf.writeIntLE(id);
                    buf.writeByte(flags);
                    buf.writeIntLE(1);
                    buf.writeZero((params + 7) / 8);
                    buf.writeByte(1);
                    buf.writeZero(2 * params);
                    buf.writeBytes(rest);
                }));
        return Fuzzing.validMutatedOrArbitrary(valid, 80).map(bytes -> {
            if (bytes.length > 0) {
                bytes[0] = 0x17; // parseExecute documents IllegalArgumentException for other commands
            }
            return bytes;
        }).filter(bytes -> bytes.length > 0);
    }

    @Provide
    Arbitrary<Integer> paramCounts() {
        return Arbitraries.oneOf(Arbitraries.integers().between(0, 64), Arbitraries.integers().between(0, 0xFFFF),
                Arbitraries.of(0xFFFF, 0x8000, 255, 256));
    }

    @Property
    void executeHeadersParseOrFailClearly(@ForAll("executes") byte[] payload, @ForAll("paramCounts") int paramCount) {
        Fuzzing.Outcome<StmtExecutePayloads.ExecuteHeader> outcome = Fuzzing.decodeClearly("COM_STMT_EXECUTE", payload,
                buf -> {
                    StmtExecutePayloads.ExecuteHeader header = StmtExecutePayloads.parseExecute(buf, paramCount);
                    assertThat(buf.readerIndex()).as("not consumed").isZero();
                    return header;
                }, 16);
        if (outcome.value() != null) {
            assertThat(outcome.value().valuesOffset()).isBetween(10, payload.length);
            assertThat(StmtExecutePayloads.statementId(Unpooled.wrappedBuffer(payload)))
                    .isEqualTo(outcome.value().statementId());
        }
    }

    /** The per-execution check reads the bind flag as the full parse does, and fails where and as it fails. */
    @Property
    void bindFlagAgreesWithTheFullParse(@ForAll("executes") byte[] payload, @ForAll("paramCounts") int paramCount) {
        if (paramCount == 0) {
            return;
        }
        String parsed;
        boolean parsedBinds = false;
        try {
            parsedBinds = StmtExecutePayloads.parseExecute(Unpooled.wrappedBuffer(payload), paramCount)
                    .newParamsBound();
            parsed = null;
        } catch (io.gantry.wire.MalformedPacketException e) {
            parsed = e.getMessage();
        }
        ByteBuf buf = Unpooled.wrappedBuffer(payload);
        try {
            boolean binds = StmtExecutePayloads.bindsNewTypes(buf, paramCount);
            if (parsed == null) {
                assertThat(binds).isEqualTo(parsedBinds);
            } else {
                // the full parse may also fail on the types themselves, which follow a set flag
                assertThat(parsed).startsWith("COM_STMT_EXECUTE.parameter_type");
                assertThat(binds).isTrue();
            }
        } catch (io.gantry.wire.MalformedPacketException e) {
            assertThat(e.getMessage()).isEqualTo(parsed);
        }
        assertThat(buf.readerIndex()).as("not consumed").isZero();
    }

    @Property
    void statementIdsOfEveryStatementCommandReadOrFailClearly(@ForAll("executes") byte[] payload,
            @ForAll("statementCommands") int command, @ForAll("paramCounts") int paramCount) {
        payload[0] = (byte) command;
        Fuzzing.decodeClearly("statement id", payload, StmtExecutePayloads::statementId, 16);
        Fuzzing.decodeClearly("statement id rewrite", payload, buf -> {
            ByteBuf copy = StmtExecutePayloads.withStatementId(buf, 0xFFFF_FFFFL);
            assertThat(copy.readableBytes()).isEqualTo(payload.length);
            copy.release();
            StmtExecutePayloads.setStatementId(buf, 1);
            return null;
        }, 16);
        if (command == 0x17 && paramCount > 0) {
            Fuzzing.decodeClearly("bind parameter types", payload, buf -> {
                try {
                    ByteBuf out = StmtExecutePayloads.withParamTypes(buf, paramCount, new byte[2 * paramCount]);
                    out.release();
                } catch (IllegalArgumentException alreadyBound) {
                    // documented: the payload already binds its types
                    assertThat(alreadyBound).hasMessageContaining("already binds");
                }
                return null;
            }, 16 + 2L * paramCount);
        }
    }

    @Provide
    Arbitrary<Integer> statementCommands() {
        return Arbitraries.of(0x17, 0x18, 0x19, 0x1A, 0x1C, 0xFA);
    }
}
