package io.gantry.topology;

import com.github.shyiko.mysql.binlog.BinaryLogClient;
import com.github.shyiko.mysql.binlog.event.AnnotateRowsEventData;
import com.github.shyiko.mysql.binlog.event.Event;
import com.github.shyiko.mysql.binlog.event.EventData;
import com.github.shyiko.mysql.binlog.event.EventType;
import com.github.shyiko.mysql.binlog.event.MariadbGtidEventData;
import com.github.shyiko.mysql.binlog.event.QueryEventData;
import com.github.shyiko.mysql.binlog.event.XidEventData;
import com.github.shyiko.mysql.binlog.event.deserialization.EventDeserializer;
import com.github.shyiko.mysql.binlog.event.deserialization.NullEventDataDeserializer;
import io.gantry.gtid.MariaDbGtid;
import io.gantry.gtid.MariaDbGtidSet;
import java.io.IOException;
import java.net.Socket;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What a MariaDB server's binlog logged after a position, up to where it ends now: each transaction's GTID and the
 * text of its statements (the {@code Annotate_rows} event MariaDB logs before a statement's rows, or the statement
 * itself when it is logged as a query). Read once, with mysql-binlog-connector-java, from the GTID position on, so
 * the server seeks to it instead of Gantry reading the whole binlog.
 *
 * <p>This is how Gantry finds out whether a transaction whose {@code COMMIT} went unanswered when the primary was lost
 * reached the new primary: its GTID is after the position the old primary had before the {@code COMMIT} was sent,
 * and its statements are the session's.
 */
public final class LoggedTransactions {

    /**
     * One transaction of the binlog.
     *
     * @param gtid       its GTID
     * @param statements the text of each statement that changed rows, in order, as the server received it
     * @param unnamedRows whether it changed rows that no statement text came with ({@code binlog_annotate_row_events}
     *                   off): then what it ran cannot be told
     */
    public record Logged(MariaDbGtid gtid, List<String> statements, boolean unnamedRows) {
    }

    /**
     * What the server logged after the position.
     *
     * @param serverId     the server's own {@code server_id}: a transaction with it was committed there, not
     *                     replicated to it
     * @param transactions every transaction after the position of the domains that moved, in binlog order
     */
    public record Tail(long serverId, List<Logged> transactions) {
    }

    private static final Set<EventType> ROW_EVENTS = EnumSet.of(EventType.WRITE_ROWS, EventType.EXT_WRITE_ROWS,
            EventType.PRE_GA_WRITE_ROWS, EventType.UPDATE_ROWS, EventType.EXT_UPDATE_ROWS,
            EventType.PRE_GA_UPDATE_ROWS, EventType.DELETE_ROWS, EventType.EXT_DELETE_ROWS,
            EventType.PRE_GA_DELETE_ROWS, EventType.TABLE_MAP);

    private LoggedTransactions() {
    }

    /**
     * Reads the transactions {@code server} logged after {@code after} (per domain), up to the end of its binlog as
     * it stands when the read starts, within {@code timeout}. Only the domains whose position moved past
     * {@code after} are read; when none did, no binlog is read at all.
     *
     * @throws SQLException     when the server cannot be asked where its binlog ends
     * @throws IOException      when its binlog cannot be read (the account lacks {@code REPLICATION SLAVE}, ...)
     * @throws TimeoutException when the read did not reach the end within {@code timeout}
     */
    public static Tail after(UpstreamUrl server, MariaDbGtidSet after, Duration timeout)
            throws SQLException, IOException, TimeoutException {
        long serverId;
        MariaDbGtidSet end;
        try (Connection connection = ServiceConnections.open(server, timeout, timeout);
             Statement statement = connection.createStatement();
             ResultSet row = statement.executeQuery("SELECT @@GLOBAL.server_id, @@GLOBAL.gtid_binlog_pos")) {
            row.next();
            serverId = row.getLong(1);
            String position = row.getString(2);
            end = MariaDbGtidSet.parse(position == null ? "" : position).position();
        }
        // Per domain that moved, the sequence number its read ends at; the start names every domain the server
        // logs (one not named would be read from its first transaction), those that did not move at their end.
        Map<Long, Long> reading = new HashMap<>();
        List<String> start = new ArrayList<>();
        MariaDbGtidSet from = after.position();
        for (MariaDbGtid last : end.gtids()) {
            if (last.sequence() > from.sequence(last.domain())) {
                reading.put(last.domain(), last.sequence());
                from.gtids().stream().filter(g -> g.domain() == last.domain()).findFirst()
                        .ifPresent(g -> start.add(g.toString()));
            } else {
                start.add(last.toString());
            }
        }
        if (reading.isEmpty()) {
            return new Tail(serverId, List.of());
        }
        return new Tail(serverId, read(server, String.join(",", start), reading, timeout));
    }

