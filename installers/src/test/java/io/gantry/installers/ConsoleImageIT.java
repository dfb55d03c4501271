package io.gantry.installers;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The console's application image, unpacked as a desktop user would: its launcher runs on the bundled runtime, says
 * its version, and without a display refuses to start with a reason instead of a JavaFX stack trace.
 */
class ConsoleImageIT {

    private static final Path IMAGE = Path.of(System.getProperty("gantry.consoleImage", "target/console.tar.gz"));
    private static final String VERSION = System.getProperty("gantry.version", "");

    @TempDir
    static Path unpacked;

    private static Path launcher;

    @BeforeAll
    static void unpack() throws Exception {
        assertThat(IMAGE).exists();
        assertThat(run(Map.of(), "tar", "-xzf", IMAGE.toString(), "-C", unpacked.toString()).exitCode()).isZero();
        launcher = unpacked.resolve("gantry-console/bin/gantry-console");
        assertThat(launcher).isExecutable();
        assertThat(unpacked.resolve("gantry-console/lib/runtime/bin/java")).isExecutable();
        assertThat(unpacked.resolve("gantry-console/lib/app/gantry-console.jar")).exists();
    }

    @Test
    void launcherSaysItsVersionFromItsOwnRuntime() throws Exception {
        Result version = run(Map.of(), launcher.toString(), "--version");
        assertThat(version.exitCode()).as(version.output()).isZero();
        assertThat(version.output().strip()).isEqualTo("gantry console " + VERSION);
    }

    @Test
    void withoutADisplayItRefusesNamingWhy() throws Exception {
        Result run = run(Map.of("DISPLAY", "", "WAYLAND_DISPLAY", ""), launcher.toString(), "--socket",
                unpacked.resolve("no-such.sock").toString());
        assertThat(run.exitCode()).as(run.output()).isNotZero();
        assertThat(run.output()).contains("no display").doesNotContain("Exception");
    }

    private record Result(int exitCode, String output) {
    }

    private static Result run(Map<String, String> environment, String... command) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(List.of(command)).redirectErrorStream(true);
        Map<String, String> env = builder.environment();
        // An empty value means: not set at all.
        environment.forEach((name, value) -> {
            if (value.isEmpty()) {
                env.remove(name);
            } else {
                env.put(name, value);
            }
        });
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Result(process.exitValue(), output);
    }
}
