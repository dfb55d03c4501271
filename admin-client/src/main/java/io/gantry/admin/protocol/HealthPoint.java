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
 * @param rttMs  round trip in milliseconds, null when it did not answer
 * @param lagMs  replication lag in milliseconds, null when unknown
 */
public record HealthPoint(Instant at, String server, String health, String role, Double rttMs, Long lagMs) {

    public HealthPoint {
        Objects.requireNonNull(at, "at");
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(health, "health");
        Objects.requireNonNull(role, "role");
    }
}
