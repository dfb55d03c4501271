package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.TopologyKinds;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link ProxyServer#drain}, in-process: what each kind of session does when the drain starts. (The whole stop,
 * SIGTERM to exit code, is {@code RunCommandIT} in headless.)
 */
class DrainIT {

    private static Topology topology;

    @BeforeAll
    static void topology() throws SQLException {
        topology = TopologyKinds.shared(TopologyKind.MARIADB);
        try (Connection primary = topology.connectAsApp(topology.primary())) {
            ProxyHarness.execute(primary, "CREATE TABLE IF NOT EXISTS drain_rows (id INT PRIMARY KEY)");
        }
    }

    @Test
    void drainWithoutSessionsIsDoneAtOnceAndRefusesNewClients() throws Exception {
        try (ProxyHarness harness = ProxyHarness.start(topology)) {
            assertThat(harness.proxy.drain()).isDone();
            assertThatThrownBy(() -> harness.connect(ProxyHarness.Driver.MARIADB_CONNECTOR_J))
                    .isInstanceOf(SQLException.class);
        }
    }

    @Test
    void statementRunningAtTheDrainGetsItsAnswerThenTheSessionEnds() throws Exception {
        try (ProxyHarness harness = ProxyHarness.start(topology);
             Connection busy = harness.connect(ProxyHarness.Driver.MYSQL_CONNECTOR_J)) {
            CompletableFuture<String> answer = CompletableFuture.supplyAsync(() -> {
                try {
                    return ProxyHarness.queryString(busy, "SELECT CONCAT(SLEEP(1), 'answered')");
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(300); // the statement is running on the server
            CompletableFuture<Void> drained = harness.proxy.drain();
            assertThat(drained).isNotDone();
            assertThat(harness.proxy.busySessions()).isEqualTo(1);

            assertThat(answer.get(10, TimeUnit.SECONDS)).isEqualTo("0answered");
            drained.get(5, TimeUnit.SECONDS);
            assertThat(harness.proxy.busySessions()).isZero();
            assertThatThrownBy(() -> ProxyHarness.queryString(busy, "SELECT 1")).isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1053));
        }
    }

    @Test
    void transactionGoesOnOnItsConnectionUntilItsCommit() throws Exception {
        try (ProxyHarness harness = ProxyHarness.start(topology);
             Connection inTransaction = harness.connect(ProxyHarness.Driver.MARIADB_CONNECTOR_J);
             Connection idle = harness.connect(ProxyHarness.Driver.MARIADB_CONNECTOR_J)) {
            ProxyHarness.execute(inTransaction, "DELETE FROM drain_rows");
            inTransaction.setAutoCommit(false);
            ProxyHarness.execute(inTransaction, "INSERT INTO drain_rows VALUES (1)");

            CompletableFuture<Void> drained = harness.proxy.drain();
            assertThatThrownBy(() -> ProxyHarness.queryString(idle, "SELECT 1")).isInstanceOf(SQLException.class)
                    .hasMessageContaining("Server shutdown in progress");
            // Reads inside the transaction still see its own write: they run on its connection.
            assertThat(ProxyHarness.queryString(inTransaction, "SELECT COUNT(*) FROM drain_rows")).isEqualTo("1");
            Thread.sleep(200);
            assertThat(drained).isNotDone();
            inTransaction.commit();
            drained.get(5, TimeUnit.SECONDS);
        }
        try (Connection primary = topology.connectAsApp(topology.primary())) {
            assertThat(ProxyHarness.queryString(primary, "SELECT COUNT(*) FROM drain_rows")).isEqualTo("1");
        }
    }
}
