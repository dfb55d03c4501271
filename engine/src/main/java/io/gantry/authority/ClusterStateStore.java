package io.gantry.authority;

import static io.gantry.authority.SqlValues.utc;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.util.Objects;

/**
 * Which version of a cluster's shared configuration this instance applied last, table {@code GANTRY.CLUSTER_STATE}:
 * the local copy of the configuration is the server lists beside it, so an instance that restarts while the primary
 * is unreachable serves with them and knows which version they are.
 */
final class ClusterStateStore {

    private final AuthorityDatabase database;
    private final Clock clock;

    ClusterStateStore(AuthorityDatabase database, Clock clock) {
        this.database = database;
        this.clock = clock;
    }

    long applied(String cluster) {
        Objects.requireNonNull(cluster, "cluster");
        return database.read("read the applied version of cluster " + cluster, connection -> {
            try (PreparedStatement select = connection.prepareStatement(
                    "SELECT applied_version FROM GANTRY.CLUSTER_STATE WHERE cluster = ?")) {
                select.setString(1, cluster);
                try (ResultSet rows = select.executeQuery()) {
                    return rows.next() ? rows.getLong(1) : 0L;
                }
            }
        });
    }

    void save(String cluster, long version) {
        Objects.requireNonNull(cluster, "cluster");
        database.write("save the applied version of cluster " + cluster, connection -> {
            try (PreparedStatement merge = connection.prepareStatement("MERGE INTO GANTRY.CLUSTER_STATE"
                    + "(cluster, applied_version, applied_at) KEY (cluster) VALUES (?, ?, ?)")) {
                merge.setString(1, cluster);
                merge.setLong(2, version);
                merge.setObject(3, utc(clock.instant()));
                merge.executeUpdate();
            }
            return null;
        });
    }
}
