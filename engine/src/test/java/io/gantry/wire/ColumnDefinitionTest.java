package io.gantry.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.wire.ColumnDefinition.FieldType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

class ColumnDefinitionTest {

    private static final ColumnDefinition FULL = new ColumnDefinition("def", "app", "u", "users", "uid", "id",
            ColumnDefinition.BINARY, 0xFFFF_FFFFL, FieldType.LONGLONG.code(),
            ColumnDefinition.NOT_NULL_FLAG | ColumnDefinition.PRI_KEY_FLAG | ColumnDefinition.UNSIGNED_FLAG, 0);

    @Test
    void encodesTheLayoutOfColumnDefinition41() {
        ColumnDefinition c = new ColumnDefinition("def", "s", "t", "ot", "n", "on", 0x2D, 0x01020304L, 0xFD, 0x1081, 2);
        byte[] wire = CodecAssertions.bytes(c::encode);
        assertThat(wire).containsExactly(
                3, 'd', 'e', 'f', 1, 's', 1, 't', 2, 'o', 't', 1, 'n', 2, 'o', 'n',
                0x0C, 0x2D, 0x00, 0x04, 0x03, 0x02, 0x01, 0xFD, 0x81, 0x10, 0x02, 0x00, 0x00);
        CodecAssertions.assertDecoded(wire, ColumnDefinition::decode).isEqualTo(c);
    }

    @Test
    void roundTripsExtremeValuesAndUnicodeNames() {
        ColumnDefinition c = new ColumnDefinition("def", "schéma", "таблица", "", "名前", "x".repeat(300),
                0xFFFF, 0xFFFF_FFFFL, 0xFF, 0xFFFF, 0xFF);
        CodecAssertions.assertDecoded(CodecAssertions.bytes(c::encode), ColumnDefinition::decode).isEqualTo(c);
        CodecAssertions.assertDecoded(CodecAssertions.bytes(FULL::encode), ColumnDefinition::decode).isEqualTo(FULL);
    }

    @Test
    void leavesCOM_FIELD_LISTDefaultValuesUnread() {
        ByteBuf buf = Unpooled.buffer();
        try {
            FULL.encode(buf);
            Buffers.writeLenEncString(buf, "0");
            assertThat(ColumnDefinition.decode(buf)).isEqualTo(FULL);
            assertThat(Buffers.readLenEncString(buf, "default")).isEqualTo("0");
        } finally {
            buf.release();
        }
    }

    @Test
    void acceptsAMissingFillerWhenTheFixedLengthSaysSo() {
        byte[] wire = CodecAssertions.bytes(FULL::encode);
        int fixedLengthAt = wire.length - 13;
        assertThat(wire[fixedLengthAt]).isEqualTo((byte) 0x0C);
        byte[] noFiller = Arrays.copyOf(wire, wire.length - 2);
        noFiller[fixedLengthAt] = 0x0A;
        CodecAssertions.assertDecoded(noFiller, ColumnDefinition::decode).isEqualTo(FULL);
    }

    @ParameterizedTest(name = "fixed length {0}")
    @CsvSource({"9", "13", "251"})
    void rejectsAnotherLengthOfTheFixedFields(int length) {
        byte[] wire = CodecAssertions.bytes(FULL::encode);
        wire[wire.length - 13] = (byte) length;
        assertThatThrownBy(() -> CodecAssertions.decode(wire, ColumnDefinition::decode))
                .isInstanceOf(MalformedPacketException.class)
                .hasMessageStartingWith("ColumnDefinition41.length_of_fixed_length_fields: ");
    }

    @Test
    void truncationsNameEveryField() {
        byte[] wire = CodecAssertions.bytes(FULL::encode);
        List<MalformedPacketException> failures = CodecAssertions.assertTruncationsFailClearly(wire,
                ColumnDefinition::decode);
        assertThat(failures).hasSize(wire.length);
        assertThat(failures).extracting(MalformedPacketException::field).containsOnly(
                        "ColumnDefinition41.catalog", "ColumnDefinition41.schema", "ColumnDefinition41.table",
                        "ColumnDefinition41.org_table", "ColumnDefinition41.name", "ColumnDefinition41.org_name",
                        "ColumnDefinition41.length_of_fixed_length_fields", "ColumnDefinition41.character_set",
                        "ColumnDefinition41.column_length", "ColumnDefinition41.type", "ColumnDefinition41.flags",
                        "ColumnDefinition41.decimals", "ColumnDefinition41.filler")
                .contains("ColumnDefinition41.catalog", "ColumnDefinition41.org_name",
                        "ColumnDefinition41.length_of_fixed_length_fields", "ColumnDefinition41.character_set",
                        "ColumnDefinition41.column_length", "ColumnDefinition41.type", "ColumnDefinition41.flags",
                        "ColumnDefinition41.decimals", "ColumnDefinition41.filler");
        assertThat(failures.get(0)).hasMessage("ColumnDefinition41.catalog: needs 1 bytes but only 0 are left");
        assertThat(failures.get(2)).hasMessage("ColumnDefinition41.catalog: length 3 exceeds the 1 bytes left");
    }

