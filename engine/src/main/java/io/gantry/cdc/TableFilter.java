package io.gantry.cdc;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Which tables the change stream passes on ({@code --cdc-tables db.t1,db.t2}): either the listed tables, or, when
 * none are listed, every table of the service database, including tables created later.
 *
 * <p>Names compare without regard to case, as on servers with {@code lower_case_table_names} 1 or 2; on a server
 * with case-sensitive names two tables that differ only in case would both pass, which is the safe side for a
 * change feed.
 */
public final class TableFilter {

    /** A table, by database and name. */
    public record Table(String database, String name) {
        @Override
        public String toString() {
            return database + "." + name;
        }
    }

    private final String database;
    private final List<Table> tables;
    private final Set<String> keys;
    /** Tables whose changes are noticed but not passed on (Gantry's own, such as the cluster's versions). */
    private final Set<String> watched;

    private TableFilter(String database, List<Table> tables, Set<String> watched) {
        this.database = database;
        this.tables = List.copyOf(tables);
        Set<String> k = new LinkedHashSet<>();
        for (Table table : tables) {
            k.add(key(table.database(), table.name()));
        }
        this.keys = Collections.unmodifiableSet(k);
        this.watched = Set.copyOf(watched);
    }

    /** Every table of {@code database}. */
    public static TableFilter allOf(String database) {
        if (database == null || database.isBlank()) {
            throw new IllegalArgumentException("the change stream needs a database: give one in the server URL");
        }
        return new TableFilter(database, List.of(), Set.of());
    }

    /**
     * The tables of {@code --cdc-tables}: comma separated {@code database.table} entries, blanks around entries
     * allowed. An empty or blank text means {@link #allOf(String) every table of the service database}.
     *
     * @throws IllegalArgumentException naming the entry that is not {@code database.table}
     */
    public static TableFilter parse(String text, String serviceDatabase) {
        if (text == null || text.isBlank()) {
            return allOf(serviceDatabase);
        }
        List<Table> tables = new ArrayList<>();
        for (String raw : text.split(",", -1)) {
            String entry = raw.strip();
            int dot = entry.indexOf('.');
            if (dot <= 0 || dot == entry.length() - 1 || entry.indexOf('.', dot + 1) >= 0
                    || entry.chars().anyMatch(c -> Character.isWhitespace(c) || c == '`')) {
                throw new IllegalArgumentException("--cdc-tables: '" + entry + "' is not database.table (expected "
                        + "a comma-separated list such as app.orders,app.customers)");
            }
            tables.add(new Table(entry.substring(0, dot), entry.substring(dot + 1)));
        }
        return new TableFilter(serviceDatabase, tables, Set.of());
    }

    /** Whether changes of this table go to the sink. */
    public boolean selects(String tableDatabase, String table) {
        if (keys.isEmpty()) {
            return tableDatabase != null && tableDatabase.equalsIgnoreCase(database);
        }
        return keys.contains(key(tableDatabase, table));
    }

    /**
     * This filter, also watching {@code table}: a transaction that changes a row of it is marked
     * ({@link ChangeTransaction#changesWatched()}) for the stream's listeners, while its rows still go nowhere unless
     * the filter selects them. Gantry watches its own tables this way (a new cluster configuration version).
     */
    public TableFilter watching(Table table) {
        Set<String> more = new LinkedHashSet<>(watched);
        more.add(key(table.database(), table.name()));
        return new TableFilter(database, tables, more);
    }

    /** Whether a change of this table marks its transaction as {@link ChangeTransaction#changesWatched()}. */
    public boolean watches(String tableDatabase, String table) {
        return !watched.isEmpty() && watched.contains(key(tableDatabase, table));
    }

    /** The listed tables, or empty when the filter is every table of {@link #database()}. */
    public List<Table> listed() {
        return tables;
    }

    /** The service database (the default scope). */
    public String database() {
        return database;
    }

    private static String key(String db, String table) {
        return (db == null ? "" : db.toLowerCase(Locale.ROOT)) + "\u0000" + (table == null ? ""
                : table.toLowerCase(Locale.ROOT));
    }

    @Override
    public String toString() {
        return keys.isEmpty() ? "every table of " + database
                : String.join(",", tables.stream().map(Table::toString).toList());
    }
}
