package io.gantry.topology;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads an account's authentication entries from the primary's user table, with the service account: the
 * primary's user table is the authority on who may log in, and there is no list to keep in Gantry. Blocking (JDBC):
 * never call it on an event loop; each calling thread keeps one connection to the primary.
 */
public final class AccountLookup {

    /** One {@code user@host} entry: its plugin and stored authentication string (a hash, never a password). */
    public record AccountEntry(String host, String plugin, String authenticationString) {
        @Override
        public String toString() {
            return "AccountEntry[host=" + host + ", plugin=" + plugin + "]";
        }
    }

    private final Upstreams upstreams;
    private final Duration timeout;

    public AccountLookup(Upstreams upstreams, Duration timeout) {
        this.upstreams = upstreams;
        this.timeout = timeout;
    }

    /**
     * Every entry of an account name, whatever its host part (which server accepts Gantry's host is for the
     * server's own login to decide).
     *
     * @throws SQLException when the primary cannot be asked (no primary, down, or the service account lacks
     *                      {@code SELECT} on {@code mysql.user})
     */
    public List<AccountEntry> entries(String user) throws SQLException {
        UpstreamServer primary = upstreams.primary().orElseThrow(() -> new SQLException(
                "no primary to look the account up on: " + upstreams.noPrimaryReason()));
        try {
            return query(connectionTo(primary), user);
        } catch (SQLException e) {
            // A kept connection may have gone stale (server restart, wait_timeout): one fresh try.
            forget();
            return query(connectionTo(primary), user);
        }
    }

    private static List<AccountEntry> query(Connection connection, String user) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(
                "SELECT Host, plugin, authentication_string FROM mysql.user WHERE User = ?")) {
            statement.setString(1, user);
            List<AccountEntry> entries = new ArrayList<>();
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    entries.add(new AccountEntry(rows.getString(1), rows.getString(2), rows.getString(3)));
                }
            }
            return entries;
        }
    }

    /**
     * The calling thread's connection to the primary, kept between look-ups: a login through Gantry then costs one
     * query here instead of a whole connection set-up.
     */
    private Connection connectionTo(UpstreamServer primary) throws SQLException {
        Kept kept = KEPT.get();
        if (kept != null && kept.server() == primary && !kept.connection().isClosed()) {
            return kept.connection();
        }
        forget();
        Connection connection = ServiceConnections.open(primary.url(), timeout);
        KEPT.set(new Kept(primary, connection));
        return connection;
    }

    private static void forget() {
        Kept kept = KEPT.get();
        KEPT.remove();
        if (kept != null) {
            try {
                kept.connection().close();
            } catch (SQLException ignored) {
                // It is being thrown away because it failed.
            }
        }
    }

    private record Kept(UpstreamServer server, Connection connection) {
    }

    private static final ThreadLocal<Kept> KEPT = new ThreadLocal<>();
}
