package io.gantry.proxy.execution;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.wire.CapabilityFlags;
import io.gantry.wire.CommandType;
import io.gantry.wire.Packet;
import io.gantry.wire.ResponseFraming;
import io.netty.buffer.Unpooled;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** The checksum a transaction replay compares: the same for the same answer from another server, else different. */
class AnswerChecksumTest {

    private static final int CAPABILITIES = CapabilityFlags.CLIENT_PROTOCOL_41 | CapabilityFlags.CLIENT_DEPRECATE_EOF
            | CapabilityFlags.CLIENT_SESSION_TRACK;

    /** An OK packet's payload: affected rows and last insert id (each under 251), status flags, warnings. */
    private static String ok(int affected, int insertId, String status, String warnings) {
        return "00" + String.format("%02x%02x", affected, insertId) + status + warnings;
    }

    @Test
    void anOkOfAnotherServerWithOtherStatusFlagsAndSessionStateHasTheSameChecksum() {
        String onePrimary = ok(1, 7, "0300", "0000");
        // The same outcome, other status flags, and a session-state change (a GTID) after them.
        String another = ok(1, 7, "0340", "0000") + "0b" + "0309" + "0007" + "302d322d3133";
        assertThat(checksum(onePrimary)).isEqualTo(checksum(another));
    }

    @Test
    void anotherInsertIdAffectedRowCountOrWarningCountChangesTheChecksum() {
        long base = checksum(ok(1, 7, "0300", "0000"));
        assertThat(checksum(ok(1, 8, "0300", "0000"))).isNotEqualTo(base);
        assertThat(checksum(ok(2, 7, "0300", "0000"))).isNotEqualTo(base);
        assertThat(checksum(ok(1, 7, "0300", "0100"))).isNotEqualTo(base);
    }

    @Test
    void anErrorIsItsCodeAndStateNotItsWording() {
        String duplicate = err("2610", "23000", "Duplicate entry '1' for key 'PRIMARY'");
        String worded = err("2610", "23000", "Duplicate 1");
        String other = err("2710", "23000", "Duplicate entry '1' for key 'PRIMARY'");
        assertThat(checksum(duplicate)).isEqualTo(checksum(worded));
        assertThat(checksum(other)).isNotEqualTo(checksum(duplicate));
    }

    @Test
    void aRowOfAnotherValueChangesTheChecksum() {
        String column = "03646566" + "00" + "00" + "00" + "0178" + "00" + "0c" + "3f00" + "0b000000" + "03" + "0000"
                + "00" + "0000";
        String end = "fe" + "00" + "00" + "2200" + "0000";
        long one = checksum("01", column, "0131", end);
        long two = checksum("01", column, "0132", end);
        assertThat(one).isNotEqualTo(two);
        assertThat(checksum("01", column, "0131", end)).isEqualTo(one);
    }

    private static String err(String code, String state, String message) {
        return "ff" + code + "23" + HexFormat.of().formatHex(state.getBytes())
                + HexFormat.of().formatHex(message.getBytes());
    }

    private static long checksum(String... packets) {
        ResponseFraming framing = ResponseFraming.forCommand(CommandType.COM_QUERY, CAPABILITIES);
        AnswerChecksum checksum = new AnswerChecksum();
        for (String hex : packets) {
            Packet packet = new Packet(1, Unpooled.wrappedBuffer(HexFormat.of().parseHex(hex)));
            framing.accept(packet.payload());
            checksum.add(packet, framing);
        }
        assertThat(framing.isComplete()).isTrue();
        return checksum.value();
    }
}
