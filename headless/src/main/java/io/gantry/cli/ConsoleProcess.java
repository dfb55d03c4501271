package io.gantry.cli;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The desktop console as a process of its own, for {@code gantry demo}: opened when there is a display and the
 * console's jar is found, else not, with the reason. The command line's jar holds no JavaFX; the console's
 * ({@code gantry-console.jar}) does, and is found through {@code GANTRY_CONSOLE_JAR} (the {@code ./gantry} script
 * sets it) or beside this jar.
 */
final class ConsoleProcess {

    /** The environment variable that names the console's jar. */
    static final String JAR_VARIABLE = "GANTRY_CONSOLE_JAR";
    static final String JAR_NAME = "gantry-console.jar";

    /** Whether to open the console: the jar to run, or why not. */
    sealed interface Decision {
        record Open(Path jar) implements Decision {
        }

        record Skip(String reason) implements Decision {
        }
    }

    private ConsoleProcess() {
    }

    /**
     * @param besideThisJar where this program's own jar is, if it runs from one
     */
    static Decision decide(boolean noConsole, Map<String, String> environment, Optional<Path> besideThisJar) {
        if (noConsole) {
            return new Decision.Skip("--no-console");
        }
        if (blank(environment.get("DISPLAY")) && blank(environment.get("WAYLAND_DISPLAY"))) {
            return new Decision.Skip("no display (neither DISPLAY nor WAYLAND_DISPLAY is set)");
        }
        List<Path> looked = new ArrayList<>();
        String named = environment.get(JAR_VARIABLE);
        if (!blank(named)) {
            Path jar = Path.of(named);
            if (Files.isRegularFile(jar)) {
                return new Decision.Open(jar);
            }
            looked.add(jar);
        }
        if (besideThisJar.isPresent()) {
            Path jar = besideThisJar.get().resolveSibling(JAR_NAME);
            if (Files.isRegularFile(jar)) {
                return new Decision.Open(jar);
            }
            looked.add(jar);
        }
        return new Decision.Skip("the console's jar was not found (looked for " + (looked.isEmpty() ? JAR_NAME
                : looked.stream().map(Path::toString).reduce((a, b) -> a + ", " + b).orElseThrow()) + "; "
                + JAR_VARIABLE + " names it, ./gantry sets it)");
    }

    /** This program's jar, when it runs from one. */
    static Optional<Path> ownJar() {
        try {
            Path location = Path.of(ConsoleProcess.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return location.toString().endsWith(".jar") ? Optional.of(location) : Optional.empty();
        } catch (URISyntaxException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** Starts the console on {@code socket}, with the same java as this process; its output goes to {@code log}. */
    static Process start(Path jar, Path socket, Path log) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder builder = new ProcessBuilder(java, "-jar", jar.toString(), "--socket", socket.toString());
        builder.redirectErrorStream(true);
        builder.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        return builder.start();
    }

    private static boolean blank(String value) {
        return value == null || value.isBlank();
    }
}
