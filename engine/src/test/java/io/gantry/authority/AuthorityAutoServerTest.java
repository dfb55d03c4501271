package io.gantry.authority;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** AUTO_SERVER: a second process (as {@code gantry export-health} next to a running Gantry) reads and writes too. */
class AuthorityAutoServerTest {

    @TempDir
    Path dir;

    @Test
    void anotherProcessReadsAndWritesWhileThisOneHasItOpen() throws Exception {
        try (Authority authority = Authority.open(dir)) {
            authority.replaceServerList(Purpose.PROXY, List.of(new StoredServer("db1", 3306, "shop", "svc", 50),
                    new StoredServer("db2", 3306, "shop", "svc", 50)), "start");
            authority.recordHealth(List.of(
                    new HealthSample(Instant.parse("2026-11-30T21:00:00Z"), "db1:3306", "up", "primary", 0.3, null),
                    new HealthSample(Instant.parse("2026-11-30T21:00:00Z"), "db2:3306", "up", "replica", 0.4, 10L)));

            String output = runOtherProcess();

            assertThat(output).contains("samples=2").contains("proxy=2");
            assertThat(authority.events(null, 10)).extracting(Event::reason).contains("written from another process");
            authority.recordHealth(List.of(
                    new HealthSample(Instant.parse("2026-11-30T21:00:10Z"), "db1:3306", "up", "primary", 0.3, null)));
            assertThat(authority.healthHistory(null, null, Optional.empty())).hasSize(3);
        }
    }

    @Test
    void whenTheServingProcessLeavesTheOtherGoesOn() throws Exception {
        try (Authority first = Authority.open(dir)) {
            first.replaceServerList(Purpose.PROXY, List.of(new StoredServer("db1", 3306, "shop", "svc", 50)), "start");
        }
        Process serving = startOtherProcess("1500");
        try {
            BufferedReader lines = new BufferedReader(
                    new InputStreamReader(serving.getInputStream(), StandardCharsets.UTF_8));
            String line;
            do {
                line = lines.readLine();
            } while (line != null && !line.equals("written"));
            assertThat(line).as("the other process opened the Authority first").isEqualTo("written");

            try (Authority gantry = Authority.open(dir)) {
                gantry.recordEvent(Instant.parse("2026-11-30T21:00:06Z"), null, EventKind.STARTUP, "before");
                assertThat(serving.waitFor(60, TimeUnit.SECONDS)).as("the serving process ends").isTrue();
                assertThat(serving.exitValue()).isZero();

                gantry.recordEvent(Instant.parse("2026-11-30T21:00:07Z"), null, EventKind.STARTUP, "after");
                assertThat(gantry.events(null, 10)).extracting(Event::reason)
                        .containsSubsequence("written from another process", "before", "after");
            }
        } finally {
            serving.destroyForcibly();
        }
    }

    private String runOtherProcess() throws IOException, InterruptedException {
        Process process = startOtherProcess();
        try {
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("the other process ends").isTrue();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(process.exitValue()).as("exit code; output:%n%s", output).isZero();
            return output;
        } finally {
            process.destroyForcibly();
        }
    }

    private Process startOtherProcess(String... extra) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>(List.of(java, "-cp", classPath, AnotherGantryProcess.class.getName(),
                dir.toString()));
        command.addAll(List.of(extra));
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }
}
