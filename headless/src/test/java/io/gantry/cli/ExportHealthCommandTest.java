package io.gantry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.authority.Authority;
import io.gantry.authority.HealthSample;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class ExportHealthCommandTest {

    private static final String HEADER = "at,server,health,role,rtt_ms,lag_ms,connect_ms\r\n";
    private static final String DB1_AT_0 = "2026-11-29T23:59:59.500Z,db1:3306,up,primary,0.5,,\r\n";
    private static final String DB2_AT_0 = "2026-11-30T00:00:00.000Z,db2:3306,up,replica,0.75,40,3.25\r\n";
    private static final String DB2_AT_1 = "2026-11-30T10:00:00.000Z,db2:3306,down,unknown,,,\r\n";
    private static final String DB1_AT_2 = "2026-12-01T00:00:00.000Z,db1:3306,up,primary,1,,2\r\n";

    @TempDir
    Path dir;

    private Path data;
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    @BeforeEach
    void storeSamples() {
        data = dir.resolve("gantry-data");
        try (Authority authority = Authority.open(data)) {
            authority.recordHealth(List.of(
                    new HealthSample(Instant.parse("2026-12-01T00:00:00Z"), "db1:3306", "up", "primary", 1.0, null,
                            2.0),
                    new HealthSample(Instant.parse("2026-11-30T00:00:00Z"), "db2:3306", "up", "replica", 0.75, 40L,
                            3.25),
                    new HealthSample(Instant.parse("2026-11-30T10:00:00Z"), "db2:3306", "down", "unknown", null, null,
                            null),
                    new HealthSample(Instant.parse("2026-11-29T23:59:59.5Z"), "db1:3306", "up", "primary", 0.5,
                            null, null)));
        }
    }

    private int run(String... args) {
        return run(null, args);
    }

    private int run(Clock clock, String... args) {
        CommandLine commandLine = GantryCommand.newCommandLine();
        if (!commandLine.getSubcommands().containsKey("export-health")) {
            commandLine.addSubcommand(new ExportHealthCommand());
        }
        if (clock != null) {
            ((ExportHealthCommand) commandLine.getSubcommands().get("export-health").getCommand()).clock = clock;
        }
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        String[] full = new String[args.length + 1];
        full[0] = "export-health";
        System.arraycopy(args, 0, full, 1, args.length);
        return commandLine.execute(full);
    }

    @Test
    void writesEverySampleToStandardOutputInTimeOrder() {
        assertThat(run("--data-dir", data.toString())).isZero();
        assertThat(out.toString()).isEqualTo(HEADER + DB1_AT_0 + DB2_AT_0 + DB2_AT_1 + DB1_AT_2);
        assertThat(err.toString()).isEmpty();
    }

    @Test
    void filtersByTimeAndServer() {
        assertThat(run("--data-dir", data.toString(), "--since", "2026-11-30", "--until", "2026-12-01")).isZero();
        assertThat(out.toString()).isEqualTo(HEADER + DB2_AT_0 + DB2_AT_1);

        out.getBuffer().setLength(0);
        assertThat(run("--data-dir", data.toString(), "--server", "db1:3306",
                "--since", "2026-11-29T23:59:59.500Z")).isZero();
        assertThat(out.toString()).isEqualTo(HEADER + DB1_AT_0 + DB1_AT_2);

        out.getBuffer().setLength(0);
        assertThat(run("--data-dir", data.toString(), "--until", "2026-11-30T01:00:00+01:00")).isZero();
        assertThat(out.toString()).as("an offset is honoured").isEqualTo(HEADER + DB1_AT_0);
    }

    @Test
    void relativeTimesCountBackFromNow() {
        Clock noon = Clock.fixed(Instant.parse("2026-11-30T12:00:00Z"), ZoneOffset.UTC);
        assertThat(run(noon, "--data-dir", data.toString(), "--since", "-12h", "--until", "now")).isZero();
        assertThat(out.toString()).isEqualTo(HEADER + DB2_AT_0 + DB2_AT_1);
    }

    @Test
    void writesToAFileAndSaysHowManyRows() throws IOException {
        Path file = dir.resolve("health.csv");
        Files.writeString(file, "old content");

        assertThat(run("--data-dir", data.toString(), "--out", file.toString(), "--server", "db2:3306")).isZero();

        assertThat(Files.readString(file, StandardCharsets.UTF_8)).isEqualTo(HEADER + DB2_AT_0 + DB2_AT_1);
        assertThat(out.toString()).contains("wrote 2 health samples to " + file);
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("gantry-data",
                    "health.csv");
        }
    }

    // Another process cannot open a running Gantry's data directory (one JVM shares its embedded database, so
    // that is checked with a second process in AuthorityDoorsTest): the export then goes through the admin socket in
    // it, checked with a running Gantry in ExportHealthThroughSocketIT, or through the proxy port (--from,
    // DemoCommandIT).

    @Test
    void aSocketFileNobodyAnswersOnIsADeadGantrysAndItsFilesAreRead() throws IOException {
        Path socket = data.resolve("admin.sock");
        try (ServerSocketChannel dead = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            dead.bind(UnixDomainSocketAddress.of(socket));
        }
        assertThat(socket).exists();

        assertThat(run("--data-dir", data.toString())).as(err.toString()).isZero();

        assertThat(out.toString()).isEqualTo(HEADER + DB1_AT_0 + DB2_AT_0 + DB2_AT_1 + DB1_AT_2);
        assertThat(err.toString()).isEmpty();
    }

    @Test
    void anAdminSocketThatDoesNotAnswerIsNamedWithExitCodeOne() {
        Path socket = dir.resolve("nobody.sock");
        assertThat(run("--admin-socket", socket.toString())).isEqualTo(1);
        assertThat(err.toString()).startsWith("gantry: cannot connect to the admin socket " + socket + ": ");
        assertThat(out.toString()).isEmpty();
    }

    @Test
    void fromAndAdminSocketTogetherAreRefused() {
        assertThat(run("--from", "mysql://admin@127.0.0.1:3307", "--admin-socket", "x.sock")).isEqualTo(2);
        assertThat(err.toString()).contains("give --from or --admin-socket, not both");
    }

    @Test
    void aBadFromUrlIsNamedWithItsPasswordMasked() {
        assertThat(run("--from", "mysql://admin:secret@127.0.0.1/app")).isEqualTo(2);
        assertThat(err.toString()).contains("--from").contains("admin:***@").doesNotContain("secret");
    }

    @Test
    void aMissingDataDirectoryIsAClearErrorWithExitCodeOne() {
        Path missing = dir.resolve("nowhere");
        assertThat(run("--data-dir", missing.toString())).isEqualTo(1);
        assertThat(err.toString()).contains("gantry: no Gantry data in " + missing + " (no such directory)");
        assertThat(out.toString()).isEmpty();
        assertThat(missing).doesNotExist();
    }

    @Test
    void aDirectoryWithoutAnAuthorityIsAClearErrorWithExitCodeOne() throws IOException {
        Path empty = Files.createDirectory(dir.resolve("empty"));
        assertThat(run("--data-dir", empty.toString())).isEqualTo(1);
        assertThat(err.toString()).contains("gantry: no Gantry data in " + empty + " (no authority.mv.db)");
        try (var files = Files.list(empty)) {
            assertThat(files).isEmpty();
        }
    }

    @Test
    void badFlagsAreNamed() {
        assertThat(run("--data-dir", data.toString(), "--since", "yesterday")).isEqualTo(2);
        assertThat(err.toString()).contains("--since: 'yesterday' is not a time");

        assertThat(run("--data-dir", data.toString(), "--since", "2026-12-01", "--until", "2026-11-30")).isEqualTo(2);
        assertThat(err.toString()).contains("--since (2026-12-01T00:00:00Z) must be before --until (2026-11-30T00:00:00Z)");

        assertThat(run("--data-dir", data.toString(), "--server", "db1")).isEqualTo(2);
        assertThat(err.toString()).contains("--server must be HOST:PORT, not 'db1'");

        assertThat(run("--data-dir", data.toString(), "--out", dir.resolve("no/such/dir/x.csv").toString()))
                .isEqualTo(2);
        assertThat(err.toString()).contains("--out: the directory " + dir.resolve("no/such/dir") + " does not exist");
    }

    @Test
    void helpListsTheFlags() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString()).contains("--data-dir").contains("--admin-socket").contains("--since").contains("--until").contains("--server")
                .contains("--out");
    }
}
