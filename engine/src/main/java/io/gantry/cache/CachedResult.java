package io.gantry.cache;

import io.gantry.gtid.GtidSet;
import java.util.Objects;

/**
 * One cached answer: the result packets exactly as the client got them (framed, sequence ids from 1, as every
 * response to a new command starts), and what its freshness is judged by.
 *
 * @param packets      the framed response packets
 * @param filledAt     the position the filling server had before it ran the query: the answer is at least this new
 * @param ticket       the cache's eviction count when the fill started ({@link QueryCache#fillTicket()})
 * @param filledMillis when the fill started, by the wall clock
 * @param key          the key column's value the entry is for, or null when the cache has no key or the value is
 *                     not an integer
 * @param rerun        how a refresh worker runs the statement again; null when its cache does not refresh ahead
 */
public record CachedResult(byte[] packets, GtidSet filledAt, long ticket, long filledMillis, Long key, Rerun rerun) {

    public CachedResult {
        Objects.requireNonNull(packets, "packets");
        Objects.requireNonNull(filledAt, "filledAt");
    }

    /** An entry of a cache that does not refresh ahead. */
    public CachedResult(byte[] packets, GtidSet filledAt, long ticket, long filledMillis, Long key) {
        this(packets, filledAt, ticket, filledMillis, key, null);
    }

    /** What the entry weighs in the store: its bytes and a fixed overhead for the objects around them. */
    int weight() {
        return packets.length + 128 + (rerun == null ? 0 : rerun.weight());
    }
}
