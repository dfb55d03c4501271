package io.gantry.topology;

import io.gantry.wire.ServerVersion;

/**
 * The statement that shows a server's replication status and the names of its columns, in the form the server's
 * version knows. MariaDB (every version) and MySQL before 8.0.22: {@code SHOW SLAVE STATUS} with
 * {@code Master_Host}, {@code Slave_IO_Running}. MySQL 8.0.22 and later: {@code SHOW REPLICA STATUS} with
 * {@code Source_Host}, {@code Replica_IO_Running}; 8.4 knows only that one, 8.0.15 only the old one.
 *
 * @param sql          the statement
 * @param sourcePrefix the prefix of the source's columns ({@code Master_} or {@code Source_}: {@code Host},
 *                     {@code Port})
 * @param threadPrefix the prefix of the thread columns ({@code Slave_} or {@code Replica_}: {@code IO_Running},
 *                     {@code SQL_Running})
 */
record ReplicaStatusQuery(String sql, String sourcePrefix, String threadPrefix) {

    static final ReplicaStatusQuery SLAVE_FORM = new ReplicaStatusQuery("SHOW SLAVE STATUS", "Master_", "Slave_");
    static final ReplicaStatusQuery REPLICA_FORM = new ReplicaStatusQuery("SHOW REPLICA STATUS", "Source_",
            "Replica_");

    /** The form for a server whose {@code VERSION()} is {@code version}. */
    static ReplicaStatusQuery forVersion(String version) {
        ServerVersion server = ServerVersion.parse(version);
        return !server.mariaDb() && server.atLeast(8, 0, 22) ? REPLICA_FORM : SLAVE_FORM;
    }
}
