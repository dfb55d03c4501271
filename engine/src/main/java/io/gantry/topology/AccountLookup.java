package io.gantry.topology;

import java.net.SocketTimeoutException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads an account's authentication entries from a server's user table, with the service account: there is no
 * list to keep in Gantry. The primary's user table is the authority; when the primary is down, unknown or does not
 * answer, the entries come from the up replicas, highest weight first (accounts replicate, so a replica knows
 * them), and the login that follows on that server has the last word. Blocking (JDBC): never call it on an event
 * loop; each calling thread keeps one connection, to the server it asked last, until {@link #close}.
 */
public final class AccountLookup implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(AccountLookup.class);

    /**
     * One {@code user@host} entry: its plugin and stored authentication string (a hash, never a password), and what
     * else the server weighs at a login.
     *
     * @param locked          {@code ACCOUNT LOCK}: the server refuses every login of the entry
     * @param passwordExpires the password has expired, or will with time ({@code PASSWORD EXPIRE}, a
     *                        {@code password_lifetime} of its own or {@code default_password_lifetime}): what the server
     *                        then allows depends on the client and the clock, so only the server's own login decides
     */
    public record AccountEntry(String host, String plugin, String authenticationString, boolean locked,
                               boolean passwordExpires) {
        @Override
        public String toString() {
            return "AccountEntry[host=" + host + ", plugin=" + plugin + (locked ? ", locked" : "")
                    + (passwordExpires ? ", password expires" : "") + "]";
        }
    }

    private final Upstreams upstreams;
    private final Duration timeout;
    /** Every connection a calling thread keeps, so that {@link #close} can close them (the threads may be gone). */
    private final Set<Connection> kept = ConcurrentHashMap.newKeySet();
    /** Look-ups answered by a server, for {@code SHOW GANTRY STATUS}: what logins cost the servers. */
    private final LongAdder lookups = new LongAdder();

    public AccountLookup(Upstreams upstreams, Duration timeout) {
        this.upstreams = upstreams;
        this.timeout = timeout;
    }

    /**
     * Every entry of an account name, whatever its host part (which server accepts Gantry's host is for the
     * server's own login to decide), from the primary or, when it cannot answer, from an up replica. A server that
     * cannot be connected to is marked down at once, as a session's failed connection would.
     *
     * @throws ServersUnreachableException when no server can be asked (every one is down or fails); its message
     *                                     names each server tried and why it failed
     */
    public List<AccountEntry> entries(String user) throws ServersUnreachableException {
        List<UpstreamServer> candidates = candidates();
        if (candidates.isEmpty()) {
            throw new ServersUnreachableException("no server is up to check the account on ("
                    + upstreams.noPrimaryReason() + ")");
        }
        List<String> failures = new ArrayList<>();
        boolean allFull = true;
        for (UpstreamServer server : candidates) {
            try {
                List<AccountEntry> entries = entriesOn(server, user);
                if (!failures.isEmpty()) {
                    LOG.atInfo().addKeyValue("server", server.address())
                            .log("accounts: '{}' looked up on {} because {}", user, server.address(),
                                    String.join("; ", failures));
                }
                return entries;
            } catch (SQLException e) {
                String reason = ServerErrors.describe(e);
                boolean full = isFull(e);
                allFull &= full;
                failures.add(server.address() + (full ? " is full: " : " failed: ") + reason);
                if (isConnectionFailure(e) && !full) {
                    if (isTimeout(e)) {
                        // A slow answer is not a death (a server busy with a storm of logins answers late): the
                        // health loop, with its own bound, decides whether it stopped answering.
                        upstreams.requestCheck("account look-up on " + server.address() + " timed out");
                    } else {
                        upstreams.markDown(server, "account look-up failed: " + reason);
                    }
                }
            }
        }
        throw new ServersUnreachableException(String.join("; ", failures), allFull);
    }

    /** Look-ups a server has answered so far. */
    public long lookups() {
        return lookups.sum();
    }

    /**
     * A server that refuses a connection for being full ({@code max_connections}, 1040; the account's
     * {@code max_user_connections}, 1203) answers: it is not down, and marking it so would cost every session on it.
     */
    public static boolean isFull(SQLException e) {
        return e.getErrorCode() == 1040 || e.getErrorCode() == 1203;
    }

    /** The primary, then the up replicas by weight (highest first; list order among equals). */
    private List<UpstreamServer> candidates() {
        List<UpstreamServer> candidates = new ArrayList<>();
        upstreams.primary().ifPresent(candidates::add);
        upstreams.upReplicas().stream()
                .sorted(Comparator.comparingInt(UpstreamServer::weight).reversed())
                .forEach(candidates::add);
        return candidates;
    }

    private List<AccountEntry> entriesOn(UpstreamServer server, String user) throws SQLException {
        try {
            return query(connectionTo(server), user);
        } catch (SQLException e) {
            // A kept connection may have gone stale (server restart, wait_timeout): one fresh try.
            forget();
            return query(connectionTo(server), user);
        }
    }

    /** Whether the failure is a time limit running out, rather than the server refusing or dropping the connection. */
    private static boolean isTimeout(SQLException e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLTimeoutException || cause instanceof SocketTimeoutException) {
                return true;
            }
        }
        return false;
    }

    /** A connection-class failure (SQLState 08...): the server did not answer, as opposed to refusing the query. */
    private static boolean isConnectionFailure(SQLException e) {
        return e.getSQLState() != null && e.getSQLState().startsWith("08");
    }

    /** No server could be asked about an account: the servers cannot be reached, which says nothing of the password. */
    public static final class ServersUnreachableException extends Exception {

        private final boolean full;

        public ServersUnreachableException(String message) {
            this(message, false);
        }

        /** @param full whether every server asked answered that it is full (1040, 1203) rather than not at all */
        public ServersUnreachableException(String message, boolean full) {
            super(message);
            this.full = full;
        }

        /** Whether every server asked answered, but was full: a client should hear "too many connections". */
        public boolean full() {
            return full;
        }
    }

    /**
     * MariaDB's {@code mysql.user} is a view of {@code mysql.global_priv} that leaves out the lock and the password's
     * lifetime: they are read from the JSON ({@code account_locked} reads as 1 when true, 11.4 at least;
     * {@code password_lifetime} -1 or absent: the server's default; a
     * {@code password_last_changed} of 0, shown as {@code password_expired}, is {@code PASSWORD EXPIRE}).
     */
    static final String MARIADB_QUERY = "SELECT u.Host, u.plugin, u.authentication_string, "
            + "IFNULL(JSON_VALUE(g.Priv, '$.account_locked'), '0') IN ('1', 'true'), "
            + "u.password_expired = 'Y' OR COALESCE(NULLIF(CAST(JSON_VALUE(g.Priv, '$.password_lifetime') AS SIGNED),"
            + " -1), @@GLOBAL.default_password_lifetime) > 0 "
            + "FROM mysql.user u JOIN mysql.global_priv g ON g.User = u.User AND g.Host = u.Host WHERE u.User = ?";

    /** MySQL 8 keeps the lock and the lifetime as columns ({@code password_lifetime} NULL: the server's default). */
    static final String MYSQL_QUERY = "SELECT Host, plugin, authentication_string, account_locked = 'Y', "
            + "password_expired = 'Y' OR COALESCE(password_lifetime, @@GLOBAL.default_password_lifetime) > 0 "
            + "FROM mysql.user WHERE User = ?";

    private List<AccountEntry> query(Kept kept, String user) throws SQLException {
        try (PreparedStatement statement = kept.connection().prepareStatement(kept.query())) {
            statement.setString(1, user);
            List<AccountEntry> entries = new ArrayList<>();
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    entries.add(new AccountEntry(rows.getString(1), rows.getString(2), rows.getString(3),
                            rows.getBoolean(4), rows.getBoolean(5)));
                }
            }
            lookups.increment();
            return entries;
        }
    }

    /**
     * The calling thread's connection to a server, kept between look-ups: a login through Gantry then costs one
     * query here instead of a whole connection set-up.
     */
    private Kept connectionTo(UpstreamServer server) throws SQLException {
        Kept current = KEPT.get();
        if (current != null && current.server() == server && !current.connection().isClosed()) {
            return current;
        }
        forget();
        Connection connection = ServiceConnections.openWithin(server.url(), timeout);
        kept.add(connection);
        Kept opened;
        try (Statement statement = connection.createStatement();
             ResultSet version = statement.executeQuery("SELECT VERSION()")) {
            version.next();
            opened = new Kept(server, connection, version.getString(1).contains("MariaDB") ? MARIADB_QUERY
                    : MYSQL_QUERY);
        } catch (SQLException e) {
            kept.remove(connection);
            closeQuietly(connection);
            throw e;
        }
        KEPT.set(opened);
        return opened;
    }

    private void forget() {
        Kept current = KEPT.get();
        KEPT.remove();
        if (current != null) {
            kept.remove(current.connection());
            closeQuietly(current.connection());
        }
    }

    /**
     * Closes every kept connection. Without it they outlived the proxy: the threads that kept them end with the
     * proxy's executor, but nothing closed their sockets (found with MySQL, whose shutdown waits ~10 s for such
     * sessions before it forces them closed; MariaDB closes them at once, so nobody noticed).
     */
    @Override
    public void close() {
        for (Connection connection : List.copyOf(kept)) {
            kept.remove(connection);
            closeQuietly(connection);
        }
    }

    private static void closeQuietly(Connection connection) {
        try {
            connection.close();
        } catch (SQLException ignored) {
            // It is being thrown away: because it failed, or because Gantry stops.
        }
    }

    /** A kept connection and the look-up query of its server's flavour. */
    private record Kept(UpstreamServer server, Connection connection, String query) {
    }

    private static final ThreadLocal<Kept> KEPT = new ThreadLocal<>();
}
