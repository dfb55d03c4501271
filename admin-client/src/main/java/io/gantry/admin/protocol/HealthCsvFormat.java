package io.gantry.admin.protocol;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * The health history's CSV, RFC 4180: a header row {@value #HEADER}, CRLF after every row, a field quoted when it
 * holds a comma, a double quote, CR or LF (with its double quotes doubled), times in ISO-8601 UTC with milliseconds
 * ({@code 2026-11-30T21:51:05.123Z}), numbers in plain decimal notation, and an empty field for a null.
 *
 * <p>One format for every writer of it: {@code gantry export-health} (the engine's {@code HealthCsv}) and the
 * console's export write their rows with {@link #row}, so the two files are the same.
 */
public final class HealthCsvFormat {

    /** The header row, without its line end. */
    public static final String HEADER = "at,server,health,role,rtt_ms,lag_ms";
    /** Every row's end. */
    public static final String CRLF = "\r\n";

    private static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    private HealthCsvFormat() {
    }

    /** One sample as a CSV row, with its CRLF. */
    public static String row(Instant at, String server, String health, String role, Double rttMs, Long lagMs) {
        return time(at) + ',' + field(server) + ',' + field(health) + ',' + field(role) + ',' + number(rttMs) + ','
                + number(lagMs) + CRLF;
    }

    /** One sample of the admin socket's health history as a CSV row, with its CRLF. */
    public static String row(HealthPoint point) {
        return row(point.at(), point.server(), point.health(), point.role(), point.rttMs(), point.lagMs());
    }

    /** {@code 2026-11-30T21:51:05.123Z}: UTC, always three fraction digits. */
    public static String time(Instant at) {
        return TIME.format(at);
    }

    /** The field as RFC 4180 wants it: as is, or in double quotes with inner double quotes doubled; "" for null. */
    public static String field(String value) {
        if (value == null) {
            return "";
        }
        if (value.indexOf(',') < 0 && value.indexOf('"') < 0 && value.indexOf('\r') < 0 && value.indexOf('\n') < 0) {
            return value;
        }
        return '"' + value.replace("\"", "\"\"") + '"';
    }

    private static String number(Number value) {
        if (value == null) {
            return "";
        }
        if (value instanceof Double number) {
            return BigDecimal.valueOf(number).stripTrailingZeros().toPlainString();
        }
        return value.toString();
    }
}
