package io.gantry.cluster;

import io.gantry.topology.ServiceConnections;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

/**
 * A connection to the primary as the health loop knows it now, kept from use to use while that server stays the
 * primary, with the cluster's tables created on each new one. Not thread safe: its owner uses it under its lock.
 */
final class PrimaryConnection {

    private final Upstreams upstreams;
    private final ClusterStore store;
    private final Duration connectTimeout;
    private Connection connection;
    private String server;

    PrimaryConnection(Upstreams upstreams, ClusterStore store, Duration connectTimeout) {
        this.upstreams = upstreams;
        this.store = store;
        this.connectTimeout = connectTimeout;
    }

    /**
     * @throws ClusterException when no primary is known
     * @throws SQLException     the server's, connecting or creating the tables
     */
    Connection get() throws SQLException {
        UpstreamServer primary = upstreams.primaryOrNull();
        if (primary == null) {
            drop();
            throw new ClusterException("no primary is known now (" + upstreams.noPrimaryReason() + ")");
        }
        if (connection != null && primary.address().equals(server)) {
            return connection;
        }
        drop();
        Connection opened = ServiceConnections.openWithin(primary.url(), connectTimeout);
        try {
            store.create(opened);
        } catch (SQLException e) {
            opened.close();
            throw e;
        }
        connection = opened;
        server = primary.address();
        return connection;
    }

    /** The primary's address now, for messages. */
    String target() {
        UpstreamServer primary = upstreams.primaryOrNull();
        return primary == null ? "(none known)" : primary.address();
    }

    /** The service account's name, for messages. */
    String account() {
        UpstreamServer primary = upstreams.primaryOrNull();
        return primary == null ? "the service account" : "'" + primary.url().user() + "'";
    }

    /** Forgets the connection (after a failure): the next use opens a new one. */
    void drop() {
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // it is gone either way
            }
        }
        connection = null;
        server = null;
    }
}
