package io.gantry.cdc;

import com.github.shyiko.mysql.binlog.BinaryLogClient;
import io.gantry.gtid.Flavour;
import io.gantry.gtid.Gtid;
import io.gantry.gtid.GtidSet;
import io.gantry.gtid.MariaDbGtidSet;
import io.gantry.topology.BinlogTls;
import io.gantry.topology.ServiceConnections;
import io.gantry.topology.UpstreamUrl;
import java.io.IOException;
import java.net.Socket;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One session of the change stream with one server: {@link #check} reads over JDBC what the server is and holds
 * (flavour, {@code binlog_format}, the GTIDs of its binlog, its current position), then {@link #stream} reads its
 * binlog with mysql-binlog-connector-java and hands each committed transaction of the selected tables on, in binlog
 * order, until the session is {@linkplain #disconnect() disconnected}, the server closes it, or something fails.
 *
 * <p>Idle streams get a heartbeat every second; three missed (or the connect timeout, if longer) mean the server
 * hangs or the network dropped the connection, and the read fails. The client id is stable per data directory, so a
 * restarted Gantry replaces its own dump thread on the server instead of leaving a second one behind.
 */
final class BinlogSession {

    private static final Logger LOG = LoggerFactory.getLogger(BinlogSession.class);
    private static final long HEARTBEAT_MILLIS = 1000;
    /**
     * The binlog client logs every connection at INFO through java.util.logging, in its own format; Gantry logs
     * the same facts in words. Held here so the setting is not garbage-collected with the logger.
     */
    private static final java.util.logging.Logger BINLOG_CLIENT_LOG =
            java.util.logging.Logger.getLogger("com.github.shyiko.mysql.binlog");

    static {
        BINLOG_CLIENT_LOG.setLevel(java.util.logging.Level.WARNING);
    }

    /** What a session hands on, on the thread that called {@link #stream}. */
    interface Handler {
        /** The session reached the binlog and streams from its start position. */
        void connected();

        /** A committed transaction, in binlog order. */
        void transaction(Gtid gtid, ChangeTransaction transaction);
    }

    private final UpstreamUrl server;
    private final Duration connectTimeout;
    private final Flavour flavour;
    private final GtidSet binlogHolds;
    private final GtidSet currentPosition;
    private volatile BinaryLogClient client;
    private volatile boolean disconnected;

    private BinlogSession(UpstreamUrl server, Duration connectTimeout, Flavour flavour, GtidSet binlogHolds,
                          GtidSet currentPosition) {
        this.server = server;
        this.connectTimeout = connectTimeout;
        this.flavour = flavour;
        this.binlogHolds = binlogHolds;
        this.currentPosition = currentPosition;
    }

    /**
     * Checks a server over JDBC, each step bounded by {@code connectTimeout}, so a hung server costs one timeout.
     *
     * @throws SQLException when the server cannot be reached or does not log rows ({@code binlog_format} not ROW)
     */
    static BinlogSession check(UpstreamUrl server, Duration connectTimeout) throws SQLException {
        try (Connection connection = ServiceConnections.open(server, connectTimeout, connectTimeout);
             Statement statement = connection.createStatement()) {
            Flavour flavour = single(statement, "SELECT VERSION()").contains("MariaDB") ? Flavour.MARIADB
                    : Flavour.MYSQL;
            String format = single(statement, "SELECT @@GLOBAL.binlog_format");
            if (!"ROW".equalsIgnoreCase(format)) {
                throw new SQLException(server.address() + " has binlog_format=" + format + "; the change stream "
                        + "needs ROW");
            }
            GtidSet holds = GtidSet.parse(single(statement, flavour == Flavour.MARIADB
                    ? "SELECT @@GLOBAL.gtid_binlog_state" : "SELECT @@GLOBAL.gtid_executed"), flavour);
            GtidSet current = GtidSet.parse(single(statement, flavour == Flavour.MARIADB
                    ? "SELECT @@GLOBAL.gtid_binlog_pos" : "SELECT @@GLOBAL.gtid_executed"), flavour);
            return new BinlogSession(server, connectTimeout, flavour, holds, current);
        }
    }

    Flavour flavour() {
        return flavour;
    }

    /** Every GTID the server's binlog holds ({@code gtid_binlog_state} / {@code gtid_executed}). */
    GtidSet binlogHolds() {
        return binlogHolds;
    }

    /** Where the server's binlog ends now ({@code gtid_binlog_pos} / {@code gtid_executed}). */
    GtidSet currentPosition() {
        return currentPosition;
    }

    /**
     * Streams the binlog after {@code from} until {@link #disconnect()} (returns), the server closes the connection
     * (returns) or a read, an event or the handler fails (throws that failure). Nothing after a failed event is
     * handed on. Returns at once when the session was disconnected before.
     */
    void stream(GtidSet from, long clientId, TableFilter tables, Handler handler) throws Exception {
        Objects.requireNonNull(handler, "handler");
        BinaryLogClient binlog = new BinaryLogClient(server.host(), server.port(), server.user(), server.password());
        binlog.setServerId(clientId);
        binlog.setKeepAlive(false);
        binlog.setConnectTimeout(connectTimeout.toMillis());
        binlog.setHeartbeatInterval(HEARTBEAT_MILLIS);
        int readTimeout = (int) Math.max(3 * HEARTBEAT_MILLIS, connectTimeout.toMillis());
        binlog.setSocketFactory(() -> {
            Socket socket = new Socket();
            socket.setSoTimeout(readTimeout);
            return socket;
        });
        BinlogTls.apply(server, binlog);
        binlog.setEventDeserializer(BinlogRowValues.newEventDeserializer());
        binlog.setGtidSet(startText(from));
        Exception[] failure = {null};
        TransactionAssembler assembler = new TransactionAssembler(server.address(), tables, handler::transaction);
        binlog.registerEventListener(event -> {
            if (failure[0] != null) {
                return; // nothing after a failed event may be handed on
            }
            try {
                assembler.onEvent(event);
            } catch (RuntimeException e) {
                failure[0] = e;
                disconnectQuietly(binlog);
            }
        });
        binlog.registerLifecycleListener(new BinaryLogClient.AbstractLifecycleListener() {
            @Override
            public void onConnect(BinaryLogClient connected) {
                if (disconnected) {
                    disconnectQuietly(connected); // disconnect() came while connect() was starting
                    return;
                }
                handler.connected();
            }

            @Override
            public void onCommunicationFailure(BinaryLogClient failed, Exception e) {
                failure[0] = failure[0] == null ? e : failure[0];
            }

            @Override
            public void onEventDeserializationFailure(BinaryLogClient failed, Exception e) {
                failure[0] = failure[0] == null ? e : failure[0];
                disconnectQuietly(failed);
            }
        });
        client = binlog;
        if (disconnected) {
            return;
        }
        binlog.connect();
        if (failure[0] != null && !disconnected) {
            throw failure[0];
        }
    }

    /** Ends the session from any thread: {@link #stream} returns, or returns at once if it has not started. */
    void disconnect() {
        disconnected = true;
        BinaryLogClient current = client;
        if (current != null) {
            disconnectQuietly(current);
        }
    }

    /** The start position as the binlog client takes it: MariaDB one GTID per domain, MySQL the whole set. */
    static String startText(GtidSet from) {
        return from instanceof MariaDbGtidSet mariadb ? mariadb.position().toString() : from.toString();
    }

    private static String single(Statement statement, String sql) throws SQLException {
        try (ResultSet rows = statement.executeQuery(sql)) {
            rows.next();
            String value = rows.getString(1);
            return value == null ? "" : value;
        }
    }

    private static void disconnectQuietly(BinaryLogClient binlog) {
        try {
            binlog.disconnect();
        } catch (IOException e) {
            LOG.debug("cdc: disconnect: {}", e.toString());
        }
    }
}
