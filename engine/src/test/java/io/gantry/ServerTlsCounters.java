package io.gantry;

import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Topology;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A server's global connection counters, to tell whether every connection made to it in a window used TLS:
 * {@code Connections} counts every connection, {@code Ssl_accepts} those that started a TLS handshake and
 * {@code Ssl_finished_accepts} those that completed one. The sandbox's own admin connections (this class's too)
 * never use TLS, so a window in which only Gantry connected shows {@code plain() == 1}: the reading connection.
 *
 * @param connections      {@code Connections}
 * @param tlsStarted       {@code Ssl_accepts}
 * @param tlsFinished      {@code Ssl_finished_accepts}
 */
public record ServerTlsCounters(long connections, long tlsStarted, long tlsFinished) {

    /** The counters now (read over a new plain admin connection, which they already count). */
    public static ServerTlsCounters read(Topology topology, DatabaseServer server) throws SQLException {
        long connections = -1;
        long started = -1;
        long finished = -1;
        try (Connection connection = topology.connectAsAdmin(server); Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SHOW GLOBAL STATUS WHERE Variable_name IN "
                     + "('Connections', 'Ssl_accepts', 'Ssl_finished_accepts')")) {
            while (rows.next()) {
                long value = rows.getLong(2);
                switch (rows.getString(1)) {
                    case "Connections" -> connections = value;
                    case "Ssl_accepts" -> started = value;
                    default -> finished = value;
                }
            }
        }
        return new ServerTlsCounters(connections, started, finished);
    }

    /**
     * The counters once nobody else connects to the server: two readings in a row half a second apart that differ
     * by the second reading's own connection only. A window opened on these cannot take in a connection made
     * before it (say a previous test's, still in its TLS handshake), which would hide a plain one made within it.
     */
    public static ServerTlsCounters readWhenQuiet(Topology topology, DatabaseServer server) throws Exception {
        ServerTlsCounters previous = read(topology, server);
        for (int attempt = 0; attempt < 20; attempt++) {
            Thread.sleep(500);
            ServerTlsCounters next = read(topology, server);
            ServerTlsCounters between = next.since(previous);
            if (between.connections() == 1 && between.tlsStarted() == 0 && between.tlsFinished() == 0) {
                return next;
            }
            previous = next;
        }
        throw new IllegalStateException(server + " kept getting connections for 10 s; cannot open a clean window");
    }

    /** What happened between {@code earlier} and this reading. */
    public ServerTlsCounters since(ServerTlsCounters earlier) {
        return new ServerTlsCounters(connections - earlier.connections, tlsStarted - earlier.tlsStarted,
                tlsFinished - earlier.tlsFinished);
    }

    /** Connections without TLS in a window (from {@link #since}). */
    public long plain() {
        return connections - tlsFinished;
    }
}
