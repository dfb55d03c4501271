package io.gantry.topology;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * The TLS settings of one server URL ({@code ?ssl-mode=...&ssl-ca=...&get-server-public-key=...}), applied alike on
 * every path Gantry connects to the server by: client sessions' backend connections, health checks and lag sampling,
 * validation, account look-ups, snapshots and the change stream.
 *
 * @param mode               {@link TlsMode}; default {@link #DEFAULT_MODE}
 * @param caFile             PEM file of the CA certificates trusted for this server; required with
 *                           {@link TlsMode#VERIFY_CA} and {@link TlsMode#VERIFY_IDENTITY}, refused with the other
 *                           modes (which check no certificate); null when not given
 * @param getServerPublicKey whether a password exchange without TLS may ask the server for its RSA public key
 *                           ({@code caching_sha2_password} full authentication, MySQL only). Off by default: without
 *                           TLS nothing proves the key is the server's, so a man in the middle could hand out its
 *                           own and read the password.
 */
public record ServerTls(TlsMode mode, Path caFile, boolean getServerPublicKey) {

    /** What a URL without {@code ssl-mode} gets (docs/tls.md, "Why PREFERRED by default", says why). */
    public static final TlsMode DEFAULT_MODE = TlsMode.PREFERRED;

    /** The settings of a URL without TLS parameters. */
    public static final ServerTls DEFAULT = new ServerTls(DEFAULT_MODE, null, false);

    /** @throws IllegalArgumentException when the CA file and the mode do not fit together */
    public ServerTls {
        Objects.requireNonNull(mode, "mode");
        if (mode.verifiesCertificate() && caFile == null) {
            throw new IllegalArgumentException("ssl-mode=" + mode + " needs ssl-ca=<PEM file of the trusted CA>");
        }
        if (!mode.verifiesCertificate() && caFile != null) {
            throw new IllegalArgumentException("ssl-ca is only used with ssl-mode=VERIFY_CA or VERIFY_IDENTITY; "
                    + "with ssl-mode=" + mode + " no certificate is checked");
        }
    }

    /** The settings with only a mode (no CA file, no public key retrieval). */
    public static ServerTls of(TlsMode mode) {
        return new ServerTls(mode, null, false);
    }

    /** The CA file, when the mode checks certificates. */
    public Optional<Path> ca() {
        return Optional.ofNullable(caFile);
    }

    /** The URL query text for these settings ({@code ""} for the defaults), as {@link UpstreamUrl#parse} reads it. */
    public String query() {
        StringBuilder text = new StringBuilder();
        if (mode != DEFAULT_MODE) {
            text.append("ssl-mode=").append(mode);
        }
        if (caFile != null) {
            text.append(text.isEmpty() ? "" : "&").append("ssl-ca=").append(caFile);
        }
        if (getServerPublicKey) {
            text.append(text.isEmpty() ? "" : "&").append("get-server-public-key=true");
        }
        return text.toString();
    }

    /** For logs and errors: {@code ssl-mode=VERIFY_CA, ssl-ca=/etc/gantry/ca.pem}. */
    public String describe() {
        return "ssl-mode=" + mode + (caFile == null ? "" : ", ssl-ca=" + caFile);
    }
}
