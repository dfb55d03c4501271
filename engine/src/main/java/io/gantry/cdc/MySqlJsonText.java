package io.gantry.cdc;

import com.github.shyiko.mysql.binlog.event.deserialization.ColumnType;
import com.github.shyiko.mysql.binlog.event.deserialization.json.JsonBinary;
import com.github.shyiko.mysql.binlog.event.deserialization.json.JsonFormatter;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.Locale;

/**
 * A MySQL binary JSON value, as the binlog holds it, printed as MySQL prints a JSON column: {@code ", "} and
 * {@code ": "} between members, keys in their stored order, strings escaped as the server escapes them (quote,
 * backslash, {@code \b \f \n \r \t}, other control characters as {@code \}{@code u00xx}, everything else as is),
 * doubles as the server's {@code my_gcvt} writes them with {@code .0} added to integral ones ({@code 1e300},
 * {@code 0.0000001}, {@code 2.0}), decimals with their scale, dates {@code "2024-01-31"}, datetimes and times with six
 * fractional digits, other opaque values as {@code "base64:typeN:..."}.
 *
 * <p>The binlog library's own text ({@code JsonBinary.parseAsString}) is compact ({@code {"a":[1,2]}}), so a change
 * stream of MySQL did not show what the server shows and what a snapshot of the same row holds; and it decodes
 * negative TIME values wrongly. Both were found by comparing the binlog with the server (RowValuesConsistencyIT on
 * MySQL 8.0.15).
 */
final class MySqlJsonText implements JsonFormatter {

    /** {@code MY_GCVT_MAX_FIELD_WIDTH}: DBL_DIG + 4 + max(5, MAX_DECPT_FOR_F_FORMAT). */
    private static final int GCVT_WIDTH = 15 + 4 + 15;
    /** {@code MAX_DECPT_FOR_F_FORMAT} (DBL_DIG). */
    private static final int MAX_DECPT_FOR_F_FORMAT = 15;
    private final StringBuilder out = new StringBuilder();

    private MySqlJsonText() {
    }

    /** The text of a binary JSON value ({@code ""} is the JSON null of an empty binlog value). */
    static String of(byte[] binary) throws IOException {
        if (binary.length == 0) {
            return "null";
        }
        if (binary[0] > 15) {
            // Not a type byte: the value is already text (what the library's own parser assumes too).
            return new String(binary, StandardCharsets.UTF_8);
        }
        MySqlJsonText text = new MySqlJsonText();
        new SignedTimeJsonBinary(binary).parse(text);
        return text.out.toString();
    }

    @Override
    public void beginObject(int entries) {
        out.append('{');
    }

    @Override
    public void beginArray(int entries) {
        out.append('[');
    }

    @Override
    public void endObject() {
        out.append('}');
    }

    @Override
    public void endArray() {
        out.append(']');
    }

    @Override
    public void name(String name) {
        appendString(name);
        out.append(": ");
    }

    @Override
    public void nextEntry() {
        out.append(", ");
    }

    @Override
    public void value(String value) {
        appendString(value);
    }

    @Override
    public void value(int value) {
        out.append(value);
    }

    @Override
    public void value(long value) {
        out.append(value);
    }

    @Override
    public void value(double value) {
        String text = gcvt(value);
        out.append(text);
        if (text.indexOf('.') < 0 && text.indexOf('e') < 0) {
            out.append(".0"); // so that it reads back as a double, as MySQL does
        }
    }

    @Override
    public void value(BigInteger value) {
        out.append(value);
    }

    @Override
    public void value(BigDecimal value) {
        out.append(value.toPlainString());
    }

    @Override
    public void value(boolean value) {
        out.append(value);
    }

    @Override
    public void valueNull() {
        out.append("null");
    }

    @Override
    public void valueYear(int year) {
        out.append(year);
    }

    @Override
    public void valueDate(int year, int month, int day) {
        out.append('"').append(String.format(Locale.ROOT, "%04d-%02d-%02d", year, month, day)).append('"');
    }

    @Override
    public void valueDatetime(int year, int month, int day, int hour, int min, int sec, int micros) {
        out.append('"').append(String.format(Locale.ROOT, "%04d-%02d-%02d %02d:%02d:%02d.%06d", year, month, day,
                hour, min, sec, micros)).append('"');
    }

    /** @param hour negative for a negative time; {@link SignedTimeJsonBinary} also keeps the sign of -00:mm:ss */
    @Override
    public void valueTime(int hour, int min, int sec, int micros) {
        time(hour < 0, Math.abs(hour), min, sec, micros);
    }

    private void time(boolean negative, long hour, int min, int sec, int micros) {
        out.append('"').append(negative ? "-" : "").append(String.format(Locale.ROOT, "%02d:%02d:%02d.%06d", hour,
                min, sec, micros)).append('"');
    }

