package io.gantry.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.wire.ColumnDefinition.FieldType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * One value of a row read and replaced, text and binary: the rows are built and read back here by hand, after the
 * protocol pages, so that the codec is not checked against itself.
 */
class RowFormatTest {

    private static final ColumnDefinition ID = ColumnDefinition.numeric("", "", "Id", FieldType.LONGLONG)
            .withFlags(ColumnDefinition.UNSIGNED_FLAG | ColumnDefinition.BINARY_FLAG);
    private static final ColumnDefinition USER = ColumnDefinition.text("", "", "User");
    private static final ColumnDefinition TIME = ColumnDefinition.datetime("", "", "Started", 0);
    private static final ColumnDefinition PROGRESS = ColumnDefinition.numeric("", "", "Progress", FieldType.DOUBLE);
    private static final ColumnDefinition DELTA = ColumnDefinition.numeric("", "", "Delta", FieldType.SHORT);
    private static final ColumnDefinition INFO = ColumnDefinition.text("", "", "Info");
    /** Seven columns: the last one's NULL bit is the first bit of the bitmap's second byte. */
    private static final List<ColumnDefinition> COLUMNS = List.of(ID, USER, TIME, PROGRESS, DELTA, INFO, USER);
    private static final RowFormat BINARY = RowFormat.of(CommandType.COM_STMT_EXECUTE, COLUMNS);

    @Test
    void theCommandChoosesTheEncoding() {
        assertThat(RowFormat.of(CommandType.COM_QUERY, COLUMNS)).isSameAs(RowFormat.TEXT);
        assertThat(RowFormat.of(CommandType.COM_STMT_EXECUTE, COLUMNS)).isInstanceOf(RowFormat.Binary.class);
        assertThat(RowFormat.of(CommandType.COM_STMT_FETCH, COLUMNS)).isInstanceOf(RowFormat.Binary.class);
        assertThat(RowFormat.Binary.nullBitmapLength(6)).isEqualTo(1);
        assertThat(RowFormat.Binary.nullBitmapLength(7)).isEqualTo(2);
    }

    @Test
    void binaryValuesAreReadWhateverTheColumnsBeforeThem() {
        ByteBuf row = BinaryRows.encode(COLUMNS, 285L, "app", new byte[] {(byte) 0xEA, 0x07, 12, 7, 14, 3, 9}, 0.5, -2,
                null, "last");
        assertThat(BINARY.value(row, 0)).isEqualTo("285");
        assertThat(BINARY.value(row, 1)).isEqualTo("app");
        assertThat(BINARY.value(row, 4)).isEqualTo("-2");
        assertThat(BINARY.value(row, 5)).isNull();
        assertThat(BINARY.value(row, 6)).isEqualTo("last");
        assertThat(row.readerIndex()).isZero();
    }

    @Test
    void aBinaryValueReplacedRoundTripsAndEveryOtherByteStays() {
        byte[] time = {(byte) 0xEA, 0x07, 12, 7, 14, 3, 9};
        ByteBuf row = BinaryRows.encode(COLUMNS, 285L, "app", time, 0.5, -2, null, "last");
        ByteBuf id = BINARY.withValue(row, 0, "80", ByteBufAllocator.DEFAULT);
        ByteBuf user = BINARY.withValue(id, 1, "application", ByteBufAllocator.DEFAULT);
        ByteBuf delta = BINARY.withValue(user, 4, "-300", ByteBufAllocator.DEFAULT);

        assertThat(BinaryRows.decode(COLUMNS, delta)).containsExactly(80L, "application", time, 0.5, -300L, null,
                "last");
        assertThat(ByteBufUtil.getBytes(delta)).isEqualTo(ByteBufUtil.getBytes(BinaryRows.encode(COLUMNS, 80L,
                "application", time, 0.5, -300, null, "last")));
        assertThat(BinaryRows.decode(COLUMNS, row)).as("the row given is only read")
                .containsExactly(285L, "app", time, 0.5, -2L, null, "last");
    }

