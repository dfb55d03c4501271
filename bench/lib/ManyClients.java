import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Many clients through one proxy, as bench/connections.sh drives them, with MySQL Connector/J (text protocol):
 * <ol>
 *   <li>a login storm: STORM connects offered at once from 500 threads, each logging in and running SELECT 1,
 *       all held until the last is in, then closed;</li>
 *   <li>IDLE clients that log in, run one point select and stay idle (opened from 64 threads);</li>
 *   <li>ACTIVE clients, each on a connection of its own, running point selects without pause for SECONDS while
 *       the idle ones stay connected.</li>
 * </ol>
 * The clients log in as the account {@code many}. The table (many_clients, 10 000 rows) is created on the primary
 * first. Prints key=value lines on stdout:
 * storm_ok, storm_failed, storm_ms, idle_open, idle_failed, active_queries, active_qps, p50_us, p95_us, p99_us,
 * active_failed; progress on stderr. Run with the Gantry jar on the class path (mysql-connector-j is in it):
 * java -Xmx6g -cp gantry.jar ManyClients.java PROXY_PORT PRIMARY_PORT IDLE ACTIVE SECONDS STORM
 */
public final class ManyClients {

    private static final int ROWS = 10_000;
    /**
     * The clients' account (password the same), made by bench/connections.sh: an account of their own, so that each
     * server's count of its connections is the sessions' alone (the demo's app account is Gantry's service account).
     */
    private static final String CLIENT_USER = "many";
    private static final String OPTIONS = "/app?sslMode=DISABLED&allowPublicKeyRetrieval=true&useServerPrepStmts=false"
            + "&connectTimeout=30000&socketTimeout=120000";

    public static void main(String[] args) throws Exception {
        int proxyPort = Integer.parseInt(args[0]);
        int primaryPort = Integer.parseInt(args[1]);
        int idle = Integer.parseInt(args[2]);
        int active = Integer.parseInt(args[3]);
        int seconds = Integer.parseInt(args[4]);
        int storm = Integer.parseInt(args[5]);
        String proxyUrl = "jdbc:mysql://127.0.0.1:" + proxyPort + OPTIONS;
        createTable("jdbc:mysql://127.0.0.1:" + primaryPort + OPTIONS);
        Thread.sleep(2000); // the replicas apply the rows

        if (storm > 0) {
            storm(proxyUrl, storm);
        }
        List<Connection> idleClients = Collections.synchronizedList(new ArrayList<>());
        try {
            openIdle(proxyUrl, idle, idleClients);
            runActive(proxyUrl, active, seconds);
        } finally {
            closeAll(idleClients);
        }
    }

    private static void createTable(String primaryUrl) throws SQLException {
        try (Connection connection = DriverManager.getConnection(primaryUrl, "app", "app");
             Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS many_clients (id INT PRIMARY KEY, c CHAR(120) NOT NULL)");
            try (ResultSet rows = statement.executeQuery("SELECT COUNT(*) FROM many_clients")) {
                rows.next();
                if (rows.getInt(1) == ROWS) {
                    return;
                }
            }
            statement.execute("DELETE FROM many_clients");
            StringBuilder insert = new StringBuilder();
            for (int id = 1; id <= ROWS; id++) {
                insert.append(insert.length() == 0 ? "INSERT INTO many_clients VALUES " : ",")
                        .append('(').append(id).append(",'row ").append(id).append("')");
                if (id % 1000 == 0) {
                    statement.execute(insert.toString());
                    insert.setLength(0);
                }
            }
        }
    }

