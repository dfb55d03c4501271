package io.gantry.topology;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The trust side of {@link ServerTls}, in the forms each driver takes: trust managers (Gantry's own data path and
 * the change stream), Netty client contexts (Gantry's own data path, on OpenSSL where it loads), and a PKCS#12
 * trust store file (mysql-connector-j reads trust only from a key store URL, not
 * from a PEM file). With {@link TlsMode#VERIFY_CA} and {@link TlsMode#VERIFY_IDENTITY} only the CAs of the
 * {@code ssl-ca} file are trusted, never the JVM's default ones; with the other modes nothing is checked, as the
 * MySQL client does. A CA file is read again when it changes (size or modification time).
 */
public final class TlsTrust {

    /** The trust store password: it guards nothing (a trust store holds only public certificates). */
    static final String TRUST_STORE_PASSWORD = "gantry";

    private record Loaded(long size, long modified, List<X509Certificate> certificates, Path trustStore) {
    }

    /** A context made for a {@link ServerTls}, with the CA file's version it was made from (null: no CA file). */
    private record Cached<T>(Loaded source, T context) {
    }

    /** Makes a context; its failures become {@link TlsConfigurationException}s. */
    private interface ContextMaker<T> {
        T make() throws GeneralSecurityException, SSLException;
    }

    private static final Map<Path, Loaded> LOADED = new ConcurrentHashMap<>();
    private static final Map<ServerTls, Cached<SSLContext>> CONTEXTS = new ConcurrentHashMap<>();
    private static final Map<ServerTls, Cached<SslContext>> NETTY_CONTEXTS = new ConcurrentHashMap<>();

    private TlsTrust() {
    }

    /**
     * Trust managers for {@code tls}: the CA file's certificates when it verifies, otherwise one that accepts any
     * certificate (encryption without authentication, as {@code ssl-mode=PREFERRED/REQUIRED} means).
     *
     * @throws TlsConfigurationException when the CA file cannot be read or holds no certificate
     */
    public static TrustManager[] trustManagers(ServerTls tls) {
        if (!tls.mode().verifiesCertificate()) {
            return new TrustManager[] {TrustAnything.INSTANCE};
        }
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            List<X509Certificate> certificates = load(tls.caFile()).certificates();
            for (int i = 0; i < certificates.size(); i++) {
                store.setCertificateEntry("ca-" + i, certificates.get(i));
            }
            TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            factory.init(store);
            return factory.getTrustManagers();
        } catch (GeneralSecurityException | IOException e) {
            throw new TlsConfigurationException("cannot use the CA file " + tls.caFile() + ": " + e.getMessage(), e);
        }
    }

    /**
     * A client TLS context for {@code tls} (no client certificate), kept while the CA file stays the same so that
     * connections to a server share its session cache.
     *
     * @throws TlsConfigurationException when the CA file cannot be read or holds no certificate
     */
    public static SSLContext sslContext(ServerTls tls) {
        return cached(CONTEXTS, tls, () -> {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trustManagers(tls), null);
            return context;
        });
    }

    /**
     * A Netty client context for Gantry's own connections to a server with {@code tls}: OpenSSL (BoringSSL from
     * netty-tcnative) where its native library loads, else the JDK's (BENCHMARKS.md measures both). Kept while the
     * CA file stays the same, so connections to a server share its session cache (handlers made with the server's
     * host and port resume sessions).
     *
     * @throws TlsConfigurationException when the CA file cannot be read or holds no certificate
     */
    static SslContext backendContext(ServerTls tls) {
        return cached(NETTY_CONTEXTS, tls, () -> SslContextBuilder.forClient()
                .sslProvider(OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK)
                .trustManager(trustManagers(tls)[0])
                // Netty 4.2 checks the host name by default; only VERIFY_IDENTITY asks for it (backendHandler).
                .endpointIdentificationAlgorithm(null)
                .build());
    }

    /** The context {@code cache} keeps for {@code tls}, made again when the CA file changed. */
    private static <T> T cached(Map<ServerTls, Cached<T>> cache, ServerTls tls, ContextMaker<T> maker) {
        Loaded source = tls.mode().verifiesCertificate() ? load(tls.caFile()) : null;
        // The key leaves out get-server-public-key: it plays no part in TLS.
        ServerTls key = tls.getServerPublicKey() ? new ServerTls(tls.mode(), tls.caFile(), false) : tls;
        Cached<T> known = cache.get(key);
        if (known != null && known.source() == source) {
            return known.context();
        }
        try {
            T context = maker.make();
            cache.put(key, new Cached<>(source, context));
            return context;
        } catch (GeneralSecurityException | SSLException e) {
            throw new TlsConfigurationException("cannot set up TLS: " + e.getMessage(), e);
        }
    }

    /**
     * The TLS handler of one connection of Gantry's own to {@code host:port}; with {@code VERIFY_IDENTITY} the
     * certificate must name the host (a DNS name or an IP address in its subjectAltName). Made by the context
     * rather than around an engine: Netty's handler then runs OpenSSL outside the JDK-compatibility mode, which
     * reads several records per call instead of checking each one's length first.
     *
     * @throws TlsConfigurationException when the CA file cannot be read or holds no certificate
     */
    public static SslHandler backendHandler(ServerTls tls, String host, int port, ByteBufAllocator allocator) {
        SslHandler handler = backendContext(tls).newHandler(allocator, host, port);
        if (tls.mode().verifiesIdentity()) {
            SSLEngine engine = handler.engine();
            SSLParameters parameters = engine.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            engine.setSSLParameters(parameters);
        }
        return handler;
    }

    /**
     * Which TLS implementation Gantry's own connections use, for the start-up log and {@code SHOW GANTRY STATUS}:
     * {@code OpenSSL (BoringSSL 1.1.1)} or {@code JDK (OpenSSL not loaded: why)}.
     */
    public static String implementation() {
        if (OpenSsl.isAvailable()) {
            return "OpenSSL (" + OpenSsl.versionString() + ")";
        }
        Throwable why = OpenSsl.unavailabilityCause();
        return "JDK (OpenSSL not loaded: " + (why == null ? "unknown reason" : why.getMessage()) + ")";
    }

    /**
     * A PKCS#12 trust store holding the certificates of {@code caFile} (password {@link #TRUST_STORE_PASSWORD}),
     * written once per version of the file to the temporary directory, owner-only.
     */
    public static Path trustStore(Path caFile) {
        return load(caFile).trustStore();
    }

    private static Loaded load(Path caFile) {
        Path file = caFile.toAbsolutePath().normalize();
        try {
            long size = Files.size(file);
            long modified = Files.getLastModifiedTime(file).toMillis();
            Loaded known = LOADED.get(file);
            if (known != null && known.size() == size && known.modified() == modified) {
                return known;
            }
            List<X509Certificate> certificates = new ArrayList<>();
            try (InputStream in = Files.newInputStream(file)) {
                Collection<? extends Certificate> read = CertificateFactory.getInstance("X.509").generateCertificates(in);
                for (Certificate certificate : read) {
                    certificates.add((X509Certificate) certificate);
                }
            }
            if (certificates.isEmpty()) {
                throw new TlsConfigurationException("the CA file " + file + " holds no PEM certificate", null);
            }
            Loaded loaded = new Loaded(size, modified, List.copyOf(certificates), writeTrustStore(certificates));
            LOADED.put(file, loaded);
            return loaded;
        } catch (IOException | GeneralSecurityException e) {
            throw new TlsConfigurationException("cannot read the CA file " + file + ": " + e, e);
        }
    }

    private static Path writeTrustStore(List<X509Certificate> certificates) throws IOException,
            GeneralSecurityException {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        for (int i = 0; i < certificates.size(); i++) {
            store.setCertificateEntry("ca-" + i, certificates.get(i));
        }
        Path path;
        try {
            path = Files.createTempFile("gantry-ca-", ".p12",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException e) {
            path = Files.createTempFile("gantry-ca-", ".p12");
        }
        path.toFile().deleteOnExit();
        try (OutputStream out = Files.newOutputStream(path)) {
            store.store(out, TRUST_STORE_PASSWORD.toCharArray());
        }
        return path;
    }

    /** A CA file that cannot be used; the message names the file and why. */
    public static final class TlsConfigurationException extends RuntimeException {
        TlsConfigurationException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** Accepts any server certificate: for the modes that encrypt without authenticating the server. */
    private static final class TrustAnything extends X509ExtendedTrustManager {
        static final TrustAnything INSTANCE = new TrustAnything();

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) {
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