    @Override
    public void valueTimestamp(long secondsPastEpoch, int micros) {
        LocalDateTime at = LocalDateTime.ofInstant(Instant.ofEpochSecond(secondsPastEpoch), ZoneOffset.UTC);
        valueDatetime(at.getYear(), at.getMonthValue(), at.getDayOfMonth(), at.getHour(), at.getMinute(),
                at.getSecond(), micros);
    }

    @Override
    public void valueOpaque(ColumnType type, byte[] value) {
        out.append("\"base64:type").append(type.getCode()).append(':')
                .append(Base64.getEncoder().encodeToString(value)).append('"');
    }

    private void appendString(String value) {
        ChangeJson.appendString(out, value); // the same escapes as the server's JSON printer, lower-case hex
    }

    /**
     * A double as MySQL's {@code my_gcvt(x, MY_GCVT_ARG_DOUBLE, MY_GCVT_MAX_FIELD_WIDTH)} writes it: the shortest
     * digits that read back as {@code x}, in fixed notation unless the number is below 1e-15 or an integer of more
     * than 15 digits ({@code 1e15}), or the exponent form is shorter.
     */
    static String gcvt(double x) {
        if (x == 0) {
            return 1 / x < 0 ? "-0" : "0";
        }
        boolean negative = x < 0;
        int width = GCVT_WIDTH - (negative ? 1 : 0);
        BigDecimal exact = new BigDecimal(Math.abs(x));
        BigDecimal shortest = null;
        for (int precision = 1; precision <= 17; precision++) {
            BigDecimal rounded = exact.round(new MathContext(precision, RoundingMode.HALF_EVEN));
            if (rounded.doubleValue() == Math.abs(x)) {
                shortest = rounded;
                break;
            }
        }
        if (shortest == null) {
            shortest = exact.round(new MathContext(17, RoundingMode.HALF_EVEN));
        }
        shortest = shortest.stripTrailingZeros();
        String digits = shortest.unscaledValue().toString();
        int len = digits.length();
        // The value is 0.DIGITS x 10^decpt, as dtoa returns it.
        int decpt = len - shortest.scale();
        int expLen = 1 + (decpt >= 101 || decpt <= -99 ? 1 : 0) + (decpt >= 11 || decpt <= -9 ? 1 : 0);
        boolean haveSpace = (decpt <= 0 ? len - decpt + 2 : decpt < len ? len + 1 : decpt) <= width;
        boolean forceE = decpt <= 0 && width <= 2 - decpt && width >= 3 + expLen;
        boolean fixed = (haveSpace || (decpt <= width && (decpt >= -1 || (decpt == -2 && (len > 1 || !forceE)))
                && !forceE))
                && (!haveSpace || (decpt >= -MAX_DECPT_FOR_F_FORMAT + 1
                && (decpt <= MAX_DECPT_FOR_F_FORMAT || len > decpt)));
        StringBuilder text = new StringBuilder();
        if (negative) {
            text.append('-');
        }
        if (fixed) {
            if (decpt <= 0) {
                text.append("0.").append("0".repeat(-decpt)).append(digits);
            } else if (decpt < len) {
                text.append(digits, 0, decpt).append('.').append(digits, decpt, len);
            } else {
                text.append(digits).append("0".repeat(decpt - len));
            }
        } else {
            int exponent = decpt - 1;
            text.append(digits.charAt(0));
            if (len > 1) {
                text.append('.').append(digits, 1, len);
            }
            text.append('e').append(exponent);
        }
        return text.toString();
    }

    /**
     * The library's JSON parser with MySQL's own reading of a packed TIME: the library shifts and takes remainders
     * of the signed packed value, which turns every negative time into nonsense ({@code -12:34:56.7} came out as
     * another value) and loses the sign of {@code -00:00:01}. MySQL negates the packed value first
     * ({@code TIME_from_longlong_time_packed}).
     */
    private static final class SignedTimeJsonBinary extends JsonBinary {

        SignedTimeJsonBinary(byte[] bytes) {
            super(bytes);
        }

        @Override
        protected void parseTime(JsonFormatter formatter) throws IOException {
            long packed = readInt64();
            boolean negative = packed < 0;
            long magnitude = negative ? -packed : packed;
            long hms = magnitude >> 24;
            int micros = (int) (magnitude % (1L << 24));
            long hour = (hms >> 12) % (1 << 10);
            int minute = (int) ((hms >> 6) % (1 << 6));
            int second = (int) (hms % (1 << 6));
            if (formatter instanceof MySqlJsonText text) {
                text.time(negative, hour, minute, second, micros);
            } else {
                formatter.valueTime((int) (negative ? -hour : hour), minute, second, micros);
            }
        }
    }
}
