package io.gantry.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.gantry.authority.Authority;
import io.gantry.authority.StoredCache;
import io.gantry.cdc.CdcStream;
import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import io.gantry.gtid.SampledPosition;
import io.gantry.route.SqlMode;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
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
    private final TableCatalog catalog;
    private final BiPredicate<String, String> streamed;
    private final Upstreams upstreams;
    private final Clock clock;
    private final Cache<EntryKey, CachedResult> store;
    private final ScheduledExecutorService worker;
    private final ProxiedQueries proxied;
    /** Entries queued for refresh-ahead or being refreshed, and since when. */
    private final Map<EntryKey, Long> refreshing = new ConcurrentHashMap<>();
    private volatile Refresher refresher = Refresher.NONE;

    // Changed under `this` by the admin thread; read without a lock through the volatile snapshots.
    private final Map<String, QueryCache> byName = new LinkedHashMap<>();
    private volatile ShapeIndex index = ShapeIndex.EMPTY;
    private volatile int generation;
    private volatile Map<String, List<QueryCache>> byTable = Map.of();

    // The change stream's state, written by its thread (CacheInvalidation) and the freshness check.
    private volatile CdcStream.State streamState;
    private volatile String streamServer = "";
    private volatile GtidSet streamPosition;
    private volatile long caughtUpMillis;
    private volatile Freshness freshness;

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
        this.catalog = catalog;
        this.streamed = streamed;
        this.upstreams = upstreams;
        this.clock = clock;
        this.proxied = new ProxiedQueries(defaultDatabase);
        this.freshness = new Freshness(false, streamed == null ? "no change stream (--no-cdc): TTL only"
                : "the change stream has not started: TTL only");
        this.worker = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "gantry-cache");
            thread.setDaemon(true);
            return thread;
        });
        this.store = Caffeine.newBuilder()
                .maximumWeight(settings.maxBytes())
                .weigher((EntryKey key, CachedResult entry) -> entry.weight())
                .expireAfter(new Expiry<EntryKey, CachedResult>() {
                    @Override
                    public long expireAfterCreate(EntryKey key, CachedResult entry, long now) {
                        return lifetime(key.cache());
                    }

                    @Override
                    public long expireAfterUpdate(EntryKey key, CachedResult entry, long now, long current) {
                        return lifetime(key.cache());
                    }

                    @Override
                    public long expireAfterRead(EntryKey key, CachedResult entry, long now, long current) {
                        return current;
                    }
                })
                // Maintenance (eviction, the removal counters) runs on the thread that wrote: a few counter
                // updates, and no hand-off to another thread per fill.
                .executor(Runnable::run)
                .removalListener((EntryKey key, CachedResult entry, RemovalCause cause) -> removed(key, entry, cause))
                .build();
        worker.scheduleWithFixedDelay(this::checkFreshnessSafely, FRESHNESS_CHECK_MILLIS, FRESHNESS_CHECK_MILLIS,
                TimeUnit.MILLISECONDS);
    }

    /**
     * Loads the definitions kept in the Authority; one that no longer passes the checks is logged and left out. The
     * change stream resumes from its saved position: that is where the caches start to be kept fresh from.
     */
    public void load() {
        authority.loadPosition(CdcStream.STREAM).filter(saved -> !saved.gtidSet().isBlank()).ifPresent(saved -> {
            try {
                streamPosition = GtidSet.parse(saved.gtidSet(), saved.gtidSet().indexOf(':') >= 0 ? Flavour.MYSQL
                        : Flavour.MARIADB);
            } catch (IllegalArgumentException unreadable) {
                LOG.warn("cache: the saved change-stream position '{}' is unreadable: {}", saved.gtidSet(),
                        unreadable.getMessage());
            }
        });
        for (StoredCache stored : authority.queryCaches()) {
            try {
                register(build(stored.name(), stored.select(), stored.shallow(), Duration.ofSeconds(stored.ttlSeconds()),
                        Duration.ofSeconds(stored.refreshSeconds()), stored.createdAt()));
            } catch (CacheException e) {
                LOG.warn("cache: {} is not active: {}; DROP CACHE {} removes it", stored.name(), e.getMessage(),
                        stored.name());
            }
        }
        if (!byName.isEmpty()) {
            LOG.info("cache: {} caches loaded: {}", byName.size(), String.join(", ", byName.keySet()));
        }
    }

    private static long lifetime(QueryCache cache) {
        return cache.ttl().isZero() ? Long.MAX_VALUE : cache.ttl().toNanos();
    }

    // ---- the data path -------------------------------------------------------------------------------------------

    /** True while no cache is defined: the proxy then looks at no statement. */
    public boolean isEmpty() {
        return index.isEmpty();
    }

    /** The cache whose shape is {@code shape}, or null; allocates nothing. */
    public QueryCache find(CharSequence shape) {
        return index.find(shape);
    }

    /** Changes whenever a cache is created or dropped: what a session learnt of the shapes is then out of date. */
    public int generation() {
        return generation;
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
        return freshness;
    }

    /** The change stream's applied position, or null before its first transaction. */
    public GtidSet streamPosition() {
        return streamPosition;
    }

    /**
     * How stale a hit may be, in the worst case, in ms: the stream's lag while it keeps the caches fresh, else the
     * entry's age.
     */
    public long stalenessMillis(CachedResult entry, long nowMillis) {
        return freshness.live() ? Math.max(0, nowMillis - caughtUpMillis)
                : nowMillis - entry.filledMillis();
    }

    /**
     * A current entry for {@code key}, or null: absent, evicted by a change since its fill (then removed), or, while
     * the caches live by TTL, older than the TTL. Counts the hit or the miss.
     */
    public CachedResult lookup(EntryKey key, long nowMillis) {
        QueryCache cache = key.cache();
        CachedResult entry = store.getIfPresent(key);
        if (entry != null && !cache.isCurrent(entry)) {
            if (store.asMap().remove(key, entry)) {
                cache.evictedByChange.increment();
            }
            entry = null;
        }
        if (entry != null && (cache.shallow() || !freshness.live())
                && nowMillis - entry.filledMillis() >= fallbackTtl(cache).toMillis()) {
            if (store.asMap().remove(key, entry)) {
                cache.evictedByTtl.increment();
            }
            entry = null;
        }
        if (entry == null) {
            cache.misses.increment();
        } else {
            cache.hits.increment();
        }
        return entry;
    }

    /** A hit that could not be served (the session needs newer data): counted as a miss instead. */
    public void notServed(QueryCache cache) {
        cache.hits.decrement();
        cache.misses.increment();
    }

    private static Duration fallbackTtl(QueryCache cache) {
        return cache.ttl().isZero() ? DEFAULT_SHALLOW_TTL : cache.ttl();
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
        QueryCache cache = key.cache();
        if (entry.packets().length > settings.maxEntryBytes() || !cache.mayStore(entry, fromPrimary, serverLagMillis)
                || byName.get(cache.name()) != cache) {
            return false;
        }
        store.put(key, entry);
        refreshing.remove(key);
        cache.entries.incrementAndGet();
        cache.bytes.addAndGet(entry.packets().length);
        cache.filled(entry.filledMillis());
        return true;
    }

    /**
     * Refresh-ahead: once a hit finds its entry as old as its cache's {@code REFRESH EVERY} period, the entry goes to
     * the {@link Refresher} (the hit is still served). At most once per entry while that refresh is queued or runs;
     * a refresh whose answer never came (or failed) lapses after the period, and the next hit asks again.
     */
    public void refreshIfDue(EntryKey key, CachedResult entry, long nowMillis) {
        long period = key.cache().refresh().toMillis();
        if (period == 0 || entry.rerun() == null || nowMillis - entry.filledMillis() < period) {
            return;
        }
        Long claimed = refreshing.get(key);
        if (claimed != null && nowMillis - claimed < period) {
            return;
        }
        boolean claimedNow = claimed == null ? refreshing.putIfAbsent(key, nowMillis) == null
                : refreshing.replace(key, claimed, nowMillis);
        if (claimedNow) {
            refresher.refresh(key, entry);
        }
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
        this.refresher = refresher;
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

    private void removed(EntryKey key, CachedResult entry, RemovalCause cause) {
        QueryCache cache = key.cache();
        cache.entries.decrementAndGet();
        cache.bytes.addAndGet(-entry.packets().length);
        if (cause != RemovalCause.REPLACED) {
            refreshing.remove(key);
        }
        switch (cause) {
            case SIZE -> cache.evictedByMemory.increment();
            case EXPIRED -> cache.evictedByTtl.increment();
            default -> {
                // REPLACED by a newer fill, EXPLICIT: counted where they are removed, or a drop
            }
        }
    }

    // ---- the change stream ---------------------------------------------------------------------------------------

    /** The caches that read this table (shallow ones included; the caller skips them). */
    List<QueryCache> reading(String database, String table) {
        List<QueryCache> caches = byTable.get(TableName.key(database, table));
        return caches == null ? List.of() : caches;
    }

    void streamApplied(GtidSet position) {
        streamPosition = position;
    }

    /**
     * @param resumed with {@link CdcStream.State#STREAMING}: the position the stream streams from; caches whose
     *                entries may predate it (the stream started from a server's current position, or a position
     *                other than the one applied last) are emptied, so that only fills at least that new remain
     */
    void streamStateChanged(CdcStream.State state, Optional<String> server, String reason, GtidSet resumed) {
        streamState = state;
        streamServer = server.orElse("");
        if (resumed != null && !resumed.equals(streamPosition)) {
            for (QueryCache cache : snapshot()) {
                cache.evictAll(resumed, clock.millis());
            }
            streamPosition = resumed;
        }
        if (state == CdcStream.State.SNAPSHOTTING) {
            // The position jumps past transactions that are never delivered: nothing cached can be trusted.
            for (QueryCache cache : snapshot()) {
                cache.evictAll(streamPosition, clock.millis());
            }
            LOG.info("cache: the change stream takes a snapshot; every cache was emptied");
        }
        checkFreshness();
        LOG.debug("cache: change stream {} {}: {}", state.displayName(), streamServer, reason);
    }

    private void checkFreshnessSafely() {
        try {
            checkFreshness();
        } catch (RuntimeException e) {
            LOG.error("cache: the freshness check failed: {}", e.toString(), e);
        }
    }

    private synchronized void checkFreshness() {
        long now = clock.millis();
        Freshness next;
        if (streamed == null) {
            next = freshness;
        } else if (streamState != CdcStream.State.STREAMING) {
            next = new Freshness(false, "the change stream is " + (streamState == null ? "not started"
                    : streamState.displayName()) + ": TTL only");
        } else {
            Optional<UpstreamServer> primary = upstreams.primary();
            SampledPosition sample = primary.map(UpstreamServer::position).orElse(null);
            GtidSet applied = streamPosition;
            if (sample != null && applied != null && applied.flavour() == sample.executed().flavour()
                    && applied.contains(sample.executed())) {
                caughtUpMillis = Math.max(caughtUpMillis, sample.sampledAt().toEpochMilli());
            } else if (sample != null && applied == null && sample.executed().isEmpty()) {
                caughtUpMillis = Math.max(caughtUpMillis, sample.sampledAt().toEpochMilli());
            }
            long lag = now - caughtUpMillis;
            if (primary.isEmpty()) {
                next = new Freshness(false, "no primary to measure the change stream's lag by: TTL only");
            } else if (lag > settings.maxStreamLag().toMillis()) {
                next = new Freshness(false, "the change stream from " + streamServer + " is " + lag
                        + " ms behind the primary (over --cache-max-stream-lag-ms=" + settings.maxStreamLag().toMillis()
                        + "): TTL only");
            } else {
                next = new Freshness(true, "kept fresh by the change stream from " + streamServer);
            }
        }
        Freshness was = freshness;
        if (was.live() != next.live()) {
            LOG.info("cache: {}", next.reason());
        }
        freshness = next;
    }

    // ---- statements ----------------------------------------------------------------------------------------------

    /**
     * {@code CREATE CACHE}: checks the query, stores the definition, and makes the cache live.
     *
     * @return what was done, in words
     * @throws CacheException when the query cannot be cached or the name is taken
     */
    public String create(CacheStatement.Create create, String by) {
        Instant now = clock.instant();
        Duration ttl = create.ttl().orElse(create.shallow() ? DEFAULT_SHALLOW_TTL : Duration.ZERO);
        QueryShape analysed = QueryShape.of(create.select(), SqlMode.DEFAULT, defaultDatabase);
        String name = create.name().orElseGet(() -> "q_" + Long.toHexString(analysed.text().hashCode() & 0xFFFFFFFFL));
        QueryCache cache = build(name, create.select(), create.shallow(), ttl, create.refresh().orElse(Duration.ZERO),
                now);
        synchronized (this) {
            QueryCache sameShape = index.find(cache.shape().text());
            if (sameShape != null) {
                throw new CacheException("cache " + sameShape.name() + " already caches this query's shape");
            }
            if (byName.containsKey(name)) {
                throw new CacheException("a cache named " + name + " exists already");
            }
            try {
                authority.saveQueryCache(new StoredCache(name, create.select(), create.shallow(), ttl.toSeconds(),
                        cache.refresh().toSeconds(), now));
            } catch (IllegalArgumentException e) {
                throw new CacheException(e.getMessage());
            }
            register(cache);
        }
        LOG.info("cache: {} created by {}: {} (tables {}{}{})", name, by, cache.shape().text(), cache.shape().tables(),
                cache.shape().keyColumn() == null ? "" : ", evicted by " + cache.shape().keyColumn(),
                create.shallow() ? ", shallow" : "");
        return "cache " + name + " created";
    }

    /** {@code DROP CACHE name}. @throws CacheException when there is no such cache */
    public synchronized String drop(String name, String by) {
        QueryCache cache = byName.get(name);
        if (cache == null && authority.dropQueryCaches(name) == 0) {
            throw new CacheException("no cache named " + name + " (SHOW CACHES lists them)");
        }
        if (cache != null) {
            authority.dropQueryCaches(name);
            byName.remove(name);
            reindex();
            store.asMap().keySet().removeIf(key -> key.cache() == cache);
            refreshing.keySet().removeIf(key -> key.cache() == cache);
        }
        LOG.info("cache: {} dropped by {}", name, by);
        return "cache " + name + " dropped";
    }

    /** {@code DROP ALL CACHES}. */
    public synchronized String dropAll(String by) {
        int count = authority.dropQueryCaches(null);
        byName.clear();
        reindex();
        store.invalidateAll();
        refreshing.clear();
        LOG.info("cache: every cache dropped by {} ({})", by, count);
        return count + " caches dropped";
    }

    /** {@code SHOW CACHES}: one row per cache. */
    public Table show() {
        Freshness now = freshness;
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

    /** {@code SHOW PROXIED QUERIES}: the shapes seen, most frequent first. */
    public Table proxiedQueries() {
        return proxied.table(index);
    }

    /** Where sessions record the statements they proxied. */
    public ProxiedQueries proxied() {
        return proxied;
    }

    /** Every live cache, in creation order. */
    public synchronized List<QueryCache> snapshot() {
        return List.copyOf(byName.values());
    }

    /** The query shape of a text as the caches match it, for the log and tests. */
    public String shapeOf(String select) {
        return QueryShape.of(select, SqlMode.DEFAULT, defaultDatabase).text();
    }

    private QueryCache build(String name, String select, boolean shallow, Duration ttl, Duration refresh,
                             Instant createdAt) {
        if (name.isBlank() || name.length() > 128) {
            throw new CacheException("a cache name must have 1 to 128 characters");
        }
        QueryShape shape = QueryShape.of(select, SqlMode.DEFAULT, defaultDatabase);
        boolean keyed = shape.keyColumn() != null;
        for (TableName table : shape.tables()) {
            TableCatalog.TableFacts facts = catalog.describe(table);
            if (!facts.exists()) {
                throw new CacheException("this query cannot be cached: table " + table + " does not exist");
            }
            if (!shallow && facts.view()) {
                throw new CacheException("this query cannot be cached: " + table + " is a view, whose changes the "
                        + "change stream does not show (CREATE SHALLOW CACHE caches it by TTL)");
            }
            if (!shallow && streamed != null && !streamed.test(table.database(), table.table())) {
                throw new CacheException("this query cannot be cached: the change stream does not carry " + table
                        + " (--cdc-tables); CREATE SHALLOW CACHE caches it by TTL");
            }
            keyed &= facts.integerKey() != null && facts.integerKey().equalsIgnoreCase(shape.keyColumn());
        }
        return new QueryCache(name, select, keyed ? shape : shape.withoutKey(), shallow, ttl, refresh, createdAt);
    }

    private synchronized void register(QueryCache cache) {
        GtidSet applied = streamPosition;
        if (applied != null) {
            // What the stream applied before the cache existed evicted nothing of it: a fill must be at least as new.
            cache.evictAll(applied, clock.millis());
        }
        byName.put(cache.name(), cache);
        reindex();
    }

    private void reindex() {
        Map<String, List<QueryCache>> tables = new HashMap<>();
        for (QueryCache cache : byName.values()) {
            for (TableName table : cache.shape().tables()) {
                tables.computeIfAbsent(table.key(), k -> new ArrayList<>()).add(cache);
            }
        }
        tables.replaceAll((k, v) -> List.copyOf(v));
        byTable = Map.copyOf(tables);
        index = ShapeIndex.of(byName.values());
        generation++;
    }

    @Override
    public void close() {
        store.invalidateAll();
        store.cleanUp();
        worker.shutdownNow();
    }
}
