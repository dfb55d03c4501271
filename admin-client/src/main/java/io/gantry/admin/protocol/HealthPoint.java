package io.gantry.admin.protocol;

import java.time.Instant;
import java.util.Objects;

/**
 * One health check of one server, a row of {@code gantry.health_history}.
 *
 * @param at     when
 * @param server {@code host:port}
 * @param health {@code up} or {@code down}
 * @param role   {@code primary}, {@code replica} or {@code unknown}
 * @param rttMs     round trip of the check's ping in milliseconds, null when it did not answer
 * @param lagMs     replication lag in milliseconds, null when unknown
 * @param connectMs how long the check took to open and log in a new connection, in milliseconds; null when it did
 *                  not answer, and from an engine that does not measure it apart
 */
public record HealthPoint(Instant at, String server, String health, String role, Double rttMs, Long lagMs,
                          Double connectMs) {

    public HealthPoint {
        Objects.requireNonNull(at, "at");
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(health, "health");
        Objects.requireNonNull(role, "role");
    }
}
