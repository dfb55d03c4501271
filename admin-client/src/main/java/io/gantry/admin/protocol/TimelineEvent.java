package io.gantry.admin.protocol;

import java.time.Instant;
import java.util.Objects;

/**
 * An entry of the failover timeline.
 *
 * @param id     its row in {@code gantry.events}, or 0 for a pushed entry (pushes come as things happen, before or
 *               without their row)
 * @param at     when, to the millisecond
 * @param server {@code host:port} (a client host for {@code host_blocked}), or null for Gantry as a whole
 * @param kind   {@code down}, {@code up}, {@code broken}, {@code diverged}, {@code role_change}, {@code cdc_started},
 *               {@code cdc_moved}, {@code cdc_skipped}, {@code cdc_stopped}, {@code list_changed},
 *               {@code weight_changed}, {@code host_blocked}, {@code startup}
 * @param reason why, in words (passwords masked)
 * @param instance in a cluster ({@code --cluster}), the Gantry instance that recorded it; null outside one
 */
public record TimelineEvent(long id, Instant at, String server, String kind, String reason, String instance) {

    /** An entry of a Gantry in no cluster. */
    public TimelineEvent(long id, Instant at, String server, String kind, String reason) {
        this(id, at, server, kind, reason, null);
    }

    public TimelineEvent {
        Objects.requireNonNull(at, "at");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(reason, "reason");
    }
}
