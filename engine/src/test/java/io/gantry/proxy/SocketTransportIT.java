package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.proxy.transport.SocketTransport;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.TopologyKind;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The same session through each socket transport: the rest of the suite runs on the default one (io_uring where the
 * kernel allows it), so this is what keeps the fallbacks an operator may pick ({@code --socket-transport}) working.
 */
class SocketTransportIT {

    @ParameterizedTest
    @EnumSource(SocketTransport.class)
    void writesReadsPreparedStatementsAndLargeResultsGoThroughEachTransport(SocketTransport transport)
            throws Exception {
        assumeTrue(transport.isAvailable(), () -> transport.flagValue() + " is not available on this machine");
        String table = "transport_" + transport.flagValue();
        try (ProxyHarness gantry = ProxyHarness.start(Sandboxes.shared(TopologyKind.MARIADB),
                config -> config.withSocketTransport(transport), servers -> servers);
             Connection connection = gantry.connect(Driver.MARIADB_CONNECTOR_J_SERVER_PREPARED)) {
            assertThat(gantry.proxy.server().listener()).as("the listening socket")
                    .isInstanceOf(transport.serverChannel());
            ProxyHarness.execute(connection, "CREATE OR REPLACE TABLE " + table + " (id INT PRIMARY KEY, v TEXT)");
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO " + table + " VALUES (?, ?)")) {
                for (int id = 1; id <= 50; id++) {
                    insert.setInt(1, id);
                    insert.setString(2, "row " + id + " " + "y".repeat(id * 100));
                    insert.executeUpdate();
                }
            }
            List<String> throughGantry = rows(connection, table);
            List<String> direct;
            try (Connection primary = gantry.connectDirect(Driver.MARIADB_CONNECTOR_J_SERVER_PREPARED,
                    gantry.topology.primary())) {
                direct = rows(primary, table);
            }
            assertThat(throughGantry).hasSize(50).isEqualTo(direct);

            DatabaseServer reader = gantry.whereRunsOnceSettled(connection, "SELECT @@server_id");
            assertThat(gantry.topology.replicas()).as("a read after the replicas caught up").contains(reader);
            assertThat(gantry.whereRuns(connection, "SELECT @@server_id FOR UPDATE"))
                    .as("a locking read").isEqualTo(gantry.topology.primary());

            // A row of 16 MiB (its length prefix included): a payload split into a full frame and a continuation.
            String large = ProxyHarness.queryString(connection, "SELECT REPEAT('z', 16777212)");
            assertThat(large).hasSize(16_777_212);
            ProxyHarness.execute(connection, "DROP TABLE " + table);
        }
    }

    private static List<String> rows(Connection connection, String table) throws Exception {
        List<String> rows = new ArrayList<>();
        try (PreparedStatement select = connection.prepareStatement("SELECT id, v FROM " + table + " ORDER BY id");
             ResultSet result = select.executeQuery()) {
            while (result.next()) {
                rows.add(result.getInt(1) + ":" + result.getString(2));
            }
        }
        return rows;
    }
}
