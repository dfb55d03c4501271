package io.gantry.proxy;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The accounts that may use the {@code caching_sha2_password} fast path: those that completed a full
 * authentication since Gantry started, as in MySQL's own authentication cache.
 */
final class CachingSha2Cache {

    private final Set<String> accounts = ConcurrentHashMap.newKeySet();

    boolean contains(String user) {
        return accounts.contains(user);
    }

    void add(String user) {
        accounts.add(user);
    }
}