    private static void storm(String url, int count) throws Exception {
        List<Connection> held = Collections.synchronizedList(new ArrayList<>());
        Map<String, AtomicInteger> errors = new ConcurrentHashMap<>();
        ExecutorService threads = Executors.newFixedThreadPool(500);
        long started = System.nanoTime();
        List<Future<Boolean>> logins = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            logins.add(threads.submit(() -> {
                try {
                    Connection connection = DriverManager.getConnection(url, CLIENT_USER, CLIENT_USER);
                    held.add(connection);
                    try (Statement statement = connection.createStatement();
                         ResultSet rows = statement.executeQuery("SELECT 1")) {
                        rows.next();
                    }
                    return true;
                } catch (SQLException e) {
                    errors.computeIfAbsent(firstLine(e), k -> new AtomicInteger()).incrementAndGet();
                    return false;
                }
            }));
        }
        int ok = 0;
        for (Future<Boolean> login : logins) {
            ok += login.get() ? 1 : 0;
        }
        long millis = (System.nanoTime() - started) / 1_000_000;
        threads.shutdown();
        System.err.printf("storm: %d of %d logins in %d ms%s%n", ok, count, millis,
                errors.isEmpty() ? "" : "; errors: " + errors);
        System.out.println("storm_ok=" + ok);
        System.out.println("storm_failed=" + (count - ok));
        System.out.println("storm_ms=" + millis);
        closeAll(held);
        Thread.sleep(1000);
    }

    private static void openIdle(String url, int count, List<Connection> into) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(64);
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger opened = new AtomicInteger();
        long started = System.nanoTime();
        List<Future<?>> tasks = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            tasks.add(threads.submit(() -> {
                try {
                    Connection connection = DriverManager.getConnection(url, CLIENT_USER, CLIENT_USER);
                    into.add(connection);
                    pointSelect(connection);
                    int n = opened.incrementAndGet();
                    if (n % 1000 == 0) {
                        System.err.printf("idle clients: %d open after %d ms%n", n,
                                (System.nanoTime() - started) / 1_000_000);
                    }
                } catch (SQLException e) {
                    if (failed.incrementAndGet() <= 3) {
                        System.err.println("an idle client failed: " + firstLine(e));
                    }
                }
            }));
        }
        for (Future<?> task : tasks) {
            task.get();
        }
        threads.shutdown();
        System.out.println("idle_open=" + opened.get());
        System.out.println("idle_failed=" + failed.get());
    }

    private static void runActive(String url, int count, int seconds) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(count);
        long[][] latencies = new long[count][];
        AtomicInteger failed = new AtomicInteger();
        System.err.printf("ACTIVE_START %d clients for %d s%n", count, seconds);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        List<Future<?>> tasks = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int client = i;
            tasks.add(threads.submit(() -> {
                long[] mine = new long[1 << 16];
                int n = 0;
                try (Connection connection = DriverManager.getConnection(url, CLIENT_USER, CLIENT_USER)) {
                    while (System.nanoTime() < deadline) {
                        long start = System.nanoTime();
                        pointSelect(connection);
                        if (n == mine.length) {
                            mine = Arrays.copyOf(mine, n * 2);
                        }
                        mine[n++] = (System.nanoTime() - start) / 1000;
                    }
                } catch (SQLException e) {
                    if (failed.incrementAndGet() <= 3) {
                        System.err.println("an active client failed: " + firstLine(e));
                    }
                }
                latencies[client] = Arrays.copyOf(mine, n);
            }));
        }
        for (Future<?> task : tasks) {
            task.get();
        }
        threads.shutdown();
        System.err.println("ACTIVE_END");
        long[] all = Arrays.stream(latencies).flatMapToLong(Arrays::stream).sorted().toArray();
        System.out.println("active_queries=" + all.length);
        System.out.printf("active_qps=%.0f%n", all.length / (double) seconds);
        System.out.println("p50_us=" + percentile(all, 0.50));
        System.out.println("p95_us=" + percentile(all, 0.95));
        System.out.println("p99_us=" + percentile(all, 0.99));
        System.out.println("active_failed=" + failed.get());
    }

    private static void pointSelect(Connection connection) throws SQLException {
        int id = ThreadLocalRandom.current().nextInt(1, ROWS + 1);
        try (PreparedStatement select = connection.prepareStatement("SELECT c FROM many_clients WHERE id = ?")) {
            select.setInt(1, id);
            try (ResultSet rows = select.executeQuery()) {
                if (!rows.next()) {
                    throw new SQLException("row " + id + " is missing");
                }
            }
        }
    }

    private static long percentile(long[] sorted, double p) {
        return sorted.length == 0 ? 0 : sorted[Math.min(sorted.length - 1, (int) (sorted.length * p))];
    }

    private static String firstLine(SQLException e) {
        String message = String.valueOf(e.getMessage());
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }

    private static void closeAll(List<Connection> connections) {
        synchronized (connections) {
            for (Connection connection : connections) {
                try {
                    connection.close();
                } catch (SQLException ignored) {
                    // closing anyway
                }
            }
            connections.clear();
        }
    }
}
