package io.gantry;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/**
 * A test class skipped as a whole (an assumption in its {@code @BeforeAll}: a MySQL that cannot run here, no
 * packaged MariaDB) leaves no trace in Surefire's reports: they count no test of it, skipped or not. This listener
 * (registered through {@code META-INF/services}) appends each such class and its reason to {@code
 * target/skipped-classes.txt}, one line each (the time, the class, the reason, by tabs), which the build's summary
 * prints beside the skipped tests; it leaves out lines older than the build.
 */
public final class SkippedClassesReport implements TestExecutionListener {

    /** The file, relative to the module the tests run in; the summary module reads it. */
    public static final Path FILE = Path.of("target", "skipped-classes.txt");

    @Override
    public void executionFinished(TestIdentifier identifier, TestExecutionResult result) {
        if (result.getStatus() != TestExecutionResult.Status.ABORTED
                || !(identifier.getSource().orElse(null) instanceof ClassSource source)) {
            return;
        }
        String reason = result.getThrowable().map(Throwable::getMessage).orElse("(no reason given)")
                .replaceFirst("^Assumption failed: ", "").replace('\n', ' ');
        try {
            // One short write with O_APPEND: the test JVMs running side by side append to the same file.
            Files.writeString(FILE, Instant.now() + "\t" + source.getClassName() + "\t" + reason + "\n", StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            System.err.println("SkippedClassesReport: cannot write " + FILE.toAbsolutePath() + ": " + e);
        }
    }
}
