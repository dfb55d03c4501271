package io.gantry.cli;

import io.gantry.admin.client.AdminClient;
import io.gantry.admin.protocol.HealthCsv;
import io.gantry.admin.protocol.HealthTimes;
import io.gantry.authority.Authority;
import io.gantry.authority.AuthorityException;
import io.gantry.authority.HealthSample;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * {@code gantry export-health}: the health history as RFC 4180 CSV (see {@link HealthCsv}) from a data directory:
 * through the admin socket in it when a Gantry runs there (its Authority is then open in that process alone), else
 * from the Authority itself; or through a running Gantry's proxy port's admin SQL ({@code --from}).
 */
@Command(name = "export-health", mixinStandardHelpOptions = true, versionProvider = GantryVersion.class,
        description = "Write the health history (time, server, health, role, rtt_ms, lag_ms, connect_ms) as CSV "
                + "with a header row and ISO-8601 UTC times, from a Gantry's data directory (--data-dir: through its "
                + "admin socket while it runs, from its files when it is stopped), an admin socket (--admin-socket) "
                + "or a running Gantry's proxy port (--from).")
final class ExportHealthCommand implements Callable<Integer> {

    /** How long a Gantry whose socket accepts the connection has to answer the hello. */
    private static final Duration HELLO_TIMEOUT = Duration.ofSeconds(5);

    @Option(names = "--data-dir", paramLabel = "DIR", defaultValue = "gantry-data",
            description = "Gantry's data directory (default: ${DEFAULT-VALUE}). While a Gantry runs there, the "
                    + "export goes through its admin socket DIR/" + AdminClient.SOCKET_FILE + ".")
    Path dataDir;

    @Option(names = "--admin-socket", paramLabel = "PATH",
            description = "Read a running Gantry through this admin socket (when it runs with --admin-socket, or "
                    + "the socket is forwarded over SSH).")
    Path adminSocket;

    @Option(names = "--from", paramLabel = "URL",
            description = "Read a running Gantry through its proxy port: mysql://ADMIN[:PASSWORD]@HOST:PORT, an "
                    + "account in its --admin-users; without a password in the URL it comes from the environment "
                    + "variable GANTRY_ADMIN_PASSWORD.")
    String fromUrl;

    @Option(names = "--since", paramLabel = "TIME",
            description = "First sample to export, inclusive: an ISO-8601 time (2026-11-30T21:00:00Z, or with an "
                    + "offset; without one it is UTC), a date (2026-11-30 = midnight UTC), a time relative to now "
                    + "(-1h, -7d, -30m, -90s) or 'now'. Default: the oldest sample.")
    String since;

    @Option(names = "--until", paramLabel = "TIME",
            description = "End of the export, exclusive; same forms as --since. Default: no end.")
    String until;

    @Option(names = "--server", paramLabel = "HOST:PORT",
            description = "Only this server's samples, named as in the server list (default: every server).")
    String server;

    @Option(names = "--out", paramLabel = "FILE",
            description = "Write to this file (replaced whole at the end) instead of standard output.")
    Path out;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    Clock clock = Clock.systemUTC();

