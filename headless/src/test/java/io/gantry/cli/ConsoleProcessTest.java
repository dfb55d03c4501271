package io.gantry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConsoleProcessTest {

    @TempDir
    Path dir;

    @Test
    void opensTheNamedJarOrTheOneBesideThisJarWhenThereIsADisplay() throws Exception {
        Path named = Files.createFile(dir.resolve("named.jar"));
        Path beside = Files.createFile(dir.resolve(ConsoleProcess.JAR_NAME));
        Path own = dir.resolve("gantry.jar");
        assertThat(ConsoleProcess.decide(false, Map.of("DISPLAY", ":0", ConsoleProcess.JAR_VARIABLE,
                named.toString()), Optional.of(own))).isEqualTo(new ConsoleProcess.Decision.Open(named));
        assertThat(ConsoleProcess.decide(false, Map.of("WAYLAND_DISPLAY", "wayland-0"), Optional.of(own)))
                .isEqualTo(new ConsoleProcess.Decision.Open(beside));
    }

    @Test
    void saysWhyItDoesNotOpenTheConsole() {
        assertThat(ConsoleProcess.decide(true, Map.of("DISPLAY", ":0"), Optional.empty()))
                .isEqualTo(new ConsoleProcess.Decision.Skip("--no-console"));
        assertThat(ConsoleProcess.decide(false, Map.of("DISPLAY", ""), Optional.empty()))
                .isEqualTo(new ConsoleProcess.Decision.Skip("no display (neither DISPLAY nor WAYLAND_DISPLAY is set)"));
        assertThat(ConsoleProcess.decide(false, Map.of("DISPLAY", ":0", ConsoleProcess.JAR_VARIABLE,
                dir.resolve("gone.jar").toString()), Optional.of(dir.resolve("gantry.jar"))))
                .isEqualTo(new ConsoleProcess.Decision.Skip("the console's jar was not found (looked for "
                        + dir.resolve("gone.jar") + ", " + dir.resolve(ConsoleProcess.JAR_NAME) + "; "
                        + "GANTRY_CONSOLE_JAR names it, ./gantry sets it)"));
    }
}
