package io.gantry.topology;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Gantry's own JDBC connections to a server, as its service account: health checks, validation, account look-ups,
 * the change stream's checks and snapshots. Control-path only (never on an event loop). TLS follows the URL's
 * {@link ServerTls}, mapped onto mysql-connector-j's options as {@link #driverProperties} says.
 */
public final class ServiceConnections {

    /**
     * Where {@link #openWithin} connects: a daemon thread per attempt, which ends with it (a pool's idle threads
     * would outlive the checks that needed them by a minute, and look like leftovers of a stopped Gantry).
     */
    private static final Executor CONNECTING = attempt -> {
        Thread thread = new Thread(attempt, "gantry-connect");
        thread.setDaemon(true);
        thread.start();
    };

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
     * Connects like {@link #open(UpstreamUrl, Duration)}, but within {@code timeout} in all: resolving the host,
     * connecting (to each of its addresses in turn), TLS and the login together. The driver bounds each of these on
     * its own: a server that accepts the connection and never sends its greeting (a hung server, a port forward to
     * nowhere, a gateway that accepts for unreachable hosts) holds each read of the login for the read timeout, and a
     * host with several unreachable addresses takes the connect timeout for each. So the connection is made on a
     * thread of its own; past {@code timeout} the caller gets an error, and the attempt is left to end by the
     * driver's bounds (each of them {@code timeout}), its connection closed should it still succeed.
     *
     * @throws SQLException the driver's, or {@link SQLTimeoutException} (SQL state 08001) past {@code timeout}
     */
    public static Connection openWithin(UpstreamUrl url, Duration timeout) throws SQLException {
        CompletableFuture<Connection> attempt = CompletableFuture.supplyAsync(() -> {
            try {
                return open(url, timeout, timeout);
            } catch (SQLException e) {
                throw new CompletionException(e);
            }
        }, CONNECTING);
        try {
            return attempt.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof SQLException failed) {
                throw failed;
            }
            throw new SQLException(url.address() + ": connecting failed: " + e.getCause(), "08001", e.getCause());
        } catch (TimeoutException e) {
            attempt.thenAccept(ServiceConnections::closeLate);
            throw new SQLTimeoutException("connect and login did not finish within " + timeout.toMillis() + " ms",
                    "08001", e);
        } catch (InterruptedException e) {
            attempt.thenAccept(ServiceConnections::closeLate);
            Thread.currentThread().interrupt();
            throw new SQLException("interrupted while connecting to " + url.address(), "08001", e);
        }
    }

    /** Closes a connection that came after its caller gave up on it. */
    private static void closeLate(Connection connection) {
        try {
            connection.close();
        } catch (SQLException e) {
            // nobody uses it: a failure to close it says nothing
        }
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
