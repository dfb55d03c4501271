package io.gantry.sandbox;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A primary and replicas with GTID replication, started for tests or the demo, and the operations that
 * operations tests need. Implemented by real {@code mariadbd} processes ({@link MariaDbTopology}), real
 * {@code mysqld} processes ({@link MySqlTopology}) and MySQL 8.4 containers ({@link MySqlContainerTopology}).
 * Closing it stops every server it started.
 */
public interface Topology extends AutoCloseable {

    /**
     * What runs, for reports: {@code MariaDB 11.4.5 (bundled)}, {@code MySQL 8.0.15 (bundled)},
     * {@code MySQL 8.4 (Testcontainers)}.
     */
    String flavour();

    /** The database created for tests on every server. */
    String database();

    /** An account for applications and Gantry's service work: all data privileges plus replication/binlog ones,
     *  but it cannot write to a {@code read_only} replica. */
    Credentials appAccount();

    /** The server that currently takes writes. */
    DatabaseServer primary();

    /** The servers that currently replicate from the primary, in name order. */
    List<DatabaseServer> replicas();

    /** Every server, primary first. */
    default List<DatabaseServer> servers() {
        List<DatabaseServer> servers = new ArrayList<>();
        servers.add(primary());
        servers.addAll(replicas());
        return servers;
    }

    /** Stops a server cleanly (it flushes and exits). */
    void stop(DatabaseServer server);

    /** kill -9 of a server's process: no flush, no goodbye to its clients. */
    void kill(DatabaseServer server);

    /**
     * Freezes a server (SIGSTOP; a paused container for MySQL): it stops answering but its connections stay open,
     * as a hung server or a network partition looks to its clients. {@link #thaw} lets it go on.
     */
    void freeze(DatabaseServer server);

    /** Lets a server frozen by {@link #freeze} run again (SIGCONT). */
    void thaw(DatabaseServer server);

    /** Starts a stopped or killed server again on the same port with the same data; a replica resumes replicating. */
    void start(DatabaseServer server);

    /** Stops a replica's SQL (applier) thread: it keeps receiving but stops applying, so it lags on purpose. */
    void pauseReplication(DatabaseServer replica);

    /** Restarts a replica's SQL thread after {@link #pauseReplication}. */
    void resumeReplication(DatabaseServer replica);

    /**
     * Runs statements on a replica behind replication's back, as root (which may write although the replica is
     * read-only), as an operator or a stray script would. With {@code logged}, each write is binlogged under the
     * replica's own server id: an errant transaction, a GTID the primary never had. Without, the session runs with
     * {@code sql_log_bin=0}: no GTID, the data differ silently, and a later write of the primary that meets them
     * (the same key inserted) stops the replica's SQL thread with an error.
     */
    void writeOnReplica(DatabaseServer replica, boolean logged, String... statements);

    /** The replica's last SQL thread error as {@code "errno: message"}, or "" when it has none. */
    String replicationSqlError(DatabaseServer replica);

    /**
     * Makes a replica the primary: it stops replicating and becomes writable; the other running replicas, and the
     * old primary if it still runs (made read-only first, so nothing is lost), replicate from it.
     */
    void promote(DatabaseServer replica);

    /** Waits until every running replica has applied everything the primary has executed. */
    void awaitReplicasCaughtUp(Duration timeout);

    /** The set of GTIDs a server has executed, in the flavour's own notation. */
    String executedGtids(DatabaseServer server);

    /** How many of the primary's transactions a replica has not applied yet (0 when caught up). */
    long transactionsBehind(DatabaseServer replica);

    /** A connection with all privileges (root) to a server; the caller closes it. */
    Connection connectAsAdmin(DatabaseServer server) throws SQLException;

    /** A connection as {@link #appAccount()} to the test database on a server; the caller closes it. */
    Connection connectAsApp(DatabaseServer server) throws SQLException;

    /** The JDBC URL of the test database on a server (no credentials in it). */
    String jdbcUrl(DatabaseServer server);

    /** Stops every server this topology started. Never throws. */
    @Override
    void close();
}
