package io.gantry.proxy.session;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.proxy.prepared.StmtExecutePayloads;
import io.gantry.proxy.session.OwnStatement.Execution;
import io.gantry.proxy.session.OwnStatement.Match;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Executions compared with the text MariaDB logs for them (measured: 11.4 writes {@code 'it\'s \"q\" \\ é'}). */
class OwnStatementTest {

    private static final String UPSERT = "INSERT INTO kv (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = ?";

    private static Execution upsert(Object... values) {
        return new Execution(UPSERT, Arrays.asList(values), false);
    }

    @Test
    void theSameValuesWrittenAsLiteralsAreTheSameStatement() {
        assertThat(upsert(7L, 343L, 343L).matches("INSERT INTO kv (k, v) VALUES (7, 343) ON DUPLICATE KEY UPDATE v = 343"))
                .isEqualTo(Match.SAME);
        assertThat(upsert(-7L, null, BigInteger.TWO.pow(64).subtract(BigInteger.ONE)).matches(
                "INSERT INTO kv (k, v) VALUES (-7, NULL) ON DUPLICATE KEY UPDATE v = 18446744073709551615"))
                .isEqualTo(Match.SAME);
    }

    @Test
    void anotherValueOrAnotherStatementIsDifferent() {
        assertThat(upsert(7L, 343L, 343L).matches("INSERT INTO kv (k, v) VALUES (8, 343) ON DUPLICATE KEY UPDATE v = 343"))
                .isEqualTo(Match.DIFFERENT);
        assertThat(upsert(7L, 343L, 343L).matches("INSERT INTO kv (k, v) VALUES (7, NULL) ON DUPLICATE KEY UPDATE v = 343"))
                .isEqualTo(Match.DIFFERENT);
        assertThat(upsert(7L, 343L, 343L).matches("DELETE FROM kv WHERE k = 7")).isEqualTo(Match.DIFFERENT);
    }

    @Test
    void stringsAreReadWithTheirEscapes() {
        Execution insert = new Execution("INSERT INTO x VALUES (?, ?)", List.of(7L,
                "it's \"q\" \\ é".getBytes(StandardCharsets.UTF_8)), false);
        assertThat(insert.matches("INSERT INTO x VALUES (7, 'it\\'s \\\"q\\\" \\\\ é')")).isEqualTo(Match.SAME);
        assertThat(insert.matches("INSERT INTO x VALUES (7, 'its')")).isEqualTo(Match.CANNOT_TELL);
        Execution ascii = new Execution("INSERT INTO x VALUES (?)", List.of("abc".getBytes(StandardCharsets.UTF_8)),
                false);
        assertThat(ascii.matches("INSERT INTO x VALUES ('abd')")).isEqualTo(Match.DIFFERENT);
    }

    @Test
    void whatIsNotComparedIsNeverTakenForDifferent() {
        Execution dated = new Execution("INSERT INTO x VALUES (?)", List.of(StmtExecutePayloads.NOT_DECODED), false);
        assertThat(dated.matches("INSERT INTO x VALUES ('2026-12-07 15:00:00')")).isEqualTo(Match.CANNOT_TELL);
        Execution real = new Execution("INSERT INTO x VALUES (?)", List.of(0.1 + 0.2), false);
        assertThat(real.matches("INSERT INTO x VALUES (0.3)")).isEqualTo(Match.CANNOT_TELL);
        assertThat(real.matches("INSERT INTO x VALUES (0.30000000000000004)")).isEqualTo(Match.SAME);
        assertThat(real.matches("INSERT INTO x VALUES (7)")).isEqualTo(Match.DIFFERENT);
    }

    @Test
    void parameterValuesAreReadByTheirTypes() {
        // COM_STMT_EXECUTE, id 1, no cursor, 1 iteration; 3 parameters: NULL bitmap (the 2nd is NULL), types bound.
        ByteBuf payload = Unpooled.buffer();
        payload.writeByte(0x17).writeIntLE(1).writeByte(0).writeIntLE(1);
        payload.writeByte(0b010).writeByte(1);
        payload.writeBytes(new byte[] {0x08, 0, 0x0f, 0, (byte) 0xfd, 0});
        payload.writeLongLE(-42);
        payload.writeByte(3).writeBytes("abc".getBytes(StandardCharsets.US_ASCII));
        byte[] types = {0x08, 0, 0x0f, 0, (byte) 0xfd, 0};
        List<Object> values = StmtExecutePayloads.parameterValues(payload, 3, types);
        assertThat(values).hasSize(3);
        assertThat(values.get(0)).isEqualTo(-42L);
        assertThat(values.get(1)).isNull();
        assertThat((byte[]) values.get(2)).isEqualTo("abc".getBytes(StandardCharsets.US_ASCII));
        assertThat(StmtExecutePayloads.parameterValues(payload, 3, null)).isNull();
        assertThat(StmtExecutePayloads.parameterValues(payload.slice(0, payload.readableBytes() - 2), 3, types))
                .as("cut short").isNull();
    }
}
