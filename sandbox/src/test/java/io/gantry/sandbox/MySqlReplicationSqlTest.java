package io.gantry.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class MySqlReplicationSqlTest {

    private static final Credentials REPL = new Credentials("repl", "pw");

    @Test
    void releasesBefore8023UseTheOldFormsOnly() {
        for (String version : new String[] {"8.0.15", "8.0.21", "8.0.22", "5.7.44-log"}) {
            MySqlReplicationSql sql = MySqlReplicationSql.forVersion(version);
            assertThat(sql.showStatus()).as(version).isEqualTo("SHOW SLAVE STATUS");
            assertThat(sql.start()).isEqualTo("START SLAVE");
            assertThat(sql.stop()).isEqualTo("STOP SLAVE");
            assertThat(sql.stopSqlThread()).isEqualTo("STOP SLAVE SQL_THREAD");
            assertThat(sql.startSqlThread()).isEqualTo("START SLAVE SQL_THREAD");
            assertThat(sql.resetAll()).isEqualTo("RESET SLAVE ALL");
            assertThat(sql.resetBinaryLogs()).isEqualTo("RESET MASTER");
            assertThat(sql.sourceHostColumn()).isEqualTo("Master_Host");
            assertThat(sql.sourcePortColumn()).isEqualTo("Master_Port");
            assertThat(sql.ioRunningColumn()).isEqualTo("Slave_IO_Running");
            assertThat(sql.sqlRunningColumn()).isEqualTo("Slave_SQL_Running");
            assertThat(sql.changeSource("127.0.0.1", 3306, REPL)).isEqualTo("CHANGE MASTER TO "
                    + "MASTER_HOST='127.0.0.1', MASTER_PORT=3306, MASTER_USER='repl', MASTER_PASSWORD='pw', "
                    + "MASTER_AUTO_POSITION=1, MASTER_CONNECT_RETRY=1, MASTER_HEARTBEAT_PERIOD=1, GET_MASTER_PUBLIC_KEY=1");
        }
    }

    @Test
    void from8023TheReplicaAndSourceForms() {
        for (String version : new String[] {"8.0.23", "8.0.36", "8.1.0", "8.4.3", "9.1.0"}) {
            MySqlReplicationSql sql = MySqlReplicationSql.forVersion(version);
            assertThat(sql.showStatus()).as(version).isEqualTo("SHOW REPLICA STATUS");
            assertThat(sql.start()).isEqualTo("START REPLICA");
            assertThat(sql.stop()).isEqualTo("STOP REPLICA");
            assertThat(sql.stopSqlThread()).isEqualTo("STOP REPLICA SQL_THREAD");
            assertThat(sql.startSqlThread()).isEqualTo("START REPLICA SQL_THREAD");
            assertThat(sql.resetAll()).isEqualTo("RESET REPLICA ALL");
            assertThat(sql.sourceHostColumn()).isEqualTo("Source_Host");
            assertThat(sql.sourcePortColumn()).isEqualTo("Source_Port");
            assertThat(sql.ioRunningColumn()).isEqualTo("Replica_IO_Running");
            assertThat(sql.sqlRunningColumn()).isEqualTo("Replica_SQL_Running");
            assertThat(sql.changeSource("primary", 3306, REPL)).isEqualTo("CHANGE REPLICATION SOURCE TO "
                    + "SOURCE_HOST='primary', SOURCE_PORT=3306, SOURCE_USER='repl', SOURCE_PASSWORD='pw', "
                    + "SOURCE_AUTO_POSITION=1, SOURCE_CONNECT_RETRY=1, SOURCE_HEARTBEAT_PERIOD=1, GET_SOURCE_PUBLIC_KEY=1");
        }
    }

    @Test
    void resetMasterUntil82ThenResetBinaryLogsAndGtids() {
        assertThat(MySqlReplicationSql.forVersion("8.0.36").resetBinaryLogs()).isEqualTo("RESET MASTER");
        assertThat(MySqlReplicationSql.forVersion("8.1.0").resetBinaryLogs()).isEqualTo("RESET MASTER");
        assertThat(MySqlReplicationSql.forVersion("8.2.0").resetBinaryLogs()).isEqualTo("RESET BINARY LOGS AND GTIDS");
        assertThat(MySqlReplicationSql.forVersion("8.4.3").resetBinaryLogs()).isEqualTo("RESET BINARY LOGS AND GTIDS");
    }

    @Test
    void aVersionThatIsNotOneIsRefused() {
        assertThatThrownBy(() -> MySqlReplicationSql.forVersion("banana"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'banana'");
    }

    @Test
    void gtidQueries() {
        assertThat(MySqlReplicationSql.awaitExecuted("u:1-3", Duration.ofSeconds(30)))
                .isEqualTo("SELECT WAIT_FOR_EXECUTED_GTID_SET('u:1-3', 30)");
        assertThat(MySqlReplicationSql.subtract("u:1-3", "u:1")).isEqualTo("SELECT GTID_SUBTRACT('u:1-3', 'u:1')");
        assertThat(MySqlReplicationSql.countTransactions("")).isZero();
    }
}
