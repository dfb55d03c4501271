package io.gantry.topology;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ReplicaStatusQueryTest {

    @ParameterizedTest
    @ValueSource(strings = {"11.4.5-MariaDB-log", "10.11.6-MariaDB-0+deb12u1", "5.5.5-10.6.16-MariaDB", "8.0.15",
            "8.0.21-log", "5.7.44"})
    void mariaDbAndMySqlBefore8022ShowSlaveStatus(String version) {
        ReplicaStatusQuery query = ReplicaStatusQuery.forVersion(version);
        assertThat(query.sql()).isEqualTo("SHOW SLAVE STATUS");
        assertThat(query.sourcePrefix() + "Host").isEqualTo("Master_Host");
        assertThat(query.threadPrefix() + "SQL_Running").isEqualTo("Slave_SQL_Running");
    }

    @ParameterizedTest
    @ValueSource(strings = {"8.0.22", "8.0.36-28", "8.4.3", "9.1.0", "8.0.mysql_aurora.3.05.2"})
    void mySql8022AndLaterShowReplicaStatus(String version) {
        ReplicaStatusQuery query = ReplicaStatusQuery.forVersion(version);
        assertThat(query.sql()).isEqualTo("SHOW REPLICA STATUS");
        assertThat(query.sourcePrefix() + "Host").isEqualTo("Source_Host");
        assertThat(query.threadPrefix() + "IO_Running").isEqualTo("Replica_IO_Running");
    }
}
