package io.gantry.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.gantry.cache.QueryCaches.EntryKey;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The entries of every cache in one memory-bounded store (Caffeine, weighted by result bytes): the look-ups, fills
 * and refresh-ahead claims of the data path, and the counters they move. Kept apart from the definitions, which
 * change only by statement, because this is what every cached SELECT touches.
 */
final class CacheEntries {

    private final long maxEntryBytes;
    private final StreamFreshness stream;
    private final Cache<EntryKey, CachedResult> store;
    /** Entries queued for refresh-ahead or being refreshed, and since when. */
    private final Map<EntryKey, Long> refreshing = new ConcurrentHashMap<>();
    private volatile QueryCaches.Refresher refresher = QueryCaches.Refresher.NONE;

    CacheEntries(CacheSettings settings, StreamFreshness stream) {
        this.maxEntryBytes = settings.maxEntryBytes();
        this.stream = stream;
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
    }

    private static long lifetime(QueryCache cache) {
        return cache.ttl().isZero() ? Long.MAX_VALUE : cache.ttl().toNanos();
    }

    /** See {@link QueryCaches#lookup}. */
    CachedResult lookup(EntryKey key, long nowMillis) {
        QueryCache cache = key.cache();
        CachedResult entry = store.getIfPresent(key);
        if (entry != null && !cache.isCurrent(entry)) {
            if (store.asMap().remove(key, entry)) {
                cache.evictedByChange.increment();
            }
            entry = null;
        }
        if (entry != null && (cache.shallow() || !stream.freshness().live())
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

    private static Duration fallbackTtl(QueryCache cache) {
        return cache.ttl().isZero() ? QueryCaches.DEFAULT_SHALLOW_TTL : cache.ttl();
    }

    /** See {@link QueryCaches#fill}; the caller has checked that the entry's cache is still defined. */
    boolean fill(EntryKey key, CachedResult entry, boolean fromPrimary, long serverLagMillis) {
        QueryCache cache = key.cache();
        if (entry.packets().length > maxEntryBytes || !cache.mayStore(entry, fromPrimary, serverLagMillis)) {
            return false;
        }
        store.put(key, entry);
        refreshing.remove(key);
        cache.entries.incrementAndGet();
        cache.bytes.addAndGet(entry.packets().length);
        cache.filled(entry.filledMillis());
        return true;
    }

    /** See {@link QueryCaches#refreshIfDue}. */
    void refreshIfDue(EntryKey key, CachedResult entry, long nowMillis) {
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

    void setRefresher(QueryCaches.Refresher refresher) {
        this.refresher = refresher;
    }

    /** Removes the entries of a dropped cache, and their refresh claims. */
    void removeAll(QueryCache cache) {
        store.asMap().keySet().removeIf(key -> key.cache() == cache);
        refreshing.keySet().removeIf(key -> key.cache() == cache);
    }

    /** Removes every entry and every refresh claim. */
    void clear() {
        store.invalidateAll();
        refreshing.clear();
    }

    void close() {
        store.invalidateAll();
        store.cleanUp();
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
}
