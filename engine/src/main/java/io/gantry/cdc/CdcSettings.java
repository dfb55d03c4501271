package io.gantry.cdc;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How the change stream runs.
 *
 * @param connectTimeout  {@code --upstream-connect-timeout}: bound on each connection attempt
 * @param connectRetries  {@code --upstream-connect-retries}: further attempts on a failed server before moving on
 * @param sink            {@code --cdc-sink jsonl:PATH}, or empty for no change feed
 * @param sinkRotateBytes {@code --cdc-sink-rotate-mb} in bytes: the current sink file is rotated past this size
 * @param tables          {@code --cdc-tables}
 * @param snapshot        {@code --cdc-snapshot}: take a snapshot at this start even when a position is saved
 */
public record CdcSettings(Duration connectTimeout, int connectRetries, Optional<Path> sink, long sinkRotateBytes,
                          TableFilter tables, boolean snapshot) {

    public CdcSettings {
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(sink, "sink");
        Objects.requireNonNull(tables, "tables");
        if (connectTimeout.isNegative() || connectTimeout.isZero()) {
            throw new IllegalArgumentException("--upstream-connect-timeout must be positive, not "
                    + connectTimeout.toMillis() + " ms");
        }
        if (connectRetries < 0) {
            throw new IllegalArgumentException("--upstream-connect-retries must be 0 or more, not " + connectRetries);
        }
        if (sinkRotateBytes <= 0) {
            throw new IllegalArgumentException("--cdc-sink-rotate-mb must be at least 1");
        }
        if (snapshot && sink.isEmpty()) {
            throw new IllegalArgumentException("--cdc-snapshot needs a change sink to write the snapshot to: give "
                    + "--cdc-sink jsonl:PATH");
        }
    }

    /**
     * Parses {@code --cdc-sink}: {@code jsonl:PATH}, or {@code none}.
     *
     * @throws IllegalArgumentException naming the value and the accepted forms
     */
    public static Optional<Path> parseSink(String text) {
        if (text == null || text.isBlank() || text.strip().equalsIgnoreCase("none")) {
            return Optional.empty();
        }
        String value = text.strip();
        if (!value.startsWith("jsonl:") || value.length() == "jsonl:".length()) {
            throw new IllegalArgumentException("--cdc-sink '" + text + "' is not understood: expected jsonl:PATH "
                    + "(one JSON line per row change) or none");
        }
        return Optional.of(Path.of(value.substring("jsonl:".length())));
    }
}
