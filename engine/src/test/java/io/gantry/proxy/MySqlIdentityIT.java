package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.execute;
import static io.gantry.proxy.ProxyHarness.queryString;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * caching_sha2_password accounts (MySQL 8's default) through Gantry against real MySQL servers (the local
 * {@code mysqld} binaries, or MySQL 8.4 in containers where Docker answers): full authentication with Gantry's RSA
 * key and over TLS, then backend logins with the password.
 */
class MySqlIdentityIT {

    @TempDir
    Path keys;

    @Test
    void cachingSha2AccountLogsInThroughGantryAndReachesEveryBackend() throws Exception {
        Optional<String> unavailable = TopologyKind.MYSQL.unavailableBecause();
        assumeTrue(unavailable.isEmpty(), () -> "skipped: " + unavailable.orElse(""));
        try (Topology topology = Sandboxes.startPrivate(TopologyKind.MYSQL, "mysql-identity", 1)) {
            try (Connection root = topology.connectAsAdmin(topology.primary())) {
                execute(root, "CREATE USER 'sha2'@'%' IDENTIFIED WITH caching_sha2_password BY 'sha2-pw'");
                execute(root, "GRANT SELECT ON app.* TO 'sha2'@'%'");
                execute(root, "GRANT SELECT ON mysql.user TO 'app'@'%'");
            }
            topology.awaitReplicasCaughtUp(Duration.ofSeconds(60));
            ProxyConfig.TlsFiles tls = ClientAuthenticationIT.selfSignedCertificate(keys);
            try (ProxyHarness gantry = ProxyHarness.start(topology, c -> c.withTls(tls), l -> l)) {
                // Without TLS: the password reaches Gantry RSA-encrypted with its key.
                try (Connection plain = DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + gantry.port()
                        + "/app?sslMode=DISABLED&allowPublicKeyRetrieval=true", "sha2", "sha2-pw")) {
                    assertThat(queryString(plain, "SELECT CURRENT_USER()")).isEqualTo("sha2@%");
                    assertThat(queryString(plain, "/*#mode=READWRITE*/ SELECT CURRENT_USER()")).isEqualTo("sha2@%");
                }
                // With TLS: in clear inside it.
                try (Connection secure = DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + gantry.port()
                        + "/app?sslMode=REQUIRED", "sha2", "sha2-pw")) {
                    assertThat(queryString(secure, "SELECT CURRENT_USER()")).isEqualTo("sha2@%");
                }
            }
        }
    }
}
