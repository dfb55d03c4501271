package io.gantry.gtid;

import java.time.Instant;
import java.util.Objects;

/**
 * What a server had executed at a moment, as Gantry's position sampler read it, and what that says about its
 * freshness.
 *
 * @param executed  the server's executed GTID set ({@code gtid_executed}, MariaDB {@code gtid_current_pos})
 * @param sampledAt when the reading was asked for: the set holds everything the server had executed then
 * @param safeTime  the latest moment of which the server is known to hold everything the primary had executed (the
 *                  sampling time of the newest primary set it contains); for the primary itself its sampling time
 */
public record SampledPosition(GtidSet executed, Instant sampledAt, Instant safeTime) {

    public SampledPosition {
        Objects.requireNonNull(executed, "executed");
        Objects.requireNonNull(sampledAt, "sampledAt");
        Objects.requireNonNull(safeTime, "safeTime");
    }
}
