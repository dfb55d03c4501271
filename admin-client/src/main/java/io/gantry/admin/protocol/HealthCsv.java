package io.gantry.admin.protocol;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Objects;

/**
 * Writes the health history as RFC 4180 CSV: a header row {@value #HEADER}, CRLF after every row, a field quoted
 * when it holds a comma, a double quote, CR or LF (with its double quotes doubled), times in ISO-8601 UTC with
 * milliseconds ({@code 2026-11-30T21:51:05.123Z}), numbers in plain decimal notation, and an empty field for a null.
 * Columns are only ever added at the end, so a reader of the first ones reads every later file alike.
 *
 * <p>The one writer of that file: {@code gantry export-health} (from the Authority or a proxy port) and the console's
 * export (from the admin socket) both write with it, so the two files are the same. Use:
 * {@code HealthCsv csv = HealthCsv.start(writer);} then {@link #append} each sample, then flush the writer. The
 * writer is never closed here.
 */
public final class HealthCsv {

    /** The header row, without its line end. */
    public static final String HEADER = "at,server,health,role,rtt_ms,lag_ms,connect_ms";

    private static final String CRLF = "\r\n";
    private static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    private final Writer out;
    private long rows;

    private HealthCsv(Writer out) {
        this.out = out;
    }

    /** Writes the header row and returns a writer for the data rows. */
    public static HealthCsv start(Writer out) throws IOException {
        Objects.requireNonNull(out, "out");
        out.write(HEADER);
        out.write(CRLF);
        return new HealthCsv(out);
    }

    /**
     * Writes one sample as a row (the fields of {@link HealthPoint}).
     *
     * @throws UncheckedIOException if the writer fails (so this fits a {@link java.util.function.Consumer})
     */
    public void append(Instant at, String server, String health, String role, Double rttMs, Long lagMs,
                       Double connectMs) {
        try {
            out.write(row(at, server, health, role, rttMs, lagMs, connectMs));
            rows++;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Writes one sample of the admin socket's health history as a row. */
    public void append(HealthPoint point) {
        append(point.at(), point.server(), point.health(), point.role(), point.rttMs(), point.lagMs(),
                point.connectMs());
    }

    /** Data rows written so far (the header not counted). */
    public long rows() {
        return rows;
    }

    /** One sample as a CSV row, with its CRLF. */
    public static String row(Instant at, String server, String health, String role, Double rttMs, Long lagMs,
                             Double connectMs) {
        return time(at) + ',' + field(server) + ',' + field(health) + ',' + field(role) + ',' + number(rttMs) + ','
                + number(lagMs) + ',' + number(connectMs) + CRLF;
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
