package io.gantry.route;

import java.util.Objects;

/**
 * Identifies one backend server by its {@code host:port}, as written in the server list (IPv6 hosts in brackets).
 *
 * @param hostPort for example {@code db1.example.com:3306} or {@code [::1]:3306}
 */
public record ServerId(String hostPort) {

    /** Rejects null and blank values. */
    public ServerId {
        Objects.requireNonNull(hostPort, "hostPort");
        if (hostPort.isBlank()) {
            throw new IllegalArgumentException("server id must be host:port, got a blank string");
        }
    }

    /** The id of {@code host} on {@code port}; an IPv6 literal is put in brackets. */
    public static ServerId of(String host, int port) {
        Objects.requireNonNull(host, "host");
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port must be between 1 and 65535, got " + port);
        }
        boolean ipv6 = host.indexOf(':') >= 0 && !host.startsWith("[");
        return new ServerId((ipv6 ? "[" + host + "]" : host) + ":" + port);
    }

    @Override
    public String toString() {
        return hostPort;
    }
}
