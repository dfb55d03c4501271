package io.gantry.authority;

import static io.gantry.authority.SqlValues.setNullable;
import static io.gantry.authority.SqlValues.utc;

import java.sql.PreparedStatement;
import java.sql.Statement;
import java.sql.Types;
import java.util.List;

/**
 * The live server table, {@code GANTRY.UPSTREAM_SERVERS}: a copy of the state Gantry keeps in memory, replaced as
 * a whole right before an admin query, so that the query reads it with ordinary SQL.
 */
final class LiveServerStore {

    private final AuthorityDatabase database;

    LiveServerStore(AuthorityDatabase database) {
        this.database = database;
    }

    /** Replaces the table's content with {@code rows}, in one transaction. */
    void replace(List<LiveServerRow> rows) {
        List<LiveServerRow> live = List.copyOf(rows);
        database.write("copy the live server state", connection -> {
            try (Statement delete = connection.createStatement()) {
                delete.executeUpdate("DELETE FROM GANTRY.UPSTREAM_SERVERS");
            }
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO GANTRY.UPSTREAM_SERVERS(host, "
                    + "port, database, \"USER\", weight, purpose, active_cdc, health, down_since, last_ok, connections,"
                    + " role, lag_ms, rtt_ms, connect_ms, rtt_smoothed_ms)"
                    + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
                for (LiveServerRow row : live) {
                    insert.setString(1, row.host());
                    insert.setInt(2, row.port());
                    insert.setString(3, row.database());
                    insert.setString(4, row.user());
                    insert.setInt(5, row.weight());
                    insert.setString(6, row.purpose());
                    insert.setBoolean(7, row.activeCdc());
                    insert.setString(8, row.health());
                    insert.setObject(9, row.downSince() == null ? null : utc(row.downSince()),
                            Types.TIMESTAMP_WITH_TIMEZONE);
                    insert.setObject(10, row.lastOk() == null ? null : utc(row.lastOk()),
                            Types.TIMESTAMP_WITH_TIMEZONE);
                    insert.setInt(11, row.connections());
                    insert.setString(12, row.role());
                    setNullable(insert, 13, row.lagMs(), Types.BIGINT);
                    setNullable(insert, 14, row.rttMs(), Types.DOUBLE);
                    setNullable(insert, 15, row.connectMs(), Types.DOUBLE);
                    setNullable(insert, 16, row.rttSmoothedMs(), Types.DOUBLE);
                    insert.addBatch();
                }
                insert.executeBatch();
            }
            return null;
        });
    }
}
