package io.gantry.admin;

import io.gantry.cache.CacheException;
import io.gantry.cache.CacheStatement;
import io.gantry.cache.QueryCache;
import io.gantry.cache.QueryCaches;
import io.gantry.cluster.LocalConfiguration;
import io.gantry.cluster.SharedConfiguration;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This instance's copy of a cluster's shared configuration: its server lists ({@link ServerLists}) and its query
 * caches' definitions ({@link QueryCaches}, once they are loaded). A version is applied to both: lists and weights
 * as {@link ServerLists#apply} says, caches by name (one the version lacks or defines otherwise is dropped, one it
 * has and this instance lacks is created). A cache this instance cannot create (a table its catalogue does not
 * have) is left out with a warning: the version still applies, so every instance keeps one history.
 */
final class LocalCopy implements LocalConfiguration {

    private static final Logger LOG = LoggerFactory.getLogger(LocalCopy.class);

    private final ServerLists lists;
    private volatile QueryCaches caches;

    LocalCopy(ServerLists lists) {
        this.lists = lists;
    }

    void useCaches(QueryCaches queryCaches) {
        this.caches = queryCaches;
    }

    @Override
    public SharedConfiguration current() {
        SharedConfiguration mine = lists.current();
        QueryCaches known = caches;
        return known == null ? mine : new SharedConfiguration(mine.proxy(), mine.cdc(), known.snapshot().stream()
                .map(LocalCopy::shared).toList());
    }

    @Override
    public void apply(SharedConfiguration next, String reason) {
        lists.apply(next, reason);
        QueryCaches known = caches;
        if (known != null) {
            applyCaches(known, next, reason);
        }
    }

    private static void applyCaches(QueryCaches known, SharedConfiguration next, String reason) {
        Map<String, SharedConfiguration.Cache> have = new LinkedHashMap<>();
        for (QueryCache cache : known.snapshot()) {
            have.put(cache.name(), shared(cache));
        }
        Map<String, SharedConfiguration.Cache> want = new LinkedHashMap<>();
        next.caches().forEach(cache -> want.put(cache.name(), cache));
        for (Map.Entry<String, SharedConfiguration.Cache> held : have.entrySet()) {
            if (!held.getValue().equals(want.get(held.getKey()))) {
                known.drop(held.getKey(), reason);
            }
        }
        for (SharedConfiguration.Cache cache : want.values()) {
            if (cache.equals(have.get(cache.name()))) {
                continue;
            }
            try {
                known.create(create(cache), reason);
            } catch (CacheException | IllegalArgumentException e) {
                LOG.warn("cluster: the cache {} of the shared configuration cannot be created on this instance ({}); "
                        + "the instance serves without it", cache.name(), e.getMessage());
            }
        }
    }

    static SharedConfiguration.Cache shared(QueryCache cache) {
        return new SharedConfiguration.Cache(cache.name(), cache.select(), cache.shallow(), cache.ttl().toSeconds(),
                cache.refresh().toSeconds());
    }

    private static CacheStatement.Create create(SharedConfiguration.Cache cache) {
        return new CacheStatement.Create(Optional.of(cache.name()), cache.shallow(),
                Optional.of(Duration.ofSeconds(cache.ttlSeconds())),
                cache.refreshSeconds() > 0 ? Optional.of(Duration.ofSeconds(cache.refreshSeconds())) : Optional.empty(),
                cache.select());
    }
}
