package io.gantry.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.abort;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The console's runnable jar on a machine that cannot show it: one line naming what is missing, exit code 1, no
 * stack trace. Each run is a JVM of its own, as an operator starts it.
 */
class ConsoleLauncherIT {

    private static final Path JAR = Path.of("target", "gantry-console.jar");

    @TempDir
    Path dir;

    @Test
    void aDisplayNobodyServesIsNamedInOneLine() throws Exception {
        String display = ":" + freeDisplay();
        Result run = console(Map.of("DISPLAY", display));
        assertThat(run.exitCode()).as(run.output()).isEqualTo(1);
        assertThat(run.output().lines()).containsExactly("gantry console: cannot open the display '" + display
                + "' (is its X server running, and may this user connect to it? see DISPLAY and XAUTHORITY)");
    }

    /**
     * On an X server (Xvfb), with GTK 3 hidden: an empty {@code libgtk-3.so.0} first on {@code LD_LIBRARY_PATH} fails
     * the loader ("file too short") as an absent library does, whether GTK 3 is installed or not.
     */
    @Test
    void aMissingGtkIsNamedInOneLineWithItsDebianPackage() throws Exception {
        Result run = onXvfb("libgtk-3.so.0", "libgtk-3.so");
        assertThat(run.exitCode()).as(run.output()).isEqualTo(1);
        assertThat(run.output().lines()).containsExactly("gantry console: GTK 3 is missing: JavaFX needs "
                + "libgtk-3.so.0 to open a window on Linux; on Debian or Ubuntu install the package libgtk-3-0 "
                + "(sudo apt install libgtk-3-0)");
    }

    /**
     * With GTK 3 there but a library JavaFX's GTK glass links hidden the same way, JavaFX prints its loader's error
     * with a stack trace before it fails: that is held back, and read for the library's name.
     */
    @Test
    void aMissingLibraryOfJavaFxsGtkGlassIsNamedInOneLine() throws Exception {
        if (!Files.exists(Path.of("/usr/lib/x86_64-linux-gnu/libgtk-3.so.0"))) {
            abort("needs GTK 3 (Debian: apt install libgtk-3-0), so that the next library is the missing one");
        }
        Result run = onXvfb("libXtst.so.6");
        assertThat(run.exitCode()).as(run.output()).isEqualTo(1);
        assertThat(run.output().lines()).containsExactly("gantry console: libXtst.so.6 cannot be loaded, and JavaFX "
                + "needs it to open a window; on Debian or Ubuntu install the package libxtst6 (sudo apt install "
                + "libxtst6)");
    }

    /** Runs the console on an Xvfb of its own, with empty files of these names first on LD_LIBRARY_PATH. */
    private Result onXvfb(String... hiddenLibraries) throws Exception {
        Path xvfb = Path.of("/usr/bin/Xvfb");
        if (!Files.isExecutable(xvfb)) {
            abort("needs an X server: /usr/bin/Xvfb is not installed (Debian: apt install xvfb)");
        }
        int number = freeDisplay();
        Path log = dir.resolve("xvfb-" + number + ".log");
        Process server = new ProcessBuilder(xvfb.toString(), ":" + number, "-nolisten", "tcp", "-screen", "0",
                "800x600x24").redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            Path socket = Path.of("/tmp/.X11-unix/X" + number);
            for (int i = 0; i < 100 && !Files.exists(socket) && server.isAlive(); i++) {
                Thread.sleep(100);
            }
            assertThat(socket).as("Xvfb said: %s", Files.readString(log)).exists();
            Path hidden = Files.createTempDirectory(dir, "hidden");
            for (String library : hiddenLibraries) {
                Files.createFile(hidden.resolve(library));
            }
            return console(Map.of("DISPLAY", ":" + number, "LD_LIBRARY_PATH", hidden.toString()));
        } finally {
            server.destroy();
            server.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** A display number with no X server: no socket in /tmp/.X11-unix and no lock file. */
    private static int freeDisplay() {
        for (int number = 97; number < 200; number++) {
            if (!Files.exists(Path.of("/tmp/.X11-unix/X" + number)) && !Files.exists(Path.of("/tmp/.X" + number
                    + "-lock"))) {
                return number;
            }
        }
        throw new IllegalStateException("no free X display number from 97 to 199");
    }

    private record Result(int exitCode, String output) {
    }

    private Result console(Map<String, String> environment) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-jar", JAR.toString(), "--socket", dir.resolve("no-such.sock").toString()))
                .redirectErrorStream(true);
        builder.environment().remove("WAYLAND_DISPLAY");
        builder.environment().putAll(environment);
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("the console stopped").isTrue();
        return new Result(process.exitValue(), output);
    }
}
