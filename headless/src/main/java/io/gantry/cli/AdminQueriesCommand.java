package io.gantry.cli;

import io.gantry.admin.protocol.Column;
import io.gantry.admin.protocol.QueryShape;
import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Topic;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code gantry admin queries}: the statement digests of a running Gantry ({@code SHOW GANTRY QUERIES}), largest
 * first, through the admin socket that {@code gantry admin}'s options name; with {@code --watch}, again at every push
 * of the socket's {@code queries} topic.
 */
@Command(name = "queries", mixinStandardHelpOptions = true, versionProvider = GantryVersion.class,
        description = {"Print the statement digests of a running Gantry (SHOW GANTRY QUERIES): every statement "
                + "shape with its count, errors, rows, latency percentiles and where it ran, largest first.",
                "  gantry admin queries --order-by p99 --limit 10",
                "  gantry admin queries --watch",
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

    @Option(names = "--watch", description = "Print the shapes again at every push of the admin socket's queries "
            + "topic (every 2 s), ordered among the 500 with the most total time; Ctrl-C to stop. With --json, the "
            + "pushes as the socket sends them.")
    boolean watch;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneOffset.UTC);
    private static final List<Column> COLUMNS = Arrays.stream(new String[] {"Query", "Schema", "Account", "Count",
        "Errors", "Total_time_us", "P50_us", "P99_us", "On_primary", "On_replica", "On_cache", "On_gantry"})
            .map(name -> new Column(name, name.equals("Query") || name.equals("Schema") || name.equals("Account")
                    ? Column.Type.TEXT : Column.Type.INTEGER)).toList();

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
        if (watch) {
            PrintWriter out = spec.commandLine().getOut();
            return admin.follow(EnumSet.of(Topic.QUERIES), "gantry admin queries --watch",
                    push -> print(push, order, out));
        }
        return admin.run("SHOW GANTRY QUERIES ORDER BY " + order + " LIMIT " + limit);
    }

    private void print(Reply push, String order, PrintWriter out) {
        if (!(push instanceof Reply.Queries queries)) {
            return;
        }
        Comparator<QueryShape> by = switch (order) {
            case "count" -> Comparator.comparingLong(QueryShape::count);
            case "p99" -> Comparator.comparingLong(QueryShape::p99Micros);
            case "errors" -> Comparator.comparingLong(QueryShape::errors);
            default -> Comparator.comparingLong(QueryShape::totalMicros);
        };
        List<List<Object>> rows = new ArrayList<>();
        queries.shapes().stream().sorted(by.reversed()).limit(limit).forEach(q -> rows.add(List.of(q.shape(),
                q.schema(), q.account(), q.count(), q.errors(), q.totalMicros(), q.p50Micros(), q.p99Micros(),
                q.onPrimary(), q.onReplica(), q.onCache(), q.onGantry())));
        out.println(TIME.format(queries.at()) + "  queries by " + order);
        out.print(AdminCommand.table(new Reply.Rows(null, COLUMNS, rows)));
        out.flush();
    }
}
