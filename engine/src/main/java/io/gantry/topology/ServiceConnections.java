package io.gantry.topology;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Properties;

/**
 * Gantry's own JDBC connections to a server, as its service account: health checks, validation, version probes.
 * Control-path only (never on an event loop).
 */
public final class ServiceConnections {

    private ServiceConnections() {
    }

    /**
     * Connects to the server of {@code url} (no default database, so a missing database is reported by the checks,
     * not by the login).
     *
     * @param timeout bound on connecting and on each query's socket read
     */
    public static Connection open(UpstreamUrl url, Duration timeout) throws SQLException {
        Properties properties = new Properties();
        properties.setProperty("user", url.user());
        properties.setProperty("password", url.password());
        properties.setProperty("connectTimeout", Long.toString(timeout.toMillis()));
        properties.setProperty("socketTimeout", Long.toString(timeout.toMillis() * 2));
        // TLS when the server offers it; the RSA key exchange when it does not and caching_sha2_password asks.
        properties.setProperty("sslMode", "PREFERRED");
        properties.setProperty("allowPublicKeyRetrieval", "true");
        return DriverManager.getConnection("jdbc:mysql://" + url.host() + ":" + url.port() + "/", properties);
    }
}
