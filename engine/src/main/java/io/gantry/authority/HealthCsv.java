package io.gantry.authority;

import io.gantry.admin.protocol.HealthCsvFormat;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.time.Instant;
import java.util.Objects;

/**
 * Writes health samples as the health history's CSV ({@link HealthCsvFormat}: RFC 4180, a header row
 * {@value #HEADER}, ISO-8601 UTC times with milliseconds, an empty field for a null): the same rows as the console's
 * export, which writes them with the same format.
 *
 * <p>Use: {@code HealthCsv csv = HealthCsv.start(writer); authority.forEachHealthSample(..., csv::append);} then
 * flush the writer. The writer is never closed here.
 */
public final class HealthCsv {

    /** The header row, without its line end. */
    public static final String HEADER = HealthCsvFormat.HEADER;

    private static final String CRLF = HealthCsvFormat.CRLF;

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
        return HealthCsvFormat.row(sample.at(), sample.server(), sample.health(), sample.role(), sample.rttMs(),
                sample.lagMs());
    }

    /** {@code 2026-11-30T21:51:05.123Z}: UTC, always three fraction digits. */
    public static String time(Instant at) {
        return HealthCsvFormat.time(at);
    }

    /** The field as RFC 4180 wants it: as is, or in double quotes with inner double quotes doubled; "" for null. */
    public static String field(String value) {
        return HealthCsvFormat.field(value);
    }
}
