package io.gantry.authority;

import static io.gantry.authority.SqlValues.instant;
import static io.gantry.authority.SqlValues.utc;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The query caches' definitions, table {@code GANTRY.QUERY_CACHES}, so that caches made with {@code CREATE CACHE}
 * come back after a restart (their entries do not).
 */
final class QueryCacheStore {

    private final AuthorityDatabase database;

    QueryCacheStore(AuthorityDatabase database) {
        this.database = database;
    }

    /** The definitions, oldest first (then by name). */
    List<StoredCache> list() {
        return database.read("read the query caches", connection -> {
            List<StoredCache> caches = new ArrayList<>();
            try (Statement statement = connection.createStatement();
                 ResultSet rows = statement.executeQuery("SELECT name, select_text, shallow, ttl_seconds, "
                         + "refresh_seconds, created_at FROM GANTRY.QUERY_CACHES ORDER BY created_at, name")) {
                while (rows.next()) {
                    caches.add(new StoredCache(rows.getString(1), rows.getString(2), rows.getBoolean(3),
                            rows.getLong(4), rows.getLong(5), instant(rows, 6)));
                }
            }
            return caches;
        });
    }

    /** @throws IllegalArgumentException when a cache of that name exists */
    void save(StoredCache cache) {
        Objects.requireNonNull(cache, "cache");
        database.write("store the query cache " + cache.name(), connection -> {
            try (PreparedStatement exists = connection.prepareStatement(
                    "SELECT 1 FROM GANTRY.QUERY_CACHES WHERE name = ?")) {
                exists.setString(1, cache.name());
                try (ResultSet rows = exists.executeQuery()) {
                    if (rows.next()) {
                        throw new IllegalArgumentException("a cache named " + cache.name() + " exists already");
                    }
                }
            }
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO GANTRY.QUERY_CACHES(name, "
                    + "select_text, shallow, ttl_seconds, refresh_seconds, created_at) VALUES (?, ?, ?, ?, ?, ?)")) {
                insert.setString(1, cache.name());
                insert.setString(2, cache.select());
                insert.setBoolean(3, cache.shallow());
                insert.setLong(4, cache.ttlSeconds());
                insert.setLong(5, cache.refreshSeconds());
                insert.setObject(6, utc(cache.createdAt()));
                insert.executeUpdate();
            }
            return null;
        });
    }

    /**
     * @param name the cache to remove, or null for all of them
     * @return how many were removed
     */
    int drop(String name) {
        return database.write(name == null ? "drop every query cache" : "drop the query cache " + name, connection -> {
            if (name == null) {
                try (Statement statement = connection.createStatement()) {
                    return statement.executeUpdate("DELETE FROM GANTRY.QUERY_CACHES");
                }
            }
            try (PreparedStatement delete = connection.prepareStatement(
                    "DELETE FROM GANTRY.QUERY_CACHES WHERE name = ?")) {
                delete.setString(1, name);
                return delete.executeUpdate();
            }
        });
    }
}
