package io.gantry.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class CommandTypeTest {

    @Test
    void everyCommandIsFoundByItsCode() {
        for (CommandType type : EnumSet.complementOf(EnumSet.of(CommandType.UNKNOWN))) {
            assertThat(CommandType.fromCode(type.code())).isSameAs(type);
        }
        Set<Integer> codes = Arrays.stream(CommandType.values()).map(CommandType::code).collect(Collectors.toSet());
        assertThat(codes).hasSize(CommandType.values().length);
    }

    @Test
    void codesMatchTheProtocol() {
        assertThat(CommandType.COM_QUIT.code()).isEqualTo(0x01);
        assertThat(CommandType.COM_QUERY.code()).isEqualTo(0x03);
        assertThat(CommandType.COM_STMT_PREPARE.code()).isEqualTo(0x16);
        assertThat(CommandType.COM_STMT_EXECUTE.code()).isEqualTo(0x17);
        assertThat(CommandType.COM_RESET_CONNECTION.code()).isEqualTo(0x1F);
        assertThat(CommandType.COM_STMT_BULK_EXECUTE.code()).isEqualTo(0xFA);
    }

    @Test
    void anythingElseIsUnknownNeverAnException() {
        assertThat(CommandType.fromCode(0x22)).isSameAs(CommandType.UNKNOWN);
        assertThat(CommandType.fromCode(0xFF)).isSameAs(CommandType.UNKNOWN);
        assertThat(CommandType.fromCode(-1)).isSameAs(CommandType.UNKNOWN);
        assertThat(CommandType.fromCode(256)).isSameAs(CommandType.UNKNOWN);
        assertThat(CommandType.of(Unpooled.EMPTY_BUFFER)).isSameAs(CommandType.UNKNOWN);
    }

    @Test
    void commandOfAPayloadDoesNotConsumeIt() {
        ByteBuf payload = Unpooled.wrappedBuffer(new byte[] {0x03, 'S', 'E', 'L'});
        assertThat(CommandType.of(payload)).isSameAs(CommandType.COM_QUERY);
        assertThat(payload.readerIndex()).isZero();
        payload.release();
    }
}
