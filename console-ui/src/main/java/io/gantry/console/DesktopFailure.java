package io.gantry.console;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Why JavaFX could not open a window here, in one line an operator can act on: what is missing and the Debian
 * package that brings it. JavaFX itself says {@code UnsupportedOperationException: Unable to load glass GTK library.}
 * with a stack trace, which names neither.
 */
final class DesktopFailure {

    /** The libraries the console's natives link, each with its Debian package(s): desktop-libraries.properties. */
    static final Map<String, String> PACKAGES = load();

    /** The loader's error for a library glass links: {@code .../libglassgtk3.so: libXtst.so.6: cannot open ...}. */
    private static final Pattern LINKED_LIBRARY =
            Pattern.compile("libglass\\w*\\.so: (?:\\S*/)?(lib[A-Za-z0-9_.+-]+?\\.so(?:\\.\\d+)*): ");
    private static final Pattern MISSING_LIBRARY =
            Pattern.compile("(lib[A-Za-z0-9_.+-]+?\\.so(?:\\.\\d+)*): cannot open shared object file");

    private DesktopFailure() {
    }

    /**
     * The one line for a failure of {@code Application.launch} that comes from this machine rather than from the
     * console, or empty when it is not one of those.
     *
     * @param display the {@code DISPLAY} the console was started with, null if none
     * @param printed what JavaFX printed on standard error while it started (its loader's errors)
     */
    static Optional<String> explain(Throwable failure, String display, String printed) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            String message = String.valueOf(cause.getMessage());
            if (cause instanceof UnsupportedOperationException && message.startsWith("Unable to load glass GTK")) {
                return Optional.of("GTK 3 is missing: JavaFX needs libgtk-3.so.0 to open a window on Linux; on "
                        + "Debian or Ubuntu install the package libgtk-3-0 (sudo apt install libgtk-3-0)");
            }
            if (cause instanceof UnsupportedOperationException && message.startsWith("Unable to open DISPLAY")) {
                return Optional.of("cannot open the display " + (display == null ? "" : "'" + display + "' ")
                        + "(is its X server running, and may this user connect to it? see DISPLAY and XAUTHORITY)");
            }
            if (cause instanceof UnsatisfiedLinkError) {
                Matcher missing = MISSING_LIBRARY.matcher(message);
                Matcher linked = LINKED_LIBRARY.matcher(printed);
                if (missing.find()) {
                    return Optional.of(cannotLoad(missing.group(1)));
                }
                if (message.startsWith("no glass") && linked.find()) {
                    return Optional.of(cannotLoad(linked.group(1)));
                }
            }
        }
        return Optional.empty();
    }

    private static String cannotLoad(String library) {
        String debian = PACKAGES.containsKey(library) ? PACKAGES.get(library).split("\\|")[0].strip() : null;
        return library + " cannot be loaded, and JavaFX needs it to open a window; " + (debian != null
                ? "on Debian or Ubuntu install the package " + debian + " (sudo apt install " + debian + ")"
                : "install the package of your distribution that has it");
    }

    private static Map<String, String> load() {
        Properties libraries = new Properties();
        try (InputStream in = DesktopFailure.class.getResourceAsStream("desktop-libraries.properties")) {
            libraries.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("the console's jar lacks desktop-libraries.properties", e);
        }
        Map<String, String> packages = new TreeMap<>();
        libraries.forEach((library, debian) -> packages.put((String) library, (String) debian));
        return Map.copyOf(packages);
    }
}
