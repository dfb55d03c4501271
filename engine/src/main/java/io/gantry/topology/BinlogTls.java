package io.gantry.topology;

import com.github.shyiko.mysql.binlog.BinaryLogClient;
import com.github.shyiko.mysql.binlog.network.SSLMode;
import io.gantry.topology.ServerTls;
import io.gantry.topology.TlsTrust;
import io.gantry.topology.UpstreamUrl;
import java.io.IOException;
import java.net.SocketException;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

/**
 * The URL's {@link ServerTls} on a mysql-binlog-connector-java client, with the same rules as Gantry's other paths.
 *
 * <p>The library's own {@code VERIFY_IDENTITY} compares the certificate with the reverse-DNS name of the peer's
 * address ({@code InetAddress.getHostName()}), not with the host the URL names; Gantry instead asks the library for
 * {@code VERIFY_CA} and checks the identity itself, on its own socket, against the URL's host (endpoint
 * identification, as on the data path). The library's default TLS sockets allow TLS 1.2 only and trust anything or
 * the JVM's CAs; Gantry's trust the {@code ssl-ca} file alone, as everywhere else.
 *
 * <p>Unlike the other paths the library has no switch for asking a server for its RSA public key: without TLS a
 * {@code caching_sha2_password} full authentication (MySQL) always asks for it. See docs/tls.md.
 */
public final class BinlogTls {

    private BinlogTls() {
    }

    public static void apply(UpstreamUrl server, BinaryLogClient binlog) {
        ServerTls tls = server.tls();
        binlog.setSSLMode(switch (tls.mode()) {
            case DISABLED -> SSLMode.DISABLED;
            case PREFERRED -> SSLMode.PREFERRED;
            case REQUIRED -> SSLMode.REQUIRED;
            case VERIFY_CA, VERIFY_IDENTITY -> SSLMode.VERIFY_CA;
        });
        if (!tls.mode().attempts()) {
            return;
        }
        SSLContext context = TlsTrust.sslContext(tls);
        boolean identity = tls.mode().verifiesIdentity();
        binlog.setSslSocketFactory(socket -> {
            try {
                SSLSocket secure = (SSLSocket) context.getSocketFactory().createSocket(socket, server.host(),
                        server.port(), true);
                if (identity) {
                    SSLParameters parameters = secure.getSSLParameters();
                    parameters.setEndpointIdentificationAlgorithm("HTTPS");
                    secure.setSSLParameters(parameters);
                }
                return secure;
            } catch (IOException e) {
                SocketException failure = new SocketException("TLS to " + server.address() + ": " + e.getMessage());
                failure.initCause(e);
                throw failure;
            }
        });
    }
}
