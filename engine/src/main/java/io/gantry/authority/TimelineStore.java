package io.gantry.authority;

import static io.gantry.authority.SqlValues.instant;
import static io.gantry.authority.SqlValues.utc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The failover timeline, table {@code GANTRY.EVENTS}. {@link #insert} is the one way an event is stored, so that
 * every reason is redacted and cut the same way, whether it is recorded on its own or inside another store's
 * transaction (list and weight changes). In a cluster the table is the whole cluster's timeline: this instance's
 * events carry its name, and the other instances' events pulled from the cluster carry theirs and the id they have
 * there ({@code origin_id}, unique per instance, NULL for this instance's own).
 */
final class TimelineStore {

    private static final String COLUMNS = "id, at, server, kind, reason, instance";

    private final AuthorityDatabase database;
    /** This instance's name in its cluster, stored with its events; null outside a cluster. */
    private volatile String instance;

    TimelineStore(AuthorityDatabase database) {
        this.database = database;
    }

    /** See {@link Authority#recordEventsAs}. */
    void recordAs(String name) {
        this.instance = Objects.requireNonNull(name, "name");
    }

    String instance() {
        return instance;
    }

    /** Appends an event in a transaction of its own; see {@link Authority#recordEvent}. */
    long record(Instant at, String server, EventKind kind, String reason) {
        Objects.requireNonNull(at, "at");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(reason, "reason");
        return database.write("record a " + kind.sqlName() + " event", connection ->
                insert(connection, at, server, kind, reason)).id();
    }

    /** The newest {@code limit} events at or after {@code since}, oldest first; see {@link Authority#events}. */
    List<Event> events(Instant since, int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, not " + limit);
        }
        String where = since == null ? "" : " WHERE at >= ?";
        String sql = "SELECT " + COLUMNS + " FROM (SELECT " + COLUMNS + " FROM GANTRY.EVENTS" + where
                + " ORDER BY at DESC, id DESC FETCH FIRST ? ROWS ONLY) ORDER BY at, id";
        return database.read("read events", connection -> {
            try (PreparedStatement select = connection.prepareStatement(sql)) {
                int index = 1;
                if (since != null) {
                    select.setObject(index++, utc(since));
                }
                select.setInt(index, limit);
                return list(select);
            }
        });
    }

    /** This instance's own events after id {@code after}, by id, at most {@code limit}; see {@link Authority}. */
    List<Event> ownAfter(long after, int limit) {
        String name = instance;
        if (name == null) {
            return List.of();
        }
        return database.read("read this instance's events", connection -> {
            try (PreparedStatement select = connection.prepareStatement("SELECT " + COLUMNS + " FROM GANTRY.EVENTS "
                    + "WHERE instance = ? AND origin_id IS NULL AND id > ? ORDER BY id FETCH FIRST ? ROWS ONLY")) {
                select.setString(1, name);
                select.setLong(2, after);
                select.setInt(3, limit);
                return list(select);
            }
        });
    }

    /** Per other instance, the highest id of its events stored here. */
    Map<String, Long> pulledUpTo() {
        return database.read("read the other instances' newest events", connection -> {
            Map<String, Long> newest = new HashMap<>();
            try (Statement statement = connection.createStatement();
                 ResultSet rows = statement.executeQuery("SELECT instance, MAX(origin_id) FROM GANTRY.EVENTS "
                         + "WHERE origin_id IS NOT NULL GROUP BY instance")) {
                while (rows.next()) {
                    newest.put(rows.getString(1), rows.getLong(2));
                }
            }
            return newest;
        });
    }

    /**
     * Stores events of other instances, in one transaction; one already here (same instance and origin id) is
     * passed over.
     *
     * @param events each with its instance and its id there
     * @return the events stored now, with their ids here
     */
    List<Event> storePulled(List<Event> events) {
        for (Event event : events) {
            Objects.requireNonNull(event.instance(), "an event from another instance names it");
        }
        return database.write("store " + events.size() + " events of other instances", connection -> {
            List<Event> stored = new ArrayList<>();
            for (Event event : events) {
                if (!holds(connection, event)) {
                    stored.add(insert(connection, event.at(), event.server(), event.kind(), event.reason(),
                            event.instance(), event.id()));
                }
            }
            return stored;
        });
    }

    private static boolean holds(Connection connection, Event pulled) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement(
                "SELECT 1 FROM GANTRY.EVENTS WHERE instance = ? AND origin_id = ?")) {
            select.setString(1, pulled.instance());
            select.setLong(2, pulled.id());
            try (ResultSet rows = select.executeQuery()) {
                return rows.next();
            }
        }
    }

    private static List<Event> list(PreparedStatement select) throws SQLException {
        List<Event> events = new ArrayList<>();
        try (ResultSet rows = select.executeQuery()) {
            while (rows.next()) {
                events.add(new Event(rows.getLong(1), instant(rows, 2), rows.getString(3),
                        EventKind.fromSqlName(rows.getString(4)), rows.getString(5), rows.getString(6)));
            }
        }
        return events;
    }

    /**
     * Stores an event of this instance on {@code connection}, in the caller's transaction, its reason redacted
     * ({@link Authority#redact}) and cut at {@link Authority#MAX_REASON_LENGTH} characters.
     *
     * @return the event as stored, with its id
     */
    Event insert(Connection connection, Instant at, String server, EventKind kind, String reason)
            throws SQLException {
        return insert(connection, at, server, kind, reason, instance, null);
    }

    private static Event insert(Connection connection, Instant at, String server, EventKind kind, String reason,
                                String instance, Long originId) throws SQLException {
        String text = Authority.redact(reason);
        if (text.length() > Authority.MAX_REASON_LENGTH) {
            text = text.substring(0, Authority.MAX_REASON_LENGTH - 3) + "...";
        }
        try (PreparedStatement insert = connection.prepareStatement(
                "INSERT INTO GANTRY.EVENTS(at, server, kind, reason, instance, origin_id) VALUES (?, ?, ?, ?, ?, ?)",
                Statement.RETURN_GENERATED_KEYS)) {
            insert.setObject(1, utc(at));
            insert.setString(2, server);
            insert.setString(3, kind.sqlName());
            insert.setString(4, text);
            insert.setString(5, instance);
            insert.setObject(6, originId);
            insert.executeUpdate();
            try (ResultSet keys = insert.getGeneratedKeys()) {
                keys.next();
                return new Event(keys.getLong(1), at, server, kind, text, instance);
            }
        }
    }
}
