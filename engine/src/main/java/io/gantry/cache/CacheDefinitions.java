package io.gantry.cache;

import io.gantry.authority.Authority;
import io.gantry.authority.StoredCache;
import io.gantry.gtid.GtidSet;
import io.gantry.route.SqlMode;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which caches are defined: their definitions as the Authority keeps them, the checks a definition must pass, and
 * the indexes the data path and the change stream find a cache by (its query shape, the tables it reads). Kept apart
 * from the entries because it changes only by {@code CREATE CACHE} and {@code DROP CACHE}, under its own lock, and
 * is read without one through immutable snapshots.
 */
final class CacheDefinitions {

    private static final Logger LOG = LoggerFactory.getLogger(QueryCaches.class);

    private final Authority authority;
    private final String defaultDatabase;
    private final TableCatalog catalog;
    private final BiPredicate<String, String> streamed;
    private final Clock clock;
    private final StreamFreshness stream;
    private final CacheEntries entries;

    // Changed under `this` by the admin thread; read without a lock through the volatile snapshots.
    private final Map<String, QueryCache> byName = new LinkedHashMap<>();
    private volatile ShapeIndex index = ShapeIndex.EMPTY;
    private volatile int generation;
    private volatile Map<String, List<QueryCache>> byTable = Map.of();

    /** The parameters are {@link QueryCaches}'s; {@code entries} loses a cache's entries when it is dropped. */
    CacheDefinitions(Authority authority, String defaultDatabase, TableCatalog catalog,
                     BiPredicate<String, String> streamed, Clock clock, StreamFreshness stream, CacheEntries entries) {
        this.authority = authority;
        this.defaultDatabase = defaultDatabase;
        this.catalog = catalog;
        this.streamed = streamed;
        this.clock = clock;
        this.stream = stream;
        this.entries = entries;
    }

    /** Loads the definitions kept in the Authority; one that no longer passes the checks is logged and left out. */
    void load() {
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

    ShapeIndex index() {
        return index;
    }

    int generation() {
        return generation;
    }

    /** Whether {@code cache} is still the one defined under its name: a fill for a dropped cache is not stored. */
    boolean isDefined(QueryCache cache) {
        return byName.get(cache.name()) == cache;
    }

    /** The caches that read this table (shallow ones included; the caller skips them). */
    List<QueryCache> reading(String database, String table) {
        List<QueryCache> caches = byTable.get(TableName.key(database, table));
        return caches == null ? List.of() : caches;
    }

    /** Every live cache, in creation order. */
    synchronized List<QueryCache> snapshot() {
        return List.copyOf(byName.values());
    }

    /** Every entry of every cache goes: a fill must be at least as new as {@code position}. */
    void evictAll(GtidSet position) {
        for (QueryCache cache : snapshot()) {
            cache.evictAll(position, clock.millis());
        }
    }

    /** See {@link QueryCaches#define}. */
    QueryCache define(CacheStatement.Create create) {
        Duration ttl = create.ttl().orElse(create.shallow() ? QueryCaches.DEFAULT_SHALLOW_TTL : Duration.ZERO);
        QueryShape analysed = QueryShape.of(create.select(), SqlMode.DEFAULT, defaultDatabase);
        String name = create.name().orElseGet(() -> "q_" + Long.toHexString(analysed.text().hashCode() & 0xFFFFFFFFL));
        QueryCache cache = build(name, create.select(), create.shallow(), ttl, create.refresh().orElse(Duration.ZERO),
                clock.instant());
        synchronized (this) {
            refuseTaken(cache);
        }
        return cache;
    }

    private void refuseTaken(QueryCache cache) {
        QueryCache sameShape = index.find(cache.shape().text());
        if (sameShape != null) {
            throw new CacheException("cache " + sameShape.name() + " already caches this query's shape");
        }
        if (byName.containsKey(cache.name())) {
            throw new CacheException("a cache named " + cache.name() + " exists already");
        }
    }

    /** See {@link QueryCaches#create}. */
    String create(CacheStatement.Create create, String by) {
        QueryCache cache = define(create);
        String name = cache.name();
        Duration ttl = cache.ttl();
        Instant now = cache.createdAt();
        synchronized (this) {
            refuseTaken(cache);
            try {
                authority.saveQueryCache(new StoredCache(name, create.select(), create.shallow(), ttl.toSeconds(),
                        cache.refresh().toSeconds(), now));
            } catch (IllegalArgumentException e) {
                throw new CacheException(e.getMessage());
            }
            register(cache);
        }
        LOG.info("cache: {} created by {}: {} (tables {}{}{})", name, by, cache.shape().text(),
                cache.shape().tables().stream().map(TableName::toString).collect(java.util.stream.Collectors.joining(", ")),
                cache.shape().keyColumn() == null ? "" : ", evicted by " + cache.shape().keyColumn(),
                create.shallow() ? ", shallow" : "");
        return "cache " + name + " created";
    }

    /** See {@link QueryCaches#drop}. */
    synchronized String drop(String name, String by) {
        QueryCache cache = byName.get(name);
        if (cache == null && authority.dropQueryCaches(name) == 0) {
            throw new CacheException("no cache named " + name + " (SHOW CACHES lists them)");
        }
        if (cache != null) {
            authority.dropQueryCaches(name);
            byName.remove(name);
            reindex();
            entries.removeAll(cache);
        }
        LOG.info("cache: {} dropped by {}", name, by);
        return "cache " + name + " dropped";
    }

    /** See {@link QueryCaches#dropAll}. */
    synchronized String dropAll(String by) {
        int count = authority.dropQueryCaches(null);
        byName.clear();
        reindex();
        entries.clear();
        LOG.info("cache: every cache dropped by {} ({})", by, count);
        return count + " caches dropped";
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
        GtidSet applied = stream.position();
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
}
