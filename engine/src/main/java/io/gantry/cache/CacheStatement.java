package io.gantry.cache;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A query-cache statement, in Readyset's syntax, as {@link CacheStatements#parse} recognises it. The admin SQL runs
 * them (on the proxy port for {@code --admin-users}, and on the admin socket).
 */
public sealed interface CacheStatement {

    /**
     * {@code CREATE [SHALLOW] CACHE [name] [POLICY TTL n SECONDS [REFRESH EVERY n SECONDS]] FROM <select>}.
     *
     * @param name    the cache's name; empty for one Gantry makes from the query's shape
     * @param shallow kept fresh by its TTL alone, never by the change stream
     * @param ttl     how long an entry lives after its fill; empty for no limit (a shallow cache then has
     *                {@link QueryCaches#DEFAULT_SHALLOW_TTL})
     * @param refresh with a TTL: an entry hit when older than this is filled again in the background while it is
     *                still served
     * @param select  the query, as written after {@code FROM}
     */
    record Create(Optional<String> name, boolean shallow, Optional<Duration> ttl, Optional<Duration> refresh,
                  String select) implements CacheStatement {

        public Create {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(ttl, "ttl");
            Objects.requireNonNull(refresh, "refresh");
            Objects.requireNonNull(select, "select");
            if (refresh.isPresent() && (ttl.isEmpty() || refresh.get().compareTo(ttl.get()) >= 0)) {
                throw new IllegalArgumentException("REFRESH EVERY must be shorter than the TTL");
            }
        }
    }

    /** {@code DROP CACHE name}. */
    record Drop(String name) implements CacheStatement {

        public Drop {
            Objects.requireNonNull(name, "name");
        }
    }

    /** {@code DROP ALL CACHES}. */
    record DropAll() implements CacheStatement {
    }

    /** {@code SHOW CACHES}. */
    record Show() implements CacheStatement {
    }

    /** {@code SHOW PROXIED QUERIES}. */
    record ShowProxied() implements CacheStatement {
    }

    /**
     * Text meant as a cache statement but malformed.
     *
     * @param message what was expected and what was found
     */
    record Invalid(String message) implements CacheStatement {

        public Invalid {
            Objects.requireNonNull(message, "message");
        }
    }
}