    @Override
    public Integer call() throws IOException {
        CommandLine commandLine = spec.commandLine();
        Instant from = since == null ? null : parseTime("--since", since);
        Instant to = until == null ? null : parseTime("--until", until);
        if (from != null && to != null && !from.isBefore(to)) {
            throw new CommandLine.ParameterException(commandLine,
                    "--since (" + from + ") must be before --until (" + to + ")");
        }
        if (server != null && !server.matches(".+:\\d{1,5}")) {
            throw new CommandLine.ParameterException(commandLine, "--server must be HOST:PORT, not '" + server + "'");
        }
        if (out != null && !Files.isDirectory(out.toAbsolutePath().getParent())) {
            throw new CommandLine.ParameterException(commandLine,
                    "--out: the directory " + out.toAbsolutePath().getParent() + " does not exist");
        }
        if (fromUrl != null && adminSocket != null) {
            throw new CommandLine.ParameterException(commandLine, "give --from or --admin-socket, not both");
        }
        if (fromUrl != null) {
            ProxyPortHealthSource source;
            try {
                source = ProxyPortHealthSource.parse(fromUrl, System.getenv("GANTRY_ADMIN_PASSWORD"));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(commandLine, e.getMessage());
            }
            return write(commandLine, (writer) -> {
                HealthCsv csv = HealthCsv.start(writer);
                try {
                    source.forEach(from, to, Optional.ofNullable(server), sample -> append(csv, sample));
                } catch (java.sql.SQLException e) {
                    throw new IOException("cannot read the health history through " + fromUrl.replaceAll(
                            "(//[^:/@]*):[^@]*@", "$1:***@") + ": " + e.getMessage(), e);
                } catch (UncheckedIOException e) {
                    throw e.getCause();
                }
                return csv.rows();
            });
        }
        if (adminSocket != null) {
            try (AdminClient client = AdminClient.connect(adminSocket, "gantry export-health", HELLO_TIMEOUT,
                    push -> { })) {
                return writeThroughSocket(commandLine, client, from, to);
            }
        }
        Path socket = AdminClient.socketIn(dataDir);
        String socketSilent = null;
        if (Files.exists(socket)) {
            AdminClient client = null;
            try {
                client = AdminClient.connect(socket, "gantry export-health", HELLO_TIMEOUT, push -> { });
            } catch (IOException e) {
                // A socket file nobody answers on: left by a Gantry that died; its files can be read.
                socketSilent = e.getMessage();
            }
            if (client != null) {
                try (AdminClient running = client) {
                    return writeThroughSocket(commandLine, running, from, to);
                }
            }
        }
        if (!Files.isDirectory(dataDir) || !Authority.exists(dataDir)) {
            commandLine.getErr().println("gantry: no Gantry data in " + dataDir + (Files.isDirectory(dataDir)
                    ? " (no " + Authority.FILE_NAME + ")" : " (no such directory)"));
            return 1;
        }
        Authority opened;
        try {
            opened = Authority.openExisting(dataDir);
        } catch (AuthorityException e) {
            if (socketSilent == null) {
                throw e;
            }
            throw new AuthorityException(e.getMessage() + "; its admin socket did not answer either ("
                    + socketSilent + ")", e);
        }
        try (Authority authority = opened) {
            return write(commandLine, writer -> {
                HealthCsv csv = HealthCsv.start(writer);
                try {
                    authority.forEachHealthSample(from, to, Optional.ofNullable(server), sample -> append(csv, sample));
                } catch (UncheckedIOException e) {
                    throw e.getCause();
                }
                return csv.rows();
            });
        }
    }

    private int writeThroughSocket(CommandLine commandLine, AdminClient client, Instant from, Instant to)
            throws IOException {
        AdminSocketHealthSource source = new AdminSocketHealthSource(client);
        return write(commandLine, writer -> {
            HealthCsv csv = HealthCsv.start(writer);
            try {
                source.forEach(from, to, Optional.ofNullable(server), csv::append);
            } catch (UncheckedIOException e) {
                throw e.getCause();
            }
            return csv.rows();
        });
    }

    private static void append(HealthCsv csv, HealthSample sample) {
        csv.append(sample.at(), sample.server(), sample.health(), sample.role(), sample.rttMs(), sample.lagMs(),
                sample.connectMs());
    }

    /** Writes CSV from a source; returns the number of rows. */
    private interface Export {
        long to(Writer writer) throws IOException;
    }

    private int write(CommandLine commandLine, Export export) throws IOException {
        if (out == null) {
            PrintWriter stdout = commandLine.getOut();
            export.to(stdout);
            stdout.flush();
        } else {
            long rows = exportToFile(export);
            commandLine.getOut().println("gantry: wrote " + rows + " health samples to " + out);
            commandLine.getOut().flush();
        }
        return 0;
    }

    /** Writes next to the target and moves it into place, so a failed export never leaves half a file. */
    private long exportToFile(Export export) throws IOException {
        Path target = out.toAbsolutePath();
        Path temporary = Files.createTempFile(target.getParent(), "." + target.getFileName(), ".part");
        try {
            long rows;
            try (BufferedWriter writer = Files.newBufferedWriter(temporary, StandardCharsets.UTF_8)) {
                rows = export.to(writer);
            }
            try {
                Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING);
            }
            return rows;
        } finally {
            Files.deleteIfExists(temporary);
        }
    }

    private Instant parseTime(String flag, String text) {
        try {
            return HealthTimes.parse(text, clock.instant());
        } catch (IllegalArgumentException e) {
            throw badTime(flag, text);
        }
    }

    private CommandLine.ParameterException badTime(String flag, String text) {
        return new CommandLine.ParameterException(spec.commandLine(), flag + ": '" + text + "' is not a time; use "
                + "an ISO-8601 time (2026-11-30T21:00:00Z), a date (2026-11-30), a relative time (-1h, -7d) or now");
    }
}
