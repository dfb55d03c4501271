package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.Gantry;
import io.gantry.Sysbench;
import io.gantry.authority.Retention;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.topology.UpstreamUrl;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The statement digests against something no one here wrote: sysbench's {@code oltp_read_write} through Gantry in
 * front of a MariaDB primary and two replicas whose {@code performance_schema} is on, and every shape sysbench sent
 * counted by Gantry as often as the servers counted it, summed over the three servers, with as many errors, and as
 * often on the replicas as Gantry says it sent there (issue 48's first acceptance point). Four runs: the text protocol
 * ({@code --db-ps-mode=disable}) and server-side prepared statements (sysbench's default), each with sysbench's
 * transactions (all on the primary) and without them (reads on the replicas too).
 *
 * <p>What each side counts. Gantry: {@code SHOW GANTRY QUERIES}, the rows of schema {@value #SCHEMA}, less what it
 * answered itself or from a cache ({@code On_gantry}, {@code On_cache}: those never reached a server). The servers:
 * {@code events_statements_summary_by_digest} ({@code COUNT_STAR} of schema {@value #SCHEMA}) for texts, and for
 * prepared executions {@code prepared_statements_instances} ({@code COUNT_EXECUTE}), because MariaDB (as MySQL 5.7,
 * its bug 80173) gives a {@code COM_STMT_EXECUTE} no digest: it is counted only as {@code statement/com/Execute} and on
 * its prepared statement's instance. An instance and its counts are gone once the statement is closed, so a prepared
 * run is frozen (SIGSTOP) before sysbench closes anything and read while frozen, and Gantry keeps each session's
 * connections for the whole run ({@code --connection-retention-ms} 60 s: a connection given back to the pool has the
 * session's statements closed on it); that no instance was lost is checked, per server, against the server's own
 * count of executions. A text run ends as sysbench ends it. Either way both sides are read until two readings agree.
 *
 * <p>What is left out, each for its reason: statements of schema {@value #SCHEMA} that Gantry itself sends on
 * sysbench's sessions' connections (see {@link #GANTRY_OWN}); the servers see them, sysbench never sent them.
 * Gantry's health loop, service connections and this test's own connections run in other schemas (or none) and so
 * are not in either side's rows. {@code sysbench prepare} runs straight against the primary, before the counts are
 * reset. A {@code COM_STMT_PREPARE} is no statement in either side's counts (Gantry counts executions; the servers'
 * instances count executions), so preparing a statement again on another connection adds nothing to either.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SysbenchDigestsIT {

    private static final String SCHEMA = "sbtest";
    private static final List<String> TABLES = List.of("--tables=1", "--table-size=1000");
    private static final int THREADS = 4;
    private static final Duration RUN = Duration.ofSeconds(2);

    /**
     * Statements Gantry sends itself on the connections of sysbench's sessions, in schema {@value #SCHEMA}: the
     * servers count them, sysbench never sent them, so they have no row in Gantry's digests.
     */
    private static final List<Excluded> GANTRY_OWN = List.of(
            new Excluded("Gantry's session tracking, set on each new connection (SessionTracking.setupStatement)",
                    key -> key.startsWith("SET SESSION SESSION_TRACK_SYSTEM_VARIABLES = ")),
            new Excluded("the session's LAST_INSERT_ID() carried to a connection that lacks it (BackendStateSync)",
                    key -> key.startsWith("SELECT LAST_INSERT_ID (")));

    /** The statements {@code oltp_read_write} sends, each of which must be there on both sides. */
    private static final List<String> SYSBENCH_SHAPES = List.of(
            "SELECT c FROM sbtest1 WHERE id = ?",
            "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?",
            "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?",
            "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
            "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
            "UPDATE sbtest1 SET k = k + 1 WHERE id = ?",
            "UPDATE sbtest1 SET c = ? WHERE id = ?",
            "DELETE FROM sbtest1 WHERE id = ?",
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)",
            "BEGIN",
            "COMMIT");

    @TempDir
    static Path dataDir;
    @TempDir
    static Path outputDir;

    private Topology topology;
    private Gantry gantry;
    private Sysbench throughGantry;

    /** A statement Gantry sends of its own, and why it is there. */
    private record Excluded(String why, Predicate<String> matches) {
    }

    @BeforeAll
    void start() throws Exception {
        // Skipped (or failed, where CI requires it) before any server starts.
        Sysbench.program();
        // performance_schema costs each server some 110 MB, so only this test's topology has it. Without the
        // events_statements_current consumer MariaDB 11.4 counts a prepared statement's executions nowhere but in
        // statement/com/Execute: its instance's COUNT_EXECUTE stays 0 (seen with sysbench straight to a server).
        topology = Sandboxes.startMariaDbWith("sysbench-digests", 2, List.of("performance-schema=ON",
                "performance-schema-consumer-events-statements-current=ON"));
        for (DatabaseServer server : topology.servers()) {
            try (Connection connection = topology.connectAsAdmin(server)) {
                // A server without it would count nothing, and an empty table is no agreement.
                assertThat(scalar(connection, "SELECT @@performance_schema")).as(server.name()).isEqualTo("1");
                assertThat(scalar(connection, "SELECT GROUP_CONCAT(NAME ORDER BY NAME) FROM "
                        + "performance_schema.setup_consumers WHERE ENABLED = 'YES' AND NAME IN ('statements_digest', "
                        + "'events_statements_current', 'global_instrumentation', 'thread_instrumentation')"))
                        .as(server.name()).isEqualTo("events_statements_current,global_instrumentation,"
                                + "statements_digest,thread_instrumentation");
                assertThat(scalar(connection, "SELECT COUNT(*) FROM performance_schema.setup_instruments "
                        + "WHERE (NAME LIKE 'statement/sql/%' OR NAME = 'statement/com/Execute') AND ENABLED = 'NO'"))
                        .as(server.name()).isEqualTo("0");
            }
        }
        DatabaseServer primary = topology.primary();
        try (Connection connection = topology.connectAsApp(primary);
             Statement statement = connection.createStatement()) {
            statement.execute("CREATE DATABASE " + SCHEMA);
        }
        // Straight to the primary: the table and its rows are not part of what is compared.
        Sysbench.connectingTo(primary.host(), primary.port(), "app", "app", SCHEMA)
                .run("oltp_read_write", TABLES, "prepare", outputDir.resolve("prepare.txt"), 60);
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));

        ProxyConfig proxy = ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0))
                .withConnectTimeout(Duration.ofSeconds(2))
                .withConnectionRetention(Duration.ofSeconds(60));
        List<UpstreamUrl> urls = topology.servers().stream()
                .map(s -> new UpstreamUrl(s.host(), s.port(), "app", "app", "app", 50)).toList();
        gantry = Gantry.start(new Gantry.Options(proxy, urls, List.of(), dataDir, Duration.ofSeconds(1),
                Retention.DEFAULT, Set.of(), Optional.empty()));
        throughGantry = Sysbench.connectingTo("127.0.0.1", gantry.address().getPort(), "app", "app", SCHEMA);
    }

    @AfterAll
    void stop() {
        if (gantry != null) {
            gantry.close();
        }
        if (topology != null) {
            topology.close();
        }
    }

    /**
     * The four runs: text or prepared, each with sysbench's transactions (every statement between {@code BEGIN} and
     * {@code COMMIT}, so all of it runs on the primary) and without them ({@code --skip_trx=on}: the reads go to the
     * replicas, so that the sum over the servers and where Gantry says each statement ran are put to the test).
     */
    @ParameterizedTest(name = "{0}, {1}")
    @CsvSource({"text, transactions", "prepared, transactions", "text, no transactions",
            "prepared, no transactions"})
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void countsEveryStatementSysbenchSendsAsOftenAsTheServersDo(String protocol, String transactions)
            throws Exception {
        boolean prepared = protocol.equals("prepared");
        boolean inTransactions = transactions.equals("transactions");
        List<String> arguments = new ArrayList<>(TABLES);
        arguments.add("--threads=" + THREADS);
        arguments.add("--db-ps-mode=" + (prepared ? "auto" : "disable"));
        arguments.add("--skip_trx=" + (inTransactions ? "off" : "on"));
        if (!inTransactions) {
            // Its delete and insert of one id are then apart, and two threads may pick the same id: the second insert
            // is a duplicate (as it is straight against a server), which sysbench stops at unless told to go on.
            arguments.add("--mysql-ignore-errors=1213,1020,1205,1062");
        }
        Path output = outputDir.resolve(protocol + "-" + transactions.replace(' ', '-') + ".txt");
        String run = protocol + (prepared ? " (server-side prepared statements, sysbench's default)"
                : " (--db-ps-mode=disable)") + ", " + transactions;
        awaitNoSysbenchStatementRunning();
        resetCounts();
        if (!prepared) {
            arguments.add("--time=" + RUN.toSeconds());
            String printed = throughGantry.run("oltp_read_write", arguments, "run", output, 60);
            compare(run, inTransactions, settled(), printed);
            return;
        }
        // Longer than it is let run: it is frozen before it ends, and so before it closes its statements.
        arguments.add("--time=60");
        Process sysbench = throughGantry.start("oltp_read_write", arguments, "run", output);
        try {
            Thread.sleep(RUN.toMillis());
            assertThat(sysbench.isAlive()).as("sysbench still runs: %s", Files.readString(output)).isTrue();
            signal(sysbench, "STOP");
            compare(run, inTransactions, settled(), Files.readString(output));
        } finally {
            sysbench.destroyForcibly().waitFor(); // SIGKILL ends a stopped process too
        }
    }

    /** Both sides' counts forgotten: the servers' summaries truncated on every server, and Gantry's flushed. */
    private void resetCounts() throws SQLException {
        for (DatabaseServer server : topology.servers()) {
            try (Connection connection = topology.connectAsAdmin(server);
                 Statement statement = connection.createStatement()) {
                statement.execute("TRUNCATE TABLE performance_schema.events_statements_summary_by_digest");
                statement.execute("TRUNCATE TABLE performance_schema.events_statements_summary_global_by_event_name");
                statement.execute("TRUNCATE TABLE performance_schema.prepared_statements_instances");
            }
        }
        try (Connection admin = gantryAdmin(); Statement statement = admin.createStatement()) {
            statement.execute("FLUSH GANTRY QUERIES");
        }
    }

    /** What an earlier test's sysbench left running on the servers (a frozen one's lock waits) has ended. */
    private void awaitNoSysbenchStatementRunning() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (DatabaseServer server : topology.servers()) {
            try (Connection connection = topology.connectAsAdmin(server)) {
                String running;
                // sysbench's statements run as app in its schema (a replica's replication threads as system user)
                while (!(running = scalar(connection, "SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                        + "WHERE USER = 'app' AND DB = '" + SCHEMA + "' AND COMMAND <> 'Sleep'")).equals("0")) {
                    assertThat(System.nanoTime()).as("%s statements still running on %s", running, server.name())
                            .isLessThan(deadline);
                    Thread.sleep(100);
                }
            }
        }
    }

    /** One statement as both sides counted it. */
    private static final class Line {
        String gantryShape = "";
        String serverText = "";
        /** What Gantry counted as run on a server, and of that on a replica; what it answered itself. */
        long gantry;
        long gantryOnReplica;
        long answeredByGantry;
        long gantryErrors;
        /** What the servers counted, and of that the replicas. */
        long servers;
        long replicas;
        long serverErrors;

        List<Long> figures() {
            return List.of(gantry, gantryOnReplica, answeredByGantry, gantryErrors, servers, replicas, serverErrors);
        }
    }

    /**
     * Both sides' counts once every statement that was answered is counted on both: a server counts a statement in
     * its summaries after it sent the answer and before its thread shows {@code Sleep} again, so the servers are
     * read only once every thread of sysbench's sessions sleeps or waits for a row lock (a frozen sysbench holds
     * some: those statements are unanswered, and counted by neither side); Gantry counts one as the answer's last
     * packet passes, so both sides are read until two readings 300 ms apart agree.
     */
    private Map<String, Line> settled() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Map<String, Line> last = null;
        while (true) {
            awaitServersDoneWithAnsweredStatements(deadline);
            Map<String, Line> now = read();
            Map<String, Line> before = last;
            if (before != null && now.keySet().equals(before.keySet()) && now.entrySet().stream()
                    .allMatch(e -> e.getValue().figures().equals(before.get(e.getKey()).figures()))) {
                return now;
            }
            assertThat(System.nanoTime()).as("the counts never settled").isLessThan(deadline);
            last = now;
            Thread.sleep(300);
        }
    }

    private void awaitServersDoneWithAnsweredStatements(long deadline) throws Exception {
        for (DatabaseServer server : topology.servers()) {
            try (Connection connection = topology.connectAsAdmin(server)) {
                String busy;
                while (!(busy = scalar(connection, "SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                        + "WHERE USER = 'app' AND DB = '" + SCHEMA + "' AND COMMAND <> 'Sleep' AND ID NOT IN ("
                        + "SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX "
                        + "WHERE trx_state = 'LOCK WAIT')")).equals("0")) {
                    assertThat(System.nanoTime()).as("%s threads of sysbench's sessions still busy on %s", busy,
                            server.name()).isLessThan(deadline);
                    Thread.sleep(20);
                }
            }
        }
    }

    private Map<String, Line> read() throws SQLException {
        Map<String, Line> lines = new TreeMap<>();
        try (Connection admin = gantryAdmin(); Statement statement = admin.createStatement();
             ResultSet rows = statement.executeQuery("SHOW GANTRY QUERIES")) {
            while (rows.next()) {
                if (!SCHEMA.equals(rows.getString("Schema"))) {
                    continue;
                }
                Line line = lines.computeIfAbsent(ComparableShape.of(rows.getString("Query")), k -> new Line());
                line.gantryShape = rows.getString("Query");
                long own = rows.getLong("On_gantry") + rows.getLong("On_cache");
                line.gantry += rows.getLong("Count") - own;
                line.gantryOnReplica += rows.getLong("On_replica");
                line.answeredByGantry += own;
                line.gantryErrors += rows.getLong("Errors");
            }
        }
        for (DatabaseServer server : topology.servers()) {
            boolean replica = !server.equals(topology.primary());
            try (Connection connection = topology.connectAsAdmin(server);
                 Statement statement = connection.createStatement()) {
                try (ResultSet rows = statement.executeQuery("SELECT DIGEST_TEXT, COUNT_STAR, SUM_ERRORS "
                        + "FROM performance_schema.events_statements_summary_by_digest WHERE SCHEMA_NAME = '" + SCHEMA
                        + "'")) {
                    while (rows.next()) {
                        addServerCount(lines, replica, rows.getString(1), rows.getLong(2), rows.getLong(3));
                    }
                }
                // The prepared statements of sysbench's sessions' connections (Gantry's own are texts).
                try (ResultSet rows = statement.executeQuery("SELECT p.SQL_TEXT, p.COUNT_EXECUTE, p.SUM_ERRORS "
                        + "FROM performance_schema.prepared_statements_instances p JOIN performance_schema.threads t "
                        + "ON t.THREAD_ID = p.OWNER_THREAD_ID WHERE t.PROCESSLIST_DB = '" + SCHEMA + "'")) {
                    while (rows.next()) {
                        addServerCount(lines, replica, rows.getString(1), rows.getLong(2), rows.getLong(3));
                    }
                }
            }
        }
        return lines;
    }

    private static void addServerCount(Map<String, Line> lines, boolean replica, String text, long count,
                                       long errors) {
        Line line = lines.computeIfAbsent(ComparableShape.of(text), k -> new Line());
        line.serverText = text.strip();
        line.servers += count;
        line.replicas += replica ? count : 0;
        line.serverErrors += errors;
    }

    private void compare(String run, boolean inTransactions, Map<String, Line> lines, String sysbenchOutput)
            throws SQLException {
        checkNothingLostOnTheServers();
        StringBuilder table = new StringBuilder();
        table.append(String.format("%n%s, %d threads: Gantry's digests against the servers' (summed over %d)%n",
                run, THREADS, topology.servers().size()));
        table.append(String.format("%-66s %7s %7s %7s %7s %5s %5s %s%n", "shape", "gantry", "servers",
                "g.repl", "s.repl", "g.err", "s.err", "left out"));
        List<String> differ = new ArrayList<>();
        for (Map.Entry<String, Line> entry : lines.entrySet()) {
            Line line = entry.getValue();
            Optional<Excluded> excluded = line.gantryShape.isEmpty()
                    ? GANTRY_OWN.stream().filter(e -> e.matches().test(entry.getKey())).findFirst()
                    : Optional.empty();
            String shown = line.gantryShape.isEmpty() ? line.serverText : line.gantryShape;
            table.append(String.format("%-66s %7d %7d %7d %7d %5d %5d %s%n",
                    shown.length() > 66 ? shown.substring(0, 63) + "..." : shown, line.gantry, line.servers,
                    line.gantryOnReplica, line.replicas, line.gantryErrors, line.serverErrors,
                    excluded.map(Excluded::why).orElse(line.answeredByGantry > 0
                            ? "(" + line.answeredByGantry + " answered by Gantry)" : "")));
            if (excluded.isEmpty() && (line.gantry != line.servers || line.gantryOnReplica != line.replicas
                    || line.gantryErrors != line.serverErrors)) {
                differ.add(shown);
            }
        }
        System.out.println(table);
        String context = table + "\nsysbench said:\n" + sysbenchOutput;
        for (String shape : SYSBENCH_SHAPES) {
            if (!inTransactions && (shape.equals("BEGIN") || shape.equals("COMMIT"))) {
                continue;
            }
            Line line = lines.get(ComparableShape.of(shape));
            assertThat(line).as("%s on both sides%s", shape, context).isNotNull();
            assertThat(Math.min(line.gantry, line.servers)).as("%s counted on both sides%s", shape, context)
                    .isPositive();
        }
        if (!differ.isEmpty()) {
            context = context + readAgainLater(lines, differ);
        }
        assertThat(differ).as("shapes whose counts differ%s", context).isEmpty();
        if (!inTransactions) {
            assertThat(lines.get(ComparableShape.of(SYSBENCH_SHAPES.get(0))).replicas)
                    .as("point selects the replicas ran: reads outside transactions go there%s", context)
                    .isPositive();
        }
    }

    /**
     * For a failure's message: the counts that differed read again 3 s later (a server's count that caught up would
     * say that the test read too early, one that did not that the two sides differ), and the statements of sysbench's
     * sessions still running on the servers.
     */
    private String readAgainLater(Map<String, Line> before, List<String> differ) {
        StringBuilder out = new StringBuilder("\n3 s later:\n");
        try {
            Thread.sleep(3000);
            Map<String, Line> later = read();
            for (Map.Entry<String, Line> entry : later.entrySet()) {
                Line line = entry.getValue();
                Line earlier = before.getOrDefault(entry.getKey(), new Line());
                String shown = line.gantryShape.isEmpty() ? line.serverText : line.gantryShape;
                if (differ.contains(shown)) {
                    out.append(String.format("%s: gantry %d (was %d), servers %d (was %d)%n", shown, line.gantry,
                            earlier.gantry, line.servers, earlier.servers));
                }
            }
            for (DatabaseServer server : topology.servers()) {
                try (Connection connection = topology.connectAsAdmin(server);
                     Statement statement = connection.createStatement();
                     ResultSet rows = statement.executeQuery("SELECT ID, COMMAND, STATE, TIME_MS, INFO "
                             + "FROM information_schema.PROCESSLIST WHERE USER = 'app' AND COMMAND <> 'Sleep'")) {
                    while (rows.next()) {
                        out.append(String.format("%s runs: %s %s '%s' for %s ms: %s%n", server.name(),
                                rows.getString(1), rows.getString(2), rows.getString(3), rows.getString(4),
                                rows.getString(5)));
                    }
                }
            }
        } catch (Exception e) {
            out.append("could not read again: ").append(e);
        }
        return out.toString();
    }

    /**
     * Per server, the executions its prepared statements' instances hold add up to its own count of executions
     * ({@code statement/com/Execute}): no statement was closed, with its counts, since the reset. And no statement
     * fell out of the digest table (its {@code NULL} row counts what no longer fits).
     */
    private void checkNothingLostOnTheServers() throws SQLException {
        for (DatabaseServer server : topology.servers()) {
            try (Connection connection = topology.connectAsAdmin(server)) {
                String executions = scalar(connection, "SELECT COALESCE(SUM(COUNT_STAR), 0) FROM "
                        + "performance_schema.events_statements_summary_global_by_event_name "
                        + "WHERE EVENT_NAME = 'statement/com/Execute'");
                String onInstances = scalar(connection, "SELECT COALESCE(SUM(COUNT_EXECUTE), 0) FROM "
                        + "performance_schema.prepared_statements_instances");
                assertThat(onInstances).as("executions %s counted on its prepared statements", server.name())
                        .isEqualTo(executions);
                assertThat(scalar(connection, "SELECT COALESCE(SUM(COUNT_STAR), 0) FROM "
                        + "performance_schema.events_statements_summary_by_digest WHERE DIGEST IS NULL"))
                        .as("statements %s counted without a digest (its table full)", server.name()).isEqualTo("0");
            }
        }
    }

    private Connection gantryAdmin() throws SQLException {
        return DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + gantry.address().getPort() + "/app"
                + "?sslMode=disable", "app", "app");
    }

    private static String scalar(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
            assertThat(rows.next()).as("a row from %s", sql).isTrue();
            return Objects.toString(rows.getString(1));
        }
    }

    private static void signal(Process process, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
        assertThat(kill.waitFor()).as("kill -%s %d", signal, process.pid()).isZero();
    }
}
