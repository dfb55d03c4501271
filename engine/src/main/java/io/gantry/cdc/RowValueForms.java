package io.gantry.cdc;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.time.LocalDateTime;

/**
 * The text forms and number conversions that {@link BinlogRowValues} and {@link JdbcRowValues} share, so that the
 * same row read by a snapshot and read from the binlog gives equal values.
 */
final class RowValueForms {

    /** A DATE whose month or day is zero ({@code 0000-00-00}, {@code 2024-01-00}). */
    static final String ZERO_DATE = "0000-00-00";

    /** A DATETIME or TIMESTAMP whose month or day is zero, whatever its fractional digits. */
    static final String ZERO_DATETIME = "0000-00-00T00:00:00";

    /**
     * MariaDB's text protocol prints a FLOAT with FLT_DIG (6) significant digits, rounded half-even on the exact
     * value (dtoa); the binlog has the exact 4-byte float. Both sides go through this rounding.
     */
    private static final MathContext FLOAT_TEXT = new MathContext(6, RoundingMode.HALF_EVEN);

    private RowValueForms() {
    }

    /** A FLOAT the way the server's text protocol prints it (6 significant digits); keeps the sign of zero. */
    static String floatText(float value) {
        if (value == 0.0f) {
            return Float.toString(value);
        }
        return new BigDecimal(value).round(FLOAT_TEXT).toString();
    }

    /**
     * The value of a FLOAT column from its decimal text: the float nearest to it (as connector-j's
     * {@code getFloat} reads it), then through its shortest decimal string into a double, so {@code 1.1f} is
     * {@code 1.1}, not {@code 1.100000023841858}.
     */
    static Double floatValue(String text) {
        float value = (float) Double.parseDouble(text);
        return Double.parseDouble(Float.toString(value));
    }

    /** {@code 2024-01-31}; years below 1000 with leading zeros. */
    static String date(LocalDateTime value) {
        StringBuilder text = new StringBuilder(10);
        appendDate(text, value);
        return text.toString();
    }

    /** {@code 2024-01-31T13:45:00} plus exactly {@code fsp} fractional digits when {@code fsp > 0}. */
    static String dateTime(LocalDateTime value, int fsp) {
        StringBuilder text = new StringBuilder(27);
        appendDate(text, value);
        text.append('T');
        pad(text, value.getHour(), 2).append(':');
        pad(text, value.getMinute(), 2).append(':');
        pad(text, value.getSecond(), 2);
        appendFraction(text, value.getNano() / 1000, fsp);
        return text.toString();
    }

    /**
     * A TIME as the server prints it: {@code 13:45:00}, {@code -838:59:59}, {@code -00:00:00.01} (at least two hour
     * digits, a minus sign for negative values, exactly {@code fsp} fractional digits).
     */
    static String time(long micros, int fsp) {
        StringBuilder text = new StringBuilder(18);
        if (micros < 0) {
            text.append('-');
        }
        long magnitude = Math.abs(micros);
        long seconds = magnitude / 1_000_000;
        pad(text, seconds / 3600, 2).append(':');
        pad(text, seconds / 60 % 60, 2).append(':');
        pad(text, seconds % 60, 2);
        appendFraction(text, (int) (magnitude % 1_000_000), fsp);
        return text.toString();
    }

    private static void appendDate(StringBuilder text, LocalDateTime value) {
        pad(text, value.getYear(), 4).append('-');
        pad(text, value.getMonthValue(), 2).append('-');
        pad(text, value.getDayOfMonth(), 2);
    }

    private static void appendFraction(StringBuilder text, int micros, int fsp) {
        if (fsp <= 0) {
            return;
        }
        String digits = Integer.toString(micros + 1_000_000).substring(1);
        text.append('.').append(digits, 0, Math.min(fsp, 6));
    }

    private static StringBuilder pad(StringBuilder text, long value, int width) {
        String digits = Long.toString(value);
        for (int i = digits.length(); i < width; i++) {
            text.append('0');
        }
        return text.append(digits);
    }
}
