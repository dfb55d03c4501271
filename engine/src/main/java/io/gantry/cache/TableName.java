package io.gantry.cache;

import java.util.Locale;
import java.util.Objects;

/**
 * A table a cached query reads, as {@code database.table}. Matched against the change stream's row changes without
 * regard to case: a cache evicted for a table that differs only in case loses entries, never freshness.
 */
public record TableName(String database, String table) {

    public TableName {
        Objects.requireNonNull(database, "database");
        Objects.requireNonNull(table, "table");
    }

    /** The key row changes are looked up by: {@code database.table}, lower case. */
    public String key() {
        return key(database, table);
    }

    static String key(String database, String table) {
        return (database + "." + table).toLowerCase(Locale.ROOT);
    }

    @Override
    public String toString() {
        return database + "." + table;
    }
}
