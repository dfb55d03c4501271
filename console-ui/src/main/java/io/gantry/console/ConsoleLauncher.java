package io.gantry.console;

import io.gantry.admin.client.AdminClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.logging.Level;
import java.util.logging.Logger;
import javafx.application.Application;

/**
 * {@code gantry console [--data-dir DIR | --socket PATH]}: the desktop console of a running Gantry on this machine.
 * Not an {@link Application} itself, so that the shaded jar starts JavaFX from the class path.
 */
public final class ConsoleLauncher {

    /** JavaFX's own logger, held so that its level stays set. */
    private static final Logger JAVAFX_LOG = Logger.getLogger("javafx");

    static final String USAGE = """
            Usage: gantry console [--data-dir DIR | --socket PATH] [--tab NAME] [--window W]
            The desktop console of a running Gantry: live server table, failover timeline, lag and RTT chart,
            weight sliders, statement digests, health CSV export. It talks to the engine only through its admin socket, and waits
            (and says so) until the engine is there, reconnecting by itself when it restarts.
              --data-dir DIR   the running Gantry's data directory; its socket is DIR/admin.sock (default: gantry-data)
              --socket PATH    the admin socket itself (gantry run --admin-socket, gantry demo prints it, or forwarded);
                               --admin-socket PATH is the same, as for gantry admin
              --tab NAME       open on this tab: timeline (default), chart, weights or queries
              --window W       the chart's window: 5m, 15m (default), 1h, 6h or 1d
              -h, --help       this help
              -V, --version    the version""";

    private ConsoleLauncher() {
    }

    public static void main(String[] args) {
        int code = run(args, System.out, System.err);
        if (code >= 0) {
            System.exit(code);
        }
    }

    /** Parses and launches; returns an exit code, or -1 once the console ran and closed. */
    static int run(String[] args, PrintStream out, PrintStream err) {
        Path dataDir = null;
        Path socket = null;
        String tab = "timeline";
        String window = "15m";
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "-h", "--help" -> {
                    out.println(USAGE);
                    return 0;
                }
                case "-V", "--version" -> {
                    out.println("gantry console " + version());
                    return 0;
                }
                case "--tab" -> {
                    if (i + 1 >= args.length || !List.of("timeline", "chart", "weights", "queries")
                            .contains(args[i + 1])) {
                        return bad(err, "--tab must be timeline, chart, weights or queries");
                    }
                    tab = args[++i];
                }
                case "--window" -> {
                    if (i + 1 >= args.length || !ConsoleApp.WINDOWS.containsKey(args[i + 1])) {
                        return bad(err, "--window must be one of " + String.join(", ", ConsoleApp.WINDOWS.keySet()));
                    }
                    window = args[++i];
                }
                case "--data-dir", "--socket", "--admin-socket" -> {
                    if (i + 1 >= args.length) {
                        return bad(err, arg + " needs a value");
                    }
                    Path value = Path.of(args[++i]);
                    if (arg.equals("--data-dir")) {
                        dataDir = value;
                    } else {
                        socket = value;
                    }
                }
                default -> {
                    if (arg.startsWith("--data-dir=")) {
                        dataDir = Path.of(arg.substring("--data-dir=".length()));
                    } else if (arg.startsWith("--socket=")) {
                        socket = Path.of(arg.substring("--socket=".length()));
                    } else {
                        return bad(err, "unknown option '" + arg + "'");
                    }
                }
            }
        }
        if (dataDir != null && socket != null) {
            return bad(err, "give --data-dir or --socket, not both");
        }
        Path target = (socket != null ? socket : AdminClient.socketIn(dataDir != null ? dataDir : Path.of("gantry-data")))
                .toAbsolutePath();
        if (System.getProperty("glass.platform") == null && isBlank(System.getenv("DISPLAY"))
                && isBlank(System.getenv("WAYLAND_DISPLAY"))) {
            err.println("gantry console: no display (neither DISPLAY nor WAYLAND_DISPLAY is set); the console needs "
                    + "a desktop. Without one, watch the engine with: gantry admin --admin-socket " + target
                    + " --watch");
            return 1;
        }
        // JavaFX warns on every start that it was loaded from the class path, which the shaded jar does on purpose.
        JAVAFX_LOG.setLevel(Level.SEVERE);
        StartupOutput startup = StartupOutput.hold();
        try {
            Application.launch(ConsoleApp.class, "--socket=" + target, "--tab=" + tab, "--window=" + window);
        } catch (RuntimeException | UnsatisfiedLinkError e) {
            String printed = startup.release(false);
            Optional<String> why = DesktopFailure.explain(e, System.getenv("DISPLAY"), printed);
            if (why.isEmpty()) {
                err.print(printed);
                throw e;
            }
            err.println("gantry console: " + why.get());
            return 1;
        } finally {
            startup.release(true);
        }
        return -1;
    }

    private static boolean isBlank(String value) {
        return value == null || value.isBlank();
    }

    private static int bad(PrintStream err, String why) {
        err.println("gantry console: " + why);
        err.println("See `gantry console --help`.");
        return 2;
    }

    static String version() {
        Package own = ConsoleLauncher.class.getPackage();
        if (own != null && own.getImplementationVersion() != null) {
            return own.getImplementationVersion();
        }
        try (InputStream in = ConsoleLauncher.class.getResourceAsStream(
                "/META-INF/maven/io.gantry/gantry-console/pom.properties")) {
            if (in != null) {
                Properties properties = new Properties();
                properties.load(in);
                return properties.getProperty("version", "unknown");
            }
        } catch (IOException ignored) {
            // no version to tell
        }
        return "unknown";
    }
}
