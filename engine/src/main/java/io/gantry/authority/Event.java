package io.gantry.authority;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Objects;

/**
 * One entry of the failover timeline, a row of {@code gantry.events}.
 *
 * @param id     increasing number given by the Authority (0 for an event not stored yet)
 * @param at     when it happened, kept to the millisecond
 * @param server {@code host:port} it concerns, or null for Gantry as a whole (startup, list changes)
 * @param kind   what happened
 * @param reason why, in words an operator can act on; never contains a password
 */
public record Event(long id, Instant at, String server, EventKind kind, String reason) {

    public Event {
        Objects.requireNonNull(at, "at");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(reason, "reason");
        at = at.truncatedTo(ChronoUnit.MILLIS);
    }
}