    private static List<Logged> read(UpstreamUrl server, String start, Map<Long, Long> reading, Duration timeout)
            throws IOException, TimeoutException {
        BinaryLogClient binlog = new BinaryLogClient(server.host(), server.port(), server.user(), server.password());
        // A replica id of its own for the short read, far from the ids servers and the change stream use.
        binlog.setServerId(0x4000_0000L + ThreadLocalRandom.current().nextInt(0x3FFF_FFFF));
        binlog.setKeepAlive(false);
        binlog.setConnectTimeout(timeout.toMillis());
        binlog.setHeartbeatInterval(1000);
        binlog.setUseSendAnnotateRowsEvent(true);
        binlog.setGtidSet(start);
        binlog.setSocketFactory(() -> {
            Socket socket = new Socket();
            socket.setSoTimeout((int) Math.max(3000, timeout.toMillis()));
            return socket;
        });
        BinlogTls.apply(server, binlog);
        EventDeserializer deserializer = new EventDeserializer();
        for (EventType rows : ROW_EVENTS) {
            deserializer.setEventDataDeserializer(rows, new NullEventDataDeserializer()); // only that rows came
        }
        binlog.setEventDeserializer(deserializer);
        Reader reader = new Reader(reading, binlog);
        binlog.registerEventListener(reader::onEvent);
        IOException[] failure = {null};
        binlog.registerLifecycleListener(new BinaryLogClient.AbstractLifecycleListener() {
            @Override
            public void onConnect(BinaryLogClient connected) {
                if (reader.stopped) {
                    reader.disconnect(); // the time ran out while connect() was starting
                }
            }

            @Override
            public void onCommunicationFailure(BinaryLogClient failed, Exception e) {
                failure[0] = e instanceof IOException io ? io : new IOException(e);
            }

            @Override
            public void onEventDeserializationFailure(BinaryLogClient failed, Exception e) {
                failure[0] = new IOException("an event could not be read: " + e, e);
                reader.disconnect();
            }
        });
        CompletableFuture.delayedExecutor(timeout.toMillis(), TimeUnit.MILLISECONDS).execute(reader::disconnect);
        binlog.connect();
        if (reader.done()) {
            return reader.transactions;
        }
        if (failure[0] != null) {
            throw failure[0];
        }
        throw new TimeoutException("the binlog of " + server.address() + " was not read to its end within "
                + timeout.toMillis() + " ms");
    }

    /** Groups the events of the domains read into transactions, and disconnects once every domain reached its end. */
    private static final class Reader {
        private final Map<Long, Long> reading;
        private final BinaryLogClient binlog;
        private final List<Logged> transactions = new ArrayList<>();
        private MariaDbGtid current;
        private boolean insideBegin;
        private List<String> statements = new ArrayList<>();
        private boolean unnamedRows;
        private String pendingAnnotation;
        private volatile boolean stopped;

        Reader(Map<Long, Long> reading, BinaryLogClient binlog) {
            this.reading = new HashMap<>(reading);
            this.binlog = binlog;
        }

        synchronized boolean done() {
            return reading.isEmpty();
        }

        void onEvent(Event event) {
            EventData data = event.getData();
            EventType type = event.getHeader().getEventType();
            if (data instanceof MariadbGtidEventData gtid) {
                current = new MariaDbGtid(gtid.getDomainId(), gtid.getServerId(), gtid.getSequence());
                insideBegin = (gtid.getFlags() & MariadbGtidEventData.FL_STANDALONE) == 0;
                statements = new ArrayList<>();
                unnamedRows = false;
                pendingAnnotation = null;
            } else if (current == null) {
                return;
            } else if (data instanceof AnnotateRowsEventData annotation) {
                pendingAnnotation = annotation.getRowsQuery();
            } else if (ROW_EVENTS.contains(type) && type != EventType.TABLE_MAP) {
                if (pendingAnnotation != null) {
                    statements.add(pendingAnnotation);
                    pendingAnnotation = null;
                } else if (statements.isEmpty()) {
                    unnamedRows = true;
                }
            } else if (data instanceof XidEventData) {
                commit();
            } else if (data instanceof QueryEventData query) {
                String sql = query.getSql().strip();
                if (sql.equalsIgnoreCase("BEGIN")) {
                    insideBegin = true;
                } else if (sql.equalsIgnoreCase("COMMIT") || sql.equalsIgnoreCase("ROLLBACK")) {
                    commit();
                } else {
                    statements.add(query.getSql());
                    if (!insideBegin) {
                        commit(); // a standalone statement (DDL) is the whole transaction
                    }
                }
            }
        }

        private void commit() {
            MariaDbGtid gtid = current;
            current = null;
            insideBegin = false;
            Long end;
            synchronized (this) {
                end = reading.get(gtid.domain());
                if (end == null) {
                    return; // a domain not read (its start was its end)
                }
                transactions.add(new Logged(gtid, List.copyOf(statements), unnamedRows));
                if (gtid.sequence() >= end) {
                    reading.remove(gtid.domain());
                }
            }
            if (done()) {
                disconnect();
            }
        }

        void disconnect() {
            stopped = true;
            try {
                binlog.disconnect();
            } catch (IOException e) {
                // the read is over either way
            }
        }
    }
}
