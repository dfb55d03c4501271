package io.gantry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.Gantry;
import io.gantry.admin.client.AdminClient;
import io.gantry.admin.protocol.HealthCsv;
import io.gantry.authority.Authority;
import io.gantry.authority.HealthSample;
import io.gantry.authority.Retention;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.UpstreamUrl;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gantry export-health --data-dir} of a running Gantry, from another process as an operator runs it: the
 * running Gantry's Authority cannot be opened there, so the export goes through the admin socket in the directory,
 * and it writes the very bytes the same command writes from the files once that Gantry is stopped.
 */
class ExportHealthThroughSocketIT {

    private static final List<String> SERVERS = List.of("127.0.0.1:3306", "127.0.0.1:3307", "[::1]:3308");

    @TempDir
    Path dir;

    @Test
    void aRunningGantrysDataDirectoryExportsThroughItsSocketTheBytesItsStoppedFilesGive() throws Exception {
        Path data = dir.resolve("gantry-data");
        // Two hours of one round a second for three servers: 21 600 samples, three pages of the socket's 10 000.
        Instant first = Instant.now().minus(Duration.ofHours(3)).truncatedTo(ChronoUnit.SECONDS).plusMillis(123);
        List<HealthSample> samples = new ArrayList<>();
        for (int round = 0; round < 7200; round++) {
            Instant at = first.plusSeconds(round);
            for (int s = 0; s < SERVERS.size(); s++) {
                boolean down = s == 2 && round % 97 < 5;
                samples.add(new HealthSample(at, SERVERS.get(s), down ? "down" : "up",
                        down ? "unknown" : s == 0 ? "primary" : "replica",
                        down ? null : 0.1 + (round % 13) * 0.013 + s / 3.0,
                        s == 0 || down || round % 7 == 0 ? null : (long) (round % 1000) * s,
                        down ? null : 1.5 + (round % 11) * 0.021));
            }
        }
        try (Authority authority = Authority.open(data)) {
            authority.recordHealth(samples);
        }
        String[] range = {"--data-dir", data.toString(), "--since", first.toString(),
                "--until", first.plusSeconds(7200).toString()};

        long started = System.nanoTime();
        Export stopped = export(range);
        long fromFiles = System.nanoTime() - started;
        assertThat(stopped.exitCode()).as(stopped.err()).isZero();
        assertThat(stopped.csv().lines().count()).isEqualTo(1 + samples.size());
        assertThat(stopped.csv()).startsWith(HealthCsv.HEADER + "\r\n" + HealthCsv.time(first) + ",127.0.0.1:3306,up,"
                + "primary,0.1,,1.5\r\n");

        Topology topology = Sandboxes.shared(TopologyKind.MARIADB);
        List<UpstreamUrl> urls = topology.servers().stream()
                .map(s -> new UpstreamUrl(s.host(), s.port(), "app", "app", "app", 50)).toList();
        try (Gantry gantry = Gantry.start(new Gantry.Options(ProxyConfig.defaults(
                new InetSocketAddress("127.0.0.1", 0)), urls, List.of(), data, Duration.ofSeconds(1),
                Retention.DEFAULT, Set.of(), Optional.empty()))) {
            assertThat(gantry.adminSocket()).isEqualTo(AdminClient.socketIn(data).toAbsolutePath());

            started = System.nanoTime();
            Export running = export(range);
            System.out.printf("ExportHealthThroughSocketIT: %d samples in %d ms from the files, %d ms through the "
                    + "socket (each a JVM of its own)%n", samples.size(), fromFiles / 1_000_000,
                    (System.nanoTime() - started) / 1_000_000);

            assertThat(running.exitCode()).as(running.err()).isZero();
            assertThat(running.err()).isEmpty();
            assertThat(running.csv()).isEqualTo(stopped.csv());
        }
    }

    private record Export(int exitCode, String csv, String err) {
    }

    /** {@code java -jar target/gantry.jar export-health ARGS} in a process of its own. */
    private Export export(String... arguments) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-jar", Path.of("target", "gantry.jar").toString(), "export-health"));
        command.addAll(List.of(arguments));
        Path out = Files.createTempFile(dir, "export", ".csv");
        Path err = Files.createTempFile(dir, "export", ".err");
        Process process = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("export-health finished").isTrue();
        return new Export(process.exitValue(), Files.readString(out), Files.readString(err));
    }
}
