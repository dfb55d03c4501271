package io.gantry.cluster;

import io.gantry.authority.Event;
import io.gantry.authority.EventKind;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.sql.Statement;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's tables in its schema on the primary, in SQL both MariaDB and MySQL run: {@code config_versions} (one
 * row per version of the shared configuration; its primary key is the compare-and-set of a change) and
 * {@code instances} (each instance's last sign of life and the version it applied), {@code feed_lease} and
 * {@code events} (every instance's timeline). Times are the primary's, so that instances on machines whose clocks
 * differ agree on them, but for events: an event keeps the time its instance recorded it at, in UTC (a
 * {@code DATETIME}, written and read as text and arithmetic, so no session time zone shifts it). Stateless: every
 * call is given the connection.
 */
final class ClusterStore {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterStore.class);
    private static final String VERSIONS_TABLE = ClusterSettings.VERSIONS_TABLE;
    private static final String EVENTS_TABLE = ClusterSettings.EVENTS_TABLE;
    private static final DateTimeFormatter UTC = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS")
            .withZone(ZoneOffset.UTC);

    /** One version of the shared configuration. */
    record Version(long number, String instance, Instant at, String description, SharedConfiguration configuration) {
    }

    private final String cluster;
    private final String schema;

    ClusterStore(String cluster, String schema) {
        this.cluster = cluster;
        this.schema = "`" + schema + "`";
    }

    /**
     * Creates the schema and its tables where they are missing. Each statement needs its privilege
     * ({@code CREATE} on the schema); a missing one is the server's error, which the caller words.
     */
    void create(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE DATABASE IF NOT EXISTS " + schema);
            statement.execute("CREATE TABLE IF NOT EXISTS " + schema + "." + VERSIONS_TABLE + " ("
                    + "cluster VARCHAR(64) NOT NULL, "
                    + "version BIGINT NOT NULL, "
                    + "instance VARCHAR(255) NOT NULL, "
                    + "changed_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), "
                    + "description VARCHAR(2000) NOT NULL, "
                    + "configuration MEDIUMTEXT NOT NULL, "
                    + "PRIMARY KEY (cluster, version)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4");
            statement.execute("CREATE TABLE IF NOT EXISTS " + schema + ".instances ("
                    + "cluster VARCHAR(64) NOT NULL, "
                    + "instance VARCHAR(255) NOT NULL, "
                    + "address VARCHAR(255) NOT NULL, "
                    + "gantry_version VARCHAR(64) NOT NULL, "
                    + "applied_version BIGINT NOT NULL, "
                    + "started_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), "
                    + "last_seen TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), "
                    + "PRIMARY KEY (cluster, instance)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4");
            statement.execute("CREATE TABLE IF NOT EXISTS " + schema + ".feed_lease ("
                    + "cluster VARCHAR(64) NOT NULL PRIMARY KEY, "
                    + "owner VARCHAR(255) NOT NULL, "
                    + "epoch BIGINT NOT NULL, "
                    + "expires_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), "
                    + "position MEDIUMTEXT, "
                    + "position_server VARCHAR(255), "
                    + "saved_at TIMESTAMP(3) NULL) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4");
            statement.execute("CREATE TABLE IF NOT EXISTS " + schema + "." + EVENTS_TABLE + " ("
                    + "cluster VARCHAR(64) NOT NULL, "
                    + "instance VARCHAR(255) NOT NULL, "
                    + "id BIGINT NOT NULL, "
                    + "at DATETIME(3) NOT NULL, "
                    + "server VARCHAR(300), "
                    + "kind VARCHAR(32) NOT NULL, "
                    + "reason VARCHAR(4000) NOT NULL, "
                    + "PRIMARY KEY (cluster, instance, id), "
                    + "KEY events_at (cluster, instance, at)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4");
        }
    }

    /**
     * Deletes the versions up to {@code upTo}; each version is whole, so the ones kept suffice.
     *
     * @return how many were deleted
     */
    int pruneVersions(Connection connection, long upTo) throws SQLException {
        try (PreparedStatement delete = connection.prepareStatement("DELETE FROM " + schema + "." + VERSIONS_TABLE
                + " WHERE cluster = ? AND version <= ?")) {
            delete.setString(1, cluster);
            delete.setLong(2, upTo);
            return delete.executeUpdate();
        }
    }

    /** The highest id of {@code instance}'s events in the shared timeline, 0 when it has none there. */
    long newestEventId(Connection connection, String instance) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement("SELECT COALESCE(MAX(id), 0) FROM " + schema
                + "." + EVENTS_TABLE + " WHERE cluster = ? AND instance = ?")) {
            select.setString(1, cluster);
            select.setString(2, instance);
            try (ResultSet rows = select.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        }
    }

    /** Per instance but {@code except}, the highest id of its events in the shared timeline. */
    Map<String, Long> newestEventIds(Connection connection, String except) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement("SELECT instance, MAX(id) FROM " + schema + "."
                + EVENTS_TABLE + " WHERE cluster = ? AND instance <> ? GROUP BY instance")) {
            select.setString(1, cluster);
            select.setString(2, except);
            Map<String, Long> newest = new HashMap<>();
            try (ResultSet rows = select.executeQuery()) {
                while (rows.next()) {
                    newest.put(rows.getString(1), rows.getLong(2));
                }
            }
            return newest;
        }
    }

    /**
     * Adds events of one instance to the shared timeline in one statement; an event there already (a push repeated
     * after a failure) is left as it is.
     */
    void addEvents(Connection connection, String instance, List<Event> events) throws SQLException {
        StringBuilder sql = new StringBuilder("INSERT IGNORE INTO " + schema + "." + EVENTS_TABLE
                + " (cluster, instance, id, at, server, kind, reason) VALUES ");
        for (int i = 0; i < events.size(); i++) {
            sql.append(i == 0 ? "" : ", ").append("(?, ?, ?, ?, ?, ?, ?)");
        }
        try (PreparedStatement insert = connection.prepareStatement(sql.toString())) {
            int index = 1;
            for (Event event : events) {
                insert.setString(index++, cluster);
                insert.setString(index++, instance);
                insert.setLong(index++, event.id());
                insert.setString(index++, UTC.format(event.at()));
                insert.setString(index++, event.server());
                insert.setString(index++, event.kind().sqlName());
                insert.setString(index++, event.reason());
            }
            insert.executeUpdate();
        }
    }

    /**
     * Events of one instance read from the shared timeline.
     *
     * @param events the events, each with its instance and its id there, but for kinds this Gantry does not know
     * @param upTo   the highest id read, known kind or not
     * @param full   whether the batch was full: more may follow
     */
    record EventBatch(List<Event> events, long upTo, boolean full) {
    }

    /** {@code instance}'s events after id {@code after} recorded at or after {@code since}, by id, at most {@code limit}. */
    EventBatch eventsAfter(Connection connection, String instance, long after, Instant since, int limit)
            throws SQLException {
        try (PreparedStatement select = connection.prepareStatement("SELECT id, "
                + "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', at), server, kind, reason FROM " + schema + "."
                + EVENTS_TABLE + " WHERE cluster = ? AND instance = ? AND id > ? AND at >= ? ORDER BY id LIMIT ?")) {
            select.setString(1, cluster);
            select.setString(2, instance);
            select.setLong(3, after);
            select.setString(4, UTC.format(since));
            select.setInt(5, limit);
            List<Event> events = new ArrayList<>();
            long upTo = after;
            int read = 0;
            try (ResultSet rows = select.executeQuery()) {
                while (rows.next()) {
                    read++;
                    upTo = rows.getLong(1);
                    Instant at = Instant.EPOCH.plusNanos(rows.getLong(2) * 1000);
                    String kind = rows.getString(4);
                    try {
                        events.add(new Event(upTo, at, rows.getString(3), EventKind.fromSqlName(kind),
                                rows.getString(5), instance));
                    } catch (IllegalArgumentException e) {
                        LOG.warn("cluster '{}': event {} of instance {} is of a kind this Gantry does not know "
                                + "('{}', from a newer Gantry?); it is left out of this instance's timeline", cluster,
                                upTo, instance, kind);
                    }
                }
            }
            return new EventBatch(events, upTo, read == limit);
        }
    }

    /**
     * Deletes {@code instance}'s events recorded before {@code cutoff}, at most {@code limit}: each instance prunes
     * its own with its retention.
     *
     * @return how many were deleted
     */
    int pruneEvents(Connection connection, String instance, Instant cutoff, int limit) throws SQLException {
        try (PreparedStatement delete = connection.prepareStatement("DELETE FROM " + schema + "." + EVENTS_TABLE
                + " WHERE cluster = ? AND instance = ? AND at < ? LIMIT ?")) {
            delete.setString(1, cluster);
            delete.setString(2, instance);
            delete.setString(3, UTC.format(cutoff));
            delete.setInt(4, limit);
            return delete.executeUpdate();
        }
    }

    /** The feed's lease as its new owner took it: its epoch and the position the last owner saved. */
    record Lease(long epoch, Optional<String> position) {
    }

    /**
     * Takes the change feed's lease when nobody holds it, it expired, or this instance held it (a restart of the
     * feed on this instance): the epoch goes up by one, which fences every earlier holder's saves.
     *
     * @return the lease taken, or empty when another instance holds it
     */
    Optional<Lease> takeLease(Connection connection, String instance, long leaseMillis) throws SQLException {
        try (PreparedStatement insert = connection.prepareStatement("INSERT IGNORE INTO " + schema + ".feed_lease "
                + "(cluster, owner, epoch, expires_at) VALUES (?, '', 0, NOW(3))")) {
            insert.setString(1, cluster);
            insert.executeUpdate();
        }
        try (PreparedStatement take = connection.prepareStatement("UPDATE " + schema + ".feed_lease SET owner = ?, "
                + "epoch = epoch + 1, expires_at = NOW(3) + INTERVAL ? MICROSECOND WHERE cluster = ? AND "
                + "(owner = '' OR owner = ? OR expires_at < NOW(3))")) {
            take.setString(1, instance);
            take.setLong(2, leaseMillis * 1000);
            take.setString(3, cluster);
            take.setString(4, instance);
            if (take.executeUpdate() != 1) {
                return Optional.empty();
            }
        }
        try (PreparedStatement select = connection.prepareStatement("SELECT epoch, position FROM " + schema
                + ".feed_lease WHERE cluster = ?")) {
            select.setString(1, cluster);
            try (ResultSet rows = select.executeQuery()) {
                rows.next();
                return Optional.of(new Lease(rows.getLong(1), Optional.ofNullable(rows.getString(2))));
            }
        }
    }

    /** Extends the lease of {@code epoch}; false when it is no longer this instance's. */
    boolean renewLease(Connection connection, String instance, long epoch, long leaseMillis) throws SQLException {
        try (PreparedStatement renew = connection.prepareStatement("UPDATE " + schema + ".feed_lease SET "
                + "expires_at = NOW(3) + INTERVAL ? MICROSECOND WHERE cluster = ? AND owner = ? AND epoch = ?")) {
            renew.setLong(1, leaseMillis * 1000);
            renew.setString(2, cluster);
            renew.setString(3, instance);
            renew.setLong(4, epoch);
            return renew.executeUpdate() == 1;
        }
    }

    /** Saves the feed's position under the lease of {@code epoch}; false when that lease is no longer current. */
    boolean saveFeedPosition(Connection connection, String instance, long epoch, String gtidSet, String server)
            throws SQLException {
        try (PreparedStatement save = connection.prepareStatement("UPDATE " + schema + ".feed_lease SET "
                + "position = ?, position_server = ?, saved_at = NOW(3) WHERE cluster = ? AND owner = ? AND epoch = ?")) {
            save.setString(1, gtidSet);
            save.setString(2, server);
            save.setString(3, cluster);
            save.setString(4, instance);
            save.setLong(5, epoch);
            return save.executeUpdate() == 1;
        }
    }

    /** Gives the lease up at once (an orderly stop), so another instance takes the feed without waiting. */
    void releaseLease(Connection connection, String instance, long epoch) throws SQLException {
        try (PreparedStatement release = connection.prepareStatement("UPDATE " + schema + ".feed_lease SET "
                + "expires_at = NOW(3) - INTERVAL 1 SECOND WHERE cluster = ? AND owner = ? AND epoch = ?")) {
            release.setString(1, cluster);
            release.setString(2, instance);
            release.setLong(3, epoch);
            release.executeUpdate();
        }
    }

    /** The instance holding an unexpired feed lease, if any. */
    Optional<String> feedOwner(Connection connection) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement("SELECT owner FROM " + schema + ".feed_lease "
                + "WHERE cluster = ? AND owner <> '' AND expires_at >= NOW(3)")) {
            select.setString(1, cluster);
            try (ResultSet rows = select.executeQuery()) {
                return rows.next() ? Optional.of(rows.getString(1)) : Optional.empty();
            }
        }
    }

    /** The cluster's newest version number, 0 when it has none yet. */
    long latest(Connection connection) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement("SELECT COALESCE(MAX(version), 0) FROM " + schema
                + "." + VERSIONS_TABLE + " WHERE cluster = ?")) {
            select.setString(1, cluster);
            try (ResultSet rows = select.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        }
    }

    /** The versions after {@code after}, oldest first, at most {@code limit}. */
    List<Version> after(Connection connection, long after, int limit) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement("SELECT version, instance, changed_at, "
                + "description, configuration FROM " + schema + "." + VERSIONS_TABLE
                + " WHERE cluster = ? AND version > ? ORDER BY version LIMIT ?")) {
            select.setString(1, cluster);
            select.setLong(2, after);
            select.setInt(3, limit);
            List<Version> versions = new ArrayList<>();
            try (ResultSet rows = select.executeQuery()) {
                while (rows.next()) {
                    versions.add(new Version(rows.getLong(1), rows.getString(2), rows.getTimestamp(3).toInstant(),
                            rows.getString(4), SharedConfiguration.fromJson(rows.getString(5))));
                }
            }
            return versions;
        }
    }

    Optional<Version> version(Connection connection, long number) throws SQLException {
        List<Version> found = after(connection, number - 1, 1);
        return found.isEmpty() || found.get(0).number() != number ? Optional.empty() : Optional.of(found.get(0));
    }

    /**
     * Adds version {@code number}: the compare-and-set of a change.
     *
     * @return false when that version exists already (another instance made it first): nothing was written
     */
    boolean add(Connection connection, long number, String instance, String description,
                SharedConfiguration configuration) throws SQLException {
        try (PreparedStatement insert = connection.prepareStatement("INSERT INTO " + schema + "." + VERSIONS_TABLE
                + " (cluster, version, instance, changed_at, description, configuration) "
                + "VALUES (?, ?, ?, NOW(3), ?, ?)")) {
            insert.setString(1, cluster);
            insert.setLong(2, number);
            insert.setString(3, instance);
            insert.setString(4, description.length() > 2000 ? description.substring(0, 1997) + "..." : description);
            insert.setString(5, configuration.toJson());
            insert.executeUpdate();
            return true;
        } catch (SQLIntegrityConstraintViolationException e) {
            if (e.getErrorCode() == 1062) {
                return false;
            }
            throw e;
        }
    }

    /** This instance's sign of life; {@code started} true the first time after a start. */
    void heartbeat(Connection connection, String instance, String address, String gantryVersion, long applied,
                   boolean started) throws SQLException {
        try (PreparedStatement upsert = connection.prepareStatement("INSERT INTO " + schema + ".instances "
                + "(cluster, instance, address, gantry_version, applied_version, started_at, last_seen) "
                + "VALUES (?, ?, ?, ?, ?, NOW(3), NOW(3)) ON DUPLICATE KEY UPDATE address = VALUES(address), "
                + "gantry_version = VALUES(gantry_version), applied_version = VALUES(applied_version), "
                + (started ? "started_at = NOW(3), " : "") + "last_seen = NOW(3)")) {
            upsert.setString(1, cluster);
            upsert.setString(2, instance);
            upsert.setString(3, address);
            upsert.setString(4, gantryVersion);
            upsert.setLong(5, applied);
            upsert.executeUpdate();
        }
    }

    /** Every instance that ever joined, the most recently seen first. */
    List<ClusterInstance> instances(Connection connection) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement("SELECT instance, address, gantry_version, "
                + "applied_version, started_at, last_seen, TIMESTAMPDIFF(MICROSECOND, last_seen, NOW(3)) FROM "
                + schema + ".instances WHERE cluster = ? ORDER BY last_seen DESC, instance")) {
            select.setString(1, cluster);
            List<ClusterInstance> instances = new ArrayList<>();
            try (ResultSet rows = select.executeQuery()) {
                while (rows.next()) {
                    instances.add(new ClusterInstance(rows.getString(1), rows.getString(2), rows.getString(3),
                            rows.getLong(4), rows.getTimestamp(5).toInstant(), rows.getTimestamp(6).toInstant(),
                            rows.getLong(7) / 1_000_000.0));
                }
            }
            return instances;
        }
    }
}
