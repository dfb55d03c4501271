package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.ServerTlsCounters;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.MariaDbTopology;
import io.gantry.sandbox.SandboxCertificates;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.ServerTls;
import io.gantry.topology.TlsMode;
import io.gantry.topology.UpstreamUrl;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * TLS from Gantry to the servers ({@code ?ssl-mode=...&ssl-ca=...}), on a primary and a replica that offer TLS with
 * the sandbox's certificate: every backend connection of the data path, and Gantry's own connections (validation,
 * health, account look-ups), follow the URL alike; a wrong CA or a server without TLS stops the start naming it.
 */
class BackendTlsIT {

    /** One statement that says both where it ran and whether its connection is encrypted. */
    private static final String CIPHER_AND_SERVER = "SELECT VARIABLE_VALUE, @@server_id "
            + "FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'SSL_CIPHER'";

    private static MariaDbTopology topology;
    private static SandboxCertificates certificates;

    @BeforeAll
    static void startServersWithTls() {
        certificates = SandboxCertificates.obtain();
        topology = Sandboxes.startWithTls("backend-tls", 1);
    }

    @AfterAll
    static void stopServers() {
        if (topology != null) {
            topology.close();
        }
    }

    @Test
    void requiredEncryptsTheReadAndTheWriteConnectionsOfASession() throws SQLException {
        try (ProxyHarness gantry = ProxyHarness.start(topology, c -> c, withTls(ServerTls.of(TlsMode.REQUIRED)));
             Connection connection = gantry.connect(ProxyHarness.Driver.MYSQL_CONNECTOR_J)) {
            Map<DatabaseServer, String> ciphers = ciphersSeen(gantry, connection);
            assertThat(ciphers).containsOnlyKeys(topology.primary(), topology.replicas().get(0));
            assertThat(ciphers.values()).allSatisfy(cipher -> assertThat(cipher).isNotBlank());
        }
    }

    @Test
    void disabledLeavesThemPlain() throws SQLException {
        // The same check sees plain connections when the URL asks for none: it can tell the difference.
        try (ProxyHarness gantry = ProxyHarness.start(topology, c -> c, withTls(ServerTls.of(TlsMode.DISABLED)));
             Connection connection = gantry.connect(ProxyHarness.Driver.MYSQL_CONNECTOR_J)) {
            Map<DatabaseServer, String> ciphers = ciphersSeen(gantry, connection);
            assertThat(ciphers).hasSize(2);
            assertThat(ciphers.values()).allSatisfy(cipher -> assertThat(cipher).isEmpty());
        }
    }

    @Test
    void verifyIdentityWithTheRightCaEncryptsToo() throws SQLException {
        ServerTls verify = new ServerTls(TlsMode.VERIFY_IDENTITY, certificates.ca(), false);
        try (ProxyHarness gantry = ProxyHarness.start(topology, c -> c, withTls(verify));
             Connection connection = gantry.connect(ProxyHarness.Driver.MARIADB_CONNECTOR_J)) {
            Map<DatabaseServer, String> ciphers = ciphersSeen(gantry, connection);
            assertThat(ciphers).hasSize(2);
            assertThat(ciphers.values()).allSatisfy(cipher -> assertThat(cipher).isNotBlank());
        }
    }

    @Test
    void everyConnectionGantryMakesUsesTlsWhenRequired() throws Exception {
        Map<DatabaseServer, ServerTlsCounters> before = new HashMap<>();
        for (DatabaseServer server : topology.servers()) {
            before.put(server, ServerTlsCounters.readWhenQuiet(topology, server));
        }
        // Validation, the greeting probe, health rounds (every second in the harness), the client's account
        // look-up and its backend connections to both servers, all inside the window.
        try (ProxyHarness gantry = ProxyHarness.start(topology, c -> c, withTls(ServerTls.of(TlsMode.REQUIRED)));
             Connection connection = gantry.connect(ProxyHarness.Driver.MYSQL_CONNECTOR_J)) {
            assertThat(ciphersSeen(gantry, connection)).hasSize(2);
            Thread.sleep(2500);
        }
        for (DatabaseServer server : topology.servers()) {
            ServerTlsCounters window = ServerTlsCounters.read(topology, server).since(before.get(server));
            assertThat(window.tlsFinished()).as("TLS connections to %s", server).isGreaterThanOrEqualTo(3);
            assertThat(window.plain()).as("plain connections to %s besides the counters' own: %s", server, window)
                    .isEqualTo(1);
        }
    }

    @Test
    void aWrongCaStopsTheStartNamingTheServer() {
        ServerTls wrongCa = new ServerTls(TlsMode.VERIFY_CA, certificates.otherCa(), false);
        assertThatThrownBy(() -> ProxyHarness.start(topology, c -> c, withTls(wrongCa)).close())
                .hasMessageContaining(topology.primary().address() + " failed the TLS check")
                .hasMessageContaining("ssl-mode=VERIFY_CA, ssl-ca=" + certificates.otherCa());
    }

    @Test
    void aCertificateForAnotherHostFailsVerifyIdentity() {
        ServerTls verify = new ServerTls(TlsMode.VERIFY_IDENTITY, certificates.ca(), false);
        // The certificate names 127.0.0.1 only; "localhost" reaches the same server under a name it lacks.
        assertThatThrownBy(() -> ProxyHarness.start(topology, c -> c, urls -> urls.stream()
                .map(u -> new UpstreamUrl("localhost", u.port(), u.database(), u.user(), u.password(), u.weight(),
                        verify)).toList()).close())
                .hasMessageContaining("localhost:" + topology.primary().port() + " failed the TLS check");
    }

    @Test
    void requiredAgainstAServerWithoutTlsStopsTheStart() {
        // The shared sandbox runs without TLS.
        MariaDbTopology plain = (MariaDbTopology) Sandboxes.shared(TopologyKind.MARIADB);
        assertThatThrownBy(() -> ProxyHarness.start(plain, c -> c, withTls(ServerTls.of(TlsMode.REQUIRED))).close())
                .hasMessageContaining(plain.primary().address() + " failed the TLS check")
                .hasMessageContaining("does not offer TLS");
    }

    private static UnaryOperator<List<UpstreamUrl>> withTls(ServerTls tls) {
        return urls -> urls.stream().map(u -> u.withTls(tls)).toList();
    }

    /** The session's cipher on its replica (a read) and on the primary (a hinted read, then a write). */
    private static Map<DatabaseServer, String> ciphersSeen(ProxyHarness gantry, Connection connection)
            throws SQLException {
        Map<DatabaseServer, String> ciphers = new HashMap<>();
        try (Statement statement = connection.createStatement()) {
            for (String sql : List.of(CIPHER_AND_SERVER, "/*#mode=READWRITE*/ " + CIPHER_AND_SERVER)) {
                try (ResultSet rows = statement.executeQuery(sql)) {
                    assertThat(rows.next()).isTrue();
                    ciphers.put(gantry.serverOf(rows.getLong(2)), rows.getString(1));
                }
            }
            statement.execute("CREATE TABLE IF NOT EXISTS tls_writes (id INT PRIMARY KEY)");
            statement.execute("REPLACE INTO tls_writes VALUES (1)");
        }
        return ciphers;
    }
}
