package io.gantry.cli;

import io.gantry.cdc.CdcSettings;
import io.gantry.cdc.TableFilter;
import io.gantry.proxy.session.ProxyConfig;
import java.util.Optional;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** The change stream's flags, shared by {@code run} and {@code demo}. */
final class CdcOptions {

    @Option(names = "--no-cdc", description = "Do not read the replication stream at all (no change feed, STOP/START "
            + "GANTRY REPLICATION answer an error).")
    boolean noCdc;

    @Option(names = "--cdc-sink", paramLabel = "jsonl:PATH|none", defaultValue = "none",
            description = "Where row changes go: jsonl:PATH writes one JSON line per row change to PATH, rotated to "
                    + "PATH.000001, PATH.000002 ... (default: ${DEFAULT-VALUE}).")
    String sink;

    @Option(names = "--cdc-tables", paramLabel = "DB.TABLE[,DB.TABLE...]", defaultValue = "",
            description = "The tables whose changes go to the sink (default: every table of the service database).")
    String tables;

    @Option(names = "--cdc-snapshot", description = "Take a snapshot of the selected tables at this start even when "
            + "a position is saved (a snapshot is always taken on the first start with a sink).")
    boolean snapshot;

    @Option(names = "--cdc-sink-rotate-mb", paramLabel = "MB", defaultValue = "256",
            description = "Rotate the sink file when it grows past this size (default: ${DEFAULT-VALUE}).")
    long rotateMegabytes;

    Optional<CdcSettings> toSettings(CommandLine commandLine, ProxyConfig proxy, String serviceDatabase) {
        try {
            boolean sinkGiven = CdcSettings.parseSink(sink).isPresent();
            if (noCdc) {
                java.util.List<String> given = new java.util.ArrayList<>();
                if (sinkGiven) {
                    given.add("--cdc-sink " + sink);
                }
                if (snapshot) {
                    given.add("--cdc-snapshot");
                }
                if (!tables.isBlank()) {
                    given.add("--cdc-tables " + tables);
                }
                if (!given.isEmpty()) {
                    throw new IllegalArgumentException("--no-cdc turns the change stream off: it cannot go with "
                            + String.join(", ", given));
                }
                return Optional.empty();
            }
            if (rotateMegabytes < 1) {
                throw new IllegalArgumentException("--cdc-sink-rotate-mb must be at least 1, not " + rotateMegabytes);
            }
            return Optional.of(new CdcSettings(proxy.connectTimeout(), proxy.connectRetries(),
                    CdcSettings.parseSink(sink), rotateMegabytes * 1024 * 1024,
                    TableFilter.parse(tables, serviceDatabase), snapshot));
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(commandLine, e.getMessage());
        }
    }
}
