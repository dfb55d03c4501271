package io.gantry.authority;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.regex.Pattern;
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
 * <p>This class is the API only: {@code AuthorityDatabase} opens the file and runs every statement under those
 * locks, and one store class per table does that table's work ({@code ServerListStore}, {@code HealthHistoryStore},
 * {@code TimelineStore}, {@code LiveServerStore}, {@code QueryCacheStore}, {@code CdcPositionStore}), with
 * {@code HistoryPruning} for the retention deletes and {@code AdminQueries} for admin SQL.
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

    private static final Pattern URL_PASSWORD = Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*://[^\\s:/@,]*):[^\\s,]*@");
    private static final Pattern PASSWORD_SETTING = Pattern.compile("(?i)(password\\s*=\\s*)[^\\s&;,]+");

    private final AuthorityDatabase database;
    private final ServerListStore serverLists;
    private final HealthHistoryStore healthHistory;
    private final TimelineStore timeline;
    private final HistoryPruning pruning;
    private final LiveServerStore liveServers;
    private final QueryDigestStore queryDigests;
    private final AdminQueries adminQueries;
    private final QueryCacheStore queryCaches;
    private final CdcPositionStore cdcPositions;
    private final ClusterStateStore clusterState;
    private volatile Consumer<Event> publisher = event -> { };
    private volatile Runnable ownEventStored = () -> { };

    private Authority(AuthorityDatabase database, Clock clock) {
        this.database = database;
        this.timeline = new TimelineStore(database);
        this.serverLists = new ServerListStore(database, clock, timeline);
        this.healthHistory = new HealthHistoryStore(database);
        this.pruning = new HistoryPruning(database);
        this.liveServers = new LiveServerStore(database);
        this.queryDigests = new QueryDigestStore(database);
        this.adminQueries = new AdminQueries(database);
        this.queryCaches = new QueryCacheStore(database);
        this.cdcPositions = new CdcPositionStore(database, clock);
        this.clusterState = new ClusterStateStore(database, clock);
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
        return new Authority(AuthorityDatabase.open(directory, clock, false), clock);
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
        Clock clock = Clock.systemUTC();
        return new Authority(AuthorityDatabase.open(directory, clock, true), clock);
    }

    /** Whether {@code dataDir} holds an Authority database file. */
    public static boolean exists(Path dataDir) {
        return Files.isRegularFile(dataDir.resolve(FILE_NAME));
    }

    /** The data directory, absolute. */
    public Path dataDir() {
        return database.directory();
    }

    /**
     * Where the timeline entries the Authority records itself, in the same transaction as the change they record
     * (list and weight changes), are told once stored: the composition root hands them to the event bus. Called on
     * the thread that made the change, after the commit; it must not block.
     */
    public void publishStoredEventsTo(Consumer<Event> publisher) {
        this.publisher = Objects.requireNonNull(publisher, "publisher");
    }

    /**
     * Who is told, after the commit, that this instance stored an event of its own: a cluster member, which then
     * shares it at once rather than at its next poll. It must not block.
     */
    public void whenOwnEventStored(Runnable listener) {
        this.ownEventStored = Objects.requireNonNull(listener, "listener");
    }

    private void storedOwn(Event event) {
        ownEventStored.run();
        published(event);
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
        return serverLists.list(purpose);
    }

    /**
     * Replaces the list for this purpose and records a {@link EventKind#LIST_CHANGED} event, in one transaction.
     *
     * @param reason why, for the event (such as "first start, from --upstream-db-url"); redacted like every reason
     * @throws IllegalArgumentException if the list is empty or names a server twice; the stored list is unchanged
     */
    public void replaceServerList(Purpose purpose, List<StoredServer> servers, String reason) {
        Event event = serverLists.replace(purpose, servers, reason);
        LOG.info("authority: replaced the {} list: {}", purpose.sqlName(), event.reason());
        storedOwn(event);
    }

    /**
     * Sets the weight of a server on every list that has it, and records a {@link EventKind#WEIGHT_CHANGED} event
     * with the old and the new weight of each list it changed, in one transaction. A weight every list has already
     * changes nothing and is no event: "50 -> 50" on the timeline would tell of a change that did not happen.
     *
     * @param hostPort the server as {@code host:port} (host compared without regard to case)
     * @param weight   1..100
     * @return whether a list changed
     * @throws IllegalArgumentException for a weight outside 1..100, or a server on no list (the message names it)
     */
    public boolean setWeight(String hostPort, int weight) {
        return setWeight(hostPort, weight, null);
    }

    /** {@link #setWeight(String, int)}, the event saying why too ({@code why}, null for nothing more). */
    public boolean setWeight(String hostPort, int weight, String why) {
        Optional<Event> event = serverLists.setWeight(hostPort, weight, why);
        event.ifPresent(changed -> {
            LOG.info("authority: {}", changed.reason());
            storedOwn(changed);
        });
        return event.isPresent();
    }

    /** Stores health samples, all in one transaction. */
    public void recordHealth(List<HealthSample> samples) {
        healthHistory.record(samples);
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
        long id = timeline.record(at, server, kind, reason);
        ownEventStored.run();
        return id;
    }

    /**
     * In a cluster: this instance's events are stored from now on with its name ({@code --cluster-instance}), which
     * tells them from the other instances' in the cluster's one timeline. Outside a cluster they have none.
     */
    public void recordEventsAs(String instance) {
        timeline.recordAs(instance);
    }

    /** The name this instance's events are stored with, or null outside a cluster. */
    public String eventsInstance() {
        return timeline.instance();
    }

    /**
     * This instance's own events (those stored with its {@link #recordEventsAs name}) after id {@code after}, by id,
     * at most {@code limit}: what it has still to share with its cluster. Empty outside a cluster.
     */
    public List<Event> ownEventsAfter(long after, int limit) {
        return timeline.ownAfter(after, limit);
    }

    /** Per other instance of the cluster, the highest id (there) of its events stored here. */
    public Map<String, Long> pulledEventsUpTo() {
        return timeline.pulledUpTo();
    }

    /**
     * Stores events other instances of the cluster recorded, in one transaction, each with its instance and its id
     * there; one stored before is passed over. Those stored now are told like every stored event
     * ({@link #publishStoredEventsTo}), so that the live timeline shows them.
     *
     * @return how many were stored
     */
    public int storeEventsOfOtherInstances(List<Event> events) {
        List<Event> stored = timeline.storePulled(events);
        stored.forEach(this::published);
        return stored.size();
    }

    /**
     * The most recent events at or after {@code since}, at most {@code limit} of them, oldest first (by time, then
     * id).
     *
     * @param since null for no lower bound
     * @param limit at least 1
     */
    public List<Event> events(Instant since, int limit) {
        return timeline.events(since, limit);
    }

    /**
     * Health samples with {@code since <= at < until}, optionally of one server, ordered by time (then server).
     *
     * @param since  null for no lower bound
     * @param until  null for no upper bound
     * @param server {@code host:port} to keep only that server's samples
     */
    public List<HealthSample> healthHistory(Instant since, Instant until, Optional<String> server) {
        return healthHistory.list(since, until, server);
    }

    /** Like {@link #healthHistory(Instant, Instant, Optional)}, the first {@code limit} samples only. */
    public List<HealthSample> healthHistory(Instant since, Instant until, Optional<String> server, int limit) {
        return healthHistory.list(since, until, server, limit);
    }

    /**
     * Like {@link #healthHistory}, but hands each sample to {@code each} as it is read instead of building a list,
     * for exports of any size. Runs on the read connection: writes go on meanwhile.
     *
     * @return how many samples were handed over
     */
    public long forEachHealthSample(Instant since, Instant until, Optional<String> server,
                                    Consumer<HealthSample> each) {
        return healthHistory.forEach(since, until, server, each);
    }

    /**
     * Deletes health samples and events older than {@code cutoff}, in batches of 10 000 rows so that writes from
     * other threads go on in between.
     *
     * @return how many rows were deleted, both tables together
     */
    public int pruneOlderThan(Instant cutoff) {
        return pruning.pruneOlderThan(cutoff);
    }

    /**
     * Replaces the content of {@code gantry.upstream_servers} with the live state, in one transaction, so that the
     * admin query that follows reads it with ordinary SQL.
     */
    public void replaceLiveServers(List<LiveServerRow> rows) {
        liveServers.replace(rows);
    }

    /**
     * Replaces the content of {@code gantry.queries} with the statement digests, in one transaction, so that the
     * admin query that follows reads them with ordinary SQL.
     */
    public void replaceQueryDigests(List<QueryDigestRow> rows) {
        queryDigests.replace(rows);
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
        return adminQueries.query(sql, handler);
    }

    /**
     * Runs one read-only statement like {@link #query} and returns its columns, their types and the rows, at most
     * {@link #MAX_ADMIN_ROWS} rows. See {@link QueryResult} for the values' types and their text.
     */
    public QueryResult select(String sql) {
        return adminQueries.select(sql);
    }

    /** The query caches' definitions, oldest first. */
    public List<StoredCache> queryCaches() {
        return queryCaches.list();
    }

    /**
     * Stores a new query cache's definition.
     *
     * @throws IllegalArgumentException when a cache of that name exists
     */
    public void saveQueryCache(StoredCache cache) {
        queryCaches.save(cache);
    }

    /**
     * Removes query caches' definitions.
     *
     * @param name the cache to remove, or null for all of them
     * @return how many were removed
     */
    public int dropQueryCaches(String name) {
        return queryCaches.drop(name);
    }

    /** Saves the applied position of a stream, replacing the previous one; {@code updated_at} is now. */
    public void savePosition(String stream, String gtidSet, String server) {
        cdcPositions.save(stream, gtidSet, server);
    }

    /** The saved position of a stream, or empty if none was saved. */
    public Optional<CdcPosition> loadPosition(String stream) {
        return cdcPositions.load(stream);
    }

    /** The cluster configuration version this instance applied last, 0 if none (it never joined that cluster). */
    public long appliedClusterVersion(String cluster) {
        return clusterState.applied(cluster);
    }

    /** Records that this instance applied the cluster's configuration version {@code version}. */
    public void saveAppliedClusterVersion(String cluster, long version) {
        clusterState.save(cluster, version);
    }

    /**
     * Lets another process open the data directory's database, a Gantry taking over from this one: H2 locks the
     * file while it is open, so it is closed; until {@link #takeBack}, every read and write fails with an
     * {@link AuthorityException} naming {@code holder}.
     */
    public void lend(String holder) {
        database.lend(holder);
    }

    /**
     * Opens the database again after {@link #lend}, when the take-over failed.
     *
     * @throws AuthorityException if it cannot be opened, as {@link #open(Path, Clock)}
     */
    public void takeBack() {
        database.takeBack();
    }

    /**
     * Closes both connections. When this process serves the database to others (AUTO_SERVER), they reconnect to
     * the file on their own. Calling it again does nothing.
     */
    @Override
    public void close() {
        database.close();
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
}
