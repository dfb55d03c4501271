package io.gantry.wire;

import static io.gantry.wire.CapabilityFlags.CLIENT_PROTOCOL_41;
import static io.gantry.wire.CapabilityFlags.CLIENT_SESSION_TRACK;
import static io.gantry.wire.CapabilityFlags.CLIENT_TRANSACTIONS;
import static io.gantry.wire.ServerStatus.SERVER_SESSION_STATE_CHANGED;
import static io.gantry.wire.ServerStatus.SERVER_STATUS_AUTOCOMMIT;
import static io.gantry.wire.ServerStatus.SERVER_STATUS_IN_TRANS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.wire.SessionStateChange.Gtids;
import io.gantry.wire.SessionStateChange.Schema;
import io.gantry.wire.SessionStateChange.StateChange;
import io.gantry.wire.SessionStateChange.SystemVariable;
import io.gantry.wire.SessionStateChange.TransactionCharacteristics;
import io.gantry.wire.SessionStateChange.TransactionState;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class OkPacketTest {

    private static final int TRACK = CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS | CLIENT_SESSION_TRACK;
    private static final int NO_TRACK = CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS;

    @Test
    void plainOkIsSevenBytesUnderSessionTrackingAndRoundTrips() {
        OkPacket ok = OkPacket.of(0, 0, SERVER_STATUS_AUTOCOMMIT, 0);
        byte[] wire = CodecAssertions.bytes(b -> ok.encode(b, TRACK));
        assertThat(wire).containsExactly(0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00);
        CodecAssertions.assertDecoded(wire, b -> OkPacket.decode(b, TRACK)).isEqualTo(ok);
    }

    @Test
    void infoIsLengthEncodedWithSessionTrackingAndRestOfPacketWithout() {
        OkPacket ok = new OkPacket(false, 3, 0, SERVER_STATUS_AUTOCOMMIT, 1, "Rows matched: 3  Changed: 3  Warnings: 1",
                List.of());
        byte[] tracked = CodecAssertions.bytes(b -> ok.encode(b, TRACK));
        byte[] untracked = CodecAssertions.bytes(b -> ok.encode(b, NO_TRACK));
        assertThat(tracked).hasSize(untracked.length + 1);
        CodecAssertions.assertDecoded(tracked, b -> OkPacket.decode(b, TRACK)).isEqualTo(ok);
        CodecAssertions.assertDecoded(untracked, b -> OkPacket.decode(b, NO_TRACK)).isEqualTo(ok);
    }

    @Test
    void largeUnsignedCountersRoundTrip() {
        OkPacket ok = OkPacket.of(-1L, 1L << 40, 0, 0xFFFF);
        byte[] wire = CodecAssertions.bytes(b -> ok.encode(b, TRACK));
        OkPacket decoded = CodecAssertions.decode(wire, b -> OkPacket.decode(b, TRACK));
        assertThat(Long.toUnsignedString(decoded.affectedRows())).isEqualTo("18446744073709551615");
        assertThat(decoded).isEqualTo(ok);
    }

    @Test
    void decodesMariaDbLastGtidFromBytesBuiltByHand() {
        byte[] wire = CodecAssertions.bytes(b -> {
            b.writeByte(0x00);
            b.writeByte(1);
            b.writeByte(0);
            b.writeShortLE(SERVER_STATUS_AUTOCOMMIT | SERVER_SESSION_STATE_CHANGED);
            b.writeShortLE(0);
            b.writeByte(0);
            b.writeByte(23);
            b.writeByte(SessionStateChange.SESSION_TRACK_SYSTEM_VARIABLES);
            b.writeByte(21);
            b.writeByte(9);
            b.writeBytes("last_gtid".getBytes(StandardCharsets.US_ASCII));
            b.writeByte(10);
            b.writeBytes("0-33061-47".getBytes(StandardCharsets.US_ASCII));
        });
        OkPacket ok = CodecAssertions.decode(wire, b -> OkPacket.decode(b, TRACK));
        assertThat(ok.affectedRows()).isEqualTo(1);
        assertThat(ok.sessionStateChanges()).containsExactly(new SystemVariable("last_gtid", "0-33061-47"));
        assertThat(ok.trackedGtids()).contains("0-33061-47");
        assertThat(ok.systemVariable("LAST_GTID")).contains("0-33061-47");
        assertThat(CodecAssertions.bytes(b -> ok.encode(b, TRACK))).isEqualTo(wire);
    }

    @Test
    void everyKnownSessionTrackerRoundTripsAndUnknownOnesAreSkipped() {
        String mysqlGtid = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5";
        List<SessionStateChange> changes = List.of(
                new SystemVariable("autocommit", "OFF"),
                new Schema("shop"),
                new StateChange("1"),
                new Gtids(0, mysqlGtid),
                new TransactionCharacteristics("START TRANSACTION READ ONLY;"),
                new TransactionState("T_______"));
        int status = SERVER_STATUS_IN_TRANS | SERVER_SESSION_STATE_CHANGED;
        OkPacket ok = new OkPacket(false, 0, 0, status, 0, "", changes);
        byte[] wire = CodecAssertions.bytes(b -> ok.encode(b, TRACK));
        OkPacket decoded = CodecAssertions.decode(wire, b -> OkPacket.decode(b, TRACK));
        assertThat(decoded).isEqualTo(ok);
        assertThat(decoded.trackedGtids()).contains(mysqlGtid);
        assertThat(decoded.schema()).contains("shop");
        assertThat(decoded.inTransaction()).isTrue();

        byte[] withUnknown = CodecAssertions.bytes(b -> {
            b.writeBytes(new byte[] {0, 0, 0});
            b.writeShortLE(SERVER_SESSION_STATE_CHANGED);
            b.writeShortLE(0);
            b.writeByte(0);
            b.writeByte(3 + 7);
            b.writeBytes(new byte[] {0x7F, 1, 9});
            b.writeByte(SessionStateChange.SESSION_TRACK_SCHEMA);
            b.writeByte(5);
            b.writeByte(4);
            b.writeBytes("test".getBytes(StandardCharsets.US_ASCII));
        });
        assertThat(CodecAssertions.decode(withUnknown, b -> OkPacket.decode(b, TRACK)).sessionStateChanges())
                .containsExactly(new Schema("test"));
    }

    @Test
    void eofReplacingFormUsesHeader0xFeAndCarriesStateToo() {
        OkPacket ok = new OkPacket(true, 0, 0, SERVER_STATUS_AUTOCOMMIT | SERVER_SESSION_STATE_CHANGED, 2, "",
                List.of(new SystemVariable("last_gtid", "0-1-2")));
        byte[] wire = CodecAssertions.bytes(b -> ok.encode(b, TRACK));
        assertThat(wire[0]).isEqualTo((byte) 0xFE);
        assertThat(wire.length).as("longer than an EOF packet").isGreaterThanOrEqualTo(9);
        CodecAssertions.assertDecoded(wire, b -> OkPacket.decode(b, TRACK)).isEqualTo(ok);
    }

    @Test
    void sessionStateNeedsTheStatusFlagAndTheCapability() {
        assertThatThrownBy(() -> new OkPacket(false, 0, 0, 0, 0, "", List.of(new Schema("x"))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("SERVER_SESSION_STATE_CHANGED");
        OkPacket ok = new OkPacket(false, 0, 0, SERVER_SESSION_STATE_CHANGED, 0, "", List.of(new Schema("x")));
        assertThatThrownBy(() -> CodecAssertions.bytes(b -> ok.encode(b, NO_TRACK)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("CLIENT_SESSION_TRACK");
    }

    @Test
    void truncationsAndFlippedBytesFailWithTheFieldNamed() {
        OkPacket ok = new OkPacket(false, 300, 70_000, SERVER_STATUS_AUTOCOMMIT | SERVER_SESSION_STATE_CHANGED, 0, "info",
                List.of(new SystemVariable("last_gtid", "0-33061-47"), new Gtids(0, "uuid:1")));
        byte[] wire = CodecAssertions.bytes(b -> ok.encode(b, TRACK));
        var failures = CodecAssertions.assertTruncationsFailClearly(wire, b -> OkPacket.decode(b, TRACK));
        assertThat(failures).extracting(MalformedPacketException::field).contains(
                "OK.header", "OK.affected_rows", "OK.last_insert_id", "OK.status_flags", "OK.warnings", "OK.info",
                "OK.session_state_info");
        assertThat(CodecAssertions.assertFlipsFailClearly(wire, b -> OkPacket.decode(b, TRACK))).isPositive();
        assertThatThrownBy(() -> CodecAssertions.decode(new byte[] {5}, b -> OkPacket.decode(b, TRACK)))
                .hasMessage("OK.header: expected 0x00 or 0xFE, found 0x5");
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(longs = {0, 1, 250, 251, 65_535, 65_536, 16_777_215, 16_777_216,
            1L << 40})
    void lastInsertIdIsReadInPlace(long insertId) {
        for (long affected : new long[] {0, 300, 70_000, 1L << 33}) {
            io.netty.buffer.ByteBuf out = io.netty.buffer.Unpooled.buffer();
            OkPacket.of(affected, insertId, SERVER_STATUS_AUTOCOMMIT, 0).encode(out, TRACK);
            int before = out.readerIndex();
            assertThat(OkPacket.lastInsertIdOf(out)).isEqualTo(insertId);
            assertThat(out.readerIndex()).isEqualTo(before);
            out.release();
        }
    }
}
