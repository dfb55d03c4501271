package io.gantry.topology;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whom a server replicates from and whether its replication stopped with an error, as a health check reads it.
 *
 * @param source        {@code host:port} it replicates from, or "" if it does not replicate
 * @param brokenBecause why its replication is broken, or null when it is not: its SQL thread stopped with an
 *                      error, or its IO thread stopped (gave up) with an error. A thread stopped without an error
 *                      ({@code STOP SLAVE}) is a pause, which shows as lag; an IO thread still trying to
 *                      connect (a primary that is down) is not broken either.
 */
record ReplicaStatus(String source, String brokenBecause) {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicaStatus.class);

    static final ReplicaStatus NONE = new ReplicaStatus("", null);

    /** The status of the server {@code statement} belongs to; {@link #NONE} when it does not replicate. */
    static ReplicaStatus read(Statement statement, ReplicaStatusQuery query) {
        try (ResultSet rows = statement.executeQuery(query.sql())) {
            return rows.next() ? of(rows, query.sourcePrefix(), query.threadPrefix()) : NONE;
        } catch (SQLException e) {
            // The account may lack the privilege (REPLICATION CLIENT / SLAVE MONITOR): then we cannot tell.
            LOG.debug("topology: {} failed: {}", query.sql(), e.toString());
            return NONE;
        }
    }

    private static ReplicaStatus of(ResultSet rows, String source, String thread) throws SQLException {
        String address = rows.getString(source + "Host") + ":" + rows.getInt(source + "Port");
        String broken = null;
        int sqlErrno = rows.getInt("Last_SQL_Errno");
        if (!"Yes".equalsIgnoreCase(rows.getString(thread + "SQL_Running")) && sqlErrno != 0) {
            broken = "its SQL thread stopped with error " + sqlErrno + ": " + oneLine(rows.getString("Last_SQL_Error"));
        } else {
            int ioErrno = rows.getInt("Last_IO_Errno");
            if ("No".equalsIgnoreCase(rows.getString(thread + "IO_Running")) && ioErrno != 0) {
                broken = "its IO thread stopped with error " + ioErrno + ": " + oneLine(rows.getString("Last_IO_Error"));
            }
        }
        return new ReplicaStatus(address, broken);
    }

    private static String oneLine(String text) {
        String line = ServerErrors.firstLine(text).replaceAll("\\s+", " ");
        return line.length() > 600 ? line.substring(0, 600) + "..." : line;
    }
}
