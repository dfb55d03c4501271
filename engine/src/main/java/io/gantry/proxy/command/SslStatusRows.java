package io.gantry.proxy.command;

import io.gantry.wire.ColumnDefinition;
import io.gantry.wire.MalformedPacketException;
import io.gantry.wire.Packet;
import io.gantry.wire.RowFormat;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslHandler;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSession;

/**
 * The per-connection {@code Ssl_*} status variables describe the client's connection to Gantry, not Gantry's own
 * connection to the server that answered: a server asked {@code SHOW STATUS LIKE 'Ssl_cipher'} over Gantry's
 * encrypted backend connection would otherwise tell a client connected in plaintext that its connection is
 * encrypted, and a security check would believe it. Rows of a two-column name/value result ({@code SHOW [SESSION|
 * GLOBAL] STATUS}, {@code information_schema.SESSION_STATUS}, {@code performance_schema.session_status}) whose name
 * is one of them get the value a direct connection would show: the plaintext values for a plaintext client, the
 * TLS session's for a TLS client. The server-wide counters ({@code Ssl_accepts}, the session cache) stay the
 * server's. Text and binary rows alike (a prepared {@code SHOW STATUS}, as node mysql2's {@code connection.execute}
 * sends it); other shapes (one value column selected alone) pass unchanged.
 */
final class SslStatusRows extends FirstResultRows {

    /** What a direct plaintext connection shows for each per-connection variable (MariaDB 10.11 and 11.4). */
    private static final Map<String, String> PLAINTEXT = plaintext();
    /** OpenSSL's notation of a certificate's validity, as the server shows it: {@code Dec  5 14:43:56 2027 GMT}. */
    private static final DateTimeFormatter OPENSSL_TIME = DateTimeFormatter
            .ofPattern("MMM ppd HH:mm:ss yyyy 'GMT'", Locale.ROOT).withZone(ZoneOffset.UTC);

    /** By lower-case name, the values of the client's connection. */
    private final Map<String, String> values;
    private final ByteBufAllocator alloc;

    private SslStatusRows(Map<String, String> values, int mariaDbCapabilities, ByteBufAllocator alloc) {
        super(mariaDbCapabilities);
        this.values = values;
        this.alloc = alloc;
    }

    /**
     * For a client whose channel has {@code tls} (null: plaintext), of servers of the flavour given. MySQL shows its
     * own certificate's dates ({@code Ssl_server_not_before}, {@code _after}) to every connection, plaintext ones too,
     * so those rows are its own there; MariaDB shows them only to an encrypted connection.
     *
     * @param mariaDbCapabilities the MariaDB extended capabilities the client negotiated
     */
    static SslStatusRows of(SslHandler tls, boolean mariaDb, int mariaDbCapabilities, ByteBufAllocator alloc) {
        Map<String, String> values = tls == null ? PLAINTEXT : encrypted(tls.engine());
        if (!mariaDb) {
            values = new LinkedHashMap<>(values);
            values.keySet().removeAll(Set.of("ssl_server_not_before", "ssl_server_not_after"));
        }
        return new SslStatusRows(values, mariaDbCapabilities, alloc);
    }

    @Override
    boolean columns(int columns) {
        return columns == 2;
    }

    @Override
    boolean column(int index, ColumnDefinition definition) {
        String name = definition.name();
        boolean named = index == 0 ? name.equalsIgnoreCase("Variable_name")
                : name.equalsIgnoreCase("Value") || name.equalsIgnoreCase("VARIABLE_VALUE");
        return named && RowFormat.readsAsText(definition);
    }

    @Override
    Packet row(Packet response, RowFormat format) {
        ByteBuf payload = response.payload();
        ByteBuf rewritten;
        try {
            String name = format.value(payload, 0);
            String value = name == null ? null : values.get(name.toLowerCase(Locale.ROOT));
            if (value == null) {
                return response;
            }
            rewritten = format.withValue(payload, 1, value, alloc);
        } catch (MalformedPacketException | IllegalArgumentException e) {
            return response; // not a row of the shape looked for: as the server sent it
        }
        response.release();
        return new Packet(response.sequenceId(), rewritten);
    }

    private static Map<String, String> plaintext() {
        Map<String, String> values = new LinkedHashMap<>();
        values.put("ssl_cipher", "");
        values.put("ssl_cipher_list", "");
        values.put("ssl_default_timeout", "0");
        values.put("ssl_server_not_after", "");
        values.put("ssl_server_not_before", "");
        values.put("ssl_sessions_reused", "0");
        values.put("ssl_verify_depth", "0");
        values.put("ssl_verify_mode", "0");
        values.put("ssl_version", "");
        return Map.copyOf(values);
    }

    /** The TLS session of the client's connection, in the server's terms. Gantry asks clients for no certificate. */
    private static Map<String, String> encrypted(SSLEngine engine) {
        SSLSession session = engine.getSession();
        Map<String, String> values = new LinkedHashMap<>(PLAINTEXT);
        values.put("ssl_cipher", openSslName(session.getCipherSuite()));
        values.put("ssl_cipher_list", Arrays.stream(engine.getEnabledCipherSuites()).map(SslStatusRows::openSslName)
                .collect(Collectors.joining(":")));
        values.put("ssl_version", session.getProtocol());
        values.put("ssl_default_timeout", Integer.toString(session.getSessionContext() == null ? 0
                : session.getSessionContext().getSessionTimeout()));
        Certificate[] own = session.getLocalCertificates();
        if (own != null && own.length > 0 && own[0] instanceof X509Certificate certificate) {
            values.put("ssl_server_not_before", OPENSSL_TIME.format(certificate.getNotBefore().toInstant()));
            values.put("ssl_server_not_after", OPENSSL_TIME.format(certificate.getNotAfter().toInstant()));
        }
        return Map.copyOf(values);
    }

    /**
     * A cipher suite in OpenSSL's notation, which the server uses: TLS 1.3 suites are named alike
     * ({@code TLS_AES_256_GCM_SHA384}); TLS 1.2 ones differ ({@code TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384} is
     * {@code ECDHE-RSA-AES256-GCM-SHA384}, {@code TLS_RSA_WITH_AES_128_CBC_SHA} is {@code AES128-SHA}).
     */
    static String openSslName(String javaName) {
        int with = javaName.indexOf("_WITH_");
        if (!javaName.startsWith("TLS_") || with < 0) {
            return javaName;
        }
        String exchange = javaName.substring(4, with);
        String cipher = javaName.substring(with + 6)
                .replace("AES_128", "AES128").replace("AES_256", "AES256")
                .replace("CHACHA20_POLY1305_SHA256", "CHACHA20_POLY1305");
        if (cipher.endsWith("_CBC_SHA")) {
            cipher = cipher.substring(0, cipher.length() - "_CBC_SHA".length()) + "_SHA";
        } else if (cipher.contains("_CBC_")) {
            cipher = cipher.replace("_CBC_", "_");
        }
        String prefix = exchange.equals("RSA") ? "" : exchange + "_";
        return (prefix + cipher).replace('_', '-');
    }
}
