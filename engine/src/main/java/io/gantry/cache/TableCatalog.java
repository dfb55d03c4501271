package io.gantry.cache;

import io.gantry.topology.ServiceConnections;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** What {@code CREATE CACHE} must know of a table: whether it is a base table, and its primary key. */
public interface TableCatalog {

    /**
     * @param exists     the table exists
     * @param view       it is a view: its rows change without row changes of its own in the change stream
     * @param integerKey its primary key when that is one integer column, or null
     */
    record TableFacts(boolean exists, boolean view, String integerKey) {
    }

    /** @throws CacheException when the catalogue cannot be read, saying why */
    TableFacts describe(TableName table);

    /** Reads {@code information_schema} on the primary (or the first server up), as Gantry's service account. */
    static TableCatalog of(Upstreams upstreams, Duration timeout) {
        return table -> {
            UpstreamServer server = upstreams.primary().orElseGet(() -> upstreams.servers().stream()
                    .filter(UpstreamServer::isUp).findFirst()
                    .orElseThrow(() -> new CacheException("no server is up to read the catalogue of " + table)));
            try (Connection connection = ServiceConnections.open(server.url(), timeout)) {
                return describe(connection, table);
            } catch (SQLException e) {
                throw new CacheException("could not read the catalogue of " + table + " on " + server.address()
                        + ": " + e.getMessage());
            }
        };
    }

    private static TableFacts describe(Connection connection, TableName table) throws SQLException {
        String type;
        try (PreparedStatement select = connection.prepareStatement("SELECT TABLE_TYPE FROM information_schema.TABLES"
                + " WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?")) {
            select.setString(1, table.database());
            select.setString(2, table.table());
            try (ResultSet rows = select.executeQuery()) {
                if (!rows.next()) {
                    return new TableFacts(false, false, null);
                }
                type = rows.getString(1);
            }
        }
        List<String[]> key = new ArrayList<>();
        try (PreparedStatement select = connection.prepareStatement("SELECT COLUMN_NAME, DATA_TYPE FROM "
                + "information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_KEY = 'PRI'")) {
            select.setString(1, table.database());
            select.setString(2, table.table());
            try (ResultSet rows = select.executeQuery()) {
                while (rows.next()) {
                    key.add(new String[] {rows.getString(1), rows.getString(2).toLowerCase(Locale.ROOT)});
                }
            }
        }
        Set<String> integers = Set.of("tinyint", "smallint", "mediumint", "int", "integer", "bigint");
        String integerKey = key.size() == 1 && integers.contains(key.get(0)[1]) ? key.get(0)[0] : null;
        return new TableFacts(true, type.toUpperCase(Locale.ROOT).contains("VIEW"), integerKey);
    }
}
