package io.gantry.authority;

import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.StringJoiner;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.h2.api.ErrorCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Authority: Gantry's own embedded H2 database in {@code <dataDir>/authority.mv.db}. It keeps the server lists
 * (with weights and purposes, never passwords), health samples, the failover timeline of events, the CDC position,
 * and the live server table that admin SQL reads. Every table is in the H2 schema {@code GANTRY}, so admin SQL such
 * as {@code SELECT * FROM gantry.events} runs on it directly ({@link #select}).
 *
 * <p>The database is embedded and opened by one process at a time: Gantry opens no database port, and another
 * process ({@code gantry export-health}) opens a stopped Gantry's files or reads a running one's tables through
 * the proxy port's admin SQL. Its H2 users have a password, kept owner-only in {@code authority.key}; the data
 * directory and its files are owner-only ({@link DataDirectory}).
 *
 * <p>Thread safety: every method may be called from any thread, and every method blocks (disk I/O), so callers run
 * them on their own executors, never on a Netty event loop. The Authority holds two JDBC connections, each used
 * under its own lock: one for Gantry's writes (each write method is one transaction), and one for reads as the H2
 * user {@code GANTRY_READER}, which has {@code SELECT} on schema {@code GANTRY} and nothing else. Reads
 * ({@link #events}, {@link #healthHistory}, {@link #select} ...) therefore never wait for writes or hold them up, and
 * see every write that has returned. Do not interrupt a thread inside an Authority call: H2 may then close its file.
 *
 * <p>Secret hygiene: nothing in the API takes a password, and every event reason passes through {@link #redact},
 * which masks the password of any {@code scheme://user:password@} URL and any {@code password=} setting in it.
 */
public final class Authority implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Authority.class);

    /** The database file inside the data directory. */
    public static final String FILE_NAME = "authority.mv.db";

    /** At most this many rows come back from {@link #select}; add a {@code LIMIT} to see a later part. */
    public static final int MAX_ADMIN_ROWS = 100_000;

    /** A statement run by {@link #select} or {@link #query} is cancelled after this long (30 seconds). */
    public static final Duration ADMIN_QUERY_TIMEOUT = Duration.ofSeconds(30);

    /** Event reasons longer than this many characters are cut, ending in "...". */
    public static final int MAX_REASON_LENGTH = 4000;

    private static final String DATABASE_NAME = "authority";
    private static final String OWNER = "sa";
    private static final int PRUNE_BATCH = 10_000;
    private static final Pattern URL_PASSWORD = Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*://[^\\s:/@,]*):[^\\s,]*@");
    private static final Pattern PASSWORD_SETTING = Pattern.compile("(?i)(password\\s*=\\s*)[^\\s&;,]+");

    private final Path dataDir;
    private final Clock clock;
    private final Object writeLock = new Object();
    private final Object readLock = new Object();
    private final Connection writer;
    private final Connection reader;
    private volatile boolean closed;
    private volatile Consumer<Event> publisher = event -> { };

    private Authority(Path dataDir, Clock clock, Connection writer, Connection reader) {
        this.dataDir = dataDir;
        this.clock = clock;
        this.writer = writer;
        this.reader = reader;
    }

    /** {@link #open(Path, Clock)} with the system clock. */
    public static Authority open(Path dataDir) {
        return open(dataDir, Clock.systemUTC());
    }

    /**
     * Opens the Authority in {@code dataDir}, creating the directory (owner-only permissions where the file system
     * has them) and the database if needed, and bringing the schema to the current version.
     *
     * @param clock gives the time of the events the Authority records itself (list and weight changes) and of
     *              saved CDC positions
     * @throws AuthorityException if the database cannot be opened or was made by a newer Gantry
     */
    public static Authority open(Path dataDir, Clock clock) {
        Path directory = dataDir.toAbsolutePath().normalize();
        DataDirectory.prepare(directory);
        return connect(directory, clock, false);
    }

    /**
     * Opens an Authority that must already exist, as {@code gantry export-health} does: it never creates one.
     *
     * @throws AuthorityException saying "no Gantry data in DIR" when there is none
     */
    public static Authority openExisting(Path dataDir) {
        Path directory = dataDir.toAbsolutePath().normalize();
        if (!exists(directory)) {
            throw new AuthorityException("no Gantry data in " + dataDir + " (no " + FILE_NAME + ")");
        }
        DataDirectory.prepare(directory);
        return connect(directory, Clock.systemUTC(), true);
    }

    /** Whether {@code dataDir} holds an Authority database file. */
    public static boolean exists(Path dataDir) {
        return Files.isRegularFile(dataDir.resolve(FILE_NAME));
    }

    /** The data directory, absolute. */
    public Path dataDir() {
        return dataDir;
    }


    /**
     * Where the timeline entries the Authority records itself, in the same transaction as the change they record
     * (list and weight changes), are told once stored: the composition root hands them to the event bus. Called on
     * the thread that made the change, after the commit; it must not block.
     */
    public void publishStoredEventsTo(Consumer<Event> publisher) {
        this.publisher = Objects.requireNonNull(publisher, "publisher");
    }

    private void published(Event event) {
        try {
            publisher.accept(event);
        } catch (RuntimeException e) {
            LOG.error("authority: telling of a {} event failed: {}", event.kind().sqlName(), e.toString(), e);
        }
    }

    /** The stored list for this purpose in its stored order, or empty if none was ever stored. */
    public Optional<List<StoredServer>> serverList(Purpose purpose) {
        Objects.requireNonNull(purpose, "purpose");
        return read("read the " + purpose.sqlName() + " list", connection -> {
            List<StoredServer> servers = readList(connection, purpose);
            return servers.isEmpty() ? Optional.empty() : Optional.of(servers);
        });
    }

    /**
     * Replaces the list for this purpose and records a {@link EventKind#LIST_CHANGED} event, in one transaction.
     *
     * @param reason why, for the event (such as "first start, from --upstream-db-url"); redacted like every reason
     * @throws IllegalArgumentException if the list is empty or names a server twice; the stored list is unchanged
     */
    public void replaceServerList(Purpose purpose, List<StoredServer> servers, String reason) {
        Objects.requireNonNull(purpose, "purpose");
        List<StoredServer> list = List.copyOf(servers);
        if (list.isEmpty()) {
            throw new IllegalArgumentException("the " + purpose.sqlName() + " list needs at least one server");
        }
        Set<String> seen = new HashSet<>();
        for (StoredServer server : list) {
            if (!seen.add(server.address().toLowerCase(Locale.ROOT))) {
                throw new IllegalArgumentException("the " + purpose.sqlName() + " list names " + server.address()
                        + " twice");
            }
        }
        Event event = write("replace the " + purpose.sqlName() + " list", connection -> {
            List<StoredServer> old = readList(connection, purpose);
            try (PreparedStatement delete = connection.prepareStatement(
                    "DELETE FROM GANTRY.SERVER_LIST WHERE purpose = ?")) {
                delete.setString(1, purpose.sqlName());
                delete.executeUpdate();
            }
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO GANTRY.SERVER_LIST"
                    + "(purpose, position, host, port, database_name, user_name, weight, tls) "
                    + "VALUES (?, ?, ?, ?, ?, ?, ?, ?)")) {
                for (int i = 0; i < list.size(); i++) {
                    StoredServer server = list.get(i);
                    insert.setString(1, purpose.sqlName());
                    insert.setInt(2, i);
                    insert.setString(3, server.host());
                    insert.setInt(4, server.port());
                    insert.setString(5, server.database());
                    insert.setString(6, server.user());
                    insert.setInt(7, server.weight());
                    insert.setString(8, server.tls().orElse(null));
                    insert.addBatch();
                }
                insert.executeBatch();
            }
            String description = purpose.sqlName() + " list now " + describe(list)
                    + (old.isEmpty() ? "" : " (was " + describe(old) + ")");
            String eventReason = reason == null || reason.isBlank() ? description : reason.strip() + "; " + description;
            return insertEvent(connection, clock.instant(), null, EventKind.LIST_CHANGED, eventReason);
        });
        LOG.info("authority: replaced the {} list: {}", purpose.sqlName(), event.reason());
        published(event);
    }

    /**
     * Sets the weight of a server on every list that has it, and records a {@link EventKind#WEIGHT_CHANGED} event
     * with the old and the new weight, in one transaction.
     *
     * @param hostPort the server as {@code host:port} (host compared without regard to case)
     * @param weight   1..100
     * @throws IllegalArgumentException for a weight outside 1..100, or a server on no list (the message names it)
     */
    public void setWeight(String hostPort, int weight) {
        Objects.requireNonNull(hostPort, "hostPort");
        checkWeight(weight);
        Event event = write("set the weight of " + hostPort, connection -> {
            String address = null;
            StringJoiner changes = new StringJoiner(", ");
            try (PreparedStatement select = connection.prepareStatement("SELECT purpose, host, port, weight "
                    + "FROM GANTRY.SERVER_LIST WHERE LOWER(host || ':' || port) = LOWER(?) ORDER BY purpose DESC")) {
                select.setString(1, hostPort.strip());
                try (ResultSet rows = select.executeQuery()) {
                    while (rows.next()) {
                        address = rows.getString(2) + ":" + rows.getInt(3);
                        changes.add(rows.getString(1) + " list " + rows.getInt(4) + " -> " + weight);
                    }
                }
            }
            if (address == null) {
                throw new IllegalArgumentException("no server " + hostPort + " on the server lists (known: "
                        + knownServers(connection) + ")");
            }
            try (PreparedStatement update = connection.prepareStatement(
                    "UPDATE GANTRY.SERVER_LIST SET weight = ? WHERE LOWER(host || ':' || port) = LOWER(?)")) {
                update.setInt(1, weight);
                update.setString(2, hostPort.strip());
                update.executeUpdate();
            }
            String reason = "weight of " + address + " changed: " + changes;
            return insertEvent(connection, clock.instant(), address, EventKind.WEIGHT_CHANGED, reason);
        });
        LOG.info("authority: {}", event.reason());
        published(event);
    }


    /** Stores health samples, all in one transaction. */
    public void recordHealth(List<HealthSample> samples) {
        if (samples.isEmpty()) {
            return;
        }
        List<HealthSample> batch = List.copyOf(samples);
        write("record " + batch.size() + " health samples", connection -> {
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO GANTRY.HEALTH_HISTORY"
                    + "(at, server, health, role, rtt_ms, lag_ms) VALUES (?, ?, ?, ?, ?, ?)")) {
                for (HealthSample sample : batch) {
                    insert.setObject(1, utc(sample.at()));
                    insert.setString(2, sample.server());
                    insert.setString(3, sample.health());
                    insert.setString(4, sample.role());
                    setNullable(insert, 5, sample.rttMs(), Types.DOUBLE);
                    setNullable(insert, 6, sample.lagMs(), Types.BIGINT);
                    insert.addBatch();
                }
                insert.executeBatch();
            }
            return null;
        });
    }

    /**
     * Appends an event to the failover timeline.
     *
     * @param server {@code host:port}, or null for Gantry as a whole
     * @param reason why; passwords in URLs are masked ({@link #redact}), and it is cut at
     *               {@link #MAX_REASON_LENGTH} characters
     * @return the event's id
     */
    public long recordEvent(Instant at, String server, EventKind kind, String reason) {
        Objects.requireNonNull(at, "at");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(reason, "reason");
        return write("record a " + kind.sqlName() + " event", connection ->
                insertEvent(connection, at, server, kind, reason)).id();
    }

    /**
     * The most recent events at or after {@code since}, at most {@code limit} of them, oldest first (by time, then
     * id).
     *
     * @param since null for no lower bound
     * @param limit at least 1
     */
    public List<Event> events(Instant since, int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, not " + limit);
        }
        String where = since == null ? "" : " WHERE at >= ?";
        String sql = "SELECT id, at, server, kind, reason FROM (SELECT id, at, server, kind, reason FROM GANTRY.EVENTS"
                + where + " ORDER BY at DESC, id DESC FETCH FIRST ? ROWS ONLY) ORDER BY at, id";
        return read("read events", connection -> {
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
     * Health samples with {@code since <= at < until}, optionally of one server, ordered by time (then server).
     *
     * @param since  null for no lower bound
     * @param until  null for no upper bound
     * @param server {@code host:port} to keep only that server's samples
     */
    public List<HealthSample> healthHistory(Instant since, Instant until, Optional<String> server) {
        List<HealthSample> samples = new ArrayList<>();
        forEachHealthSample(since, until, server, samples::add);
        return samples;
    }

    /** Like {@link #healthHistory(Instant, Instant, Optional)}, the first {@code limit} samples only. */
    public List<HealthSample> healthHistory(Instant since, Instant until, Optional<String> server, int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, not " + limit);
        }
        List<HealthSample> samples = new ArrayList<>();
        healthSamples(since, until, server, limit, samples::add);
        return samples;
    }

    /**
     * Like {@link #healthHistory}, but hands each sample to {@code each} as it is read instead of building a list,
     * for exports of any size. Runs on the read connection: writes go on meanwhile.
     *
     * @return how many samples were handed over
     */
    public long forEachHealthSample(Instant since, Instant until, Optional<String> server,
                                    Consumer<HealthSample> each) {
        return healthSamples(since, until, server, 0, each);
    }

    /** @param limit at most this many, 0 for all */
    private long healthSamples(Instant since, Instant until, Optional<String> server, int limit,
                               Consumer<HealthSample> each) {
        Objects.requireNonNull(server, "server");
        StringBuilder sql = new StringBuilder(
                "SELECT at, server, health, role, rtt_ms, lag_ms FROM GANTRY.HEALTH_HISTORY WHERE TRUE");
        if (since != null) {
            sql.append(" AND at >= ?");
        }
        if (until != null) {
            sql.append(" AND at < ?");
        }
        if (server.isPresent()) {
            sql.append(" AND server = ?");
        }
        sql.append(" ORDER BY at, server");
        if (limit > 0) {
            sql.append(" FETCH FIRST ").append(limit).append(" ROWS ONLY");
        }
        return read("read the health history", connection -> {
            try (PreparedStatement select = connection.prepareStatement(sql.toString())) {
                int index = 1;
                if (since != null) {
                    select.setObject(index++, utc(since));
                }
                if (until != null) {
                    select.setObject(index++, utc(until));
                }
                if (server.isPresent()) {
                    select.setString(index, server.get());
                }
                long count = 0;
                try (ResultSet rows = select.executeQuery()) {
                    while (rows.next()) {
                        each.accept(new HealthSample(instant(rows, 1), rows.getString(2), rows.getString(3),
                                rows.getString(4), rows.getObject(5, Double.class), rows.getObject(6, Long.class)));
                        count++;
                    }
                }
                return count;
            }
        });
    }

    /**
     * Deletes health samples and events older than {@code cutoff}, in batches of 10 000 rows so that writes from
     * other threads go on in between.
     *
     * @return how many rows were deleted, both tables together
     */
    public int pruneOlderThan(Instant cutoff) {
        Objects.requireNonNull(cutoff, "cutoff");
        int total = 0;
        for (String table : List.of("GANTRY.HEALTH_HISTORY", "GANTRY.EVENTS")) {
            int deleted;
            do {
                deleted = write("prune " + table, connection -> {
                    try (PreparedStatement delete = connection.prepareStatement(
                            "DELETE FROM " + table + " WHERE at < ? FETCH FIRST " + PRUNE_BATCH + " ROWS ONLY")) {
                        delete.setObject(1, utc(cutoff));
                        return delete.executeUpdate();
                    }
                });
                total += deleted;
            } while (deleted == PRUNE_BATCH);
        }
        return total;
    }


    /**
     * Replaces the content of {@code gantry.upstream_servers} with the live state, in one transaction, so that the
     * admin query that follows reads it with ordinary SQL.
     */
    public void replaceLiveServers(List<LiveServerRow> rows) {
        List<LiveServerRow> live = List.copyOf(rows);
        write("copy the live server state", connection -> {
            try (Statement delete = connection.createStatement()) {
                delete.executeUpdate("DELETE FROM GANTRY.UPSTREAM_SERVERS");
            }
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO GANTRY.UPSTREAM_SERVERS(host, "
                    + "port, database, \"USER\", weight, purpose, active_cdc, health, down_since, last_ok, connections,"
                    + " role, lag_ms, rtt_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
                for (LiveServerRow row : live) {
                    insert.setString(1, row.host());
                    insert.setInt(2, row.port());
                    insert.setString(3, row.database());
                    insert.setString(4, row.user());
                    insert.setInt(5, row.weight());
                    insert.setString(6, row.purpose());
                    insert.setBoolean(7, row.activeCdc());
                    insert.setString(8, row.health());
                    insert.setObject(9, row.downSince() == null ? null : utc(row.downSince()),
                            Types.TIMESTAMP_WITH_TIMEZONE);
                    insert.setObject(10, row.lastOk() == null ? null : utc(row.lastOk()),
                            Types.TIMESTAMP_WITH_TIMEZONE);
                    insert.setInt(11, row.connections());
                    insert.setString(12, row.role());
                    setNullable(insert, 13, row.lagMs(), Types.BIGINT);
                    setNullable(insert, 14, row.rttMs(), Types.DOUBLE);
                    insert.addBatch();
                }
                insert.executeBatch();
            }
            return null;
        });
    }

    /**
     * Runs one read-only statement ({@code SELECT}, {@code SHOW}, {@code WITH}, {@code VALUES} or {@code TABLE}) as
     * the reader user and hands its result set to {@code handler}. The statement is cancelled after
     * {@link #ADMIN_QUERY_TIMEOUT}.
     *
     * @throws IllegalArgumentException for any other statement, or several statements; nothing is run
     * @throws AuthorityException       when H2 refuses or fails the statement; the message is H2's reason
     */
    public <T> T query(String sql, SqlFunction<ResultSet, T> handler) {
        String statementText = ReadOnlySql.check(sql);
        synchronized (readLock) {
            ensureOpen();
            try (Statement statement = reader.createStatement()) {
                statement.setQueryTimeout((int) ADMIN_QUERY_TIMEOUT.toSeconds());
                statement.setMaxRows(MAX_ADMIN_ROWS);
                try (ResultSet rows = statement.executeQuery(statementText)) {
                    return handler.apply(rows);
                }
            } catch (SQLException e) {
                throw new AuthorityException(h2Message(e), e);
            }
        }
    }

    /**
     * Runs one read-only statement like {@link #query} and returns its columns, their types and the rows, at most
     * {@link #MAX_ADMIN_ROWS} rows. See {@link QueryResult} for the values' types and their text.
     */
    public QueryResult select(String sql) {
        return query(sql, Authority::toQueryResult);
    }


    /** The query caches' definitions, oldest first. */
    public List<StoredCache> queryCaches() {
        return read("read the query caches", connection -> {
            List<StoredCache> caches = new ArrayList<>();
            try (Statement statement = connection.createStatement();
                 ResultSet rows = statement.executeQuery("SELECT name, select_text, shallow, ttl_seconds, "
                         + "refresh_seconds, created_at FROM GANTRY.QUERY_CACHES ORDER BY created_at, name")) {
                while (rows.next()) {
                    caches.add(new StoredCache(rows.getString(1), rows.getString(2), rows.getBoolean(3),
                            rows.getLong(4), rows.getLong(5), instant(rows, 6)));
                }
            }
            return caches;
        });
    }

    /**
     * Stores a new query cache's definition.
     *
     * @throws IllegalArgumentException when a cache of that name exists
     */
    public void saveQueryCache(StoredCache cache) {
        Objects.requireNonNull(cache, "cache");
        write("store the query cache " + cache.name(), connection -> {
            try (PreparedStatement exists = connection.prepareStatement(
                    "SELECT 1 FROM GANTRY.QUERY_CACHES WHERE name = ?")) {
                exists.setString(1, cache.name());
                try (ResultSet rows = exists.executeQuery()) {
                    if (rows.next()) {
                        throw new IllegalArgumentException("a cache named " + cache.name() + " exists already");
                    }
                }
            }
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO GANTRY.QUERY_CACHES(name, "
                    + "select_text, shallow, ttl_seconds, refresh_seconds, created_at) VALUES (?, ?, ?, ?, ?, ?)")) {
                insert.setString(1, cache.name());
                insert.setString(2, cache.select());
                insert.setBoolean(3, cache.shallow());
                insert.setLong(4, cache.ttlSeconds());
                insert.setLong(5, cache.refreshSeconds());
                insert.setObject(6, utc(cache.createdAt()));
                insert.executeUpdate();
            }
            return null;
        });
    }

    /**
     * Removes query caches' definitions.
     *
     * @param name the cache to remove, or null for all of them
     * @return how many were removed
     */
    public int dropQueryCaches(String name) {
        return write(name == null ? "drop every query cache" : "drop the query cache " + name, connection -> {
            if (name == null) {
                try (Statement statement = connection.createStatement()) {
                    return statement.executeUpdate("DELETE FROM GANTRY.QUERY_CACHES");
                }
            }
            try (PreparedStatement delete = connection.prepareStatement(
                    "DELETE FROM GANTRY.QUERY_CACHES WHERE name = ?")) {
                delete.setString(1, name);
                return delete.executeUpdate();
            }
        });
    }

    /** Saves the applied position of a stream, replacing the previous one; {@code updated_at} is now. */
    public void savePosition(String stream, String gtidSet, String server) {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(gtidSet, "gtidSet");
        Objects.requireNonNull(server, "server");
        write("save the position of stream " + stream, connection -> {
            try (PreparedStatement merge = connection.prepareStatement("MERGE INTO GANTRY.CDC_POSITION"
                    + "(stream, gtid_set, server, updated_at) KEY (stream) VALUES (?, ?, ?, ?)")) {
                merge.setString(1, stream);
                merge.setString(2, gtidSet);
                merge.setString(3, server);
                merge.setObject(4, utc(clock.instant()));
                merge.executeUpdate();
            }
            return null;
        });
    }

    /** The saved position of a stream, or empty if none was saved. */
    public Optional<CdcPosition> loadPosition(String stream) {
        Objects.requireNonNull(stream, "stream");
        return read("load the position of stream " + stream, connection -> {
            try (PreparedStatement select = connection.prepareStatement(
                    "SELECT gtid_set, server, updated_at FROM GANTRY.CDC_POSITION WHERE stream = ?")) {
                select.setString(1, stream);
                try (ResultSet rows = select.executeQuery()) {
                    return rows.next()
                            ? Optional.of(new CdcPosition(stream, rows.getString(1), rows.getString(2),
                                    instant(rows, 3)))
                            : Optional.empty();
                }
            }
        });
    }

    /**
     * Closes both connections. When this process serves the database to others (AUTO_SERVER), they reconnect to
     * the file on their own. Calling it again does nothing.
     */
    @Override
    public void close() {
        synchronized (writeLock) {
            synchronized (readLock) {
                if (closed) {
                    return;
                }
                closed = true;
                closeQuietly(reader);
                closeQuietly(writer);
                LOG.debug("authority: closed {}", dataDir.resolve(FILE_NAME));
            }
        }
    }

    /**
     * The text with the password of every {@code scheme://user:password@host} URL replaced by {@code ***}, and
     * every {@code password=value} setting's value too. Event reasons go through it before they are stored.
     */
    public static String redact(String text) {
        if (text == null) {
            return null;
        }
        String masked = URL_PASSWORD.matcher(text).replaceAll("$1:***@");
        return PASSWORD_SETTING.matcher(masked).replaceAll("$1***");
    }

    static void checkWeight(int weight) {
        if (weight < 1 || weight > 100) {
            throw new IllegalArgumentException("weight must be between 1 and 100, not " + weight);
        }
    }


    private static Authority connect(Path directory, Clock clock, boolean mustExist) {
        Path file = directory.resolve(FILE_NAME);
        String url = jdbcUrl(directory, mustExist);
        Connection writer = null;
        try {
            String key = DataDirectory.key(directory);
            writer = connectOwner(url, key, file);
            int found = Schema.migrate(writer, clock, file.toString());
            try (Statement statement = writer.createStatement()) {
                // The key is base64url: no quote can be in it.
                statement.execute("ALTER USER " + Schema.READER + " SET PASSWORD '" + key + "'");
            }
            Connection reader = org.h2.Driver.load().connect(url, credentials(Schema.READER, key));
            reader.setReadOnly(true);
            DataDirectory.restrictFiles(directory);
            LOG.debug("authority: opened {} (schema version {}, found {})", file, Schema.CURRENT_VERSION, found);
            return new Authority(directory, clock, writer, reader);
        } catch (SQLException | RuntimeException e) {
            closeQuietly(writer);
            if (e instanceof AuthorityException authority) {
                throw authority;
            }
            if (e instanceof SQLException sql && sql.getErrorCode() == ErrorCode.DATABASE_ALREADY_OPEN_1) {
                throw new AuthorityException("authority: " + file + " is in use by another process (a running "
                        + "Gantry?); a running Gantry's tables are read through its proxy port (admin SQL, or "
                        + "gantry export-health --from mysql://ADMIN@HOST:PORT)", e);
            }
            String reason = e instanceof SQLException sql ? h2Message(sql) : e.toString();
            throw new AuthorityException("authority: cannot open " + file + ": " + reason, e);
        }
    }

    /**
     * Logs in as the owner with the key. A database made before keys existed has an empty owner password: it is
     * opened with that once and given the key.
     */
    private static Connection connectOwner(String url, String key, Path file) throws SQLException {
        try {
            return org.h2.Driver.load().connect(url, credentials(OWNER, key));
        } catch (SQLException wrong) {
            if (wrong.getErrorCode() != ErrorCode.WRONG_USER_OR_PASSWORD) {
                throw wrong;
            }
            Connection legacy;
            try {
                legacy = org.h2.Driver.load().connect(url, credentials(OWNER, ""));
            } catch (SQLException stillWrong) {
                throw new AuthorityException("authority: the key in " + DataDirectory.KEY_FILE + " does not open "
                        + file + " (was the key file replaced?)", wrong);
            }
            try (Statement statement = legacy.createStatement()) {
                statement.execute("ALTER USER " + OWNER + " SET PASSWORD '" + key + "'");
            }
            LOG.warn("authority: {} had an empty password; it now has the one in {}", file, DataDirectory.KEY_FILE);
            return legacy;
        }
    }

    static String jdbcUrl(Path directory, boolean mustExist) {
        String base = directory.resolve(DATABASE_NAME).toString();
        if (base.indexOf(';') >= 0) {
            throw new AuthorityException("authority: the data directory " + directory
                    + " contains ';', which H2 cannot take in a file name");
        }
        // NON_KEYWORDS=USER lets a qualified u.user name the user column. No AUTO_SERVER: it would open a database
        // port on every interface.
        return "jdbc:h2:file:" + base + ";NON_KEYWORDS=USER" + (mustExist ? ";IFEXISTS=TRUE" : "");
    }

    private static Properties credentials(String user, String password) {
        Properties properties = new Properties();
        properties.setProperty("user", user);
        properties.setProperty("password", password);
        return properties;
    }

    private <T> T write(String what, SqlFunction<Connection, T> work) {
        synchronized (writeLock) {
            ensureOpen();
            try {
                writer.setAutoCommit(false);
                try {
                    T result = work.apply(writer);
                    writer.commit();
                    return result;
                } catch (SQLException | RuntimeException e) {
                    writer.rollback();
                    throw e;
                } finally {
                    writer.setAutoCommit(true);
                }
            } catch (SQLException e) {
                throw new AuthorityException("authority: could not " + what + ": " + h2Message(e), e);
            }
        }
    }

    private <T> T read(String what, SqlFunction<Connection, T> work) {
        synchronized (readLock) {
            ensureOpen();
            try {
                return work.apply(reader);
            } catch (SQLException e) {
                throw new AuthorityException("authority: could not " + what + ": " + h2Message(e), e);
            }
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("authority: " + dataDir.resolve(FILE_NAME) + " is closed");
        }
    }

    private static Event insertEvent(Connection connection, Instant at, String server, EventKind kind, String reason)
            throws SQLException {
        String text = redact(reason);
        if (text.length() > MAX_REASON_LENGTH) {
            text = text.substring(0, MAX_REASON_LENGTH - 3) + "...";
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

    private static List<StoredServer> readList(Connection connection, Purpose purpose) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement("SELECT host, port, database_name, user_name, "
                + "weight, tls FROM GANTRY.SERVER_LIST WHERE purpose = ? ORDER BY position")) {
            select.setString(1, purpose.sqlName());
            List<StoredServer> servers = new ArrayList<>();
            try (ResultSet rows = select.executeQuery()) {
                while (rows.next()) {
                    servers.add(new StoredServer(rows.getString(1), rows.getInt(2), rows.getString(3),
                            rows.getString(4), rows.getInt(5), Optional.ofNullable(rows.getString(6))));
                }
            }
            return servers;
        }
    }

    private static String knownServers(Connection connection) throws SQLException {
        Set<String> known = new TreeSet<>();
        try (Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SELECT host, port FROM GANTRY.SERVER_LIST")) {
            while (rows.next()) {
                known.add(rows.getString(1) + ":" + rows.getInt(2));
            }
        }
        return known.isEmpty() ? "none stored yet" : String.join(", ", known);
    }

    private static String describe(List<StoredServer> servers) {
        return servers.stream().map(s -> s.address() + "|" + s.weight()).collect(Collectors.joining(", "));
    }

    private static QueryResult toQueryResult(ResultSet rows) throws SQLException {
        ResultSetMetaData meta = rows.getMetaData();
        int count = meta.getColumnCount();
        List<String> columns = new ArrayList<>(count);
        List<QueryResult.ValueType> types = new ArrayList<>(count);
        for (int i = 1; i <= count; i++) {
            String label = meta.getColumnLabel(i);
            columns.add(label.matches("[A-Z][A-Z0-9_]*") ? label.toLowerCase(Locale.ROOT) : label);
            types.add(valueType(meta.getColumnType(i)));
        }
        List<List<Object>> values = new ArrayList<>();
        while (rows.next()) {
            List<Object> row = new ArrayList<>(count);
            for (int i = 1; i <= count; i++) {
                row.add(value(types.get(i - 1), rows.getObject(i)));
            }
            values.add(row);
        }
        return new QueryResult(columns, types, values);
    }

    private static QueryResult.ValueType valueType(int sqlType) {
        return switch (sqlType) {
            case Types.TINYINT, Types.SMALLINT, Types.INTEGER, Types.BIGINT -> QueryResult.ValueType.INTEGER;
            case Types.DECIMAL, Types.NUMERIC -> QueryResult.ValueType.DECIMAL;
            case Types.REAL, Types.FLOAT, Types.DOUBLE -> QueryResult.ValueType.DOUBLE;
            case Types.BOOLEAN, Types.BIT -> QueryResult.ValueType.BOOLEAN;
            case Types.TIMESTAMP, Types.TIMESTAMP_WITH_TIMEZONE -> QueryResult.ValueType.TIMESTAMP;
            case Types.BINARY, Types.VARBINARY, Types.LONGVARBINARY, Types.BLOB -> QueryResult.ValueType.BINARY;
            default -> QueryResult.ValueType.TEXT;
        };
    }

    /**
     * A JDBC value as the Java type of its column's {@link QueryResult.ValueType}. Timestamps without a zone are
     * read as UTC, as Gantry writes them; a value that does not fit its column's type (H2 would not give one) is
     * kept as text.
     */
    static Object value(QueryResult.ValueType type, Object value) {
        if (value == null) {
            return null;
        }
        switch (type) {
            case INTEGER, DOUBLE, DECIMAL -> {
                if (value instanceof Number number) {
                    return type == QueryResult.ValueType.INTEGER ? (Object) number.longValue()
                            : type == QueryResult.ValueType.DOUBLE ? (Object) number.doubleValue()
                            : number instanceof BigDecimal decimal ? decimal : new BigDecimal(number.toString());
                }
            }
            case BOOLEAN -> {
                if (value instanceof Boolean flag) {
                    return flag;
                }
            }
            case TIMESTAMP -> {
                Object time = plain(value);
                if (time instanceof Instant) {
                    return time;
                }
            }
            case BINARY -> {
                if (value instanceof byte[] bytes) {
                    return bytes;
                }
            }
            case TEXT -> {
                if (value instanceof String text) {
                    return text;
                }
            }
        }
        return QueryResult.text(plain(value));
    }

    /** Date-times as UTC instants and floats as doubles, so that {@link QueryResult#text} writes them right. */
    private static Object plain(Object value) {
        if (value instanceof OffsetDateTime time) {
            return time.toInstant();
        }
        if (value instanceof Timestamp time) {
            return time.toLocalDateTime().toInstant(ZoneOffset.UTC);
        }
        if (value instanceof LocalDateTime time) {
            return time.toInstant(ZoneOffset.UTC);
        }
        if (value instanceof Float number) {
            return number.doubleValue();
        }
        return value;
    }

    private static OffsetDateTime utc(Instant at) {
        return OffsetDateTime.ofInstant(at, ZoneOffset.UTC);
    }

    private static Instant instant(ResultSet rows, int column) throws SQLException {
        OffsetDateTime time = rows.getObject(column, OffsetDateTime.class);
        return time == null ? null : time.toInstant();
    }

    private static void setNullable(PreparedStatement statement, int index, Object value, int sqlType)
            throws SQLException {
        if (value == null) {
            statement.setNull(index, sqlType);
        } else {
            statement.setObject(index, value, sqlType);
        }
    }

    /** H2's reason without the statement it appends ("...; SQL statement: ..." and "[42102-232]"). */
    static String h2Message(SQLException e) {
        String message = e.getMessage() == null ? e.toString() : e.getMessage();
        int statement = message.indexOf("; SQL statement:");
        if (statement >= 0) {
            message = message.substring(0, statement);
        }
        int newline = message.indexOf('\n');
        if (newline >= 0) {
            message = message.substring(0, newline);
        }
        return message.replaceAll("\\s*\\[\\d+-\\d+]$", "").strip();
    }

    private static void closeQuietly(Connection connection) {
        if (connection == null) {
            return;
        }
        try {
            connection.close();
        } catch (SQLException e) {
            LOG.warn("authority: error while closing a connection: {}", h2Message(e));
        }
    }
}
