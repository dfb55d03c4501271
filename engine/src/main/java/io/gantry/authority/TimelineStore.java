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
import java.util.List;
import java.util.Objects;

/**
 * The failover timeline, table {@code GANTRY.EVENTS}. {@link #insert} is the one way an event is stored, so that
 * every reason is redacted and cut the same way, whether it is recorded on its own or inside another store's
 * transaction (list and weight changes).
 */
final class TimelineStore {

    private final AuthorityDatabase database;

    TimelineStore(AuthorityDatabase database) {
        this.database = database;
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
        String sql = "SELECT id, at, server, kind, reason FROM (SELECT id, at, server, kind, reason FROM GANTRY.EVENTS"
                + where + " ORDER BY at DESC, id DESC FETCH FIRST ? ROWS ONLY) ORDER BY at, id";
        return database.read("read events", connection -> {
            try (PreparedStatement select = connection.prepareStatement(sql)) {
                int index = 1;
                if (since != null) {
                    select.setObject(index++, utc(since));
                }
                select.setInt(index, limit);
                List<Event> events = new ArrayList<>();
                try (ResultSet rows = select.executeQuery()) {
                    while (rows.next()) {
                        events.add(new Event(rows.getLong(1), instant(rows, 2), rows.getString(3),
                                EventKind.fromSqlName(rows.getString(4)), rows.getString(5)));
                    }
                }
                return events;
            }
        });
    }

    /**
     * Stores an event on {@code connection}, in the caller's transaction, its reason redacted
     * ({@link Authority#redact}) and cut at {@link Authority#MAX_REASON_LENGTH} characters.
     *
     * @return the event as stored, with its id
     */
    static Event insert(Connection connection, Instant at, String server, EventKind kind, String reason)
            throws SQLException {
        String text = Authority.redact(reason);
        if (text.length() > Authority.MAX_REASON_LENGTH) {
            text = text.substring(0, Authority.MAX_REASON_LENGTH - 3) + "...";
        }
        try (PreparedStatement insert = connection.prepareStatement(
                "INSERT INTO GANTRY.EVENTS(at, server, kind, reason) VALUES (?, ?, ?, ?)",
                Statement.RETURN_GENERATED_KEYS)) {
            insert.setObject(1, utc(at));
            insert.setString(2, server);
            insert.setString(3, kind.sqlName());
            insert.setString(4, text);
            insert.executeUpdate();
            try (ResultSet keys = insert.getGeneratedKeys()) {
                keys.next();
                return new Event(keys.getLong(1), at, server, kind, text);
            }
        }
    }
}
