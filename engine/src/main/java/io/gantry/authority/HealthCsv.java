package io.gantry.authority;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Objects;

/**
 * Writes health samples as RFC 4180 CSV: a header row {@value #HEADER}, CRLF after every row, a field quoted when it
 * holds a comma, a double quote, CR or LF (with its double quotes doubled), times in ISO-8601 UTC with milliseconds
 * ({@code 2026-11-30T21:51:05.123Z}), numbers in plain decimal notation, and an empty field for a null.
 *
 * <p>Use: {@code HealthCsv csv = HealthCsv.start(writer); authority.forEachHealthSample(..., csv::append);} then
 * flush the writer. The writer is never closed here.
 */
public final class HealthCsv {

    /** The header row, without its line end. */
    public static final String HEADER = "at,server,health,role,rtt_ms,lag_ms";

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

    /** Writes the header and every sample. */
    public static long writeAll(Writer out, Iterable<HealthSample> samples) throws IOException {
        HealthCsv csv = start(out);
        try {
            samples.forEach(csv::append);
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        return csv.rows();
    }

    /**
     * Writes one sample as a row.
     *
     * @throws UncheckedIOException if the writer fails (so this fits a {@link java.util.function.Consumer})
     */
    public void append(HealthSample sample) {
        try {
            out.write(row(sample));
            rows++;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Data rows written so far (the header not counted). */
    public long rows() {
        return rows;
    }

    /** One sample as a CSV row, with its CRLF. */
    public static String row(HealthSample sample) {
        return time(sample.at()) + ',' + field(sample.server()) + ',' + field(sample.health()) + ','
                + field(sample.role()) + ',' + number(sample.rttMs()) + ',' + number(sample.lagMs()) + CRLF;
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
