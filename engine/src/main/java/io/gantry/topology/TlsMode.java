package io.gantry.topology;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * How Gantry's connections to a server use TLS: the values and meanings of the MySQL client's {@code --ssl-mode}
 * (and of mysql-connector-j's {@code sslMode}), the same on every path (client sessions' backend connections,
 * health checks, validation, account look-ups, snapshots and the change stream).
 */
public enum TlsMode {
    /** Never TLS. */
    DISABLED,
    /** TLS when the server offers it, without checking its certificate; plain text when it does not. */
    PREFERRED,
    /** TLS or no connection; the certificate is not checked. */
    REQUIRED,
    /** Like {@link #REQUIRED}, and the server's certificate must chain to a CA of the {@code ssl-ca} file. */
    VERIFY_CA,
    /** Like {@link #VERIFY_CA}, and the certificate must name the host the URL connects to. */
    VERIFY_IDENTITY;

    /** Whether TLS is asked for when the server offers it. */
    public boolean attempts() {
        return this != DISABLED;
    }

    /** Whether a server without TLS is refused. */
    public boolean required() {
        return compareTo(REQUIRED) >= 0;
    }

    /** Whether the server's certificate is checked against the CA file. */
    public boolean verifiesCertificate() {
        return compareTo(VERIFY_CA) >= 0;
    }

    /** Whether the certificate must also match the host name. */
    public boolean verifiesIdentity() {
        return this == VERIFY_IDENTITY;
    }

    /**
     * The mode named {@code text}, in any case, with {@code -} or {@code _}.
     *
     * @throws IllegalArgumentException listing the accepted values
     */
    public static TlsMode parse(String text) {
        String name = text.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        for (TlsMode mode : values()) {
            if (mode.name().equals(name)) {
                return mode;
            }
        }
        throw new IllegalArgumentException("ssl-mode '" + text + "' is not one of " + Arrays.stream(values())
                .map(Enum::name).collect(Collectors.joining(", ")));
    }
}
