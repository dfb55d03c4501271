package io.gantry.authority;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Objects;

/**
 * One entry of the failover timeline, a row of {@code gantry.events}.
 *
 * @param id     increasing number given by the Authority (0 for an event not stored yet); in the cluster's shared
 *               timeline, the id the event has on the instance that recorded it
 * @param at     when it happened, kept to the millisecond
 * @param server {@code host:port} it concerns, or null for Gantry as a whole (startup, list changes)
 * @param kind   what happened
 * @param reason why, in words an operator can act on; never contains a password
 * @param instance the cluster instance that recorded it ({@code --cluster-instance}), or null outside a cluster and
 *                 for this instance's events not stored yet (the Authority stores them with this instance's name)
 */
public record Event(long id, Instant at, String server, EventKind kind, String reason, String instance) {

    /** An event of this instance (its name, in a cluster, is added where it is stored). */
    public Event(long id, Instant at, String server, EventKind kind, String reason) {
        this(id, at, server, kind, reason, null);
    }

    public Event {
        Objects.requireNonNull(at, "at");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(reason, "reason");
        at = at.truncatedTo(ChronoUnit.MILLIS);
    }
}
