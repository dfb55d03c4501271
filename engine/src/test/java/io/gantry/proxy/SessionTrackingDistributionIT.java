package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static io.gantry.proxy.ProxyHarness.queryString;
import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.TopologyKinds;
import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.sandbox.Topology;
import java.sql.Connection;

/**
 * {@link SessionTrackingIT} against the distribution's packaged MariaDB (Debian 12: 10.11), which knows the
 * transactions' access mode only as {@code tx_read_only}: Gantry's tracking must still be accepted there, so that
 * read-your-writes waits for the session's own GTID rather than for a sample of the primary.
 */
class SessionTrackingDistributionIT extends SessionTrackingIT {

    @Override
    Topology startTopology() {
        return TopologyKinds.startDistributionMariaDb("session-tracking", 1);
    }

    @Override
    String readOnlyVariable() {
        return "tx_read_only";
    }

    /**
     * MariaDB 10.x greets as {@code 5.5.5-10.11...}, and Connector/J tells the server of {@code setReadOnly} only
     * from 5.6.5 on: directly the transaction is read-write on the server, so through Gantry it runs on the primary.
     */
    @Override
    void aReadOnlyJdbcConnectionWithAutocommitOffReadsFromAReplica() throws Exception {
        String table = newTable();
        try (Connection direct = topology.connectAsApp(topology.primary())) { // Connector/J, as the session below
            direct.setReadOnly(true);
            assertThat(queryString(direct, "SELECT @@session.tx_read_only")).as("what the server was told")
                    .isEqualTo("0");
        }
        try (Connection session = gantry.connect(Driver.MYSQL_CONNECTOR_J)) {
            execute(session, "CREATE TABLE " + table + " (id INT PRIMARY KEY)");
            session.setReadOnly(true);
            session.setAutoCommit(false);
            assertThat(serverInTransaction(session)).as("the implicit transaction").isEqualTo(topology.primary());
            execute(session, "INSERT INTO " + table + " VALUES (1)");
            session.commit();
        }
    }
}
