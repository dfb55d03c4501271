package io.gantry.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.shyiko.mysql.binlog.event.EventType;
import com.github.shyiko.mysql.binlog.event.TableMapEventData;
import com.github.shyiko.mysql.binlog.event.TableMapEventMetadata;
import com.github.shyiko.mysql.binlog.event.deserialization.ColumnType;
import com.github.shyiko.mysql.binlog.event.deserialization.EventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.EventDeserializer;
import com.github.shyiko.mysql.binlog.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.Serializable;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BinlogRowValuesTest {

    private static final int UTF8MB4 = 45;
    private static final int UTF8MB3 = 33;
    private static final int LATIN1 = 8;
    private static final int ASCII = 11;
    private static final int BINARY = 63;

    // ---- integers ----

    @Test
    void signedIntegersKeepTheirSignAsLongs() {
        Table table = new Table()
                .column("t", ColumnType.TINY, 0).column("s", ColumnType.SHORT, 0).column("m", ColumnType.INT24, 0)
                .column("i", ColumnType.LONG, 0).column("b", ColumnType.LONGLONG, 0);
        assertThat(table.row(-128, -32768, -8388608, Integer.MIN_VALUE, Long.MIN_VALUE)).containsExactly(
                Map.entry("t", -128L), Map.entry("s", -32768L), Map.entry("m", -8388608L),
                Map.entry("i", (long) Integer.MIN_VALUE), Map.entry("b", Long.MIN_VALUE));
        assertThat(table.row(127, 32767, 8388607, Integer.MAX_VALUE, Long.MAX_VALUE)).containsExactly(
                Map.entry("t", 127L), Map.entry("s", 32767L), Map.entry("m", 8388607L),
                Map.entry("i", (long) Integer.MAX_VALUE), Map.entry("b", Long.MAX_VALUE));
    }

    @Test
    void unsignedIntegersAreReadThroughTheSignednessBits() {
        // The library hands unsigned columns back sign-extended: all-ones bytes arrive as -1.
        Table table = new Table()
                .unsigned("t", ColumnType.TINY).unsigned("s", ColumnType.SHORT).unsigned("m", ColumnType.INT24)
                .unsigned("i", ColumnType.LONG).unsigned("b", ColumnType.LONGLONG);
        assertThat(table.row(-1, -1, -1, -1, -1L)).containsExactly(
                Map.entry("t", 255L), Map.entry("s", 65535L), Map.entry("m", 16777215L),
                Map.entry("i", 4294967295L), Map.entry("b", new BigInteger("18446744073709551615")));
        assertThat(table.row(0, 1, 0, 0, Long.MAX_VALUE).get("b")).isEqualTo(Long.MAX_VALUE);
        assertThat(table.row(0, 0, 0, 0, Long.MIN_VALUE).get("b")).isEqualTo(new BigInteger("9223372036854775808"));
    }

    @Test
    void signednessBitsBelongToTheirOwnColumnsAmongOtherTypes() {
        Table table = new Table()
                .column("signed", ColumnType.TINY, 0)
                .text("name", ColumnType.VARCHAR, 40, UTF8MB4)
                .unsigned("count", ColumnType.SHORT)
                .column("small", ColumnType.SHORT, 0);
        assertThat(table.row(-1, bytes("x"), -1, -1)).containsExactly(Map.entry("signed", -1L),
                Map.entry("name", "x"), Map.entry("count", 65535L), Map.entry("small", -1L));
    }

    @Test
    void yearZeroIsStoredAsZeroNotNineteenHundred() {
        Table table = new Table().column("y", ColumnType.YEAR, 0);
        assertThat(table.row(1900).get("y")).isEqualTo(0L);
        assertThat(table.row(2024).get("y")).isEqualTo(2024L);
        assertThat(table.row(2155).get("y")).isEqualTo(2155L);
    }

    // ---- decimals and floating point ----

    @Test
    void decimalsHaveTheColumnsScale() {
        Table table = new Table().column("d", ColumnType.NEWDECIMAL, 10 | (4 << 8))
                .column("whole", ColumnType.NEWDECIMAL, 5);
        Map<String, Object> row = table.row(new BigDecimal("12.5"), new BigDecimal("-42"));
        assertThat(row.get("d")).isEqualTo(new BigDecimal("12.5000"));
        assertThat(((BigDecimal) row.get("d")).scale()).isEqualTo(4);
        assertThat(row.get("whole")).isEqualTo(new BigDecimal("-42"));
        assertThat(table.row(new BigDecimal("-0.0001"), BigDecimal.ZERO).get("d")).isEqualTo(new BigDecimal("-0.0001"));
    }

    @Test
    void floatsAreRoundedToTheSixDigitsTheServerPrints() {
        Table table = new Table().column("f", ColumnType.FLOAT, 4);
        assertThat(table.row(3.1415927f).get("f")).isEqualTo(3.14159);
        assertThat(table.row(1.1f).get("f")).isEqualTo(1.1);
        assertThat(table.row(16777216f).get("f")).isEqualTo(1.67772E7);
        assertThat(table.row(1234565f).get("f")).isEqualTo(1234560.0);
        assertThat(table.row(1234575f).get("f")).isEqualTo(1234580.0);
        assertThat(table.row(-1.17549435e-38f).get("f")).isEqualTo(-1.17549e-38);
        assertThat(table.row(-0.0f).get("f")).isEqualTo(-0.0);
        assertThat(table.row(0.5f).get("f")).isEqualTo(0.5);
    }

    @Test
    void floatTextMatchesWhatTheJdbcSideParses() {
        for (float value : new float[] {3.1415927f, 0.1f, 1e-45f, 3.4028235e38f, 123456.7f, -2.5f, 100f}) {
            String serverText = RowValueForms.floatText(value);
            assertThat(RowValueForms.floatValue(serverText))
                    .isEqualTo(Double.parseDouble(Float.toString((float) Double.parseDouble(serverText))));
        }
    }

    @Test
    void doublesPassThrough() {
        Table table = new Table().column("d", ColumnType.DOUBLE, 8);
        assertThat(table.row(0.30000000000000004).get("d")).isEqualTo(0.30000000000000004);
        assertThat(table.row(-1.2345678901234567e300).get("d")).isEqualTo(-1.2345678901234567e300);
    }

    // ---- BIT ----

    @Test
    void bitsBecomeBigEndianBytesOfTheColumnsLength() {
        Table table = new Table()
                .column("b1", ColumnType.BIT, 1)
                .column("b10", ColumnType.BIT, (1 << 8) | 2)
                .column("b64", ColumnType.BIT, 8 << 8)
                .column("b3", ColumnType.BIT, 3);
        BitSet all = new BitSet();
        all.set(0, 64);
        Map<String, Object> row = table.row(bits(0), bits(0, 9), all, new BitSet());
        assertThat((byte[]) row.get("b1")).containsExactly(0x01);
        assertThat((byte[]) row.get("b10")).containsExactly(0x02, 0x01);
        assertThat((byte[]) row.get("b64")).containsExactly(-1, -1, -1, -1, -1, -1, -1, -1);
        assertThat((byte[]) row.get("b3")).containsExactly(0x00);
    }

    // ---- dates and times ----

    @Test
    void datesPrintAsIsoDates() {
        Table table = new Table().column("d", ColumnType.DATE, 0);
        assertThat(table.row(libraryMicros(2024, 1, 31, 0, 0, 0, 0)).get("d")).isEqualTo("2024-01-31");
        assertThat(table.row(libraryMicros(1000, 1, 1, 0, 0, 0, 0)).get("d")).isEqualTo("1000-01-01");
        assertThat(table.row(libraryMicros(999, 12, 31, 0, 0, 0, 0)).get("d")).isEqualTo("0999-12-31");
        assertThat(table.row(libraryMicros(1582, 10, 4, 0, 0, 0, 0)).get("d")).isEqualTo("1582-10-04");
        assertThat(table.row(libraryMicros(1582, 10, 15, 0, 0, 0, 0)).get("d")).isEqualTo("1582-10-15");
        assertThat(table.row(libraryMicros(1, 1, 1, 0, 0, 0, 0)).get("d")).isEqualTo("0001-01-01");
        assertThat(table.row(libraryMicros(0, 1, 1, 0, 0, 0, 0)).get("d")).isEqualTo("0000-01-01");
        assertThat(table.row(libraryMicros(9999, 12, 31, 0, 0, 0, 0)).get("d")).isEqualTo("9999-12-31");
    }

    @Test
    void zeroDatesAreZeroStrings() {
        Table table = new Table().column("d", ColumnType.DATE, 0).column("dt", ColumnType.DATETIME_V2, 3)
                .column("old", ColumnType.DATETIME, 0).column("ts", ColumnType.TIMESTAMP_V2, 6);
        assertThat(table.row(Long.MIN_VALUE, Long.MIN_VALUE, Long.MIN_VALUE, 0L)).containsExactly(
                Map.entry("d", "0000-00-00"), Map.entry("dt", "0000-00-00T00:00:00"),
                Map.entry("old", "0000-00-00T00:00:00"), Map.entry("ts", "0000-00-00T00:00:00"));
    }

    @Test
    void dateTimesPrintExactlyTheColumnsFractionalDigits() {
        Table table = new Table().column("dt0", ColumnType.DATETIME_V2, 0).column("dt3", ColumnType.DATETIME_V2, 3)
                .column("dt6", ColumnType.DATETIME_V2, 6).column("old", ColumnType.DATETIME, 0);
        long micros = libraryMicros(2024, 1, 31, 13, 45, 0, 120_000);
        assertThat(table.row(libraryMicros(2024, 1, 31, 13, 45, 0, 0), micros, micros,
                libraryMicros(2024, 1, 31, 13, 45, 0, 0))).containsExactly(
                Map.entry("dt0", "2024-01-31T13:45:00"), Map.entry("dt3", "2024-01-31T13:45:00.120"),
                Map.entry("dt6", "2024-01-31T13:45:00.120000"), Map.entry("old", "2024-01-31T13:45:00"));
        assertThat(table.row(0L, libraryMicros(999, 12, 31, 23, 59, 59, 999_000),
                libraryMicros(1, 1, 1, 0, 0, 0, 1), 0L)).containsEntry("dt3", "0999-12-31T23:59:59.999")
                .containsEntry("dt6", "0001-01-01T00:00:00.000001").containsEntry("dt0", "1970-01-01T00:00:00");
    }

    @Test
    void timestampsAreUtcInstants() {
        Table table = new Table().column("ts", ColumnType.TIMESTAMP_V2, 0).column("ts3", ColumnType.TIMESTAMP_V2, 3)
                .column("old", ColumnType.TIMESTAMP, 0);
        long seconds = LocalDateTime.of(2024, 1, 31, 13, 45).toEpochSecond(ZoneOffset.UTC);
        assertThat(table.row(seconds * 1_000_000, seconds * 1_000_000 + 120_000, 1_000_000L)).containsExactly(
                Map.entry("ts", "2024-01-31T13:45:00Z"), Map.entry("ts3", "2024-01-31T13:45:00.120Z"),
                Map.entry("old", "1970-01-01T00:00:01Z"));
        assertThat(table.row(2147483647_999_999L, 2147483647_999_999L, 0L)).containsExactly(
                Map.entry("ts", "2038-01-19T03:14:07Z"), Map.entry("ts3", "2038-01-19T03:14:07.999Z"),
                Map.entry("old", "0000-00-00T00:00:00"));
    }

    @Test
    void timesKeepSignHoursAndFraction() {
        Table table = new Table().column("t", ColumnType.TIME_V2, 0).column("t2", ColumnType.TIME_V2, 2)
                .column("old", ColumnType.TIME, 0);
        assertThat(table.row(-micros(838, 59, 59), -10_000L, micros(13, 45, 0))).containsExactly(
                Map.entry("t", "-838:59:59"), Map.entry("t2", "-00:00:00.01"), Map.entry("old", "13:45:00"));
        assertThat(table.row(micros(100, 0, 0), micros(1, 0, 0) + 500_000, 0L)).containsExactly(
                Map.entry("t", "100:00:00"), Map.entry("t2", "01:00:00.50"), Map.entry("old", "00:00:00"));
    }

    @Test
    void time2BytesDecodeWithTheirSign() {
        int[][] samples = {{0, 0, 0, 0}, {13, 45, 0, 0}, {838, 59, 59, 0}, {0, 0, 0, 10_000}, {1, 0, 0, 500_000},
                {12, 34, 56, 789_100}, {838, 59, 59, 999_999}, {0, 0, 1, 1}, {23, 59, 59, 990_000}};
        for (int fsp = 0; fsp <= 6; fsp++) {
            long unit = (long) Math.pow(10, 6 - fsp);
            for (int[] sample : samples) {
                long fraction = sample[3] / unit * unit;
                for (boolean negative : new boolean[] {false, true}) {
                    long expected = micros(sample[0], sample[1], sample[2]) + fraction;
                    byte[] stored = time2(negative, sample[0], sample[1], sample[2], (int) fraction, fsp);
                    assertThat(TemporalRowsDeserializers.timeV2Micros(fsp, stored))
                            .as("%s%d:%d:%d.%d fsp %d", negative ? "-" : "", sample[0], sample[1], sample[2],
                                    fraction, fsp)
                            .isEqualTo(negative ? -expected : expected);
                }
            }
        }
    }

    @Test
    void oldFormatTimesDecodeWithTheirSign() {
        assertThat(TemporalRowsDeserializers.oldTimeMicros(134500)).isEqualTo(micros(13, 45, 0));
        assertThat(TemporalRowsDeserializers.oldTimeMicros(-8385959 & 0xFFFFFF)).isEqualTo(-micros(838, 59, 59));
        assertThat(TemporalRowsDeserializers.oldTimeMicros(-1 & 0xFFFFFF)).isEqualTo(-micros(0, 0, 1));
    }

    @Test
    void datesInYearZeroAndBeforeTheGregorianCutoverAreProleptic() {
        TemporalRowsDeserializers.Write deserializer = (TemporalRowsDeserializers.Write)
                BinlogRowValues.newEventDeserializer().getEventDataDeserializer(EventType.WRITE_ROWS);
        assertThat(deserializer.asUnixTime(0, 1, 1, 0, 0, 0, 0))
                .isEqualTo(LocalDateTime.of(0, 1, 1, 0, 0).toEpochSecond(ZoneOffset.UTC) * 1000);
        assertThat(deserializer.asUnixTime(1582, 10, 4, 12, 0, 0, 500))
                .isEqualTo(LocalDateTime.of(1582, 10, 4, 12, 0).toEpochSecond(ZoneOffset.UTC) * 1000 + 500);
        assertThat(deserializer.asUnixTime(2024, 1, 31, 13, 45, 0, 120))
                .isEqualTo(LocalDateTime.of(2024, 1, 31, 13, 45).toEpochSecond(ZoneOffset.UTC) * 1000 + 120);
        // A zero month or day stays the configured invalid value (INVALID_DATE_AND_TIME_AS_MIN_VALUE).
        assertThat(deserializer.asUnixTime(0, 0, 0, 0, 0, 0, 0)).isEqualTo(Long.MIN_VALUE);
        assertThat(deserializer.asUnixTime(2024, 1, 0, 10, 0, 0, 0)).isEqualTo(Long.MIN_VALUE);
        assertThat(deserializer.asUnixTime(2024, 0, 5, 10, 0, 0, 0)).isEqualTo(Long.MIN_VALUE);
    }

    @Test
    void signedTimeDeserializerReadsTheStoredBytes() throws IOException {
        TemporalRowsDeserializers.Write deserializer = new TemporalRowsDeserializers.Write(Map.of());
        byte[] stored = time2(true, 0, 0, 0, 10_000, 2);
        byte[] withTrailer = Arrays.copyOf(stored, stored.length + 1);
        withTrailer[stored.length] = 0x7F;
        ByteArrayInputStream input = new ByteArrayInputStream(withTrailer);
        assertThat(deserializer.deserializeTimeV2(2, input)).isEqualTo(-10_000L);
        assertThat(input.read()).isEqualTo(0x7F);
    }

    // ---- ENUM and SET ----

    @Test
    void enumsAndSetsBecomeTheirNames() {
        Table table = new Table().enumColumn("e", "a", "b", "c").setColumn("s", "x", "y", "z")
                .enumColumn("other", "on", "off");
        assertThat(table.row(2, 5L, 1)).containsExactly(Map.entry("e", "b"), Map.entry("s", "x,z"),
                Map.entry("other", "on"));
        assertThat(table.row(0, 0L, 2)).containsExactly(Map.entry("e", ""), Map.entry("s", ""),
                Map.entry("other", "off"));
        assertThat(table.row(3, 7L, 2).get("s")).isEqualTo("x,y,z");
    }

    @Test
    void enumIndexBeyondTheNamesIsAnError() {
        Table table = new Table().enumColumn("e", "a");
        assertThatThrownBy(() -> table.row(2)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ENUM column e has index 2");
    }

    // ---- characters and bytes ----

    @Test
    void textIsDecodedWithTheColumnsCharset() {
        Table table = new Table()
                .text("u4", ColumnType.VARCHAR, 40, UTF8MB4)
                .text("u3", ColumnType.STRING, (ColumnType.STRING.getCode() << 8) | 30, UTF8MB3)
                .text("l1", ColumnType.STRING, (ColumnType.STRING.getCode() << 8) | 10, LATIN1)
                .text("a", ColumnType.VARCHAR, 10, ASCII)
                .text("doc", ColumnType.BLOB, 4, UTF8MB4)
                .text("unknown", ColumnType.VARCHAR, 10, 9999);
        Map<String, Object> row = table.row(bytes("Привет 👋"), bytes("héllo"),
                new byte[] {(byte) 0xE9, (byte) 0x80}, "abc".getBytes(StandardCharsets.US_ASCII),
                bytes("{\"a\": [1, 2]}"), bytes("ü"));
        assertThat(row).containsExactly(Map.entry("u4", "Привет 👋"), Map.entry("u3", "héllo"),
                Map.entry("l1", "é€"), Map.entry("a", "abc"), Map.entry("doc", "{\"a\": [1, 2]}"),
                Map.entry("unknown", "ü"));
    }

    @Test
    void binaryColumnsStayBytesAndBinaryIsPaddedToItsLength() {
        Table table = new Table()
                .text("bin", ColumnType.STRING, (ColumnType.STRING.getCode() << 8) | 4, BINARY)
                .text("varbin", ColumnType.VARCHAR, 4, BINARY)
                .text("blob", ColumnType.BLOB, 2, BINARY);
        Map<String, Object> row = table.row(new byte[] {'a', 'b'}, new byte[] {'a', 'b'}, new byte[] {0, 1, 0});
        assertThat((byte[]) row.get("bin")).containsExactly('a', 'b', 0, 0);
        assertThat((byte[]) row.get("varbin")).containsExactly('a', 'b');
        assertThat((byte[]) row.get("blob")).containsExactly(0, 1, 0);
        assertThat((byte[]) table.row(new byte[0], new byte[0], new byte[0]).get("bin")).containsExactly(0, 0, 0, 0);
    }

    @Test
    void charsetsAreCountedOverCharacterColumnsOnly() {
        // ENUM/SET have charsets of their own; GEOMETRY counts as a character column (binary).
        Table table = new Table()
                .column("id", ColumnType.LONG, 0)
                .text("a", ColumnType.VARCHAR, 20, UTF8MB4)
                .enumColumn("e", "x")
                .text("g", ColumnType.GEOMETRY, 4, BINARY)
                .text("l", ColumnType.VARCHAR, 5, LATIN1);
        Map<String, Object> row = table.row(1, bytes("a"), 1, new byte[] {1, 2}, new byte[] {(byte) 0xE9});
        assertThat(row.get("l")).isEqualTo("é");
        assertThat((byte[]) row.get("g")).containsExactly(1, 2);
    }

    @Test
    void defaultCharsetWithExceptionsIndexesCharacterColumns() {
        Table table = new Table()
                .text("a", ColumnType.VARCHAR, 20, UTF8MB4)
                .column("n", ColumnType.LONG, 0)
                .text("l", ColumnType.VARCHAR, 5, LATIN1)
                .text("b", ColumnType.BLOB, 2, BINARY)
                .text("c", ColumnType.BLOB, 2, UTF8MB4);
        TableMapEventMetadata.DefaultCharset defaults = new TableMapEventMetadata.DefaultCharset();
        defaults.setDefaultCharsetCollation(UTF8MB4);
        defaults.setCharsetCollations(new LinkedHashMap<>(Map.of(1, LATIN1, 2, BINARY)));
        TableMapEventData data = table.build();
        data.getEventMetadata().setColumnCharsets(null);
        data.getEventMetadata().setDefaultCharset(defaults);
        Map<String, Object> row = BinlogRowValues.row(data, all(5), values(bytes("ü"), 7,
                new byte[] {(byte) 0xE9}, new byte[] {(byte) 0xFF}, bytes("ü")));
        assertThat(row.get("a")).isEqualTo("ü");
        assertThat(row.get("l")).isEqualTo("é");
        assertThat((byte[]) row.get("b")).containsExactly(0xFF);
        assertThat(row.get("c")).isEqualTo("ü");
    }

    @Test
    void mySqlBinaryJsonIsPrintedAsText() {
        Table table = new Table().column("j", ColumnType.JSON, 4);
        // Binary JSON: type 0x0c (string), length 2, "hi".
        assertThat(table.row(new byte[] {0x0c, 0x02, 'h', 'i'}).get("j")).isEqualTo("\"hi\"");
    }

    // ---- the row as a whole ----

    @Test
    void onlyIncludedColumnsAppearInTableOrder() {
        Table table = new Table().column("a", ColumnType.LONG, 0).column("b", ColumnType.LONG, 0)
                .column("c", ColumnType.LONG, 0);
        BitSet included = new BitSet();
        included.set(0);
        included.set(2);
        Map<String, Object> row = BinlogRowValues.row(table.build(), included, values(1, 3));
        assertThat(row).containsExactly(Map.entry("a", 1L), Map.entry("c", 3L));
    }

    @Test
    void nullsStayNull() {
        Table table = new Table().column("a", ColumnType.LONG, 0).enumColumn("e", "x")
                .text("t", ColumnType.VARCHAR, 10, UTF8MB4);
        Map<String, Object> row = BinlogRowValues.row(table.build(), all(3), new Serializable[3]);
        assertThat(row).containsOnlyKeys("a", "e", "t").allSatisfy((name, value) -> assertThat(value).isNull());
    }

    @Test
    void missingMetadataAsksForFullRowMetadata() {
        TableMapEventData table = new Table().column("a", ColumnType.LONG, 0).build();
        table.setEventMetadata(null);
        assertThatThrownBy(() -> BinlogRowValues.row(table, all(1), values(1)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("app.t").hasMessageContaining("binlog_row_metadata=FULL is required");
        TableMapEventData noNames = new Table().column("a", ColumnType.LONG, 0).build();
        noNames.getEventMetadata().setColumnNames(null);
        assertThatThrownBy(() -> BinlogRowValues.row(noNames, all(1), values(1)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("binlog_row_metadata=FULL");
        TableMapEventData noEnumNames = new Table().enumColumn("e", "x").build();
        noEnumNames.getEventMetadata().setEnumStrValues(null);
        assertThatThrownBy(() -> BinlogRowValues.row(noEnumNames, all(1), values(1)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("ENUM/SET column e")
                .hasMessageContaining("binlog_row_metadata=FULL");
    }

    @Test
    void valuesFromAnotherDeserializerConfigurationAreRejected() {
        Table table = new Table().column("d", ColumnType.DATETIME_V2, 0).text("s", ColumnType.VARCHAR, 10, UTF8MB4);
        assertThatThrownBy(() -> table.row(new java.util.Date(), bytes("x")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("column d (DATETIME_V2) came as java.util.Date")
                .hasMessageContaining("newEventDeserializer");
        assertThatThrownBy(() -> table.row(0L, "x")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("column s (VARCHAR) came as java.lang.String");
    }

    @Test
    void eventDeserializerRegistersTheLibraryDefaultsWithSignedTimeRowDeserializers() {
        EventDeserializer ours = BinlogRowValues.newEventDeserializer();
        EventDeserializer library = new EventDeserializer();
        for (EventType type : EventType.values()) {
            EventDataDeserializer mine = ours.getEventDataDeserializer(type);
            EventDataDeserializer theirs = library.getEventDataDeserializer(type);
            assertThat(theirs.getClass()).as(type.name()).isAssignableFrom(mine.getClass());
        }
        assertThat(ours.getEventDataDeserializer(EventType.WRITE_ROWS))
                .isInstanceOf(TemporalRowsDeserializers.Write.class);
        assertThat(ours.getEventDataDeserializer(EventType.EXT_UPDATE_ROWS))
                .isInstanceOf(TemporalRowsDeserializers.Update.class);
        assertThat(ours.getEventDataDeserializer(EventType.DELETE_ROWS))
                .isInstanceOf(TemporalRowsDeserializers.Delete.class);
    }

    // ---- helpers ----

    /** A table map under construction, with full metadata as MariaDB sends it. */
    private static final class Table {
        private final List<String> names = new ArrayList<>();
        private final List<Byte> types = new ArrayList<>();
        private final List<Integer> meta = new ArrayList<>();
        private final BitSet unsigned = new BitSet();
        private final List<Integer> charsets = new ArrayList<>();
        private final List<String[]> enums = new ArrayList<>();
        private final List<String[]> sets = new ArrayList<>();

        Table column(String name, ColumnType type, int metadata) {
            names.add(name);
            types.add((byte) type.getCode());
            meta.add(metadata);
            return this;
        }

        Table unsigned(String name, ColumnType type) {
            unsigned.set(names.size());
            return column(name, type, 0);
        }

        Table text(String name, ColumnType type, int metadata, int collation) {
            charsets.add(collation);
            return column(name, type, metadata);
        }

        Table enumColumn(String name, String... values) {
            enums.add(values);
            return column(name, ColumnType.STRING, (ColumnType.ENUM.getCode() << 8) | 1);
        }

        Table setColumn(String name, String... values) {
            sets.add(values);
            return column(name, ColumnType.STRING, (ColumnType.SET.getCode() << 8) | 1);
        }

        TableMapEventData build() {
            TableMapEventMetadata metadata = new TableMapEventMetadata();
            metadata.setColumnNames(new ArrayList<>(names));
            metadata.setSignedness((BitSet) unsigned.clone());
            metadata.setColumnCharsets(new ArrayList<>(charsets));
            metadata.setEnumStrValues(enums.isEmpty() ? null : new ArrayList<>(enums));
            metadata.setSetStrValues(sets.isEmpty() ? null : new ArrayList<>(sets));
            TableMapEventData table = new TableMapEventData();
            table.setDatabase("app");
            table.setTable("t");
            byte[] typeCodes = new byte[types.size()];
            int[] metadataValues = new int[meta.size()];
            for (int i = 0; i < typeCodes.length; i++) {
                typeCodes[i] = types.get(i);
                metadataValues[i] = meta.get(i);
            }
            table.setColumnTypes(typeCodes);
            table.setColumnMetadata(metadataValues);
            table.setEventMetadata(metadata);
            return table;
        }

        Map<String, Object> row(Serializable... values) {
            return BinlogRowValues.row(build(), all(names.size()), values);
        }
    }

    private static Serializable[] values(Serializable... values) {
        return values;
    }

    private static BitSet all(int columns) {
        BitSet included = new BitSet();
        included.set(0, columns);
        return included;
    }

    private static BitSet bits(int... set) {
        BitSet bits = new BitSet();
        for (int bit : set) {
            bits.set(bit);
        }
        return bits;
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static long micros(long hours, long minutes, long seconds) {
        return ((hours * 60 + minutes) * 60 + seconds) * 1_000_000;
    }

    /**
     * The micros our row deserializers produce for a DATE/DATETIME in DATE_AND_TIME_AS_LONG_MICRO mode: the fields
     * as UTC, proleptic Gregorian.
     */
    private static long libraryMicros(int year, int month, int day, int hour, int minute, int second, int micros) {
        return LocalDateTime.of(year, month, day, hour, minute, second).toEpochSecond(ZoneOffset.UTC) * 1_000_000
                + micros;
    }

    /** A TIME2 value as the server stores it ({@code my_time_packed_to_binary}). */
    private static byte[] time2(boolean negative, int hours, int minutes, int seconds, int micros, int fsp) {
        long packed = ((((long) hours << 12) | ((long) minutes << 6) | seconds) << 24) + micros;
        if (negative) {
            packed = -packed;
        }
        long integer = packed >> 24;
        long fraction = packed % (1L << 24);
        ByteBuffer buffer = ByteBuffer.allocate(3 + (fsp + 1) / 2);
        switch ((fsp + 1) / 2) {
            case 0 -> put(buffer, integer + 0x800000L, 3);
            case 1 -> {
                put(buffer, integer + 0x800000L, 3);
                buffer.put((byte) (fraction / 10_000));
            }
            case 2 -> {
                put(buffer, integer + 0x800000L, 3);
                buffer.putShort((short) (fraction / 100));
            }
            default -> put(buffer, packed + 0x800000000000L, 6);
        }
        return buffer.array();
    }

    private static void put(ByteBuffer buffer, long value, int length) {
        for (int shift = (length - 1) * 8; shift >= 0; shift -= 8) {
            buffer.put((byte) (value >> shift));
        }
    }
}
