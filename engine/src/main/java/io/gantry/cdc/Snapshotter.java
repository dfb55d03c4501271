package io.gantry.cdc;

import io.gantry.gtid.Flavour;
import io.gantry.topology.ServiceConnections;
import io.gantry.topology.UpstreamUrl;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a consistent snapshot of the selected tables from one server and records the GTID position it is
 * consistent with, so that streaming from that position afterwards misses and repeats nothing.
 *
 * <p>MariaDB: {@code START TRANSACTION WITH CONSISTENT SNAPSHOT} also fixes the binlog coordinates of the snapshot
 * ({@code Binlog_snapshot_file/_position}), and {@code BINLOG_GTID_POS()} turns them into a GTID position; no lock
 * is taken. MySQL: a short {@code FLUSH TABLES WITH READ LOCK} around the start of the snapshot and the read of
 * {@code gtid_executed} (the account needs {@code RELOAD}), tested against MySQL 8.0.15.
 * All tables are read in that one transaction, so they are consistent with each other.
 */
final class Snapshotter {

    private static final Logger LOG = LoggerFactory.getLogger(Snapshotter.class);
    private static final Duration PROGRESS_LOG_INTERVAL = Duration.ofSeconds(5);

    /** Where the snapshot rows go; {@code JsonlSink}'s staging writer in production. */
    interface RowWriter {
        void add(String server, Instant at, RowChange row) throws java.io.IOException;
    }

    /** What a snapshot consistent read starts from. */
    record Start(String position, Instant at) {
    }

    private final UpstreamUrl server;
    private final Flavour flavour;
    private final TableFilter filter;
    private final SnapshotProgress progress;
    private final BooleanSupplier cancelled;
    private final Clock clock;

    /** {@code clock} stamps the snapshot's rows with the time of its start and paces the progress log. */
    Snapshotter(UpstreamUrl server, Flavour flavour, TableFilter filter, SnapshotProgress progress,
                BooleanSupplier cancelled, Clock clock) {
        this.server = server;
        this.flavour = flavour;
        this.filter = filter;
        this.progress = progress;
        this.cancelled = cancelled;
        this.clock = clock;
    }

    /**
     * A connection for reading a snapshot, with the driver and session settings {@link JdbcRowValues} needs to
     * type values exactly as the binlog does (TINYINT(1) and YEAR as numbers, TIMESTAMP in UTC).
     */
    static Connection open(UpstreamUrl server, Duration timeout) throws SQLException {
        // The account and the URL's TLS settings, exactly as every other connection of Gantry's to the server.
        Properties properties = ServiceConnections.driverProperties(server);
        properties.setProperty("connectTimeout", Long.toString(timeout.toMillis()));
        // No socketTimeout: a big table's rows stream for as long as they take.
        Connection connection = DriverManager.getConnection("jdbc:mysql://" + server.host() + ":" + server.port()
                + "/?" + JdbcRowValues.URL_PARAMETERS, properties);
        try (Statement statement = connection.createStatement()) {
            statement.execute(JdbcRowValues.SESSION_TIME_ZONE_SQL);
        } catch (SQLException e) {
            connection.close();
            throw e;
        }
        return connection;
    }

