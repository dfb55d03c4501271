package io.gantry.admin.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.StringWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class HealthCsvTest {

    private static long writeAll(StringWriter out, List<HealthPoint> samples) throws IOException {
        HealthCsv csv = HealthCsv.start(out);
        samples.forEach(csv::append);
        return csv.rows();
    }

    @Test
    void writesTheHeaderIsoTimesAndEmptyFieldsForNull() throws IOException {
        StringWriter out = new StringWriter();
        long rows = writeAll(out, List.of(
                new HealthPoint(Instant.parse("2026-11-30T21:51:05.123Z"), "db1:3306", "up", "primary", 0.25, null,
                        3.5),
                new HealthPoint(Instant.parse("2026-11-30T21:51:06Z"), "db2:3306", "down", "unknown", null, null,
                        null),
                new HealthPoint(Instant.parse("2026-11-30T21:51:07Z"), "db3:3306", "up", "replica", 12.0, 1500L,
                        null)));

        assertThat(rows).isEqualTo(3);
        assertThat(out.toString()).isEqualTo("at,server,health,role,rtt_ms,lag_ms,connect_ms\r\n"
                + "2026-11-30T21:51:05.123Z,db1:3306,up,primary,0.25,,3.5\r\n"
                + "2026-11-30T21:51:06.000Z,db2:3306,down,unknown,,,\r\n"
                + "2026-11-30T21:51:07.000Z,db3:3306,up,replica,12,1500,\r\n");
    }

    @Test
    void theConnectTimeIsTheLastColumnSoTheFirstSixReadAsBefore() throws IOException {
        StringWriter out = new StringWriter();
        writeAll(out, List.of(new HealthPoint(Instant.parse("2026-11-30T21:51:05.123Z"), "db1:3306", "up", "replica",
                0.08, 40L, 2.75)));

        List<List<String>> parsed = Rfc4180.parse(out.toString());

        assertThat(parsed.get(0).subList(0, 6)).containsExactly("at", "server", "health", "role", "rtt_ms", "lag_ms");
        assertThat(parsed.get(0)).last().isEqualTo("connect_ms");
        assertThat(parsed.get(1)).containsExactly("2026-11-30T21:51:05.123Z", "db1:3306", "up", "replica", "0.08",
                "40", "2.75");
    }

    @Test
    void quotesFieldsWithCommasQuotesAndLineBreaks() {
        assertThat(HealthCsv.field("plain")).isEqualTo("plain");
        assertThat(HealthCsv.field("a,b")).isEqualTo("\"a,b\"");
        assertThat(HealthCsv.field("say \"hi\"")).isEqualTo("\"say \"\"hi\"\"\"");
        assertThat(HealthCsv.field("two\nlines")).isEqualTo("\"two\nlines\"");
        assertThat(HealthCsv.field("cr\rhere")).isEqualTo("\"cr\rhere\"");
        assertThat(HealthCsv.field("")).isEmpty();
        assertThat(HealthCsv.field(null)).isEmpty();
    }

    @Test
    void aStrictParserReadsTheRowsBackEqual() throws IOException {
        List<HealthPoint> samples = List.of(
                new HealthPoint(Instant.parse("2026-11-30T21:51:05.123Z"), "db1:3306", "up", "primary", 0.001, null,
                        1.25),
                new HealthPoint(Instant.parse("2026-11-30T21:51:05.124Z"), "odd,host:3306", "down", "unknown", null,
                        null, null),
                new HealthPoint(Instant.parse("2026-11-30T21:51:05.125Z"), "quo\"ted\":3306", "up", "replica",
                        123456789.5, 42L, 0.5),
                new HealthPoint(Instant.parse("2026-11-30T21:51:05.126Z"), "multi\r\nline\n:3306", "up", "replica",
                        7.0, 0L, null));
        StringWriter out = new StringWriter();
        writeAll(out, samples);

        List<List<String>> parsed = Rfc4180.parse(out.toString());

        assertThat(parsed.get(0)).containsExactly("at", "server", "health", "role", "rtt_ms", "lag_ms", "connect_ms");
        List<HealthPoint> back = new ArrayList<>();
        for (List<String> row : parsed.subList(1, parsed.size())) {
            back.add(new HealthPoint(Instant.parse(row.get(0)), row.get(1), row.get(2), row.get(3),
                    row.get(4).isEmpty() ? null : Double.valueOf(row.get(4)),
                    row.get(5).isEmpty() ? null : Long.valueOf(row.get(5)),
                    row.get(6).isEmpty() ? null : Double.valueOf(row.get(6))));
        }
        assertThat(back).isEqualTo(samples);
    }

    /** A strict RFC 4180 reader: CRLF row ends, quoted fields may hold anything, "" inside quotes is one quote. */
    static final class Rfc4180 {

        private Rfc4180() {
        }

        static List<List<String>> parse(String text) {
            List<List<String>> rows = new ArrayList<>();
            List<String> row = new ArrayList<>();
            StringBuilder field = new StringBuilder();
            int i = 0;
            boolean fieldStarted = false;
            while (i < text.length()) {
                char c = text.charAt(i);
                if (!fieldStarted && c == '"') {
                    i++;
                    while (true) {
                        if (i >= text.length()) {
                            throw new IllegalArgumentException("unclosed quote");
                        }
                        char q = text.charAt(i);
                        if (q == '"' && i + 1 < text.length() && text.charAt(i + 1) == '"') {
                            field.append('"');
                            i += 2;
                        } else if (q == '"') {
                            i++;
                            break;
                        } else {
                            field.append(q);
                            i++;
                        }
                    }
                    fieldStarted = true;
                    if (i < text.length() && text.charAt(i) != ',' && text.charAt(i) != '\r') {
                        throw new IllegalArgumentException("text after a closing quote at " + i);
                    }
                } else if (c == ',') {
                    row.add(field.toString());
                    field.setLength(0);
                    fieldStarted = false;
                    i++;
                } else if (c == '\r') {
                    if (i + 1 >= text.length() || text.charAt(i + 1) != '\n') {
                        throw new IllegalArgumentException("bare CR at " + i);
                    }
                    row.add(field.toString());
                    rows.add(row);
                    row = new ArrayList<>();
                    field.setLength(0);
                    fieldStarted = false;
                    i += 2;
                } else if (c == '\n' || c == '"') {
                    throw new IllegalArgumentException("unquoted " + (c == '\n' ? "LF" : "quote") + " at " + i);
                } else {
                    field.append(c);
                    fieldStarted = true;
                    i++;
                }
            }
            if (fieldStarted || !row.isEmpty()) {
                throw new IllegalArgumentException("the last row does not end in CRLF");
            }
            return rows;
        }
    }
}
