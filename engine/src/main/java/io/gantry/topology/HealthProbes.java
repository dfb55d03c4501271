package io.gantry.topology;

import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The health check of one server ({@link HealthChecker} runs one per server in parallel): a new connection, timed,
 * and on the connection kept from round to round a ping, timed, then {@code read_only}, the version,
 * {@code max_connections}, the executed GTID set and the replica's status. A server that answers neither the new
 * connection nor the kept one is confirmed down; one that refuses the new connection (full, or the account) is
 * checked on the kept one, and without one keeps what was known of it.
 *
 * <p>Each server's kept connection is used by one check at a time.
 */
final class HealthProbes implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(HealthProbes.class);

    private final Upstreams upstreams;
    private final Duration checkTimeout;
    /** Whether Gantry is stopping: a check cut short by it marks nothing down. */
    private final BooleanSupplier closing;
    /** Each server's connection for pings and the check's queries, kept across rounds. */
    private final KeptConnections<Connection> kept = new KeptConnections<>(HealthProbes::closeQuietly);
    /** How a round's new connection is opened and timed while a kept one exists; null: a JDBC connection. */
    private volatile LoginCheck logins;

    HealthProbes(Upstreams upstreams, Duration checkTimeout, BooleanSupplier closing) {
        this.upstreams = upstreams;
        this.checkTimeout = checkTimeout;
        this.closing = closing;
    }

    /** See {@link HealthChecker#timeLoginsWith}. */
    void timeLoginsWith(LoginCheck check) {
        this.logins = check;
    }

    /** The server's kept connection, free between checks; null when none is open. */
    Connection kept(UpstreamServer server) {
        return kept.get(server);
    }

    /** Closes the kept connections of servers no longer in the list. */
    void retain(List<UpstreamServer> servers) {
        kept.retain(servers);
    }

    /** Checks {@code server}; empty when it is down or refused the check without anything known of it. */
    Optional<HealthProbe> probe(UpstreamServer server) {
        long started = System.nanoTime();
        Connection fresh = null;
        SQLException refusal = null;
        LoginCheck check = kept.get(server) == null ? null : logins;
        try {
            if (check != null) {
                try {
                    check.login(server, checkTimeout);
                } catch (RejectedExecutionException stopping) {
                    // The proxy is stopping under this round: a JDBC connection times the login instead.
                    fresh = ServiceConnections.openWithin(server.url(), checkTimeout);
                }
            } else {
                fresh = ServiceConnections.openWithin(server.url(), checkTimeout);
            }
        } catch (SQLException e) {
            if (!ServerErrors.isRefusal(e)) {
                return down(server, e);
            }
            refusal = e;
        }
        long connectMicros = refusal != null ? server.connectMicros() : (System.nanoTime() - started) / 1000;
        try {
            Ping ping = refusal != null ? pingKept(server, refusal) : ping(server, fresh);
            if (ping == null) {
                return refused(server, refusal);
            }
            try (Statement statement = ping.connection().createStatement()) {
                boolean readOnly;
                Flavour flavour;
                String version;
                try (ResultSet rows = statement.executeQuery(
                        "SELECT @@GLOBAL.read_only, VERSION(), @@GLOBAL.max_connections")) {
                    rows.next();
                    readOnly = rows.getInt(1) != 0;
                    version = rows.getString(2);
                    server.maxConnectionsRead(rows.getInt(3));
                    flavour = version.contains("MariaDB") ? Flavour.MARIADB : Flavour.MYSQL;
                }
                GtidSet position = position(statement, flavour, server);
                ReplicaStatus replication = ReplicaStatus.read(statement, ReplicaStatusQuery.forVersion(version));
                return Optional.of(new HealthProbe(server, !readOnly, replication.source(), position,
                        replication.brokenBecause(), ping.micros(), connectMicros, false));
            }
        } catch (SQLException e) {
            if (refusal != null) {
                // It refused the new connection and the kept one failed: it answers, so it is not down.
                kept.drop(server);
                return refused(server, refusal);
            }
            return down(server, e);
        }
    }

    /**
     * The executed GTID set, or null if it cannot be read (the check still counts; divergence is then not judged).
     * Lag comes from the {@link GtidSampler}, which reads positions far more often.
     */
    static GtidSet position(Statement statement, Flavour flavour, UpstreamServer server) {
        try (ResultSet rows = statement.executeQuery(GtidSampler.executedSetQuery(flavour))) {
            rows.next();
            String text = rows.getString(1);
            return GtidSet.parse(text == null ? "" : text, flavour);
        } catch (SQLException | IllegalArgumentException e) {
            LOG.debug("topology: cannot read the GTID position of {}: {}", server.address(), e.toString());
            return null;
        }
    }

    /** The kept connection of a server that refused a new one, pinged; null when there is none. */
    private Ping pingKept(UpstreamServer server, SQLException refusal) throws SQLException {
        Connection held = kept.get(server);
        if (held == null) {
            return null;
        }
        LOG.atWarn().addKeyValue("server", server.address())
                .log("topology: {} refused the health check's new connection ({}); checked on the kept one",
                        server.address(), ServerErrors.describe(refusal));
        return new Ping(held, ping(held));
    }

    /** A server that refused the check and could not be checked otherwise keeps what was known of it. */
    private Optional<HealthProbe> refused(UpstreamServer server, SQLException refusal) {
        Role known = server.role();
        LOG.atWarn().addKeyValue("server", server.address())
                .log("topology: {} refused the health check ({}); it answers, so it is not marked down, and keeps "
                        + "what was known of it ({})", server.address(), ServerErrors.describe(refusal), server);
        if (known == Role.UNKNOWN || !server.isReachable()) {
            return Optional.empty();
        }
        return Optional.of(new HealthProbe(server, known != Role.REPLICA, "", null, null, -1, -1, true));
    }

    private Optional<HealthProbe> down(UpstreamServer server, SQLException e) {
        kept.drop(server);
        if (!closing.getAsBoolean()) {
            upstreams.confirmDown(server, "health check failed: " + ServerErrors.describe(e));
        }
        return Optional.empty();
    }

    /** A ping's round trip in microseconds, on the connection the rest of the check then uses. */
    private record Ping(Connection connection, long micros) {
    }

    /**
     * Pings the server on its kept connection, and closes the JDBC connection the round just opened, if it opened one
     * ({@code fresh}; null when the login was {@link LoginCheck}'s). A new JDBC connection takes the kept one's
     * place when there is none (the first round, or the last check failed) or when the kept one does not answer (the
     * server restarted, or killed it): a server that accepts new connections is not down for the loss of an old one.
     *
     * @throws SQLException when the new connection does not answer either; it is then the kept one, dropped with it
     */
    private Ping ping(UpstreamServer server, Connection fresh) throws SQLException {
        Connection held = kept.get(server);
        if (held != null) {
            try {
                long micros = ping(held);
                if (fresh != null) {
                    closeQuietly(fresh);
                }
                return new Ping(held, micros);
            } catch (SQLException e) {
                LOG.debug("topology: the kept health-check connection to {} does not answer ({}); a new one takes "
                        + "its place", server.address(), e.toString());
            }
        }
        if (fresh == null) {
            fresh = ServiceConnections.openWithin(server.url(), checkTimeout);
        }
        kept.keep(server, fresh);
        fresh.setNetworkTimeout(Runnable::run, Math.toIntExact(checkTimeout.toMillis()));
        return new Ping(fresh, ping(fresh));
    }

    /** Times a {@code COM_PING}: mysql-connector-j sends one for a statement that starts with its ping marker. */
    private static long ping(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            long started = System.nanoTime();
            statement.execute("/* ping */ SELECT 1");
            return (System.nanoTime() - started) / 1000;
        }
    }

    private static void closeQuietly(Connection connection) {
        try {
            connection.close();
        } catch (SQLException e) {
            // a connection that fails on closing is gone anyway
        }
    }

    @Override
    public void close() {
        kept.close();
    }
}
