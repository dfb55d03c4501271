package io.gantry.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Promotion changes the shape of a topology, so each run has a topology of its own. */
class PromotionIT {

    @ParameterizedTest
    @MethodSource("io.gantry.sandbox.TopologyKinds#all")
    void writesOnPromotedReplicaReplicateToTheRemainingReplica(TopologyKind kind) throws SQLException {
        TopologyKinds.assumeAvailable(kind);
        try (Topology topology = Sandboxes.startPrivate(kind, "promotion", 2)) {
            DatabaseServer oldPrimary = topology.primary();
            DatabaseServer promoted = topology.replicas().get(0);
            DatabaseServer remaining = topology.replicas().get(1);
            ReplicationTopologyIT.execute(topology, oldPrimary, "CREATE TABLE t (id INT PRIMARY KEY)");
            ReplicationTopologyIT.execute(topology, oldPrimary, "INSERT INTO t VALUES (1)");

            topology.promote(promoted);

            assertThat(topology.primary()).isSameAs(promoted);
            assertThat(topology.replicas()).containsExactlyInAnyOrder(oldPrimary, remaining);
            ReplicationTopologyIT.execute(topology, promoted, "INSERT INTO t VALUES (2)");
            topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
            assertThat(ReplicationTopologyIT.queryString(topology, remaining, "SELECT COUNT(*) FROM t")).isEqualTo("2");
            assertThat(ReplicationTopologyIT.queryString(topology, oldPrimary, "SELECT COUNT(*) FROM t"))
                    .as("the old primary now replicates too").isEqualTo("2");
            assertThat(topology.executedGtids(remaining)).isEqualTo(topology.executedGtids(promoted));
            // The demoted primary is read-only for the application account.
            assertThatThrownBy(() -> ReplicationTopologyIT.execute(topology, oldPrimary, "INSERT INTO t VALUES (3)"))
                    .isInstanceOf(SQLException.class).hasMessageContaining("read-only");
        }
    }
}
