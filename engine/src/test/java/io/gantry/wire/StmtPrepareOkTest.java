package io.gantry.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class StmtPrepareOkTest {

    @Test
    void roundTripsInTwelveBytes() {
        StmtPrepareOk ok = new StmtPrepareOk(0xFFFF_FFFEL, 3, 2, 1);
        byte[] wire = CodecAssertions.bytes(ok::encode);
        assertThat(wire).containsExactly(0x00, 0xFE, 0xFF, 0xFF, 0xFF, 0x03, 0x00, 0x02, 0x00, 0x00, 0x01, 0x00);
        CodecAssertions.assertDecoded(wire, StmtPrepareOk::decode).isEqualTo(ok);
    }

    @Test
    void warningCountIsOptional() {
        byte[] wire = CodecAssertions.bytes(new StmtPrepareOk(7, 1, 0, 0)::encode);
        CodecAssertions.assertDecoded(Arrays.copyOf(wire, 10), StmtPrepareOk::decode)
                .isEqualTo(new StmtPrepareOk(7, 1, 0, 0));
    }

    @Test
    void statementIdIsRewrittenInPlace() {
        ByteBuf payload = Unpooled.buffer();
        new StmtPrepareOk(1, 4, 5, 0).encode(payload);
        payload.readerIndex(0);
        StmtPrepareOk.rewriteStatementId(payload, 0x01020304L);
        assertThat(payload.readerIndex()).isZero();
        assertThat(StmtPrepareOk.decode(payload)).isEqualTo(new StmtPrepareOk(0x01020304L, 4, 5, 0));
        payload.release();
        assertThat(new StmtPrepareOk(1, 4, 5, 0).withStatementId(9).statementId()).isEqualTo(9);
        ByteBuf err = Unpooled.wrappedBuffer(CodecAssertions.bytes(ErrPacket.of(1, "HY000", "no")::encode));
        assertThatThrownBy(() -> StmtPrepareOk.rewriteStatementId(err, 1))
                .isInstanceOf(MalformedPacketException.class).hasMessageContaining("not a COM_STMT_PREPARE_OK");
        err.release();
    }

    @Test
    void truncationsAndFlippedBytesFailWithTheFieldNamed() {
        byte[] wire = CodecAssertions.bytes(new StmtPrepareOk(1, 2, 3, 0)::encode);
        assertThat(CodecAssertions.assertTruncationsFailClearly(wire, StmtPrepareOk::decode))
                .extracting(MalformedPacketException::field)
                .contains("COM_STMT_PREPARE_OK.status", "COM_STMT_PREPARE_OK.statement_id",
                        "COM_STMT_PREPARE_OK.num_columns", "COM_STMT_PREPARE_OK.num_params",
                        "COM_STMT_PREPARE_OK.reserved_1", "COM_STMT_PREPARE_OK.warning_count");
        CodecAssertions.assertFlipsFailClearly(wire, StmtPrepareOk::decode);
    }
}
