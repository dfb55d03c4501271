package io.gantry.cache;

import java.time.Duration;
import java.util.Objects;

/**
 * How the query caches run.
 *
 * @param maxBytes       {@code --cache-max-bytes}: the memory all entries may take together, by their result
 *                       bytes (default 256 MiB); past it the least valuable entries are evicted
 * @param maxEntryBytes  {@code --cache-max-entry-bytes}: a result larger than this is never cached (default 1 MiB)
 * @param maxStreamLag   {@code --cache-max-stream-lag-ms}: when the change stream is further behind the primary
 *                       than this (or stopped, or down), caches fall back to their TTL (default 1000 ms)
 * @param refreshWorkers {@code --cache-refresh-workers}: how many workers run the statements of entries due for
 *                       refresh-ahead ({@code REFRESH EVERY}), each one at a time (1 to {@value #MAX_REFRESH_WORKERS},
 *                       default 2)
 */
public record CacheSettings(long maxBytes, long maxEntryBytes, Duration maxStreamLag, int refreshWorkers) {

    /** The most refresh workers {@code --cache-refresh-workers} allows. */
    public static final int MAX_REFRESH_WORKERS = 64;

    /** The defaults of {@code gantry run}. */
    public static final CacheSettings DEFAULTS = new CacheSettings(256L << 20, 1L << 20, Duration.ofMillis(1000), 2);

    public CacheSettings {
        Objects.requireNonNull(maxStreamLag, "maxStreamLag");
        if (maxBytes < 0) {
            throw new IllegalArgumentException("--cache-max-bytes must be 0 (no caching) or more, not " + maxBytes);
        }
        if (maxEntryBytes < 1) {
            throw new IllegalArgumentException("--cache-max-entry-bytes must be at least 1, not " + maxEntryBytes);
        }
        if (maxStreamLag.isNegative() || maxStreamLag.isZero()) {
            throw new IllegalArgumentException("--cache-max-stream-lag-ms must be positive, not "
                    + maxStreamLag.toMillis());
        }
        if (refreshWorkers < 1 || refreshWorkers > MAX_REFRESH_WORKERS) {
            throw new IllegalArgumentException("--cache-refresh-workers must be 1 to " + MAX_REFRESH_WORKERS + ", not "
                    + refreshWorkers);
        }
    }
}
