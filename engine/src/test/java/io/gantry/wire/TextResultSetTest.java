package io.gantry.wire;

import static io.gantry.wire.ResponseFraming.PacketKind.COLUMN_COUNT;
import static io.gantry.wire.ResponseFraming.PacketKind.COLUMN_DEFINITION;
import static io.gantry.wire.ResponseFraming.PacketKind.ROW;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.wire.ColumnDefinition.FieldType;
import io.gantry.wire.ResponseFraming.PacketKind;
import io.gantry.wire.ResponseFraming.Progress;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TextResultSetTest {

    private static final int BASE = CapabilityFlags.CLIENT_PROTOCOL_41 | CapabilityFlags.CLIENT_TRANSACTIONS
            | CapabilityFlags.CLIENT_SECURE_CONNECTION | CapabilityFlags.CLIENT_SESSION_TRACK
            | CapabilityFlags.CLIENT_MULTI_RESULTS | CapabilityFlags.CLIENT_PLUGIN_AUTH;
    private static final int STATUS = ServerStatus.SERVER_STATUS_AUTOCOMMIT | ServerStatus.SERVER_STATUS_IN_TRANS;
    private static final List<ColumnDefinition> COLUMNS = List.of(
            ColumnDefinition.text("gantry", "upstream_servers", "host"),
            ColumnDefinition.numeric("gantry", "upstream_servers", "port", FieldType.LONG),
            ColumnDefinition.datetime("gantry", "upstream_servers", "down_since", 0));

    /** Every payload a test receives is released after it, exactly once. */
    private final ByteBufAllocator alloc = new UnpooledByteBufAllocator(false);
    private final List<ByteBuf> produced = new ArrayList<>();
    private final List<PacketKind> kinds = new ArrayList<>();

    @AfterEach
    void releaseAndCheckForLeaks() {
        for (ByteBuf buf : produced) {
            assertThat(buf.release()).as("payload released exactly once").isTrue();
        }
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void framingCompletesExactlyAtTheLastPacket(boolean deprecateEof) {
        List<List<String>> rows = List.of(row("db1", "3306", "2024-05-01 10:00:00"), row("db2", "3307", null));
        List<ByteBuf> payloads = encode(rows, deprecateEof);

        List<PacketKind> expected = new ArrayList<>(List.of(COLUMN_COUNT, COLUMN_DEFINITION, COLUMN_DEFINITION,
                COLUMN_DEFINITION));
        if (!deprecateEof) {
            expected.add(PacketKind.EOF);
        }
        expected.addAll(List.of(ROW, ROW, deprecateEof ? PacketKind.OK : PacketKind.EOF));
        ResponseFraming framing = frame(payloads, deprecateEof);
        assertThat(kinds).containsExactlyElementsOf(expected);
        assertThat(framing.serverStatus()).isEqualTo(STATUS);
        assertThat(framing.resultsCompleted()).isEqualTo(1);
        assertThat(framing.failed()).isFalse();
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void emptyResultSetEndsRightAfterTheColumns(boolean deprecateEof) {
        List<ByteBuf> payloads = encode(List.of(), deprecateEof);
        assertThat(payloads).hasSize(deprecateEof ? 5 : 6);
        frame(payloads, deprecateEof);
        assertThat(kinds).doesNotContain(ROW).endsWith(deprecateEof ? PacketKind.OK : PacketKind.EOF);
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void nullsAndLongValuesFrameAsRows(boolean deprecateEof) {
        String v300 = "a".repeat(300);
        String v70000 = "b".repeat(70_000);
        List<List<String>> rows = List.of(row(null, null, null), row(v300, "1", null), row(v70000, null, "x"),
                row("", "", ""));
        List<ByteBuf> payloads = encode(rows, deprecateEof);
        frame(payloads, deprecateEof);
        assertThat(kinds.stream().filter(k -> k == ROW)).hasSize(4);

        int firstRow = deprecateEof ? 4 : 5;
        assertThat(bytesOf(payloads.get(firstRow))).containsExactly(0xFB, 0xFB, 0xFB);
        ByteBuf second = payloads.get(firstRow + 1).duplicate();
        assertThat((int) second.getUnsignedByte(0)).isEqualTo(0xFC);
        assertThat(Buffers.readLenEncString(second, "v300")).isEqualTo(v300);
        assertThat(Buffers.readLenEncString(second, "port")).isEqualTo("1");
        assertThat((int) second.readUnsignedByte()).isEqualTo(0xFB);
        assertThat(second.isReadable()).isFalse();
        ByteBuf third = payloads.get(firstRow + 2).duplicate();
        assertThat((int) third.getUnsignedByte(0)).isEqualTo(0xFD);
        assertThat(Buffers.readLenEncString(third, "v70000")).isEqualTo(v70000);
        assertThat(bytesOf(payloads.get(firstRow + 3))).containsExactly(0, 0, 0);
    }

    @Test
    void payloadsDecodeBackToTheColumnsAndTerminators() {
        List<ByteBuf> classic = encode(List.of(row("h", "1", null)), false);
        assertThat(Buffers.readLenEncInt(classic.get(0).duplicate(), "count")).isEqualTo(3);
        for (int i = 0; i < COLUMNS.size(); i++) {
            assertThat(ColumnDefinition.decode(classic.get(1 + i).duplicate())).isEqualTo(COLUMNS.get(i));
        }
        assertThat(EofPacket.decode(classic.get(4).duplicate())).isEqualTo(new EofPacket(0, STATUS));
        assertThat(EofPacket.decode(classic.get(6).duplicate())).isEqualTo(new EofPacket(0, STATUS));

        int caps = BASE | CapabilityFlags.CLIENT_DEPRECATE_EOF;
        List<ByteBuf> modern = encode(List.of(row("h", "1", null)), true);
        OkPacket ok = OkPacket.decode(modern.get(5).duplicate(), caps);
        assertThat(ok).isEqualTo(new OkPacket(true, 0, 0, STATUS, 0, "", List.of()));
        assertThat(bytesOf(modern.get(5))).containsExactly(0xFE, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00);
    }

    @Test
    void unicodeValuesAreUtf8() {
        List<ByteBuf> payloads = encode(List.of(row("é", "2", null)), true);
        assertThat(bytesOf(payloads.get(4))).startsWith(0x02, 0xC3, 0xA9);
    }

    @Test
    void recordCopiesRowsAndKeepsNulls() {
        List<String> mutable = new ArrayList<>(Arrays.asList("a", null, "c"));
        TextResultSet set = new TextResultSet(COLUMNS, List.of(mutable));
        mutable.set(0, "changed");
        assertThat(set.rows()).containsExactly(Arrays.asList("a", null, "c"));
        assertThatThrownBy(() -> set.rows().get(0).set(0, "x")).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void rejectsBadShapesBeforeAllocating() {
        assertThatThrownBy(() -> TextResultSet.encode(List.of(), List.of(), BASE, STATUS, alloc))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("a result set needs at least one column");
        assertThatThrownBy(() -> TextResultSet.encode(COLUMNS, List.of(row("a", "1", null), List.of("b")), BASE,
                STATUS, alloc))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("row 1 has 1 values for 3 columns");
        assertThatThrownBy(() -> TextResultSet.encode(COLUMNS, List.of(), BASE & ~CapabilityFlags.CLIENT_PROTOCOL_41,
                STATUS, alloc))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("CLIENT_PROTOCOL_41");
        assertThatThrownBy(() -> TextResultSet.encode(COLUMNS, List.of(),
                BASE | CapabilityFlags.CLIENT_OPTIONAL_RESULTSET_METADATA, STATUS, alloc))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("CLIENT_OPTIONAL_RESULTSET_METADATA");
        assertThatThrownBy(() -> TextResultSet.encode(COLUMNS, List.of(), BASE, 0x10000, alloc))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("statusFlags");
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void withExtendedMetadataEveryColumnDefinitionCarriesItsBlockAndFramingIsUnchanged(boolean deprecateEof) {
        int caps = deprecateEof ? BASE | CapabilityFlags.CLIENT_DEPRECATE_EOF : BASE;
        int extended = CapabilityFlags.MARIADB_CLIENT_EXTENDED_METADATA;
        List<ByteBuf> payloads = TextResultSet.encode(COLUMNS, List.of(row("h", "1", null)), caps, extended, STATUS,
                alloc);
        produced.addAll(payloads);
        List<ByteBuf> mysql = encode(List.of(row("h", "1", null)), deprecateEof);
        assertThat(payloads).hasSameSizeAs(mysql);
        for (int i = 0; i < COLUMNS.size(); i++) {
            ByteBuf definition = payloads.get(1 + i);
            assertThat(definition.readableBytes()).isEqualTo(mysql.get(1 + i).readableBytes() + 1);
            assertThat(ColumnDefinition.decode(definition.duplicate(), extended)).isEqualTo(COLUMNS.get(i));
            ByteBuf reinserted = ColumnDefinition.insertEmptyExtendedMetadata(mysql.get(1 + i), alloc);
            produced.add(reinserted);
            assertThat(bytesOf(definition)).isEqualTo(bytesOf(reinserted));
        }
        frame(payloads, deprecateEof);
        assertThat(kinds).containsSequence(COLUMN_COUNT, COLUMN_DEFINITION, COLUMN_DEFINITION, COLUMN_DEFINITION);
    }

    @Test
    void refusesMariaDbMetadataCaching() {
        assertThatThrownBy(() -> TextResultSet.encode(COLUMNS, List.of(), BASE,
                CapabilityFlags.MARIADB_CLIENT_CACHE_METADATA, STATUS, alloc))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("MARIADB_CLIENT_CACHE_METADATA");
    }

    // ---- helpers -----------------------------------------------------------------------------

    private List<ByteBuf> encode(List<List<String>> rows, boolean deprecateEof) {
        int caps = deprecateEof ? BASE | CapabilityFlags.CLIENT_DEPRECATE_EOF : BASE;
        List<ByteBuf> payloads = TextResultSet.encode(COLUMNS, rows, caps, STATUS, alloc);
        produced.addAll(payloads);
        return payloads;
    }

    /** Feeds every payload; each but the last must leave the response open, the last must complete it. */
    private ResponseFraming frame(List<ByteBuf> payloads, boolean deprecateEof) {
        int caps = deprecateEof ? BASE | CapabilityFlags.CLIENT_DEPRECATE_EOF : BASE;
        ResponseFraming framing = ResponseFraming.forCommand(CommandType.COM_QUERY, caps);
        for (int i = 0; i < payloads.size(); i++) {
            ByteBuf payload = payloads.get(i);
            int before = payload.readerIndex();
            Progress progress = framing.accept(payload);
            kinds.add(framing.lastPacketKind());
            assertThat(payload.readerIndex()).isEqualTo(before);
            assertThat(progress).as("packet %d of %d", i + 1, payloads.size())
                    .isEqualTo(i == payloads.size() - 1 ? Progress.COMPLETE : Progress.MORE);
        }
        assertThat(framing.isComplete()).isTrue();
        return framing;
    }

    private static List<String> row(String... values) {
        return Arrays.asList(values);
    }

    private static int[] bytesOf(ByteBuf buf) {
        int[] out = new int[buf.readableBytes()];
        for (int i = 0; i < out.length; i++) {
            out[i] = buf.getUnsignedByte(buf.readerIndex() + i);
        }
        return out;
    }
}
