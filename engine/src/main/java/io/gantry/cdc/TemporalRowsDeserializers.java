package io.gantry.cdc;

import com.github.shyiko.mysql.binlog.event.TableMapEventData;
import com.github.shyiko.mysql.binlog.event.deserialization.DeleteRowsEventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.UpdateRowsEventDataDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.WriteRowsEventDataDeserializer;
import com.github.shyiko.mysql.binlog.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.Serializable;
import java.time.LocalDate;
import java.util.Map;

/**
 * The library's row-event deserializers with two temporal fixes; every other column type is left to the library.
 *
 * <ul>
 *   <li><b>Signed TIME.</b> mysql-binlog-connector-java 0.40.3 ignores the sign of a TIME: its
 *       {@code deserializeTimeV2} takes the hour, minute and second bits of the stored value as they are, so
 *       {@code -838:59:59} comes back as some positive time (and the old TIME format is read as unsigned). These
 *       subclasses decode both formats the way the server does ({@code my_time_packed_from_binary}) and return the
 *       time as a signed {@link Long} of microseconds, whatever the compatibility mode.</li>
 *   <li><b>Dates in year 0 and before 1582.</b> The library treats a date in year 0 ({@code 0000-01-01}) as a zero
 *       date, and computes dates before 1582-10-15 with a Julian calendar. Here every DATE and DATETIME with a
 *       non-zero month and day counts its epoch milliseconds in the proleptic Gregorian calendar, as MariaDB and
 *       {@code java.time} do, so {@code LocalDateTime.ofEpochSecond(..., UTC)} gives back its fields. A zero month
 *       or day is still the configured invalid value ({@code Long.MIN_VALUE} with
 *       {@code INVALID_DATE_AND_TIME_AS_MIN_VALUE}). A day past the month's end (ALLOW_INVALID_DATES) rolls over
 *       into the next month.</li>
 * </ul>
 *
 * <p>A class extends only one of the library's three row deserializers, so {@link Write}, {@link Update} and
 * {@link Delete} each override the same three methods, each override one call to what is written here once.
 */
final class TemporalRowsDeserializers {

    /** Offset of the integer part of a TIME2 value ({@code TIMEF_INT_OFS}). */
    private static final long TIME_INT_OFFSET = 0x800000L;
    /** Offset of a TIME2 value with 5 or 6 fractional digits ({@code TIMEF_OFS}). */
    private static final long TIME_OFFSET = 0x800000000000L;

    private TemporalRowsDeserializers() {
    }

    /**
     * A TIME2 (MySQL 5.6 format, MariaDB's default) value in microseconds, negative for negative times.
     *
     * @param fsp   the column's fractional-second digits (its table-map metadata)
     * @param bytes the stored value: 3 bytes plus {@code (fsp + 1) / 2} bytes of fraction, big-endian
     */
    static long timeV2Micros(int fsp, byte[] bytes) {
        long packed;
        switch ((fsp + 1) / 2) {
            case 0 -> packed = (bigEndian(bytes, 0, 3) - TIME_INT_OFFSET) << 24;
            case 1 -> {
                long integer = bigEndian(bytes, 0, 3) - TIME_INT_OFFSET;
                long fraction = bytes[3] & 0xFF;
                // Negative values keep their fraction counted down from the next second.
                if (integer < 0 && fraction != 0) {
                    integer++;
                    fraction -= 0x100;
                }
                packed = (integer << 24) + fraction * 10_000;
            }
            case 2 -> {
                long integer = bigEndian(bytes, 0, 3) - TIME_INT_OFFSET;
                long fraction = bigEndian(bytes, 3, 2);
                if (integer < 0 && fraction != 0) {
                    integer++;
                    fraction -= 0x10000;
                }
                packed = (integer << 24) + fraction * 100;
            }
            case 3 -> packed = bigEndian(bytes, 0, 6) - TIME_OFFSET;
            default -> throw new IllegalArgumentException("TIME fractional digits must be 0..6, found " + fsp);
        }
        long magnitude = Math.abs(packed);
        long hms = magnitude >> 24;
        long hours = (hms >> 12) & 0x3FF;
        long minutes = (hms >> 6) & 0x3F;
        long seconds = hms & 0x3F;
        long micros = ((hours * 60 + minutes) * 60 + seconds) * 1_000_000 + (magnitude & 0xFFFFFF);
        return packed < 0 ? -micros : micros;
    }

