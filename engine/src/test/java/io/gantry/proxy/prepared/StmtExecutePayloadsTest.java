package io.gantry.proxy.prepared;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.proxy.prepared.StmtExecutePayloads.ExecuteHeader;
import io.gantry.wire.MalformedPacketException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.util.LinkedHashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Payloads are written out byte by byte after
 * https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_stmt_execute.html.
 */
class StmtExecutePayloadsTest {

    private static final int MYSQL_TYPE_TINY = 0x01;
    private static final int MYSQL_TYPE_LONG = 0x03;
    private static final int MYSQL_TYPE_LONGLONG = 0x08;
    private static final int MYSQL_TYPE_VAR_STRING = 0xFD;
    private static final int UNSIGNED = 0x80;

    /** COM_STMT_EXECUTE, statement 0x04030201, no cursor, iteration count 1. */
    private static final byte[] HEADER = bytes(0x17, 0x01, 0x02, 0x03, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00);

    @Test
    void readsTheStatementIdOfEveryStatementCommandWithoutConsumingIt() {
        int[][] payloads = {
            {0x17, 0x01, 0x02, 0x03, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00},
            {0x18, 0x01, 0x02, 0x03, 0x04, 0x00, 0x00, 'a', 'b'},
            {0x19, 0x01, 0x02, 0x03, 0x04},
            {0x1A, 0x01, 0x02, 0x03, 0x04},
            {0x1C, 0x01, 0x02, 0x03, 0x04, 0x0A, 0x00, 0x00, 0x00},
            {0xFA, 0x01, 0x02, 0x03, 0x04, 0x80, 0x00},
        };
        for (int[] payload : payloads) {
            ByteBuf buf = buf(payload);
            assertThat(StmtExecutePayloads.statementId(buf)).isEqualTo(0x04030201L);
            assertThat(buf.readerIndex()).isZero();
            buf.release();
        }
        ByteBuf mariaDbLast = buf(0x17, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x01, 0x00, 0x00, 0x00);
        assertThat(StmtExecutePayloads.statementId(mariaDbLast)).isEqualTo(0xFFFF_FFFFL);
        mariaDbLast.release();
    }

