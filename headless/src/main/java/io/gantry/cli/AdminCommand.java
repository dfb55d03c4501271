package io.gantry.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gantry.admin.client.AdminClient;
import io.gantry.admin.protocol.AdminProtocol;
import io.gantry.admin.protocol.Column;
import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Request;
import io.gantry.admin.protocol.ServerState;
import io.gantry.admin.protocol.TimelineEvent;
import io.gantry.admin.protocol.Topic;
import java.io.IOException;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine;

/**
 * {@code gantry admin}: the command-line twin of the console, over a running Gantry's admin socket. Runs one admin
 * SQL statement and prints its result as an aligned table (or JSON lines), or, with {@code --watch}, prints every
 * server-state change and timeline event as it happens.
 */
@Command(name = "admin", mixinStandardHelpOptions = true, versionProvider = GantryVersion.class,
        subcommands = AdminQueriesCommand.class,
        description = {"Run an admin statement on a running Gantry through its admin socket and print the result, "
                + "or watch its servers and timeline live.",
                "  gantry admin \"SELECT * FROM gantry.upstream_servers\"",
                "  gantry admin \"ALTER GANTRY SET WEIGHT 'db2:3306' TO 70\"",
                "  gantry admin --watch",
                "  gantry admin queries --order-by p99 --limit 10"})
final class AdminCommand implements Callable<Integer> {

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSS")
            .withZone(ZoneOffset.UTC);
    private static final ObjectMapper JSON = new ObjectMapper();

    @Parameters(arity = "0..1", paramLabel = "SQL",
            description = "The statement: SHOW GANTRY STATUS, SHOW GANTRY POOLS, SHOW GANTRY CLUSTER, "
                    + "SHOW GANTRY QUERIES, ALTER GANTRY ..., START|STOP GANTRY REPLICATION, "
                    + "SHOW GANTRY BLOCKED HOSTS, FLUSH GANTRY HOST[S], FLUSH GANTRY QUERIES, "
                    + "SHOW TABLES FROM gantry, or a query on the gantry tables.")
    String sql;

    @Option(names = "--watch", description = "Print every change of a server's state and every timeline event as "
            + "it happens (the servers' current state first), until Ctrl-C.")
    boolean watch;

    @Option(names = "--json", description = "JSON lines: one object per row (typed values), or the socket's own "
            + "push messages with --watch.")
    boolean json;

    @Option(names = "--data-dir", paramLabel = "DIR", defaultValue = "gantry-data",
            description = "The running Gantry's data directory; its socket is DIR/" + AdminClient.SOCKET_FILE
                    + " (default: ${DEFAULT-VALUE}).")
    Path dataDir;

    @Option(names = "--admin-socket", paramLabel = "PATH",
            description = "The admin socket, when Gantry runs with --admin-socket (or it is forwarded over SSH).")
    Path adminSocket;