    /** An old-format TIME (3-byte signed {@code HHMMSS}, read little-endian as unsigned) in microseconds. */
    static long oldTimeMicros(int unsigned24) {
        int value = (unsigned24 << 8) >> 8;
        int magnitude = Math.abs(value);
        long seconds = (magnitude / 10_000) * 3600L + (magnitude / 100 % 100) * 60L + magnitude % 100;
        return (value < 0 ? -seconds : seconds) * 1_000_000;
    }

    /**
     * Epoch milliseconds of a date and time read as UTC in the proleptic Gregorian calendar; {@code null} when the
     * month or day is zero (or the month is out of range), for the caller to replace with its invalid value.
     */
    static Long prolepticMillis(int year, int month, int day, int hour, int minute, int second, int millis) {
        if (month < 1 || month > 12 || day == 0) {
            return null;
        }
        long epochDay = LocalDate.of(year, month, 1).toEpochDay() + day - 1;
        return (((epochDay * 24 + hour) * 60 + minute) * 60 + second) * 1000 + millis;
    }

    private static long bigEndian(byte[] bytes, int offset, int length) {
        long value = 0;
        for (int i = offset; i < offset + length; i++) {
            value = (value << 8) | (bytes[i] & 0xFF);
        }
        return value;
    }

    private static Serializable readTimeV2(int meta, ByteArrayInputStream input) throws IOException {
        return timeV2Micros(meta, input.read(3 + (meta + 1) / 2));
    }

    private static Serializable readOldTime(ByteArrayInputStream input) throws IOException {
        return oldTimeMicros(input.readInteger(3));
    }

    /**
     * What {@code asUnixTime} answers: the proleptic epoch milliseconds, or for a zero month or day {@code invalid},
     * the library's own answer for one, which is the configured invalid representation.
     */
    private static Long unixTime(int year, int month, int day, int hour, int minute, int second, int millis,
                                 Long invalid) {
        Long value = prolepticMillis(year, month, day, hour, minute, second, millis);
        return value != null ? value : invalid;
    }

    /** WRITE_ROWS and EXT_WRITE_ROWS. */
    static final class Write extends WriteRowsEventDataDeserializer {
        Write(Map<Long, TableMapEventData> tableMaps) {
            super(tableMaps);
        }

        @Override
        protected Serializable deserializeTimeV2(int meta, ByteArrayInputStream input) throws IOException {
            return readTimeV2(meta, input);
        }

        @Override
        protected Serializable deserializeTime(ByteArrayInputStream input) throws IOException {
            return readOldTime(input);
        }

        @Override
        protected Long asUnixTime(int year, int month, int day, int hour, int minute, int second, int millis) {
            return unixTime(year, month, day, hour, minute, second, millis,
                    super.asUnixTime(year, 0, 0, hour, minute, second, millis));
        }
    }

    /** UPDATE_ROWS and EXT_UPDATE_ROWS. */
    static final class Update extends UpdateRowsEventDataDeserializer {
        Update(Map<Long, TableMapEventData> tableMaps) {
            super(tableMaps);
        }

        @Override
        protected Serializable deserializeTimeV2(int meta, ByteArrayInputStream input) throws IOException {
            return readTimeV2(meta, input);
        }

        @Override
        protected Serializable deserializeTime(ByteArrayInputStream input) throws IOException {
            return readOldTime(input);
        }

        @Override
        protected Long asUnixTime(int year, int month, int day, int hour, int minute, int second, int millis) {
            return unixTime(year, month, day, hour, minute, second, millis,
                    super.asUnixTime(year, 0, 0, hour, minute, second, millis));
        }
    }

    /** DELETE_ROWS and EXT_DELETE_ROWS. */
    static final class Delete extends DeleteRowsEventDataDeserializer {
        Delete(Map<Long, TableMapEventData> tableMaps) {
            super(tableMaps);
        }

        @Override
        protected Serializable deserializeTimeV2(int meta, ByteArrayInputStream input) throws IOException {
            return readTimeV2(meta, input);
        }

        @Override
        protected Serializable deserializeTime(ByteArrayInputStream input) throws IOException {
            return readOldTime(input);
        }

        @Override
        protected Long asUnixTime(int year, int month, int day, int hour, int minute, int second, int millis) {
            return unixTime(year, month, day, hour, minute, second, millis,
                    super.asUnixTime(year, 0, 0, hour, minute, second, millis));
        }
    }
}