    @Test
    void refusesPayloadsThatAreNotStatementCommands() {
        ByteBuf query = buf(0x03, 'S', 'E', 'L', 'E', 'C', 'T', ' ', '1');
        assertThatThrownBy(() -> StmtExecutePayloads.statementId(query))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("COM_QUERY");
        assertThatThrownBy(() -> StmtExecutePayloads.parseExecute(query, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("COM_STMT_EXECUTE");
        assertThatThrownBy(() -> StmtExecutePayloads.statementId(Unpooled.EMPTY_BUFFER))
                .isInstanceOf(IllegalArgumentException.class);
        ByteBuf close = buf(0x19, 0x01, 0x00, 0x00, 0x00);
        assertThatThrownBy(() -> StmtExecutePayloads.parseExecute(close, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("COM_STMT_CLOSE");
        query.release();
        close.release();
    }

    @Test
    void namesTheCommandWhenTheStatementIdIsCutOff() {
        ByteBuf close = buf(0x19, 0x01, 0x02);
        assertThatThrownBy(() -> StmtExecutePayloads.statementId(close))
                .isInstanceOf(MalformedPacketException.class)
                .hasMessage("COM_STMT_CLOSE.statement_id: needs 4 bytes but only 2 are left");
        assertThatThrownBy(() -> StmtExecutePayloads.withStatementId(close, 9))
                .isInstanceOf(MalformedPacketException.class).hasMessageStartingWith("COM_STMT_CLOSE.statement_id");
        assertThatThrownBy(() -> StmtExecutePayloads.setStatementId(close, 9))
                .isInstanceOf(MalformedPacketException.class).hasMessageStartingWith("COM_STMT_CLOSE.statement_id");
        close.release();
    }

    @Test
    void copiesAPayloadWithAnotherStatementIdAndLeavesTheOriginalAlone() {
        ByteBuf fetch = buf(0x1C, 0x01, 0x02, 0x03, 0x04, 0x0A, 0x00, 0x00, 0x00);
        ByteBuf copy = StmtExecutePayloads.withStatementId(fetch, 0xFFFF_FFFEL);
        assertThat(ByteBufUtil.getBytes(copy)).containsExactly(bytes(0x1C, 0xFE, 0xFF, 0xFF, 0xFF, 0x0A, 0x00, 0x00, 0x00));
        assertThat(ByteBufUtil.getBytes(fetch)).containsExactly(bytes(0x1C, 0x01, 0x02, 0x03, 0x04, 0x0A, 0x00, 0x00, 0x00));
        assertThatThrownBy(() -> StmtExecutePayloads.withStatementId(fetch, 0x1_0000_0000L))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> StmtExecutePayloads.withStatementId(fetch, -1))
                .isInstanceOf(IllegalArgumentException.class);
        copy.release();
        fetch.release();
    }

    @Test
    void setsTheStatementIdInPlaceWhereverTheReaderIndexIs() {
        ByteBuf buf = buf(0xEE, 0xEE, 0x19, 0x01, 0x02, 0x03, 0x04);
        buf.readerIndex(2);
        StmtExecutePayloads.setStatementId(buf, 7);
        assertThat(buf.readerIndex()).isEqualTo(2);
        assertThat(ByteBufUtil.getBytes(buf, 0, buf.writerIndex()))
                .containsExactly(bytes(0xEE, 0xEE, 0x19, 0x07, 0x00, 0x00, 0x00));
        ByteBuf copy = StmtExecutePayloads.withStatementId(buf, 8);
        assertThat(ByteBufUtil.getBytes(copy)).containsExactly(bytes(0x19, 0x08, 0x00, 0x00, 0x00));
        copy.release();
        buf.release();
    }

    @Test
    void parsesAnExecuteWithoutParametersWhichHasNoBitmapAndNoFlag() {
        ByteBuf payload = buf(0x17, 0x05, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00);
        ExecuteHeader header = StmtExecutePayloads.parseExecute(payload, 0);
        assertThat(header).isEqualTo(new ExecuteHeader(5, StmtExecutePayloads.CURSOR_TYPE_READ_ONLY, 1, 0,
                new byte[0], false, new byte[0], 10));
        assertThat(header.opensCursor()).isTrue();
        assertThat(payload.readerIndex()).isZero();
        assertThatThrownBy(() -> StmtExecutePayloads.withParamTypes(payload, 0, new byte[0]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("without parameters");
        payload.release();
    }

    @Test
    void parsesOneBoundParameter() {
        ByteBuf payload = buf(concat(HEADER,
                bytes(0x00),                                            // null_bitmap
                bytes(0x01),                                            // new_params_bind_flag
                bytes(MYSQL_TYPE_LONGLONG, 0x00),                       // parameter_type
                bytes(0x2A, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00))); // 42
        ExecuteHeader header = StmtExecutePayloads.parseExecute(payload, 1);
        assertThat(header.statementId()).isEqualTo(0x04030201L);
        assertThat(header.flags()).isEqualTo(StmtExecutePayloads.CURSOR_TYPE_NO_CURSOR);
        assertThat(header.opensCursor()).isFalse();
        assertThat(header.iterationCount()).isEqualTo(1);
        assertThat(header.paramCount()).isEqualTo(1);
        assertThat(header.nullBitmap()).containsExactly(0x00);
        assertThat(header.isNull(0)).isFalse();
        assertThat(header.newParamsBound()).isTrue();
        assertThat(header.paramTypes()).containsExactly(bytes(MYSQL_TYPE_LONGLONG, 0x00));
        assertThat(header.valuesOffset()).isEqualTo(14);
        payload.release();
    }

    @Test
    void parsesOneNullParameterWithoutTypes() {
        ByteBuf payload = buf(concat(HEADER, bytes(0x01), bytes(0x00)));
        ExecuteHeader header = StmtExecutePayloads.parseExecute(payload, 1);
        assertThat(header.isNull(0)).isTrue();
        assertThat(header.newParamsBound()).isFalse();
        assertThat(header.paramTypes()).isEmpty();
        assertThat(header.valuesOffset()).isEqualTo(12);
        assertThatThrownBy(() -> header.isNull(1)).isInstanceOf(IndexOutOfBoundsException.class);
        payload.release();
    }

    @Test
    void eightParametersShareOneBitmapByte() {
        byte[] types = eightTypes();
        ByteBuf payload = buf(concat(HEADER,
                bytes(0x81),          // parameters 0 and 7 are NULL
                bytes(0x01),
                types,
                sixValues()));
        ExecuteHeader header = StmtExecutePayloads.parseExecute(payload, 8);
        assertThat(header.nullBitmap()).containsExactly(bytes(0x81));
        assertThat(header.isNull(0)).isTrue();
        assertThat(header.isNull(1)).isFalse();
        assertThat(header.isNull(6)).isFalse();
        assertThat(header.isNull(7)).isTrue();
        assertThat(header.paramTypes()).containsExactly(types);
        assertThat(header.valuesOffset()).isEqualTo(10 + 1 + 1 + 16);
        payload.release();
    }

    @Test
    void nineParametersTakeTwoBitmapBytes() {
        byte[] types = concat(eightTypes(), bytes(MYSQL_TYPE_VAR_STRING, 0x00));
        ByteBuf payload = buf(concat(HEADER,
                bytes(0x81, 0x01),    // parameters 0, 7 and 8 are NULL
                bytes(0x01),
                types,
                sixValues()));
        ExecuteHeader header = StmtExecutePayloads.parseExecute(payload, 9);
        assertThat(header.nullBitmap()).containsExactly(bytes(0x81, 0x01));
        assertThat(header.isNull(8)).isTrue();
        assertThat(header.isNull(2)).isFalse();
        assertThat(header.paramTypes()).containsExactly(types);
        assertThat(header.valuesOffset()).isEqualTo(10 + 2 + 1 + 18);
        payload.release();
    }

    @Test
    void bindingRememberedTypesGivesTheClientsOwnPayloadWithOneParameter() {
        byte[] types = bytes(MYSQL_TYPE_LONGLONG, UNSIGNED);
        byte[] value = bytes(0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF);
        byte[] withoutTypes = concat(bytes(0x17, 0x01, 0x02, 0x03, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00),
                bytes(0x00), bytes(0x00), value);
        byte[] withTypes = bytes(0x17, 0x01, 0x02, 0x03, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00,
                0x00, 0x01, 0x08, 0x80, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF);
        assertBindsTo(withoutTypes, 1, types, withTypes);
    }

    @Test
    void bindingRememberedTypesGivesTheClientsOwnPayloadWithEightAndNineParameters() {
        byte[] eight = eightTypes();
        assertBindsTo(concat(HEADER, bytes(0x81), bytes(0x00), sixValues()), 8, eight,
                concat(HEADER, bytes(0x81), bytes(0x01), eight, sixValues()));
        byte[] nine = concat(eight, bytes(MYSQL_TYPE_VAR_STRING, 0x00));
        assertBindsTo(concat(HEADER, bytes(0x81, 0x01), bytes(0x00), sixValues()), 9, nine,
                concat(HEADER, bytes(0x81, 0x01), bytes(0x01), nine, sixValues()));
        byte[] allNull = concat(HEADER, bytes(0xFF, 0x01), bytes(0x00));
        assertBindsTo(allNull, 9, nine, concat(HEADER, bytes(0xFF, 0x01), bytes(0x01), nine));
    }

    @Test
    void bindsTypesIntoAPayloadThatDoesNotStartTheBuffer() {
        byte[] types = bytes(MYSQL_TYPE_LONG, 0x00);
        ByteBuf buf = buf(concat(bytes(0xEE), HEADER, bytes(0x00), bytes(0x00), bytes(0x07, 0x00, 0x00, 0x00)));
        buf.readerIndex(1);
        ExecuteHeader header = StmtExecutePayloads.parseExecute(buf, 1);
        assertThat(header.valuesOffset()).isEqualTo(12);
        ByteBuf bound = StmtExecutePayloads.withParamTypes(buf, 1, types);
        assertThat(ByteBufUtil.getBytes(bound))
                .containsExactly(concat(HEADER, bytes(0x00), bytes(0x01), types, bytes(0x07, 0x00, 0x00, 0x00)));
        assertThat(buf.readerIndex()).isEqualTo(1);
        bound.release();
        buf.release();
    }

    @Test
    void refusesToBindTypesTwiceOrOfTheWrongLength() {
        byte[] types = bytes(MYSQL_TYPE_TINY, 0x00);
        ByteBuf bound = buf(concat(HEADER, bytes(0x00), bytes(0x01), types, bytes(0x01)));
        assertThatThrownBy(() -> StmtExecutePayloads.withParamTypes(bound, 1, types))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("already binds");
        ByteBuf unbound = buf(concat(HEADER, bytes(0x00), bytes(0x00), bytes(0x01)));
        assertThatThrownBy(() -> StmtExecutePayloads.withParamTypes(unbound, 1, bytes(MYSQL_TYPE_TINY)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected 2 bytes");
        bound.release();
        unbound.release();
    }

    @Test
    void anyNonZeroBindFlagCountsAsBound() {
        ByteBuf payload = buf(concat(HEADER, bytes(0x00), bytes(0x02), bytes(MYSQL_TYPE_TINY, 0x00), bytes(0x01)));
        assertThat(StmtExecutePayloads.parseExecute(payload, 1).newParamsBound()).isTrue();
        payload.release();
    }

    @Test
    void truncatedExecutesFailNamingTheField() {
        byte[] nine = concat(eightTypes(), bytes(MYSQL_TYPE_VAR_STRING, 0x00));
        byte[] full = concat(HEADER, bytes(0x00, 0x00), bytes(0x01), nine);
        Set<String> fields = new LinkedHashSet<>();
        for (int length = 1; length < full.length; length++) {
            ByteBuf cut = Unpooled.wrappedBuffer(full, 0, length);
            try {
                StmtExecutePayloads.parseExecute(cut, 9);
                throw new AssertionError("a payload cut to " + length + " bytes was accepted");
            } catch (MalformedPacketException e) {
                assertThat(e.getMessage()).startsWith(e.field() + ": needs ");
                fields.add(e.field());
            }
        }
        assertThat(fields).containsExactly("COM_STMT_EXECUTE.statement_id", "COM_STMT_EXECUTE.flags",
                "COM_STMT_EXECUTE.iteration_count", "COM_STMT_EXECUTE.null_bitmap",
                "COM_STMT_EXECUTE.new_params_bind_flag", "COM_STMT_EXECUTE.parameter_type");
        ByteBuf whole = Unpooled.wrappedBuffer(full);
        assertThat(StmtExecutePayloads.parseExecute(whole, 9).valuesOffset()).isEqualTo(full.length);
        ByteBuf noFlag = Unpooled.wrappedBuffer(concat(HEADER, bytes(0x00, 0x00)));
        assertThatThrownBy(() -> StmtExecutePayloads.withParamTypes(noFlag, 9, nine))
                .isInstanceOf(MalformedPacketException.class)
                .hasMessage("COM_STMT_EXECUTE.new_params_bind_flag: needs 1 bytes but only 0 are left");
        ByteBuf shortBitmap = Unpooled.wrappedBuffer(concat(HEADER, bytes(0x00)));
        assertThatThrownBy(() -> StmtExecutePayloads.parseExecute(shortBitmap, 9))
                .isInstanceOf(MalformedPacketException.class)
                .hasMessage("COM_STMT_EXECUTE.null_bitmap: needs 2 bytes but only 1 are left");
    }

    @Test
    void headerRejectsABitmapOrTypesThatDoNotFitTheCount() {
        assertThatThrownBy(() -> new ExecuteHeader(1, 0, 1, 9, new byte[1], false, new byte[0], 12))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("NULL bitmap");
        assertThatThrownBy(() -> new ExecuteHeader(1, 0, 1, 1, new byte[1], true, new byte[0], 12))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("parameter types");
    }

    // ---- helpers ---------------------------------------------------------------------------------

    private static void assertBindsTo(byte[] withoutTypes, int paramCount, byte[] types, byte[] expected) {
        ByteBuf payload = Unpooled.wrappedBuffer(withoutTypes);
        ByteBuf bound = StmtExecutePayloads.withParamTypes(payload, paramCount, types);
        assertThat(ByteBufUtil.getBytes(bound)).containsExactly(expected);
        assertThat(ByteBufUtil.getBytes(payload)).containsExactly(withoutTypes);
        ExecuteHeader header = StmtExecutePayloads.parseExecute(bound, paramCount);
        assertThat(header.newParamsBound()).isTrue();
        assertThat(header.paramTypes()).containsExactly(types);
        bound.release();
    }

    /** TINY, LONG, LONGLONG unsigned, VAR_STRING, then the same four again. */
    private static byte[] eightTypes() {
        byte[] four = bytes(MYSQL_TYPE_TINY, 0x00, MYSQL_TYPE_LONG, 0x00, MYSQL_TYPE_LONGLONG, UNSIGNED,
                MYSQL_TYPE_VAR_STRING, 0x00);
        return concat(four, four);
    }

    /** Values of parameters 1 to 6 of {@link #eightTypes()} (0, 7 and 8 are NULL). */
    private static byte[] sixValues() {
        return concat(
                bytes(0x03, 0x00, 0x00, 0x00),                          // 1: LONG 3
                bytes(0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00),  // 2: LONGLONG 5
                bytes(0x02, 'h', 'i'),                                  // 3: VAR_STRING "hi"
                bytes(0x7F),                                            // 4: TINY 127
                bytes(0xFF, 0xFF, 0xFF, 0xFF),                          // 5: LONG -1
                bytes(0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80)); // 6: LONGLONG 2^63
    }

    private static byte[] bytes(int... values) {
        byte[] out = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = (byte) values[i];
        }
        return out;
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }

    private static ByteBuf buf(int... values) {
        return Unpooled.wrappedBuffer(bytes(values));
    }

    private static ByteBuf buf(byte[] values) {
        return Unpooled.wrappedBuffer(values);
    }
}
