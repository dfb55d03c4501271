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
 */
public record TimelineEvent(long id, Instant at, String server, String kind, String reason) {

    public TimelineEvent {
        Objects.requireNonNull(at, "at");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(reason, "reason");
    }
}