    @Test
    void flippedBytesDecodeOrFailWithTheFieldNamed() {
        assertThat(CodecAssertions.assertFlipsFailClearly(CodecAssertions.bytes(FULL::encode),
                ColumnDefinition::decode)).isPositive();
    }

    @Test
    void textColumnIsUtf8mb4VarString() {
        ColumnDefinition c = ColumnDefinition.text("gantry", "upstream_servers", "host");
        assertThat(c).isEqualTo(new ColumnDefinition("def", "gantry", "upstream_servers", "upstream_servers",
                "host", "host", 45, 1020, 0xFD, 0, 0));
        assertThat(c.fieldType()).contains(FieldType.VAR_STRING);
        assertThat(ColumnDefinition.text("", "", "Value", 16).columnLength()).isEqualTo(64);
        assertThatThrownBy(() -> ColumnDefinition.text("", "", "v", -1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxCharacters");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "TINY, 4, 0", "SHORT, 6, 0", "INT24, 9, 0", "LONG, 11, 0", "LONGLONG, 20, 0", "YEAR, 4, 0",
        "FLOAT, 12, 31", "DOUBLE, 22, 31"})
    void numericColumnsAreBinaryWithTheServersDisplayLength(FieldType type, long length, int decimals) {
        ColumnDefinition c = ColumnDefinition.numeric("gantry", "upstream_servers", "weight", type);
        assertThat(c.type()).isEqualTo(type.code());
        assertThat(c.columnLength()).isEqualTo(length);
        assertThat(c.decimals()).isEqualTo(decimals);
        assertThat(c.characterSet()).isEqualTo(ColumnDefinition.BINARY);
        assertThat(c.hasFlag(ColumnDefinition.BINARY_FLAG)).isTrue();
        assertThat(c.withFlags(ColumnDefinition.BINARY_FLAG | ColumnDefinition.NOT_NULL_FLAG)
                .hasFlag(ColumnDefinition.NOT_NULL_FLAG)).isTrue();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = FieldType.class, names = {"DECIMAL", "NEWDECIMAL", "VAR_STRING", "DATETIME", "BLOB"})
    void numericRejectsTypesWithoutAFixedDisplayLength(FieldType type) {
        assertThatThrownBy(() -> ColumnDefinition.numeric("", "", "x", type))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(type.name());
    }

    @Test
    void datetimeCarriesTheFractionalDigits() {
        assertThat(ColumnDefinition.datetime("gantry", "events", "at", 0))
                .extracting(ColumnDefinition::type, ColumnDefinition::columnLength, ColumnDefinition::decimals)
                .containsExactly(0x0C, 19L, 0);
        assertThat(ColumnDefinition.datetime("gantry", "events", "at", 3))
                .extracting(ColumnDefinition::columnLength, ColumnDefinition::decimals)
                .containsExactly(23L, 3);
        assertThatThrownBy(() -> ColumnDefinition.datetime("", "", "at", 7))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fractionalDigits");
    }

    @Test
    void fieldTypeCodesMatchMySql() {
        assertThat(FieldType.VAR_STRING.code()).isEqualTo(0xFD);
        assertThat(FieldType.VARCHAR.code()).isEqualTo(0x0F);
        assertThat(FieldType.LONGLONG.code()).isEqualTo(0x08);
        assertThat(FieldType.DOUBLE.code()).isEqualTo(0x05);
        assertThat(FieldType.DATETIME.code()).isEqualTo(0x0C);
        assertThat(FieldType.TINY.code()).isEqualTo(0x01);
        assertThat(FieldType.JSON.code()).isEqualTo(0xF5);
        for (FieldType t : FieldType.values()) {
            assertThat(FieldType.of(t.code())).contains(t);
        }
        assertThat(FieldType.of(0x15)).isEmpty();
        assertThat(FieldType.of(-1)).isEmpty();
        assertThat(FieldType.of(256)).isEmpty();
    }

    @Test
    void constructorChecksTheUnsignedRanges() {
        assertThatThrownBy(() -> new ColumnDefinition("def", "", "", "", "n", "n", 0x10000, 0, 0, 0, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("characterSet");
        assertThatThrownBy(() -> new ColumnDefinition("def", "", "", "", "n", "n", 0, 1L << 32, 0, 0, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("columnLength");
        assertThatThrownBy(() -> new ColumnDefinition("def", "", "", "", "n", "n", 0, 0, 256, 0, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("type");
        assertThatThrownBy(() -> new ColumnDefinition("def", "", "", "", "n", "n", 0, 0, 0, -1, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("flags");
        assertThatThrownBy(() -> new ColumnDefinition("def", "", "", "", "n", "n", 0, 0, 0, 0, 256))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("decimals");
        assertThatThrownBy(() -> new ColumnDefinition("def", "", null, "", "n", "n", 0, 0, 0, 0, 0))
                .isInstanceOf(NullPointerException.class).hasMessage("table");
    }

    // ---- MariaDB extended metadata ------------------------------------------------------------------------------

    private static final int EXTENDED = CapabilityFlags.MARIADB_CLIENT_EXTENDED_METADATA;
    private static final ColumnDefinition JSON_COLUMN = new ColumnDefinition("def", "app", "t", "t", "doc", "doc",
            ColumnDefinition.UTF8MB4_GENERAL_CI, 0xFFFF_FFFFL, FieldType.BLOB.code(), ColumnDefinition.BLOB_FLAG, 0)
            .withExtendedMetadata("", "json");
    private static final ColumnDefinition UUID_COLUMN = new ColumnDefinition("def", "app", "t", "t", "id", "id",
            ColumnDefinition.UTF8MB4_GENERAL_CI, 144, FieldType.STRING.code(), 0, 0)
            .withExtendedMetadata("uuid", "");

    @Test
    void extendedMetadataFollowsTheOriginalNameAsOneLengthEncodedBlock() {
        ColumnDefinition c = new ColumnDefinition("def", "s", "t", "ot", "n", "on", 0x2D, 0x01020304L, 0xFD, 0x1081, 2)
                .withExtendedMetadata("inet6", "json");
        byte[] wire = CodecAssertions.bytes(buf -> c.encode(buf, EXTENDED));
        assertThat(wire).containsExactly(
                3, 'd', 'e', 'f', 1, 's', 1, 't', 2, 'o', 't', 1, 'n', 2, 'o', 'n',
                13, 0, 5, 'i', 'n', 'e', 't', '6', 1, 4, 'j', 's', 'o', 'n',
                0x0C, 0x2D, 0x00, 0x04, 0x03, 0x02, 0x01, 0xFD, 0x81, 0x10, 0x02, 0x00, 0x00);
        CodecAssertions.assertDecoded(wire, buf -> ColumnDefinition.decode(buf, EXTENDED)).isEqualTo(c);
    }

    @Test
    void aColumnWithoutExtendedMetadataStillCarriesTheEmptyBlockWhenNegotiated() {
        byte[] mysql = CodecAssertions.bytes(FULL::encode);
        byte[] extended = CodecAssertions.bytes(buf -> FULL.encode(buf, EXTENDED));
        int namesLength = mysql.length - 13;
        assertThat(extended).hasSize(mysql.length + 1);
        assertThat(Arrays.copyOf(extended, namesLength)).isEqualTo(Arrays.copyOf(mysql, namesLength));
        assertThat(extended[namesLength]).isZero();
        assertThat(Arrays.copyOfRange(extended, namesLength + 1, extended.length))
                .isEqualTo(Arrays.copyOfRange(mysql, namesLength, mysql.length));
        CodecAssertions.assertDecoded(extended, buf -> ColumnDefinition.decode(buf, EXTENDED)).isEqualTo(FULL);
    }

    @Test
    void extendedMetadataRoundTripsAndIsLeftOutWithoutTheCapability() {
        for (ColumnDefinition c : List.of(JSON_COLUMN, UUID_COLUMN, FULL)) {
            CodecAssertions.assertDecoded(CodecAssertions.bytes(buf -> c.encode(buf, EXTENDED)),
                    buf -> ColumnDefinition.decode(buf, EXTENDED)).isEqualTo(c);
            // Other MariaDB bits do not change the layout; without extended metadata it is the MySQL one.
            assertThat(CodecAssertions.bytes(buf -> c.encode(buf, CapabilityFlags.MARIADB_CLIENT_PROGRESS)))
                    .isEqualTo(CodecAssertions.bytes(c::encode));
            CodecAssertions.assertDecoded(CodecAssertions.bytes(c::encode), ColumnDefinition::decode)
                    .isEqualTo(c.withExtendedMetadata("", ""));
        }
    }

    @Test
    void unknownKindsOfExtendedMetadataAreSkipped() {
        byte[] wire = CodecAssertions.bytes(buf -> {
            for (String name : List.of("def", "app", "t", "t", "id", "id")) {
                Buffers.writeLenEncString(buf, name);
            }
            buf.writeBytes(new byte[] {11, 7, 3, 'a', 'b', 'c', 0, 4, 'u', 'u', 'i', 'd'});
            buf.writeBytes(Arrays.copyOfRange(CodecAssertions.bytes(UUID_COLUMN::encode),
                    CodecAssertions.bytes(UUID_COLUMN::encode).length - 13, CodecAssertions.bytes(UUID_COLUMN::encode).length));
        });
        CodecAssertions.assertDecoded(wire, buf -> ColumnDefinition.decode(buf, EXTENDED)).isEqualTo(UUID_COLUMN);
    }

    @Test
    void extendedTruncationsAndFlipsFailWithTheFieldNamed() {
        byte[] wire = CodecAssertions.bytes(buf -> JSON_COLUMN.encode(buf, EXTENDED));
        List<MalformedPacketException> failures = CodecAssertions.assertTruncationsFailClearly(wire,
                buf -> ColumnDefinition.decode(buf, EXTENDED));
        assertThat(failures).hasSize(wire.length);
        assertThat(failures).extracting(MalformedPacketException::field).contains(
                "ColumnDefinition41.org_name", "ColumnDefinition41.extended_metadata",
                "ColumnDefinition41.length_of_fixed_length_fields");
        assertThat(CodecAssertions.assertFlipsFailClearly(wire, buf -> ColumnDefinition.decode(buf, EXTENDED)))
                .isPositive();
        // The same bytes read without the capability take the block for the fixed-length field: refused.
        assertThatThrownBy(() -> CodecAssertions.decode(wire, ColumnDefinition::decode))
                .isInstanceOf(MalformedPacketException.class);
    }

    @Test
    void insertingAnEmptyBlockTurnsTheMySqlLayoutIntoTheExtendedOne() {
        for (ColumnDefinition c : List.of(FULL, JSON_COLUMN.withExtendedMetadata("", ""),
                new ColumnDefinition("def", "", "", "", "x".repeat(300), "", 63, 1, 1, 0, 0))) {
            ByteBuf mysql = Unpooled.wrappedBuffer(CodecAssertions.bytes(c::encode));
            ByteBuf inserted = ColumnDefinition.insertEmptyExtendedMetadata(mysql, Unpooled.buffer().alloc());
            try {
                assertThat(mysql.readerIndex()).as("the source is read, not consumed").isZero();
                byte[] bytes = new byte[inserted.readableBytes()];
                inserted.getBytes(inserted.readerIndex(), bytes);
                assertThat(bytes).isEqualTo(CodecAssertions.bytes(buf -> c.encode(buf, EXTENDED)));
            } finally {
                mysql.release();
                inserted.release();
            }
        }
    }

    @Test
    void insertingKeepsCOM_FIELD_LISTDefaultValues() {
        byte[] mysql = CodecAssertions.bytes(buf -> {
            FULL.encode(buf);
            Buffers.writeLenEncString(buf, "0");
        });
        ByteBuf source = Unpooled.wrappedBuffer(mysql);
        ByteBuf inserted = ColumnDefinition.insertEmptyExtendedMetadata(source, Unpooled.buffer().alloc());
        try {
            assertThat(ColumnDefinition.decode(inserted, EXTENDED)).isEqualTo(FULL);
            assertThat(Buffers.readLenEncString(inserted, "default")).isEqualTo("0");
        } finally {
            source.release();
            inserted.release();
        }
    }

    @Test
    void insertingIntoTruncatedNamesFailsWithTheFieldNamed() {
        byte[] wire = CodecAssertions.bytes(FULL::encode);
        ByteBuf truncated = Unpooled.wrappedBuffer(Arrays.copyOf(wire, 10));
        try {
            assertThatThrownBy(() -> ColumnDefinition.insertEmptyExtendedMetadata(truncated, Unpooled.buffer().alloc()))
                    .isInstanceOf(MalformedPacketException.class).hasMessageStartingWith("ColumnDefinition41.");
        } finally {
            truncated.release();
        }
    }
}
