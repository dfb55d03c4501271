package io.gantry.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.gantry.ServerTlsCounters;
import io.gantry.authority.Authority;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.MariaDbTopology;
import io.gantry.sandbox.SandboxCertificates;
import io.gantry.sandbox.Sandboxes;
import io.gantry.topology.ServerTls;
import io.gantry.topology.TlsMode;
import io.gantry.topology.UpstreamUrl;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The change stream follows the URL's TLS settings on all three of its connections: the server check, the snapshot
 * (mysql-connector-j) and the binlog stream (mysql-binlog-connector-java).
 */
class CdcTlsIT {

    private static MariaDbTopology topology;
    private static SandboxCertificates certificates;
    private static int nextId = 1;

    @TempDir
    Path dir;
    private Authority authority;
    private CdcStream stream;

    @BeforeAll
    static void startServer() throws SQLException {
        certificates = SandboxCertificates.obtain();
        topology = Sandboxes.startWithTls("cdc-tls", 0);
        execute("CREATE TABLE tls_rows (id INT PRIMARY KEY, note VARCHAR(40))");
        insertRow();
    }

    @AfterAll
    static void stopServer() {
        if (topology != null) {
            topology.close();
        }
    }

    @AfterEach
    void closeStream() {
        if (stream != null) {
            stream.close();
        }
        if (authority != null) {
            authority.close();
        }
    }

    @Test
    void snapshotAndStreamRunOverTlsWhenRequired() throws Exception {
        assertEveryConnectionEncrypted(ServerTls.of(TlsMode.REQUIRED));
    }

    @Test
    void verifyIdentityChecksTheUrlsHostAndStreams() throws Exception {
        assertEveryConnectionEncrypted(new ServerTls(TlsMode.VERIFY_IDENTITY, certificates.ca(), false));
    }

    @Test
    void aWrongCaKeepsTheStreamFromStarting() throws Exception {
        start(new ServerTls(TlsMode.VERIFY_CA, certificates.otherCa(), false));
        await().atMost(Duration.ofSeconds(30)).until(() -> !stream.status().lastError().equals("none"));
        assertThat(stream.status().state()).isNotEqualTo(CdcStream.State.STREAMING);
        assertThat(stream.status().lastError()).contains(topology.primary().address()).contains("trust");
    }

    @Test
    void requiredKeepsTheStreamOffAServerWithoutTls() {
        // The shared sandbox runs without TLS.
        io.gantry.sandbox.Topology plain = Sandboxes.shared(io.gantry.sandbox.TopologyKind.MARIADB);
        start(new UpstreamUrl(plain.primary().host(), plain.primary().port(), "app", "app", "app", 50,
                ServerTls.of(TlsMode.REQUIRED)));
        await().atMost(Duration.ofSeconds(30)).until(() -> !stream.status().lastError().equals("none"));
        assertThat(stream.status().state()).isNotEqualTo(CdcStream.State.STREAMING);
        assertThat(stream.status().lastError()).contains(plain.primary().address()).contains("SSL Connection required");
    }

    private void assertEveryConnectionEncrypted(ServerTls tls) throws Exception {
        DatabaseServer primary = topology.primary();
        ServerTlsCounters before = ServerTlsCounters.read(topology, primary);
        start(tls);
        await().atMost(Duration.ofSeconds(30)).until(() -> stream.status().state() == CdcStream.State.STREAMING);
        String note = insertRow();
        await().atMost(Duration.ofSeconds(30)).until(() -> sinkText().contains(note));
        // The first row came through the snapshot, the new one through the binlog.
        assertThat(sinkText()).contains("\"row 1\"");
        stream.close();
        stream = null;
        ServerTlsCounters window = ServerTlsCounters.read(topology, primary).since(before);
        // The insert above and this reading are the sandbox's plain connections; check, snapshot and binlog are TLS.
        assertThat(window.tlsFinished()).as("%s", window).isGreaterThanOrEqualTo(3);
        assertThat(window.plain()).as("plain connections besides the test's own: %s", window).isEqualTo(2);
    }

    private void start(ServerTls tls) {
        DatabaseServer primary = topology.primary();
        start(new UpstreamUrl(primary.host(), primary.port(), "app", "app", "app", 50, tls));
    }

    private void start(UpstreamUrl url) {
        authority = Authority.open(dir.resolve("data"));
        stream = CdcStream.start(authority, List.of(url), new CdcSettings(Duration.ofSeconds(2), 0,
                Optional.of(dir.resolve("changes.jsonl")), 64 * 1024, TableFilter.parse("app.tls_rows", "app"),
                true));
    }

    /** Every file of the sink (the snapshot commits into a file of its own). */
    private String sinkText() throws java.io.IOException {
        StringBuilder text = new StringBuilder();
        try (var files = Files.list(dir)) {
            for (Path file : files.filter(f -> f.getFileName().toString().startsWith("changes")).sorted().toList()) {
                text.append(Files.readString(file));
            }
        }
        return text.toString();
    }

    private static String insertRow() throws SQLException {
        int id = nextId++;
        execute("INSERT INTO tls_rows VALUES (" + id + ", 'row " + id + "')");
        return "row " + id;
    }

    private static void execute(String sql) throws SQLException {
        try (Connection connection = topology.connectAsApp(topology.primary());
             Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }
}
