package io.gantry.authority;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.Set;

/**
 * One health check result, a row of {@code gantry.health_history}.
 *
 * @param at     when the check ran; kept to the millisecond (finer digits are dropped here)
 * @param server {@code host:port}
 * @param health {@value #UP} or {@value #DOWN}
 * @param role   {@value #PRIMARY}, {@value #WRITABLE}, {@value #REPLICA} or {@value #UNKNOWN}
 * @param rttMs     round trip of the check's ping on a connection kept logged in, in milliseconds, or null when
 *                  the server did not answer
 * @param lagMs     replication lag in milliseconds, or null when unknown (and for the primary)
 * @param connectMs how long the check took to open and log in a new connection, in milliseconds, or null when the
 *                  server did not answer, and in samples stored by a Gantry that did not measure it apart (their
 *                  {@code rtt_ms} is the whole connect, login and first query)
 */
public record HealthSample(Instant at, String server, String health, String role, Double rttMs, Long lagMs,
                           Double connectMs) {

    /** {@code health} of a server that answered. */
    public static final String UP = "up";
    /** {@code health} of a server that did not answer. */
    public static final String DOWN = "down";
    /** {@code role} of the writable server. */
    public static final String PRIMARY = "primary";
    /** {@code role} of a writable server while another is writable too (none of them is the primary). */
    public static final String WRITABLE = "writable";
    /** {@code role} of a read-only server. */
    public static final String REPLICA = "replica";
    /** {@code role} when it could not be told. */
    public static final String UNKNOWN = "unknown";

    private static final Set<String> HEALTHS = Set.of(UP, DOWN);
    private static final Set<String> ROLES = Set.of(PRIMARY, WRITABLE, REPLICA, UNKNOWN);

    public HealthSample {
        Objects.requireNonNull(at, "at");
        Objects.requireNonNull(server, "server");
        at = at.truncatedTo(ChronoUnit.MILLIS);
        if (!HEALTHS.contains(health)) {
            throw new IllegalArgumentException("health of " + server + " must be up or down, not '" + health + "'");
        }
        if (!ROLES.contains(role)) {
            throw new IllegalArgumentException("role of " + server + " must be primary, writable, replica or unknown, not '"
                    + role + "'");
        }
        requireDuration("rtt_ms", server, rttMs);
        requireDuration("connect_ms", server, connectMs);
    }

    private static void requireDuration(String column, String server, Double millis) {
        if (millis != null && (millis.isNaN() || millis.isInfinite() || millis < 0)) {
            throw new IllegalArgumentException(column + " of " + server + " must be a finite number >= 0, not "
                    + millis);
        }
    }
}