    @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "35",
            description = "How long to wait for an answer (default: ${DEFAULT-VALUE}; admin queries run up to 30 s).")
    long timeoutSeconds;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws IOException, InterruptedException {
        if (watch == (sql != null)) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "give either an admin statement or --watch");
        }
        if (watch) {
            Path socket = adminSocket != null ? adminSocket : AdminClient.socketIn(dataDir);
            PrintWriter out = spec.commandLine().getOut();
            return follow(EnumSet.of(Topic.SERVERS, Topic.EVENTS), "gantry admin --watch",
                    push -> printPush(push, out));
        }
        return run(sql);
    }

    /** Runs one admin statement on the socket these options name and prints its result; the exit code. */
    int run(String statement) throws IOException, InterruptedException {
        Path socket = adminSocket != null ? adminSocket : AdminClient.socketIn(dataDir);
        Duration timeout = Duration.ofSeconds(timeoutSeconds);
        try (AdminClient client = AdminClient.connect(socket, "gantry admin", timeout, push -> { })) {
            Reply reply = client.call(id -> new Request.Sql(id, statement), timeout);
            return print(reply, spec.commandLine().getOut());
        }
    }

    private int print(Reply reply, PrintWriter out) {
        if (reply instanceof Reply.Rows rows) {
            if (json) {
                for (List<Object> row : rows.rows()) {
                    ObjectNode object = JSON.createObjectNode();
                    for (int i = 0; i < row.size(); i++) {
                        object.set(rows.columns().get(i).name(), JSON.valueToTree(jsonValue(row.get(i))));
                    }
                    out.println(object);
                }
            } else {
                out.print(table(rows));
            }
            out.flush();
            return 0;
        }
        if (reply instanceof Reply.Done done) {
            if (json) {
                out.println(JSON.createObjectNode().put("affected_rows", done.affectedRows())
                        .put("message", done.message()));
            } else {
                out.println("OK: " + done.message());
            }
            out.flush();
            return 0;
        }
        if (reply instanceof Reply.Error error) {
            spec.commandLine().getErr().println("gantry: " + error.error() + ": " + error.message());
            return 1;
        }
        throw new IllegalStateException("the engine answered with " + reply.getClass().getSimpleName());
    }

    /**
     * Subscribes to {@code topics} on the socket these options name and hands every push to {@code print} (with
     * {@code --json}, prints it as the socket's own line instead) until the engine goes away; the exit code.
     */
    int follow(Set<Topic> topics, String clientName, Consumer<Reply> print) throws IOException, InterruptedException {
        Path socket = adminSocket != null ? adminSocket : AdminClient.socketIn(dataDir);
        Duration timeout = Duration.ofSeconds(timeoutSeconds);
        PrintWriter out = spec.commandLine().getOut();
        try (AdminClient client = AdminClient.connect(socket, clientName, timeout, push -> {
            if (json) {
                out.println(AdminProtocol.encode(push));
                out.flush();
            } else {
                print.accept(push);
            }
        })) {
            if (!json) {
                Reply.Welcome engine = client.welcome();
                // Before subscribing: the servers' state comes right after the subscription.
                out.println("watching Gantry " + engine.version() + " (proxy " + engine.listen() + ", data "
                        + engine.dataDir() + "); Ctrl-C to stop");
                out.flush();
            }
            Reply answer = client.call(id -> new Request.Subscribe(id, topics), timeout);
            if (answer instanceof Reply.Error error) {
                spec.commandLine().getErr().println("gantry: " + error.error() + ": " + error.message());
                return 1;
            }
            try {
                client.closed().get();
            } catch (ExecutionException e) {
                throw new IOException(e.getCause().getMessage(), e.getCause());
            }
            return 1;
        }
    }

    private void printPush(Reply push, PrintWriter out) {
        if (push instanceof Reply.ServerChanged changed) {
            ServerState s = changed.server();
            out.printf(Locale.ROOT, "%s  server  %s  %s  %s  weight %d  lag %s  rtt %s  connect %s  connections %d%s%n",
                    TIME.format(Instant.now()), s.address(), s.role(), s.health(), s.weight(),
                    s.lagMs() == null ? "-" : s.lagMs() + " ms", milliseconds(s.rttMs()),
                    milliseconds(s.connectMs()), s.connections(), s.activeCdc() ? "  cdc" : "");
        } else if (push instanceof Reply.ServerRemoved removed) {
            out.printf("%s  server  %s  removed from the lists%n", TIME.format(Instant.now()), removed.address());
        } else if (push instanceof Reply.Event event) {
            TimelineEvent e = event.event();
            out.printf("%s  event   %s  %s  %s%n", TIME.format(e.at()), e.server() == null ? "-" : e.server(),
                    e.kind(), e.reason());
        }
        out.flush();
    }

    /** The rows as the {@code mysql} client draws them: boxed, numbers right-aligned, NULL for SQL NULL. */
    static String table(Reply.Rows rows) {
        List<Column> columns = rows.columns();
        int[] widths = new int[columns.size()];
        List<List<String>> cells = new ArrayList<>();
        for (int i = 0; i < columns.size(); i++) {
            widths[i] = columns.get(i).name().length();
        }
        for (List<Object> row : rows.rows()) {
            List<String> line = new ArrayList<>();
            for (int i = 0; i < row.size(); i++) {
                String cell = row.get(i) == null ? "NULL" : text(row.get(i));
                widths[i] = Math.max(widths[i], cell.length());
                line.add(cell);
            }
            cells.add(line);
        }
        StringBuilder rule = new StringBuilder("+");
        for (int width : widths) {
            rule.append("-".repeat(width + 2)).append('+');
        }
        StringBuilder out = new StringBuilder().append(rule).append('\n').append('|');
        for (int i = 0; i < columns.size(); i++) {
            out.append(' ').append(pad(columns.get(i).name(), widths[i], false)).append(" |");
        }
        out.append('\n').append(rule).append('\n');
        for (List<String> line : cells) {
            out.append('|');
            for (int i = 0; i < line.size(); i++) {
                out.append(' ').append(pad(line.get(i), widths[i], numeric(columns.get(i)))).append(" |");
            }
            out.append('\n');
        }
        if (!cells.isEmpty()) {
            out.append(rule).append('\n');
        }
        out.append(cells.size()).append(cells.size() == 1 ? " row" : " rows").append('\n');
        return out.toString();
    }

    private static boolean numeric(Column column) {
        return switch (column.type()) {
            case INTEGER, DECIMAL, DOUBLE -> true;
            default -> false;
        };
    }

    private static String pad(String text, int width, boolean right) {
        String space = " ".repeat(width - text.length());
        return right ? space + text : text + space;
    }

    /** A value as the proxy port shows it: UTC times to the millisecond, booleans 1/0, plain numbers. */
    /** A duration of the live state: "0.42 ms", or "-" when not measured. */
    private static String milliseconds(Double millis) {
        return millis == null ? "-" : text(millis) + " ms";
    }

    static String text(Object value) {
        if (value instanceof Instant at) {
            return TIME.format(at);
        }
        if (value instanceof Boolean flag) {
            return flag ? "1" : "0";
        }
        if (value instanceof Double number) {
            return Double.isFinite(number) ? BigDecimal.valueOf(number).stripTrailingZeros().toPlainString()
                    : number.toString();
        }
        if (value instanceof BigDecimal number) {
            return number.toPlainString();
        }
        return String.valueOf(value);
    }

    private static Object jsonValue(Object value) {
        return value instanceof Instant at ? at.toString() : value;
    }
}
