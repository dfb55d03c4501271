package io.gantry.proxy;

import static io.gantry.proxy.ProxyHarness.queryString;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.MariaDbTopology;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.TopologyKind;
import io.gantry.wire.CachingSha2Password;
import io.gantry.wire.CapabilityFlags;
import io.gantry.wire.SslRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Client logins: both password plugins, every caching_sha2_password path, TLS, and refusals. */
class ClientAuthenticationIT {

    @TempDir
    static Path keys;
    private static MariaDbTopology topology;
    private static ProxyConfig.TlsFiles tls;

    @BeforeAll
    static void makeCertificate() throws Exception {
        topology = (MariaDbTopology) Sandboxes.shared(TopologyKind.MARIADB);
        tls = selfSignedCertificate(keys);
    }

    /** A throw-away certificate and PKCS#8 key made with openssl in {@code directory}. */
    static ProxyConfig.TlsFiles selfSignedCertificate(Path directory) throws Exception {
        Path keys = directory;
        Path certificate = keys.resolve("cert.pem");
        Path key = keys.resolve("key.pem");
        Process openssl = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                "-subj", "/CN=gantry-test", "-keyout", key.toString(), "-out", certificate.toString())
                .redirectErrorStream(true).start();
        String output = new String(openssl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(openssl.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(openssl.exitValue()).as("openssl: %s", output).isZero();
        return new ProxyConfig.TlsFiles(certificate, key);
    }

    @Test
    void cachingSha2FullAuthenticationWithGantrysRsaKeyEveryTime() throws SQLException {
        try (ProxyHarness gantry = ProxyHarness.start(topology,
                c -> c.withDefaultAuthPlugin(CachingSha2Password.PLUGIN_NAME), l -> l)) {
            // Backends need the password itself, so every login is a full authentication (RSA without TLS).
            for (int i = 0; i < 2; i++) {
                try (Connection connection = connectorJ(gantry, "sslMode=DISABLED&allowPublicKeyRetrieval=true",
                        "app")) {
                    assertThat(queryString(connection, "SELECT 'in'")).isEqualTo("in");
                }
            }
            // Without TLS and without the key the driver cannot send the password: refused, as a server would.
            assertThatThrownBy(() -> connectorJ(gantry, "sslMode=DISABLED", "app").close())
                    .isInstanceOf(SQLException.class);
        }
    }

    @Test
    void cachingSha2FullAuthenticationOverTls() throws SQLException {
        try (ProxyHarness gantry = ProxyHarness.start(topology,
                c -> c.withDefaultAuthPlugin(CachingSha2Password.PLUGIN_NAME).withTls(tls), l -> l);
             Connection connection = connectorJ(gantry, "sslMode=REQUIRED", "app")) {
            assertThat(queryString(connection, "SELECT 'over tls'")).isEqualTo("over tls");
        }
    }

    @Test
    void tlsWithBothDriversAndTheMariadbClient() throws Exception {
        try (ProxyHarness gantry = ProxyHarness.start(topology, c -> c.withTls(tls), l -> l)) {
            try (Connection connection = connectorJ(gantry, "sslMode=REQUIRED", "app")) {
                assertThat(queryString(connection, "SELECT 1")).isEqualTo("1");
            }
            try (Connection connection = DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + gantry.port()
                    + "/app?sslMode=trust", "app", "app")) {
                assertThat(queryString(connection, "SELECT 2")).isEqualTo("2");
            }
            // Several times: the client's ClientHello may arrive glued to its SSLRequest, or split, or apart.
            for (int i = 0; i < 10; i++) {
                Process client = new ProcessBuilder(topology.installation().client().toString(), "--ssl",
                        "--disable-ssl-verify-server-cert", "--batch", "--skip-column-names", "-h", "127.0.0.1",
                        "-P", Integer.toString(gantry.port()), "-u", "app", "-papp", "app", "-e", "SELECT 'tls ok'")
                        .redirectErrorStream(true).start();
                String output = new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertThat(client.waitFor(30, TimeUnit.SECONDS)).isTrue();
                assertThat(output).contains("tls ok");
            }
        }
    }

    @Test
    void clientThatAnswersWithCachingSha2IsAcceptedByANativeDefaultProxy() throws SQLException {
        try (ProxyHarness gantry = ProxyHarness.start(topology);
             Connection connection = connectorJ(gantry,
                     "sslMode=DISABLED&allowPublicKeyRetrieval=true&defaultAuthenticationPlugin=caching_sha2_password",
                     "app")) {
            assertThat(queryString(connection, "SELECT 'ok'")).isEqualTo("ok");
        }
    }

    @Test
    void wrongPasswordAndUnknownAccountAreDenied() {
        try (ProxyHarness gantry = ProxyHarness.start(topology)) {
            assertThatThrownBy(() -> DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + gantry.port()
                    + "/app?sslMode=DISABLED", "app", "not-the-password").close())
                    .isInstanceOf(SQLException.class).hasMessageContaining("Access denied for user 'app'");
            assertThatThrownBy(() -> DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + gantry.port()
                    + "/app?sslMode=disable", "intruder", "app").close())
                    .isInstanceOf(SQLException.class).hasMessageContaining("Access denied for user 'intruder'");
        }
    }

    @Test
    void tlsRequestToAProxyWithoutTlsIsRefusedClearly() throws Exception {
        try (ProxyHarness gantry = ProxyHarness.start(topology)) {
            assertThatThrownBy(() -> connectorJ(gantry, "sslMode=REQUIRED", "app").close())
                    .isInstanceOf(SQLException.class);
            // A client that sends an SSLRequest anyway is told what to do.
            try (Socket socket = new Socket("127.0.0.1", gantry.port())) {
                ProxyFailureIT.RawClient raw = new ProxyFailureIT.RawClient(socket);
                raw.readPacket();
                ByteBuf request = Unpooled.buffer();
                new SslRequest(CapabilityFlags.CLIENT_PROTOCOL_41
                        | CapabilityFlags.CLIENT_SSL, 1 << 24, 45, 0).encode(request);
                byte[] payload = new byte[request.readableBytes()];
                request.readBytes(payload);
                raw.sendPacket(1, payload);
                String error = new String(raw.readPacket(), StandardCharsets.UTF_8);
                assertThat(error).contains("TLS is not enabled on this Gantry").contains("--tls-cert");
            }
        }
    }

    private static Connection connectorJ(ProxyHarness gantry, String options, String password) throws SQLException {
        return DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + gantry.port() + "/app?" + options, "app",
                password);
    }
}
