package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.TopologyKinds;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client that reconnects can resume its TLS session with Gantry instead of a full handshake (issue 47): Gantry
 * issues session tickets and keeps a session cache. Seen with {@code openssl s_client -starttls mysql}, which speaks
 * the MySQL protocol's switch to TLS; its second connection offers the session the first one saved. TLS 1.2 only:
 * s_client stops before the MySQL login, and a TLS 1.3 ticket would only leave with Gantry's first answer.
 */
class TlsResumptionIT {

    @TempDir
    Path directory;

    @Test
    void aReconnectingClientGetsATicketAndResumesItsSession() throws Exception {
        ProxyConfig.TlsFiles tls = ClientAuthenticationIT.selfSignedCertificate(directory);
        try (Topology topology = TopologyKinds.startPrivate(TopologyKind.MARIADB, "tls-resumption", 0);
             ProxyHarness gantry = ProxyHarness.start(topology, c -> c.withTls(tls), l -> l)) {
            Path session = directory.resolve("session.pem");
            String first = sClient(gantry.port(), "-sess_out", session.toString());
            assertThat(first).contains("New, TLSv1.2").contains("TLS session ticket lifetime hint");
            String second = sClient(gantry.port(), "-sess_in", session.toString());
            assertThat(second).contains("Reused, TLSv1.2");
        }
    }

    /** One s_client connection to Gantry that switches to TLS 1.2, kept open a second; what s_client printed. */
    private static String sClient(int port, String... sessionFile) throws Exception {
        List<String> command = new ArrayList<>(List.of("openssl", "s_client", "-connect",
                "127.0.0.1:" + port, "-starttls", "mysql", "-tls1_2"));
        command.addAll(List.of(sessionFile));
        Process client = new ProcessBuilder(command).redirectErrorStream(true).start();
        Thread.sleep(1000); // its stdin open meanwhile: it reads what Gantry sends after the handshake
        client.getOutputStream().close();
        String output = new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(client.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return output;
    }
}
