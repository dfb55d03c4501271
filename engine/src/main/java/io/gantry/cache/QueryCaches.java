package io.gantry.cache;

import io.gantry.authority.Authority;
import io.gantry.cdc.CdcStream;
import io.gantry.digest.ShapeDigest;
import io.gantry.gtid.GtidSet;
import io.gantry.route.SqlMode;
import io.gantry.topology.Upstreams;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The query caches: their definitions (kept in the Authority), one memory-bounded store of entries for all of them
 * (Caffeine, weighted by result bytes), and how fresh the change stream keeps them.
 *
 * <p>The proxy asks {@link #find} for every SELECT while a cache is defined and nothing at all while none is
 * ({@link #isEmpty()}). The change stream tells {@link CacheInvalidation}, which evicts. Every
 * {@value #FRESHNESS_CHECK_MILLIS} ms a check on the {@code gantry-cache} thread decides whether the stream keeps the
 * caches fresh ({@link Freshness#live()}): it must be streaming and have applied what the primary had executed no
 * longer than {@code --cache-max-stream-lag-ms} ago; otherwise every cache falls back to its TTL (a cache without one
 * to {@link #DEFAULT_SHALLOW_TTL}).
 *
 * <p>The parts: {@link CacheDefinitions} keeps the definitions and finds a cache by its shape or its tables;
 * {@link CacheEntries} holds the entries and serves the look-ups, fills and refreshes; {@link StreamFreshness} judges
 * how fresh the stream keeps them. This class is what the proxy, the admin statements and the metrics call.
 */
public final class QueryCaches implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(QueryCaches.class);

    /** The TTL of a shallow cache created without one, and of any cache without one while the stream lags. */
    public static final Duration DEFAULT_SHALLOW_TTL = Duration.ofSeconds(10);
    /** How long an account's successful run of a cached query lets it be served from the cache. */
    public static final Duration ACCOUNT_RECHECK = Duration.ofSeconds(10);
    static final long FRESHNESS_CHECK_MILLIS = 100;

    /**
     * Whether the change stream keeps the caches fresh now.
     *
     * @param live   the stream evicts entries as their tables change; when false, entries live by TTL alone
     * @param reason in words, for {@code SHOW CACHES}
     */
    public record Freshness(boolean live, String reason) {
    }

    /** The rows of {@code SHOW CACHES} and the like, as text. */
    public record Table(List<String> columns, List<List<String>> rows) {
    }

    /** The counters {@link #total} sums over every cache. */
    public enum Counter {
        HITS, MISSES, EVICTED_BY_CHANGE, EVICTED_BY_TTL, EVICTED_BY_MEMORY, ENTRIES, BYTES
    }

    /** Where an entry of a cache is kept: the cache, the protocol, the session's result format and the parameters. */
    public record EntryKey(QueryCache cache, boolean binary, String format, String parameters) {
    }

    private final CacheSettings settings;
    private final Authority authority;
    private final String defaultDatabase;
    private final ScheduledExecutorService worker;
    private final ProxiedQueries proxied;
    private final StreamFreshness stream;
    private final CacheEntries entries;
    private final CacheDefinitions definitions;

    /**
     * @param authority       where definitions are kept
     * @param defaultDatabase the database of unqualified table names (the upstream URLs')
     * @param catalog         tells views from tables and finds integer primary keys
     * @param streamed        whether the change stream carries a table's changes ({@code --cdc-tables}), by
     *                        database and table; null when there is no change stream ({@code --no-cdc})
     */
    public QueryCaches(CacheSettings settings, Authority authority, String defaultDatabase, TableCatalog catalog,
                       BiPredicate<String, String> streamed, Upstreams upstreams, Clock clock) {
        this.settings = settings;
        this.authority = authority;
        this.defaultDatabase = defaultDatabase;
        this.proxied = new ProxiedQueries(defaultDatabase);
        this.stream = new StreamFreshness(settings, streamed != null, upstreams, clock);
        this.worker = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "gantry-cache");
            thread.setDaemon(true);
            return thread;
        });
        this.entries = new CacheEntries(settings, stream);
        this.definitions = new CacheDefinitions(authority, defaultDatabase, catalog, streamed, clock, stream, entries);
        worker.scheduleWithFixedDelay(stream::checkSafely, FRESHNESS_CHECK_MILLIS, FRESHNESS_CHECK_MILLIS,
                TimeUnit.MILLISECONDS);
    }

    /**
     * Loads the definitions kept in the Authority; one that no longer passes the checks is logged and left out. The
     * change stream resumes from its saved position: that is where the caches start to be kept fresh from.
     */
    public void load() {
        stream.loadSavedPosition(authority);
        definitions.load();
    }

    // ---- the data path -------------------------------------------------------------------------------------------

    /** True while no cache is defined: the proxy then looks at no statement. */
    public boolean isEmpty() {
        return definitions.index().isEmpty();
    }

    /** The cache whose shape is {@code shape}, or null; allocates nothing. */
    public QueryCache find(CharSequence shape) {
        return definitions.index().find(shape);
    }

    /** Changes whenever a cache is created or dropped: what a session learnt of the shapes is then out of date. */
    public int generation() {
        return definitions.generation();
    }

    /** The database unqualified table names are read in; sessions on another one do not use the caches. */
    public String defaultDatabase() {
        return defaultDatabase;
    }

    /** The largest result that is stored. */
    public long maxEntryBytes() {
        return settings.maxEntryBytes();
    }

    /** Whether the stream keeps the caches fresh now. */
    public Freshness freshness() {
        return stream.freshness();
    }

    /** The change stream's applied position, or null before its first transaction. */
    public GtidSet streamPosition() {
        return stream.position();
    }

    /**
     * How stale a hit may be, in the worst case, in ms: the stream's lag while it keeps the caches fresh, else the
     * entry's age.
     */
    public long stalenessMillis(CachedResult entry, long nowMillis) {
        return stream.stalenessMillis(entry, nowMillis);
    }

    /**
     * A current entry for {@code key}, or null: absent, evicted by a change since its fill (then removed), or, while
     * the caches live by TTL, older than the TTL. Counts the hit or the miss.
     */
    public CachedResult lookup(EntryKey key, long nowMillis) {
        return entries.lookup(key, nowMillis);
    }

    /** A hit that could not be served (the session needs newer data): counted as a miss instead. */
    public void notServed(QueryCache cache) {
        cache.hits.decrement();
        cache.misses.increment();
    }

    /**
     * Stores a fill, unless an eviction that concerns it came since it started, its server lacked such an eviction's
     * position, or it is too large.
     *
     * @param fromPrimary   the answer came from the primary, which has every transaction the stream applied
     * @param serverLagMillis how far the filling server was behind the primary, by its position samples
     *
     * @return whether it was stored
     */
    public boolean fill(EntryKey key, CachedResult entry, boolean fromPrimary, long serverLagMillis) {
        return definitions.isDefined(key.cache()) && entries.fill(key, entry, fromPrimary, serverLagMillis);
    }

    /**
     * Refresh-ahead: once a hit finds its entry as old as its cache's {@code REFRESH EVERY} period, the entry goes to
     * the {@link Refresher} (the hit is still served). At most once per entry while that refresh is queued or runs;
     * a refresh whose answer never came (or failed) lapses after the period, and the next hit asks again.
     */
    public void refreshIfDue(EntryKey key, CachedResult entry, long nowMillis) {
        entries.refreshIfDue(key, entry, nowMillis);
    }

    /** Runs the statements of entries due for refresh-ahead again, off the caller's thread. */
    public interface Refresher {
        /** Runs {@code entry}'s statement ({@link CachedResult#rerun()}) again and fills {@code key} with it. */
        void refresh(EntryKey key, CachedResult entry);

        /** Refreshes nothing: entries live until their TTL or an eviction. */
        Refresher NONE = (key, entry) -> { };
    }

    /** Who refreshes entries ahead of their TTL; {@link Refresher#NONE} until the proxy runs. */
    public void setRefresher(Refresher refresher) {
        entries.setRefresher(refresher);
    }

    /** How many refresh workers run ({@code --cache-refresh-workers}). */
    public int refreshWorkers() {
        return settings.refreshWorkers();
    }

    /**
     * A worker's refresh ended: {@code stored} when its answer replaced the entry (through {@link #fill}), else it
     * failed or was refused; the claim then lapses after the period, so a failing server is not asked at every hit.
     */
    public void refreshed(EntryKey key, boolean stored) {
        (stored ? key.cache().refreshed : key.cache().refreshFailed).increment();
    }

    /**
     * After a {@code GRANT}, {@code REVOKE}, {@code DROP USER} or other account statement in the change stream: no
     * account is served from any cache until it has run the query on a server again.
     */
    public void forgetAccountChecks(String gtid) {
        List<QueryCache> all = snapshot();
        all.forEach(QueryCache::forgetAccountChecks);
        if (!all.isEmpty()) {
            LOG.info("cache: an account or privilege statement (GTID {}) came through the change stream; every "
                    + "account runs each cached query on a server again before it is served from the cache", gtid);
        }
    }

    /** Whether {@code account} may be served {@code cache}'s entries: it ran the query on a server lately. */
    public boolean accountChecked(QueryCache cache, String account, long nowMillis) {
        return cache.accountChecked(account, nowMillis, ACCOUNT_RECHECK);
    }

    /** {@code account} ran the query on a server without an error. */
    public void accountRan(QueryCache cache, String account, long nowMillis) {
        cache.accountRan(account, nowMillis);
    }

    // ---- the change stream ---------------------------------------------------------------------------------------

    /** The caches that read this table (shallow ones included; the caller skips them). */
    List<QueryCache> reading(String database, String table) {
        return definitions.reading(database, table);
    }

    void streamApplied(GtidSet position) {
        stream.applied(position);
    }

    /**
     * @param resumed with {@link CdcStream.State#STREAMING}: the position the stream streams from; caches whose
     *                entries may predate it (the stream started from a server's current position, or a position
     *                other than the one applied last) are emptied, so that only fills at least that new remain
     */
    void streamStateChanged(CdcStream.State state, Optional<String> server, String reason, GtidSet resumed) {
        stream.stateChanged(state, server);
        if (resumed != null && !resumed.equals(stream.position())) {
            definitions.evictAll(resumed);
            stream.applied(resumed);
        }
        if (state == CdcStream.State.SNAPSHOTTING) {
            // The position jumps past transactions that are never delivered: nothing cached can be trusted.
            definitions.evictAll(stream.position());
            LOG.info("cache: the change stream takes a snapshot; every cache was emptied");
        }
        stream.check();
        LOG.debug("cache: change stream {} {}: {}", state.displayName(), stream.server(), reason);
    }

    // ---- statements ----------------------------------------------------------------------------------------------

    /**
     * {@code CREATE CACHE}: checks the query, stores the definition, and makes the cache live.
     *
     * @return what was done, in words
     * @throws CacheException when the query cannot be cached or the name is taken
     */
    public String create(CacheStatement.Create create, String by) {
        return definitions.create(create, by);
    }

    /**
     * Checks a {@code CREATE CACHE} as {@link #create} would, without creating anything: the cache it would make,
     * named (a cluster adds the definition to its configuration first, then every instance creates it).
     *
     * @throws CacheException when the query cannot be cached or the name or shape is taken
     */
    public QueryCache define(CacheStatement.Create create) {
        return definitions.define(create);
    }

    /** {@code DROP CACHE name}. @throws CacheException when there is no such cache */
    public String drop(String name, String by) {
        return definitions.drop(name, by);
    }

    /** {@code DROP ALL CACHES}. */
    public String dropAll(String by) {
        return definitions.dropAll(by);
    }

    /** {@code SHOW CACHES}: one row per cache. */
    public Table show() {
        Freshness now = stream.freshness();
        List<List<String>> rows = new ArrayList<>();
        for (QueryCache cache : snapshot()) {
            long lastFill = cache.lastFillMillis();
            String policy = (cache.ttl().isZero() ? "no TTL" : "TTL " + cache.ttl().toSeconds() + " s")
                    + (cache.refresh().isZero() ? "" : ", refresh every " + cache.refresh().toSeconds() + " s");
            String mode = cache.shallow() ? "shallow: TTL only" : now.reason();
            rows.add(List.of(cache.name(), cache.shape().text(), String.join(", ",
                            cache.shape().tables().stream().map(TableName::toString).toList()),
                    cache.shape().keyColumn() == null ? "table" : "key " + cache.shape().keyColumn(), policy, mode,
                    Long.toString(Math.max(0, cache.entries.get())), Long.toString(Math.max(0, cache.bytes.get())),
                    Long.toString(cache.hits.sum()), Long.toString(cache.misses.sum()),
                    Long.toString(cache.evictedByChange.sum()), Long.toString(cache.evictedByTtl.sum()),
                    Long.toString(cache.evictedByMemory.sum()),
                    lastFill == 0 ? "never" : Instant.ofEpochMilli(lastFill).toString(),
                    Long.toString(cache.refreshed.sum()), Long.toString(cache.refreshFailed.sum())));
        }
        return new Table(List.of("name", "query", "tables", "eviction", "policy", "freshness", "entries", "bytes",
                "hits", "misses", "evicted_by_change", "evicted_by_ttl", "evicted_by_memory", "last_fill", "refreshes",
                "refresh_failures"), rows);
    }

    /** One counter summed over every live cache, for the metrics. */
    public long total(Counter counter) {
        long sum = 0;
        for (QueryCache cache : snapshot()) {
            sum += switch (counter) {
                case HITS -> cache.hits.sum();
                case MISSES -> cache.misses.sum();
                case EVICTED_BY_CHANGE -> cache.evictedByChange.sum();
                case EVICTED_BY_TTL -> cache.evictedByTtl.sum();
                case EVICTED_BY_MEMORY -> cache.evictedByMemory.sum();
                case ENTRIES -> Math.max(0, cache.entries.get());
                case BYTES -> Math.max(0, cache.bytes.get());
            };
        }
        return sum;
    }

    /**
     * {@code SHOW PROXIED QUERIES}: the SELECT shapes seen, most frequent first.
     *
     * @param shapes the statement digests' rows merged per shape
     */
    public Table proxiedQueries(List<ShapeDigest> shapes) {
        return proxied.table(shapes, definitions.index());
    }

    /** Every live cache, in creation order. */
    public List<QueryCache> snapshot() {
        return definitions.snapshot();
    }

    /** The query shape of a text as the caches match it, for the log and tests. */
    public String shapeOf(String select) {
        return QueryShape.of(select, SqlMode.DEFAULT, defaultDatabase).text();
    }

    @Override
    public void close() {
        entries.close();
        worker.shutdownNow();
    }
}
