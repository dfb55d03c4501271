import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Idle sessions for bench/take-over.sh: opens COUNT Connector/J sessions through a proxy (from 32 threads), each
 * noting its {@code CONNECTION_ID()}, prints {@code ready=N} on stdout and waits for a line on stdin (the take-over
 * happens meanwhile); then asks each session again and prints {@code same=N}, {@code changed=N} (answered with
 * another id) and {@code lost=N} (failed), and closes them. Run with the Gantry jar on the class path
 * (mysql-connector-j is in it): java -cp gantry.jar IdleSessions.java PORT DATABASE USER PASSWORD COUNT
 */
public final class IdleSessions {

    public static void main(String[] args) throws Exception {
        String url = "jdbc:mysql://127.0.0.1:" + args[0] + "/" + args[1] + "?sslMode=DISABLED&connectTimeout=30000";
        String user = args[2];
        String password = args[3];
        int count = Integer.parseInt(args[4]);
        List<Connection> sessions = Collections.synchronizedList(new ArrayList<>());
        Map<Connection, Long> ids = new ConcurrentHashMap<>();
        ExecutorService threads = Executors.newFixedThreadPool(32);
        List<Future<?>> opened = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            opened.add(threads.submit(() -> {
                Connection session = DriverManager.getConnection(url, user, password);
                ids.put(session, connectionId(session));
                sessions.add(session);
                return null;
            }));
        }
        for (Future<?> one : opened) {
            one.get();
        }
        threads.shutdown();
        System.out.println("ready=" + sessions.size());
        System.out.flush();
        System.in.read();
        int same = 0;
        int changed = 0;
        int lost = 0;
        for (Connection session : sessions) {
            try {
                if (connectionId(session) == ids.get(session)) {
                    same++;
                } else {
                    changed++;
                }
            } catch (SQLException e) {
                lost++;
            }
        }
        System.out.println("same=" + same);
        System.out.println("changed=" + changed);
        System.out.println("lost=" + lost);
        for (Connection session : sessions) {
            session.close();
        }
    }

    private static long connectionId(Connection session) throws SQLException {
        try (Statement statement = session.createStatement();
             ResultSet row = statement.executeQuery("SELECT CONNECTION_ID()")) {
            row.next();
            return row.getLong(1);
        }
    }
}
