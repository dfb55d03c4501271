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
     * @param timeout bound on connecting; each socket read, the login's included, may take twice that
     */
    public static Connection open(UpstreamUrl url, Duration timeout) throws SQLException {
        return open(url, timeout, timeout.multipliedBy(2));
    }

    /**
     * Connects like {@link #open(UpstreamUrl, Duration)} with a separate bound on each socket read, the login's
     * included: a server that accepts the connection but never answers fails after {@code readTimeout}.
     */
    public static Connection open(UpstreamUrl url, Duration connectTimeout, Duration readTimeout)
            throws SQLException {
        Properties properties = new Properties();
        properties.setProperty("user", url.user());
        properties.setProperty("password", url.password());
        properties.setProperty("connectTimeout", Long.toString(connectTimeout.toMillis()));
        properties.setProperty("socketTimeout", Long.toString(readTimeout.toMillis()));
        // TLS when the server offers it; the RSA key exchange when it does not and caching_sha2_password asks.
        properties.setProperty("sslMode", "PREFERRED");
        properties.setProperty("allowPublicKeyRetrieval", "true");
        return DriverManager.getConnection("jdbc:mysql://" + url.host() + ":" + url.port() + "/", properties);
    }
}
