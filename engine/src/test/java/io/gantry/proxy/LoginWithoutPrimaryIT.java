package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.MariaDbTopology;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.TopologyKind;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Logging in needs the account's entries from a server, not the primary in particular: with the primary dead,
 * clients still log in and read from replicas, a wrong password is still refused, and when no server at all can be
 * asked the client hears that the servers cannot be reached — never 1045, which pools take for bad credentials.
 */
class LoginWithoutPrimaryIT {

    @Test
    void withThePrimaryKilledClientsLogInAndReadFromReplicasAndWithEveryServerDownTheyAreNotToldAccessDenied()
            throws Exception {
        try (MariaDbTopology topology = (MariaDbTopology) Sandboxes.startPrivate(TopologyKind.MARIADB,
                "login-no-primary", 2);
             ProxyHarness harness = ProxyHarness.start(topology)) {
            DatabaseServer primary = topology.primary();
            // A login first, so the account look-up holds a connection to the primary that then dies under it.
            try (Connection warm = harness.connect(ProxyHarness.Driver.MYSQL_CONNECTOR_J)) {
                assertThat(ProxyHarness.queryString(warm, "SELECT 1")).isEqualTo("1");
            }

            topology.kill(primary);
            // The mariadb client: it logs in and sends only what it is given.
            for (int i = 0; i < 3; i++) {
                String serverId = client(topology, harness, "SELECT @@server_id").strip();
                assertThat(topology.replicas()).as("the read ran on a replica")
                        .contains(harness.serverOf(Long.parseLong(serverId)));
            }
            // JDBC drivers send session settings while connecting: without a primary those run where the
            // session's reads run, so the session opens and reads.
            for (ProxyHarness.Driver driver : ProxyHarness.Driver.values()) {
                try (Connection connection = harness.connect(driver)) {
                    assertThat(topology.replicas()).as(driver.name())
                            .contains(harness.whereRuns(connection, "SELECT @@server_id"));
                }
            }
            assertThatThrownBy(() -> DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + harness.port()
                    + "/app?sslMode=DISABLED", "app", "wrong"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode())
                            .as("a wrong password is still access denied").isEqualTo(1045));

            for (DatabaseServer replica : topology.replicas()) {
                topology.kill(replica);
            }
            for (ProxyHarness.Driver driver : new ProxyHarness.Driver[] {ProxyHarness.Driver.MYSQL_CONNECTOR_J,
                    ProxyHarness.Driver.MARIADB_CONNECTOR_J}) {
                assertThatThrownBy(() -> harness.connect(driver).close())
                        .isInstanceOfSatisfying(SQLException.class, e -> {
                            assertThat(e.getErrorCode()).as(driver + ": not access denied").isNotEqualTo(1045);
                            assertThat(e.getSQLState()).as(driver + ": a connection-class error").startsWith("08");
                            assertThat(e.getMessage()).contains("the servers cannot be reached");
                        });
            }
        }
    }

    private static String client(MariaDbTopology topology, ProxyHarness harness, String sql)
            throws IOException, InterruptedException {
        Process process = new ProcessBuilder(topology.installation().client().toString(), "--skip-ssl", "--batch",
                "--skip-column-names", "-h", "127.0.0.1", "-P", Integer.toString(harness.port()), "-u", "app",
                "-papp", "app", "-e", sql)
                .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as("mariadb client output: %s", output).isZero();
        return output;
    }
}