    @Test
    void aNullValueGetsAValueAndAValueBecomesNull() {
        ByteBuf row = BinaryRows.encode(COLUMNS, 285L, "app", new byte[0], 0.5, 1, null, null);
        ByteBuf filled = BINARY.withValue(row, 5, "SHOW PROCESSLIST", ByteBufAllocator.DEFAULT);
        assertThat(BINARY.value(filled, 5)).isEqualTo("SHOW PROCESSLIST");
        assertThat(BINARY.value(filled, 6)).as("the second bitmap byte's bit stays").isNull();
        ByteBuf last = BINARY.withValue(filled, 6, "", ByteBufAllocator.DEFAULT);
        assertThat(BinaryRows.decode(COLUMNS, last)).containsExactly(285L, "app", new byte[0], 0.5, 1L,
                "SHOW PROCESSLIST", "");

        ByteBuf emptied = BINARY.withValue(last, 1, null, ByteBufAllocator.DEFAULT);
        assertThat(BinaryRows.decode(COLUMNS, emptied)).containsExactly(285L, null, new byte[0], 0.5, 1L,
                "SHOW PROCESSLIST", "");
    }

    @Test
    void anUnsignedValueAboveTheSignedRangeStaysUnsigned() {
        ByteBuf row = BinaryRows.encode(List.of(ID), -1L);
        assertThat(binary(List.of(ID)).value(row, 0)).isEqualTo("18446744073709551615");
        ByteBuf back = binary(List.of(ID)).withValue(row, 0, "18446744073709551614", ByteBufAllocator.DEFAULT);
        assertThat(BinaryRows.decode(List.of(ID), back)).containsExactly(-2L);
    }

    @Test
    void aValueAnIntegerColumnCannotHoldIsRefused() {
        ByteBuf row = BinaryRows.encode(COLUMNS, 285L, "app", new byte[0], 0.5, 1, null, "x");
        assertThatThrownBy(() -> BINARY.withValue(row, 4, "70000", ByteBufAllocator.DEFAULT))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2 bytes");
        assertThatThrownBy(() -> BINARY.withValue(row, 0, "TLS", ByteBufAllocator.DEFAULT))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> BINARY.value(row, 2)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Started");
        assertThat(RowFormat.readsAsText(TIME)).isFalse();
        assertThat(RowFormat.readsAsText(PROGRESS)).isFalse();
        assertThat(RowFormat.readsAsText(ID)).isTrue();
        assertThat(RowFormat.readsAsText(USER)).isTrue();
    }

    @Test
    void aRowOfAnotherShapeIsMalformed() {
        ByteBuf textRow = Unpooled.buffer();
        Buffers.writeLenEncString(textRow, "285");
        assertThatThrownBy(() -> BINARY.value(textRow, 0)).isInstanceOf(MalformedPacketException.class)
                .hasMessageContaining("header");
        ByteBuf cut = BinaryRows.encode(COLUMNS, 285L, "app", new byte[0], 0.5, 1, null, "last");
        cut.writerIndex(cut.writerIndex() - 2);
        assertThatThrownBy(() -> BINARY.value(cut, 6)).isInstanceOf(MalformedPacketException.class);
        assertThatThrownBy(() -> RowFormat.TEXT.value(textRow, 1)).isInstanceOf(MalformedPacketException.class);
    }

    @Test
    void aTextValueReplacedRoundTrips() {
        ByteBuf row = Unpooled.buffer();
        Buffers.writeLenEncString(row, "285");
        Buffers.writeNullMarker(row);
        Buffers.writeLenEncString(row, "Sleep");
        assertThat(RowFormat.TEXT.value(row, 1)).isNull();
        assertThat(RowFormat.TEXT.value(row, 2)).isEqualTo("Sleep");
        ByteBuf out = RowFormat.TEXT.withValue(RowFormat.TEXT.withValue(row, 0, "80", ByteBufAllocator.DEFAULT), 1,
                "app", ByteBufAllocator.DEFAULT);
        assertThat(decodeText(out)).containsExactly("80", "app", "Sleep");
        assertThat(decodeText(RowFormat.TEXT.withValue(out, 2, null, ByteBufAllocator.DEFAULT)))
                .containsExactly("80", "app", null);
    }

    private static RowFormat binary(List<ColumnDefinition> columns) {
        return RowFormat.of(CommandType.COM_STMT_FETCH, columns);
    }

    private static List<String> decodeText(ByteBuf row) {
        ByteBuf in = row.duplicate();
        List<String> values = new ArrayList<>();
        while (in.isReadable()) {
            boolean isNull = Buffers.isNullMarker(in);
            values.add(isNull ? null : Buffers.readLenEncString(in, "value"));
            if (isNull) {
                in.skipBytes(1);
            }
        }
        return values;
    }
}
