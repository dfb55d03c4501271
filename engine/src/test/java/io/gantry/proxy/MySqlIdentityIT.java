package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static io.gantry.proxy.ProxyHarness.queryString;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.TopologyKinds;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.ServerTls;
import io.gantry.topology.TlsMode;
import io.gantry.topology.UpstreamUrl;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * caching_sha2_password accounts (MySQL 8's default) through Gantry against real MySQL servers (the local
 * {@code mysqld} binaries, or MySQL 8.4 in containers where Docker answers). Client to Gantry: full authentication
 * with Gantry's RSA key and over TLS. Gantry to the servers: the full authentication a server asks for when its
 * cache does not know the account (after a restart, or after the account changed): over TLS (the default
 * {@code PREFERRED}, MySQL offering TLS), with the server's RSA key where the URL allows asking for it, and refused
 * with a reason where it does not.
 */
class MySqlIdentityIT {

    private static final String SHA2_URL_OPTIONS = "sslMode=DISABLED&allowPublicKeyRetrieval=true";

    @TempDir
    static Path keys;
    private static Topology topology;

    @BeforeAll
    static void startServers() throws SQLException {
        topology = TopologyKinds.startPrivate(TopologyKind.MYSQL, "mysql-identity", 1);
        try (Connection root = topology.connectAsAdmin(topology.primary())) {
            execute(root, "CREATE USER 'sha2'@'%' IDENTIFIED WITH caching_sha2_password BY 'sha2-pw'");
            execute(root, "GRANT SELECT ON app.* TO 'sha2'@'%'");
            execute(root, "GRANT SELECT ON mysql.user TO 'app'@'%'");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(60));
    }

    @AfterAll
    static void stopServers() {
        if (topology != null) {
            topology.close();
        }
    }

    @Test
    void cachingSha2AccountLogsInThroughGantryAndReachesEveryBackend() throws Exception {
        ProxyConfig.TlsFiles tls = ClientAuthenticationIT.selfSignedCertificate(keys);
        try (ProxyHarness gantry = ProxyHarness.start(topology, c -> c.withTls(tls), l -> l)) {
            // Without TLS: the password reaches Gantry RSA-encrypted with its key.
            try (Connection plain = connectAsSha2(gantry, SHA2_URL_OPTIONS)) {
                assertThat(queryString(plain, "SELECT CURRENT_USER()")).isEqualTo("sha2@%");
                assertThat(queryString(plain, "/*#mode=READWRITE*/ SELECT CURRENT_USER()")).isEqualTo("sha2@%");
            }
            // With TLS: in clear inside it.
            try (Connection secure = connectAsSha2(gantry, "sslMode=REQUIRED")) {
                assertThat(queryString(secure, "SELECT CURRENT_USER()")).isEqualTo("sha2@%");
            }
        }
    }

    @Test
    void backendFullAuthenticationGoesOverTlsByDefault() throws Exception {
        forgetSha2InTheServersCaches();
        try (ProxyHarness gantry = ProxyHarness.start(topology);
             Connection session = connectAsSha2(gantry, SHA2_URL_OPTIONS)) {
            assertThat(serverOf(gantry, session, "SELECT @@server_id")).isIn(topology.replicas());
            assertThat(serverOf(gantry, session, "/*#mode=READWRITE*/ SELECT @@server_id"))
                    .isEqualTo(topology.primary());
        }
    }

    @Test
    void backendFullAuthenticationWithoutTlsUsesTheServersKeyWhenTheUrlAllowsIt() throws Exception {
        forgetSha2InTheServersCaches();
        ServerTls plainWithKey = new ServerTls(TlsMode.DISABLED, null, true);
        try (ProxyHarness gantry = ProxyHarness.start(topology, c -> c, withTls(plainWithKey));
             Connection session = connectAsSha2(gantry, SHA2_URL_OPTIONS)) {
            assertThat(serverOf(gantry, session, "SELECT @@server_id")).isIn(topology.replicas());
            assertThat(serverOf(gantry, session, "/*#mode=READWRITE*/ SELECT @@server_id"))
                    .isEqualTo(topology.primary());
        }
    }

    @Test
    void backendFullAuthenticationWithoutTlsIsRefusedWithTheReasonWhenTheUrlDoesNotAllowTheKey() throws Exception {
        // Gantry's own account logs in over plain connections too: its cache entries must be warm (a login over
        // TLS fills them), or Gantry could not even start here.
        for (DatabaseServer server : topology.servers()) {
            DriverManager.getConnection("jdbc:mysql://" + server.address() + "/app?sslMode=REQUIRED", "app", "app")
                    .close();
        }
        forgetSha2InTheServersCaches();
        try (ProxyHarness gantry = ProxyHarness.start(topology, c -> c, withTls(ServerTls.of(TlsMode.DISABLED)))) {
            assertThatThrownBy(() -> connectAsSha2(gantry, SHA2_URL_OPTIONS).close())
                    .isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1045))
                    .hasMessageContaining("caching_sha2_password full authentication of 'sha2'")
                    .hasMessageContaining("get-server-public-key=true");
        }
    }

    /** Changing an account's password (to the same one) drops it from caching_sha2_password's cache on every server. */
    private static void forgetSha2InTheServersCaches() throws SQLException {
        try (Connection root = topology.connectAsAdmin(topology.primary())) {
            execute(root, "ALTER USER 'sha2'@'%' IDENTIFIED BY 'sha2-pw'");
        }
        topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
    }

    private static UnaryOperator<List<UpstreamUrl>> withTls(ServerTls tls) {
        return urls -> urls.stream().map(u -> u.withTls(tls)).toList();
    }

    private static Connection connectAsSha2(ProxyHarness gantry, String options) throws SQLException {
        return DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + gantry.port() + "/app?" + options, "sha2",
                "sha2-pw");
    }

    private static DatabaseServer serverOf(ProxyHarness gantry, Connection session, String sql) throws SQLException {
        return gantry.serverOf(Long.parseLong(queryString(session, sql)));
    }
}