    /**
     * Starts the consistent read on {@code connection} (from {@link #open}) and returns its position;
     * {@link #copyTables} then reads the tables in the same transaction.
     */
    Start begin(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ");
            connection.setAutoCommit(false);
            String position;
            if (flavour == Flavour.MARIADB) {
                statement.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT");
                String file = null;
                long offset = -1;
                try (ResultSet rows = statement.executeQuery("SHOW STATUS LIKE 'binlog_snapshot_%'")) {
                    while (rows.next()) {
                        if (rows.getString(1).equalsIgnoreCase("Binlog_snapshot_file")) {
                            file = rows.getString(2);
                        } else if (rows.getString(1).equalsIgnoreCase("Binlog_snapshot_position")) {
                            offset = rows.getLong(2);
                        }
                    }
                }
                if (file == null || file.isEmpty() || offset < 0) {
                    throw new SQLException(server.address() + " reports no binlog snapshot coordinates: is the "
                            + "binary log on?");
                }
                try (PreparedStatement gtidPos = connection.prepareStatement("SELECT BINLOG_GTID_POS(?, ?)")) {
                    gtidPos.setString(1, file);
                    gtidPos.setLong(2, offset);
                    try (ResultSet rows = gtidPos.executeQuery()) {
                        rows.next();
                        position = rows.getString(1);
                    }
                }
                if (position == null) {
                    throw new SQLException(server.address() + " could not turn the snapshot's binlog coordinates "
                            + file + ":" + offset + " into a GTID position");
                }
            } else {
                statement.execute("FLUSH TABLES WITH READ LOCK");
                try {
                    statement.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT");
                    try (ResultSet rows = statement.executeQuery("SELECT @@GLOBAL.gtid_executed")) {
                        rows.next();
                        position = rows.getString(1);
                    }
                } finally {
                    statement.execute("UNLOCK TABLES");
                }
            }
            return new Start(position.strip(), clock.instant());
        }
    }

    /** The tables to copy: the listed ones, or every base table of the service database. */
    List<String> tables(Connection connection) throws SQLException {
        List<String> names = new ArrayList<>();
        if (!filter.listed().isEmpty()) {
            filter.listed().forEach(table -> names.add(table.toString()));
            return names;
        }
        try (PreparedStatement list = connection.prepareStatement("SELECT table_name FROM information_schema.TABLES"
                + " WHERE table_schema = ? AND table_type = 'BASE TABLE' ORDER BY table_name")) {
            list.setString(1, filter.database());
            try (ResultSet rows = list.executeQuery()) {
                while (rows.next()) {
                    names.add(filter.database() + "." + rows.getString(1));
                }
            }
        }
        return names;
    }

    /** Copies every table, row by row, into {@code writer}; returns the number of rows. */
    long copyTables(Connection connection, Start start, RowWriter writer) throws SQLException,
            java.io.IOException {
        List<String> tables = tables(connection);
        if (flavour == Flavour.MYSQL) {
            freshStatistics(connection);
        }
        for (String table : tables) {
            progress.planned(table, estimate(connection, table));
        }
        long total = 0;
        Instant lastLog = clock.instant();
        for (String table : tables) {
            progress.reading(table);
            int dot = table.indexOf('.');
            String database = table.substring(0, dot);
            String name = table.substring(dot + 1);
            long done = 0;
            // Streamed row by row (connector-j's streaming result set), so a big table does not fill the heap.
            try (Statement select = connection.createStatement(ResultSet.TYPE_FORWARD_ONLY,
                    ResultSet.CONCUR_READ_ONLY)) {
                select.setFetchSize(Integer.MIN_VALUE);
                try (ResultSet rows = select.executeQuery("SELECT * FROM " + quote(database) + "." + quote(name))) {
                    while (rows.next()) {
                        if (cancelled.getAsBoolean()) {
                            throw new SQLException("snapshot cancelled");
                        }
                        writer.add(server.address(), start.at(), new RowChange(database, name, ChangeOp.SNAPSHOT,
                                null, JdbcRowValues.row(rows)));
                        done++;
                        if ((done & 1023) == 0) {
                            progress.rowsDone(table, done);
                            Instant now = clock.instant();
                            if (Duration.between(lastLog, now).compareTo(PROGRESS_LOG_INTERVAL) > 0) {
                                lastLog = now;
                                LOG.info("cdc: {}", progress.describe());
                            }
                        }
                    }
                }
            }
            progress.rowsDone(table, done);
            total += done;
            LOG.atInfo().addKeyValue("server", server.address())
                    .log("cdc: snapshot of {} from {}: {} rows", table, server.address(), done);
        }
        connection.commit();
        return total;
    }

    /**
     * MySQL 8.0 answers {@code information_schema.TABLES.table_rows} from a cache kept for a day
     * ({@code information_schema_stats_expiry}): a table filled since showed 0 or a few rows where it had 200 000,
     * and the progress said so. Expiry 0 reads the engine's current estimate. Servers before 8.0 have no cache and
     * no such variable.
     */
    private static void freshStatistics(Connection connection) {
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET SESSION information_schema_stats_expiry = 0");
        } catch (SQLException e) {
            LOG.debug("cdc: no information_schema_stats_expiry: {}", e.getMessage());
        }
    }

    private static long estimate(Connection connection, String table) throws SQLException {
        int dot = table.indexOf('.');
        try (PreparedStatement select = connection.prepareStatement("SELECT table_rows FROM information_schema.TABLES"
                + " WHERE table_schema = ? AND table_name = ?")) {
            select.setString(1, table.substring(0, dot));
            select.setString(2, table.substring(dot + 1));
            try (ResultSet rows = select.executeQuery()) {
                if (!rows.next()) {
                    throw new SQLException("--cdc-tables names " + table + ", which does not exist");
                }
                return rows.getLong(1);
            }
        }
    }

    private static String quote(String identifier) {
        return "`" + identifier.replace("`", "``") + "`";
    }
}
