package io.gantry.console;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Holds back what is printed on standard error while JavaFX's toolkit starts: when a library of JavaFX's cannot be
 * loaded, JavaFX prints the loader's error with a stack trace itself before it throws, and that printed line is the
 * only place that names the library. The launcher then reads it and says what is missing in one line instead; once
 * the toolkit runs, everything held goes out as it was and standard error is itself again.
 */
final class StartupOutput {

    private static StartupOutput current;

    private final PrintStream original;
    private final ByteArrayOutputStream held = new ByteArrayOutputStream();
    private boolean released;

    private StartupOutput(PrintStream original) {
        this.original = original;
    }

    /** Starts holding back standard error. */
    static synchronized StartupOutput hold() {
        StartupOutput output = new StartupOutput(System.err);
        System.setErr(new PrintStream(output.held, true, StandardCharsets.UTF_8));
        current = output;
        return output;
    }

    /** The toolkit is up: what was held is printed, and standard error is no longer held. */
    static synchronized void toolkitStarted() {
        if (current != null) {
            current.release(true);
        }
    }

    /**
     * Stops holding: standard error is the original again; returns what was held, printed there first when
     * {@code print}. Later calls return "".
     */
    String release(boolean print) {
        synchronized (StartupOutput.class) {
            if (released) {
                return "";
            }
            released = true;
            System.setErr(original);
            if (current == this) {
                current = null;
            }
            String text = held.toString(StandardCharsets.UTF_8);
            if (print) {
                original.print(text);
                original.flush();
            }
            return text;
        }
    }
}
