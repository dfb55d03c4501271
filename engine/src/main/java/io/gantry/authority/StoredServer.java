package io.gantry.authority;

import java.util.Objects;
import java.util.Optional;

/**
 * One entry of a stored server list. There is deliberately no password: the Authority never stores one; the
 * service account's password is supplied at runtime by whoever starts Gantry.
 *
 * @param host     server host name or address
 * @param port     TCP port, 1..65535
 * @param database the database Gantry and its clients use
 * @param user     Gantry's service account on this server
 * @param weight   1..100; share of replica reads and CDC preference
 * @param tls      the URL's TLS parameters as URL query text ({@code ssl-mode=VERIFY_CA&ssl-ca=/etc/ca.pem}, {@code ""}
 *                 for the defaults); empty for a list stored by a Gantry that did not keep them
 */
public record StoredServer(String host, int port, String database, String user, int weight, Optional<String> tls) {

    /** An entry with the default TLS settings. */
    public StoredServer(String host, int port, String database, String user, int weight) {
        this(host, port, database, user, weight, Optional.of(""));
    }

    public StoredServer {
        Objects.requireNonNull(tls, "tls");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(database, "database");
        Objects.requireNonNull(user, "user");
        if (host.isBlank()) {
            throw new IllegalArgumentException("a stored server needs a host");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port of " + host + " must be between 1 and 65535, not " + port);
        }
        ServerListStore.checkWeight(weight);
    }

    /** {@code host:port}, the name Gantry uses for a server in logs, events and admin SQL. */
    public String address() {
        return host + ":" + port;
    }
}
