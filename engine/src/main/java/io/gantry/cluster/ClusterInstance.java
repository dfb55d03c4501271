package io.gantry.cluster;

import java.time.Instant;

/**
 * One instance of a cluster as the cluster's {@code instances} table has it.
 *
 * @param secondsSinceSeen how long ago it last wrote its sign of life, by the primary's clock
 */
public record ClusterInstance(String instance, String address, String gantryVersion, long appliedVersion,
                              Instant startedAt, Instant lastSeen, double secondsSinceSeen) {
}
