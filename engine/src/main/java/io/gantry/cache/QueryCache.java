package io.gantry.cache;

import io.gantry.gtid.GtidSet;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * One live cache: its definition, the eviction state its entries are judged by, its account checks and counters.
 *
 * <p><b>Freshness.</b> Evictions are counted: a row change to a table the query reads advances the count and marks
 * the whole cache (or, for a key-shaped cache, the changed key) evicted at that count; an entry counts only if its
 * fill started at or after the latest eviction that concerns it. Evicting is therefore O(1) on the change stream's
 * thread, whatever the number of entries; the entries left behind are removed at their next look-up or by a sweep.
 * A fill that started before an eviction can never be stored as current, and a fill is stored only when the server
 * it came from had at least the position of the evictions that concern it ({@link #mayStore}).
 *
 * <p>Written by the change stream's thread (evictions) and read by the event loops (look-ups, fills).
 */
public final class QueryCache {

    /** A key-evicted map larger than this is folded into one eviction of the whole cache. */
    private static final int MAX_EVICTED_KEYS = 100_000;

    private final String name;
    private final String select;
    private final QueryShape shape;
    private final boolean shallow;
    private final Duration ttl;
    private final Duration refresh;
    private final Instant createdAt;

    /**
     * How long after a server reports a transaction (in its binlog, or in a position sample) a query there may still
     * not see it: a server writes its binlog, which the change stream and the samples read, before the storage engine
     * makes the transaction visible. A fill that started sooner than this (plus a replica's lag) after the eviction it
     * is judged by is not stored.
     */
    static final long VISIBILITY_MARGIN_MILLIS = 50;

    /** An eviction of one key: its count, the position of the change that caused it, and when it came. */
    private record KeyEviction(long at, GtidSet position, long atMillis) {
    }

    private volatile long evictions;
    private volatile long wholeEvictedAt;
    private volatile GtidSet wholeEvictionPosition;
    private volatile long wholeEvictionMillis;
    private volatile long lastEvictionMillis;
    /** The latest eviction of any single key: what an entry without a key is judged by as well. */
    private volatile long anyKeyEvictedAt;
    private final Map<Long, KeyEviction> keyEvictions = new ConcurrentHashMap<>();
    private volatile GtidSet lastEvictionPosition;
    /** Accounts that ran the query on a server, and when; a cached answer is only served to them. */
    private final Map<String, Long> accountCheckedAt = new ConcurrentHashMap<>();

    final LongAdder hits = new LongAdder();
    final LongAdder misses = new LongAdder();
    final LongAdder evictedByChange = new LongAdder();
    final LongAdder evictedByTtl = new LongAdder();
    final LongAdder evictedByMemory = new LongAdder();
    final LongAdder refreshed = new LongAdder();
    final LongAdder refreshFailed = new LongAdder();
    final AtomicLong entries = new AtomicLong();
    final AtomicLong bytes = new AtomicLong();
    private volatile long lastFillMillis;

    QueryCache(String name, String select, QueryShape shape, boolean shallow, Duration ttl, Duration refresh,
               Instant createdAt) {
        this.name = name;
        this.select = select;
        this.shape = shape;
        this.shallow = shallow;
        this.ttl = ttl;
        this.refresh = refresh;
        this.createdAt = createdAt;
    }

    public String name() {
        return name;
    }

    public String select() {
        return select;
    }

    public QueryShape shape() {
        return shape;
    }

    /** Kept fresh by the TTL alone, never by the change stream. */
    public boolean shallow() {
        return shallow;
    }

    /** How long an entry lives after its fill; zero for no limit. */
    public Duration ttl() {
        return ttl;
    }

    /** The refresh-ahead period; zero for none. */
    public Duration refresh() {
        return refresh;
    }

    public Instant createdAt() {
        return createdAt;
    }

    // ---- freshness -----------------------------------------------------------------------------------------------

    /** Taken when a fill starts: the entry it makes is current only if no eviction concerning it came since. */
    public long fillTicket() {
        return evictions;
    }

    /** Whether an entry is still current: no eviction of the cache, or of its key, since its fill started. */
    public boolean isCurrent(CachedResult entry) {
        return isCurrent(entry.ticket(), entry.key());
    }

    private boolean isCurrent(long ticket, Long key) {
        if (ticket < wholeEvictedAt) {
            return false;
        }
        if (key == null) {
            return ticket >= anyKeyEvictedAt;
        }
        KeyEviction eviction = keyEvictions.get(key);
        return eviction == null || ticket >= eviction.at();
    }

    /**
     * Whether a fill may be stored: no eviction concerning it since its ticket, and its server had the position of
     * the evictions that concern it (the cache's, and its key's), so that the answer cannot bring back a value an
     * eviction removed. The primary has every transaction the change stream applied (the stream reads the primary
     * or its replicas): a fill from it needs no position.
     *
     * @param entry           the fill; its {@link CachedResult#filledAt()} is what its server had executed before
     *                        the query
     * @param serverLagMillis how far the filling server was behind the primary (0 for the primary)
     */
    boolean mayStore(CachedResult entry, boolean fromPrimary, long serverLagMillis) {
        if (!isCurrent(entry.ticket(), entry.key())) {
            return false;
        }
        KeyEviction eviction = entry.key() == null ? null : keyEvictions.get(entry.key());
        long evictedMillis = entry.key() == null ? lastEvictionMillis
                : Math.max(wholeEvictionMillis, eviction == null ? 0 : eviction.atMillis());
        // A replica applies the change about its lag later than the stream saw it, and only then may hide it briefly.
        long margin = VISIBILITY_MARGIN_MILLIS + (fromPrimary ? 0 : Math.max(0, serverLagMillis));
        if (evictedMillis != 0 && entry.filledMillis() < evictedMillis + margin) {
            return false;
        }
        if (fromPrimary) {
            return true;
        }
        GtidSet serverPosition = entry.filledAt();
        return entry.key() == null ? holds(serverPosition, lastEvictionPosition)
                : holds(serverPosition, wholeEvictionPosition) && (eviction == null
                || holds(serverPosition, eviction.position()));
    }

    private static boolean holds(GtidSet serverPosition, GtidSet evictedAt) {
        return evictedAt == null || (evictedAt.flavour() == serverPosition.flavour()
                && serverPosition.contains(evictedAt));
    }

    /** A change to a table the query reads: every entry goes. Called by the change stream's thread only. */
    void evictAll(GtidSet position, long nowMillis) {
        lastEvictionPosition = position;
        wholeEvictionPosition = position;
        wholeEvictionMillis = nowMillis;
        lastEvictionMillis = nowMillis;
        long at = evictions + 1;
        evictions = at;
        wholeEvictedAt = at;
        keyEvictions.clear();
    }

    /** A change to the row with this key: the entries for it go. Called by the change stream's thread only. */
    void evictKey(long key, GtidSet position, long nowMillis) {
        if (keyEvictions.size() >= MAX_EVICTED_KEYS) {
            evictAll(position, nowMillis);
            return;
        }
        lastEvictionPosition = position;
        lastEvictionMillis = nowMillis;
        long at = evictions + 1;
        evictions = at;
        keyEvictions.put(key, new KeyEviction(at, position, nowMillis));
        anyKeyEvictedAt = at;
    }

    /** The position of the last eviction, or null if none happened since Gantry started. */
    public GtidSet lastEvictionPosition() {
        return lastEvictionPosition;
    }

    // ---- accounts ------------------------------------------------------------------------------------------------

    /** Whether {@code account} ran the query on a server within {@code recheck} before {@code nowMillis}. */
    boolean accountChecked(String account, long nowMillis, Duration recheck) {
        Long at = accountCheckedAt.get(account);
        return at != null && nowMillis - at < recheck.toMillis();
    }

    void accountRan(String account, long nowMillis) {
        accountCheckedAt.put(account, nowMillis);
    }

    /** Every account must run the query on a server again before it is served from the cache. */
    void forgetAccountChecks() {
        accountCheckedAt.clear();
    }

    // ---- counters ------------------------------------------------------------------------------------------------

    void filled(long atMillis) {
        lastFillMillis = atMillis;
    }

    /** Refresh-ahead runs by the workers so far: those whose answer replaced the entry, or those that did not. */
    public long refreshes(boolean stored) {
        return stored ? refreshed.sum() : refreshFailed.sum();
    }

    /** When the last fill was stored, or 0 for never. */
    long lastFillMillis() {
        return lastFillMillis;
    }
}
