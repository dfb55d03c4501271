package io.gantry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/** The command line's jar is for servers: no JavaFX, no display needed (the console has a jar of its own). */
class RunnableJarIT {

    private static final Path JAR = Path.of("target", "gantry.jar");

    @Test
    void holdsNoJavaFxNorTheConsole() throws Exception {
        try (JarFile jar = new JarFile(JAR.toFile())) {
            List<String> desktop = jar.stream().map(entry -> entry.getName())
                    .filter(name -> name.startsWith("javafx/") || name.startsWith("com/sun/javafx/")
                            || name.startsWith("com/sun/glass/") || name.startsWith("com/sun/prism/")
                            || name.startsWith("org/controlsfx/") || name.startsWith("io/gantry/console/")
                            || name.matches("(.*/)?lib(glass|prism|javafx|decora)[^/]*\\.so"))
                    .limit(5).toList();
            assertThat(desktop).isEmpty();
        }
    }

    @Test
    void runsWithoutADisplay() throws Exception {
        ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", JAR.toString(), "--version").redirectErrorStream(true);
        builder.environment().remove("DISPLAY");
        builder.environment().remove("WAYLAND_DISPLAY");
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        assertThat(output).contains("0.1.0");
    }
}
