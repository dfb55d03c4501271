package io.gantry.authority;

import static io.gantry.authority.SqlValues.utc;

import java.sql.PreparedStatement;
import java.sql.Statement;
import java.sql.Types;
import java.util.List;

/**
 * The statement digest table, {@code GANTRY.QUERIES}: a copy of the proxy's digests, replaced as a whole right before
 * an admin query that names it, so that the query reads it with ordinary SQL (as {@link LiveServerStore}).
 */
final class QueryDigestStore {

    private final AuthorityDatabase database;

    QueryDigestStore(AuthorityDatabase database) {
        this.database = database;
    }

    /** Replaces the table's content with {@code rows}, in one transaction. */
    void replace(List<QueryDigestRow> rows) {
        List<QueryDigestRow> digests = List.copyOf(rows);
        database.write("copy the statement digests", connection -> {
            try (Statement delete = connection.createStatement()) {
                delete.executeUpdate("DELETE FROM GANTRY.QUERIES");
            }
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO GANTRY.QUERIES(query, "
                    + "schema_name, account, count, errors, error_codes, rows_sent, rows_affected, total_time_us, "
                    + "p50_us, p95_us, p99_us, max_us, on_primary, on_replica, on_cache, on_gantry, routing_reasons, "
                    + "first_seen, last_seen, folded) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                    + "?, ?)")) {
                for (QueryDigestRow row : digests) {
                    insert.setString(1, row.query());
                    insert.setString(2, row.schemaName());
                    insert.setString(3, row.account());
                    insert.setLong(4, row.count());
                    insert.setLong(5, row.errors());
                    insert.setString(6, row.errorCodes());
                    insert.setLong(7, row.rowsSent());
                    insert.setLong(8, row.rowsAffected());
                    insert.setLong(9, row.totalTimeUs());
                    insert.setLong(10, row.p50Us());
                    insert.setLong(11, row.p95Us());
                    insert.setLong(12, row.p99Us());
                    insert.setLong(13, row.maxUs());
                    insert.setLong(14, row.onPrimary());
                    insert.setLong(15, row.onReplica());
                    insert.setLong(16, row.onCache());
                    insert.setLong(17, row.onGantry());
                    insert.setString(18, row.routingReasons());
                    insert.setObject(19, utc(row.firstSeen()), Types.TIMESTAMP_WITH_TIMEZONE);
                    insert.setObject(20, utc(row.lastSeen()), Types.TIMESTAMP_WITH_TIMEZONE);
                    insert.setBoolean(21, row.folded());
                    insert.addBatch();
                }
                insert.executeBatch();
            }
            return null;
        });
    }
}
