import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The time from a write on the primary to the eviction of the cache entries it affects, as a client sees it:
 * a row of sbtest1 is read through Gantry until the read is a cache hit, then updated directly on the primary
 * (behind Gantry's back); from the moment the update returns, the row is read through Gantry again and again, and
 * the first read that `EXPLAIN LAST STATEMENT` does not report as a cache hit ends the sample. Prints
 * "median_ms p99_ms samples". Run by bench/cached-point-select.sh with the Gantry jar on the class path
 * (mysql-connector-j is in it): java -cp gantry.jar EvictionLatency.java GANTRY_PORT PRIMARY_PORT SAMPLES
 */
public final class EvictionLatency {

    public static void main(String[] args) throws Exception {
        int gantryPort = Integer.parseInt(args[0]);
        int primaryPort = Integer.parseInt(args[1]);
        int samples = Integer.parseInt(args[2]);
        String options = "/app?sslMode=DISABLED&allowPublicKeyRetrieval=true";
        List<Double> millis = new ArrayList<>();
        try (Connection gantry = DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + gantryPort + options,
                "app", "app");
             Connection primary = DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + primaryPort + options,
                     "app", "app");
             Statement read = gantry.createStatement(); Statement write = primary.createStatement()) {
            for (int i = 0; i < samples; i++) {
                int id = 1 + i;
                String select = "SELECT c FROM sbtest1 WHERE id=" + id;
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (!hit(read, select)) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("row " + id + " of sbtest1 is never answered from the cache");
                    }
                    Thread.sleep(5);
                }
                write.executeUpdate("UPDATE sbtest1 SET c = 'evict-" + i + "' WHERE id=" + id);
                long written = System.nanoTime();
                while (hit(read, select)) {
                    if (System.nanoTime() - written > 10_000_000_000L) {
                        throw new IllegalStateException("row " + id + " of sbtest1 is still cached 10 s after a write");
                    }
                }
                millis.add((System.nanoTime() - written) / 1e6);
            }
        }
        Collections.sort(millis);
        System.out.printf("%.2f %.2f %d%n", millis.get((millis.size() - 1) / 2),
                millis.get((int) Math.ceil(millis.size() * 0.99) - 1), millis.size());
    }

    private static boolean hit(Statement statement, String select) throws SQLException {
        try (ResultSet rows = statement.executeQuery(select)) {
            rows.next();
        }
        try (ResultSet rows = statement.executeQuery("EXPLAIN LAST STATEMENT")) {
            rows.next();
            return rows.getString(1).equals("cache");
        }
    }
}
