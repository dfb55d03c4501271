package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.TopologyKinds;
import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The {@code Ssl_*} session status describes the client's connection, not Gantry's encrypted connection to the
 * server: a client connected in plaintext reads what a direct plaintext connection reads (node mysql2's
 * {@code test-select-ssl} asks it, and a security check that reads it must not be told a plaintext connection is
 * encrypted); a client connected over TLS reads its own session's cipher and version. The prepared form of the same
 * statements (COM_STMT_EXECUTE, binary rows; node mysql2's {@code connection.execute}) answers alike.
 */
class SslStatusIT {

    /** The variables a server computes per connection; the others (Ssl_accepts, the session cache) are global. */
    private static final String PER_CONNECTION = "('Ssl_cipher', 'Ssl_cipher_list', 'Ssl_version', "
            + "'Ssl_verify_mode', 'Ssl_verify_depth', 'Ssl_default_timeout', 'Ssl_server_not_before', "
            + "'Ssl_server_not_after', 'Ssl_sessions_reused')";

    @TempDir
    static Path keys;

    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void theSslStatusIsTheClientsConnectionsWhateverGantryUsesToTheServer(TopologyKind kind) throws Exception {
        ProxyConfig.TlsFiles tls = ClientAuthenticationIT.selfSignedCertificate(keys);
        // MySQL servers offer TLS by themselves; the sandbox's MariaDB servers do when asked.
        try (Topology topology = kind == TopologyKind.MARIADB ? Sandboxes.startWithTls("ssl-status", 0)
                : TopologyKinds.startPrivate(kind, "ssl-status", 0);
             ProxyHarness gantry = ProxyHarness.start(topology, c -> c.withTls(tls), l -> l)) {
            Map<String, String> directPlain;
            Map<String, String> directEncrypted;
            try (Connection plain = gantry.connectDirect(Driver.MARIADB_CONNECTOR_J, topology.primary());
                 Connection encrypted = java.sql.DriverManager.getConnection("jdbc:mariadb://"
                         + topology.primary().address() + "/" + topology.database()
                         + "?sslMode=trust&allowPublicKeyRetrieval=true", topology.appAccount().user(),
                         topology.appAccount().password())) {
                directPlain = sslStatus(plain, "SHOW SESSION STATUS LIKE 'Ssl%'");
                directEncrypted = sslStatus(encrypted, "SHOW SESSION STATUS LIKE 'Ssl%'");
            }
            assertThat(directEncrypted.get("Ssl_cipher")).as("the server offers TLS, as Gantry's connection to it "
                    + "uses").isNotEmpty();

            try (Connection plain = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
                Map<String, String> seen = sslStatus(plain, "SHOW SESSION STATUS LIKE 'Ssl%'");
                System.out.printf("SslStatusIT: %s: plaintext through Gantry %s; direct %s%n", kind,
                        perConnection(seen), perConnection(directPlain));
                assertThat(perConnection(seen)).isEqualTo(perConnection(directPlain));
                assertThat(sslStatus(plain, "SHOW STATUS")).containsEntry("Ssl_cipher", "");
                if (kind == TopologyKind.MARIADB) {
                    assertThat(sslStatus(plain, "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM "
                            + "information_schema.SESSION_STATUS WHERE VARIABLE_NAME IN " + PER_CONNECTION))
                            .allSatisfy((name, value) -> assertThat(value).isIn("", "0"));
                }
            }
            try (Connection encrypted = gantry.connect(Driver.MARIADB_CONNECTOR_J, "sslMode=trust")) {
                Map<String, String> seen = sslStatus(encrypted, "SHOW SESSION STATUS LIKE 'Ssl%'");
                System.out.printf("SslStatusIT: %s: TLS through Gantry %s%n", kind, perConnection(seen));
                assertThat(seen.get("Ssl_version")).startsWith("TLSv1.");
                assertThat(seen.get("Ssl_cipher")).isNotEmpty().doesNotContain("_WITH_");
                assertThat(seen.get("Ssl_server_not_after")).endsWith(" GMT");
            }
        }
    }

    /**
     * The prepared form, with both Connector/Js preparing on the server: a plaintext client reads through Gantry what
     * a plaintext client reads direct, for {@code SHOW STATUS} and for the status table, though Gantry's own
     * connection to the server is encrypted; a TLS client reads its own cipher.
     */
    @ParameterizedTest
    @MethodSource("io.gantry.TopologyKinds#all")
    void thePreparedSslStatusIsTheClientsConnectionsToo(TopologyKind kind) throws Exception {
        ProxyConfig.TlsFiles tls = ClientAuthenticationIT.selfSignedCertificate(keys);
        String table = kind == TopologyKind.MARIADB ? "information_schema.SESSION_STATUS"
                : "performance_schema.session_status";
        List<String> statements = List.of("SHOW SESSION STATUS LIKE 'Ssl%'", "SELECT VARIABLE_NAME, VARIABLE_VALUE "
                + "FROM " + table + " WHERE VARIABLE_NAME IN " + PER_CONNECTION + " ORDER BY VARIABLE_NAME");
        try (Topology topology = kind == TopologyKind.MARIADB ? Sandboxes.startWithTls("ssl-status-prepared", 0)
                : TopologyKinds.startPrivate(kind, "ssl-status-prepared", 0);
             ProxyHarness gantry = ProxyHarness.start(topology, c -> c.withTls(tls), l -> l)) {
            for (Driver driver : List.of(Driver.MARIADB_CONNECTOR_J_SERVER_PREPARED,
                    Driver.MYSQL_CONNECTOR_J_SERVER_PREPARED)) {
                for (String sql : statements) {
                    Map<String, String> direct;
                    try (Connection plain = gantry.connectDirect(driver, topology.primary())) {
                        direct = perConnection(preparedSslStatus(plain, sql));
                    }
                    try (Connection plain = gantry.connect(driver)) {
                        Map<String, String> seen = perConnection(preparedSslStatus(plain, sql));
                        System.out.printf("SslStatusIT: %s, %s, prepared %s: plaintext through Gantry %s; direct %s%n",
                                kind, driver, sql, seen, direct);
                        assertThat(seen).as("%s %s", driver, sql).isNotEmpty().isEqualTo(direct);
                    }
                }
            }
            try (Connection encrypted = gantry.connect(Driver.MARIADB_CONNECTOR_J,
                    "sslMode=trust&useServerPrepStmts=true")) {
                Map<String, String> seen = preparedSslStatus(encrypted, statements.get(0));
                assertThat(seen.get("Ssl_version")).startsWith("TLSv1.");
                assertThat(seen.get("Ssl_cipher")).isNotEmpty().doesNotContain("_WITH_");
            }
        }
    }

    /** The {@code Ssl_*} rows of {@code sql} run as a prepared statement, its rows read twice. */
    private static Map<String, String> preparedSslStatus(Connection connection, String sql) throws SQLException {
        Map<String, String> values = new TreeMap<>();
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int run = 0; run < 2; run++) {
                try (ResultSet rows = statement.executeQuery()) {
                    while (rows.next()) {
                        String name = rows.getString(1);
                        if (name.regionMatches(true, 0, "Ssl_", 0, 4)) {
                            values.put(name.substring(0, 1).toUpperCase() + name.substring(1).toLowerCase(),
                                    rows.getString(2));
                        }
                    }
                }
            }
        }
        return values;
    }

    private static Map<String, String> perConnection(Map<String, String> status) {
        Map<String, String> picked = new TreeMap<>(status);
        picked.keySet().removeIf(name -> !PER_CONNECTION.contains("'" + name + "'"));
        return picked;
    }

    private static Map<String, String> sslStatus(Connection connection, String sql) throws SQLException {
        Map<String, String> values = new TreeMap<>();
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
            while (rows.next()) {
                String name = rows.getString(1);
                if (name.regionMatches(true, 0, "Ssl_", 0, 4)) {
                    values.put(name.substring(0, 1).toUpperCase() + name.substring(1).toLowerCase(),
                            rows.getString(2));
                }
            }
        }
        return values;
    }
}
