package io.gantry.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

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
        System.exit(newCommandLine().execute(args));
    }

    /** The command line with Gantry's error handling, for {@link #main} and for tests. */
    static CommandLine newCommandLine() {
        return new CommandLine(new GantryCommand())
                .setExecutionExceptionHandler((exception, commandLine, parseResult) -> {
                    // Operators get the reason in one line; the stack trace only helps us, so it stays in debug.
                    commandLine.getErr().println("gantry: " + exception.getMessage());
                    return 1;
                });
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing command: try `gantry run --help` or `gantry demo`");
    }
}
