package io.gantry.cli;

import io.netty.util.ResourceLeakDetector;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine;

/** The {@code gantry} command line. */
@Command(name = "gantry",
        mixinStandardHelpOptions = true,
        versionProvider = GantryVersion.class,
        description = "A MySQL/MariaDB proxy: read/write split across replicas, bounded-staleness reads, "
                + "CDC that survives failover.",
        subcommands = {RunCommand.class, DemoCommand.class, AdminCommand.class, ExportHealthCommand.class,
                CommandLine.HelpCommand.class})
public final class GantryCommand implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        withoutLeakTracing();
        System.exit(newCommandLine().execute(args));
    }

    /**
     * Netty's default leak detection records a stack trace for one buffer in 128 and at each of its later uses:
     * under a point-select load about a thousand stack traces a second (a JFR recording of the demo at 6 000
     * queries a second), work on every event loop for a check meant for development. The tests run the engine
     * without this launcher, so they keep it; {@code -Dio.netty.leakDetection.level=simple} (in
     * {@code GANTRY_JAVA_OPTS}) turns it back on here.
     */
    private static void withoutLeakTracing() {
        if (System.getProperty("io.netty.leakDetection.level") == null) {
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        }
    }

    /** The command line with Gantry's error handling, reading settings from the process's environment. */
    static CommandLine newCommandLine() {
        return newCommandLine(System.getenv());
    }

    /** As {@link #newCommandLine()}, with {@code run}'s settings and passwords read from {@code environment}. */
    static CommandLine newCommandLine(Map<String, String> environment) {
        CommandLine commandLine = new CommandLine(new GantryCommand())
                // No @file expansion: settings files are --config files, with one format, checked line by line.
                .setExpandAtFiles(false)
                // The reason and where to look, not the whole usage: under systemd every failed start is logged.
                .setParameterExceptionHandler(GantryCommand::badArguments)
                .setExecutionExceptionHandler((exception, failed, parseResult) -> {
                    // Operators get the reason in one line; the stack trace only helps us, so it stays in debug.
                    failed.getErr().println("gantry: " + exception.getMessage());
                    return 1;
                });
        RunCommand.useEnvironment(commandLine.getSubcommands().get("run"), environment);
        return commandLine;
    }

    private static int badArguments(CommandLine.ParameterException exception, String[] arguments) {
        CommandLine failed = exception.getCommandLine();
        failed.getErr().println("gantry: " + exception.getMessage());
        CommandLine.UnmatchedArgumentException.printSuggestions(exception, failed.getErr());
        failed.getErr().println("See `" + failed.getCommandSpec().qualifiedName() + " --help` for every flag.");
        return failed.getCommandSpec().exitCodeOnInvalidInput();
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing command: try `gantry run --help` or `gantry demo`");
    }
}
