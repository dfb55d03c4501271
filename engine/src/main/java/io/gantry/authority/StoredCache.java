package io.gantry.authority;

import java.time.Instant;
import java.util.Objects;

/**
 * A query cache's definition as the Authority keeps it, so that it survives restarts (its entries do not).
 *
 * @param name           the cache's name, unique
 * @param select         the query as written in {@code CREATE CACHE ... FROM}
 * @param shallow        kept fresh by its TTL alone
 * @param ttlSeconds     entries' lifetime, 0 for none
 * @param refreshSeconds refresh-ahead period, 0 for none
 * @param createdAt      when it was created
 */
public record StoredCache(String name, String select, boolean shallow, long ttlSeconds, long refreshSeconds,
                          Instant createdAt) {

    public StoredCache {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(select, "select");
        Objects.requireNonNull(createdAt, "createdAt");
    }
}
