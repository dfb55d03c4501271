package io.gantry;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gantry.sandbox.SystemPackage;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The real {@code sysbench} (Debian's package {@code sysbench}, 1.0.20 on Debian 12) as a client in integration
 * tests: a program no one here wrote, sending its own statements. Where it is not installed the test is skipped
 * with the package to install, unless {@value #REQUIRED_VARIABLE} is set (CI installs it and sets it), under which
 * its absence fails the test instead.
 */
public final class Sysbench {

    /** Set where sysbench must be there (CI): its absence then fails instead of skipping. */
    public static final String REQUIRED_VARIABLE = "REQUIRE_SYSBENCH";

    private final Path program;
    private final List<String> connection;

    private Sysbench(Path program, List<String> connection) {
        this.program = program;
        this.connection = connection;
    }

    /**
     * The installed program, to connect to {@code host:port} as {@code user} with {@code database} (no TLS); skips
     * the test where it is missing, or fails it under {@value #REQUIRED_VARIABLE}.
     */
    public static Sysbench connectingTo(String host, int port, String user, String password, String database) {
        return new Sysbench(program(), List.of("--db-driver=mysql", "--mysql-host=" + host, "--mysql-port=" + port,
                "--mysql-user=" + user, "--mysql-password=" + password, "--mysql-db=" + database,
                "--mysql-ssl=off"));
    }

    /** The installed program; skips the test where it is missing, or fails it under {@value #REQUIRED_VARIABLE}. */
    public static Path program() {
        Optional<Path> found = find();
        if (found.isEmpty()) {
            String reason = "no sysbench on the PATH (" + SystemPackage.SYSBENCH.installHint() + ")";
            if (System.getenv(REQUIRED_VARIABLE) != null) {
                throw new IllegalStateException(REQUIRED_VARIABLE + " is set but there is " + reason);
            }
            assumeTrue(false, "skipped: " + reason);
        }
        return found.get();
    }

    /** {@code /usr/bin/sysbench}, or the first {@code sysbench} on the PATH. */
    static Optional<Path> find() {
        List<Path> candidates = new ArrayList<>(List.of(Path.of("/usr/bin/sysbench")));
        String path = System.getenv("PATH");
        if (path != null) {
            for (String directory : path.split(File.pathSeparator)) {
                if (!directory.isBlank()) {
                    candidates.add(Path.of(directory, "sysbench"));
                }
            }
        }
        return candidates.stream().filter(Files::isExecutable).findFirst();
    }

    /**
     * Starts {@code sysbench TEST ARGS... COMMAND} (such as {@code oltp_read_write ... run}), its output to
     * {@code output}; the caller waits for it or ends it.
     */
    public Process start(String test, List<String> arguments, String command, Path output) {
        List<String> line = new ArrayList<>();
        line.add(program.toString());
        line.add(test);
        line.addAll(connection);
        line.addAll(arguments);
        line.add(command);
        try {
            return new ProcessBuilder(line).redirectErrorStream(true).redirectOutput(output.toFile()).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + String.join(" ", line), e);
        }
    }

    /**
     * Runs {@code sysbench TEST ARGS... COMMAND} to its end, within {@code timeoutSeconds}; fails with its output
     * when it does not exit 0.
     *
     * @return its output
     */
    public String run(String test, List<String> arguments, String command, Path output, long timeoutSeconds)
            throws IOException, InterruptedException {
        Process process = start(test, arguments, command, output);
        try {
            if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                throw new IllegalStateException("sysbench " + test + " " + command + " still ran after "
                        + timeoutSeconds + " s:\n" + Files.readString(output));
            }
        } finally {
            if (process.isAlive()) {
                process.destroyForcibly().waitFor();
            }
        }
        String printed = Files.readString(output);
        if (process.exitValue() != 0) {
            throw new IllegalStateException("sysbench " + test + " " + command + " exited with "
                    + process.exitValue() + ":\n" + printed);
        }
        return printed;
    }
}
