package io.gantry.topology;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Properties;

/**
 * Gantry's own JDBC connections to a server, as its service account: health checks, validation, account look-ups,
 * the change stream's checks and snapshots. Control-path only (never on an event loop). TLS follows the URL's
 * {@link ServerTls}, mapped onto mysql-connector-j's options as {@link #driverProperties} says.
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
        Properties properties = driverProperties(url);
        properties.setProperty("connectTimeout", Long.toString(connectTimeout.toMillis()));
        properties.setProperty("socketTimeout", Long.toString(readTimeout.toMillis()));
        return DriverManager.getConnection("jdbc:mysql://" + url.host() + ":" + url.port() + "/", properties);
    }

    /**
     * The account and TLS properties of every mysql-connector-j connection Gantry makes to {@code url}'s server:
     * {@code sslMode} is the URL's {@code ssl-mode} (the same names); with {@code VERIFY_CA}/{@code VERIFY_IDENTITY}
     * the trust store is the {@code ssl-ca} file's certificates alone ({@code fallbackToSystemTrustStore=false});
     * {@code allowPublicKeyRetrieval} is the URL's {@code get-server-public-key} (default false).
     *
     * @throws SQLException when the CA file cannot be used (the message names it)
     */
    public static Properties driverProperties(UpstreamUrl url) throws SQLException {
        Properties properties = new Properties();
        properties.setProperty("user", url.user());
        properties.setProperty("password", url.password());
        ServerTls tls = url.tls();
        properties.setProperty("sslMode", tls.mode().name());
        if (tls.mode().verifiesCertificate()) {
            try {
                properties.setProperty("trustCertificateKeyStoreUrl",
                        TlsTrust.trustStore(tls.caFile()).toUri().toString());
            } catch (TlsTrust.TlsConfigurationException e) {
                throw new SQLException(url.address() + ": " + e.getMessage(), "08000", e);
            }
            properties.setProperty("trustCertificateKeyStoreType", "PKCS12");
            properties.setProperty("trustCertificateKeyStorePassword", TlsTrust.TRUST_STORE_PASSWORD);
            properties.setProperty("fallbackToSystemTrustStore", "false");
        }
        properties.setProperty("allowPublicKeyRetrieval", Boolean.toString(tls.getServerPublicKey()));
        return properties;
    }

    /**
     * Why {@code e} is a TLS failure — the server does not offer TLS though the URL requires it, or its certificate
     * is not trusted or does not name the host — in plain words, or null when it is not one. A TLS failure is a
     * refusal, not an outage: retrying cannot help, and startup stops on it.
     */
    public static String tlsProblem(UpstreamUrl url, SQLException e) {
        if (!url.tls().mode().attempts()) {
            return null;
        }
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            String message = String.valueOf(cause.getMessage());
            if (cause instanceof javax.net.ssl.SSLException
                    || cause instanceof java.security.cert.CertificateException) {
                return "the TLS handshake failed (" + url.tls().describe() + "): " + message;
            }
            if (url.tls().mode().required() && (message.contains("SSL Connection required")
                    || message.contains("does not support SSL") || message.contains("not support TLS"))) {
                return "the server does not offer TLS, but the URL asks for ssl-mode=" + url.tls().mode()
                        + ": " + message;
            }
        }
        return null;
    }
}
