package io.gantry.cli;

import java.io.IOException;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code gantry admin queries}: the statement digests of a running Gantry ({@code SHOW GANTRY QUERIES}), largest
 * first, through the admin socket that {@code gantry admin}'s options name.
 */
@Command(name = "queries", mixinStandardHelpOptions = true, versionProvider = GantryVersion.class,
        description = {"Print the statement digests of a running Gantry (SHOW GANTRY QUERIES): every statement "
                + "shape with its count, errors, rows, latency percentiles and where it ran, largest first.",
                "  gantry admin queries --order-by p99 --limit 10",
                "  gantry admin --json --data-dir /var/lib/gantry queries"})
final class AdminQueriesCommand implements Callable<Integer> {

    @ParentCommand
    AdminCommand admin;

    @Option(names = "--order-by", paramLabel = "ORDER", defaultValue = "total_time",
            description = "total_time, count, p99 or errors (default: ${DEFAULT-VALUE}).")
    String orderBy;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "20",
            description = "At most this many shapes (default: ${DEFAULT-VALUE}).")
    int limit;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws IOException, InterruptedException {
        String order = orderBy.toLowerCase(Locale.ROOT);
        if (!order.matches("total_time|count|p99|errors")) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--order-by must be total_time, count, p99 or errors, not '" + orderBy + "'");
        }
        if (limit < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--limit must not be negative");
        }
        return admin.run("SHOW GANTRY QUERIES ORDER BY " + order + " LIMIT " + limit);
    }
}
