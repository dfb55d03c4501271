package io.gantry.route;

import java.util.Objects;

/**
 * One replica as the router sees it for one statement.
 *
 * @param id the server
 * @param weight its weight in the server list, 1 to 100 (default 50 in the list; the console's sliders change it)
 * @param up whether the health loop considers it up
 * @param qualifies whether it satisfies this session's consistency requirements right now (lag at most
 *        {@code --max-stale-read-bound-ms}, {@code gantry_follower_read_staleness_ms}, read-your-writes, monotonic
 *        reads); computed elsewhere and passed in
 * @param roundTripMicros its round trip as the health loop measures it, smoothed, in microseconds; -1 while unknown
 *        ({@link ReplicaPreference} reads it)
 */
public record ReplicaCandidate(ServerId id, int weight, boolean up, boolean qualifies, long roundTripMicros) {

    /** A replica whose round trip is not known (or not needed: replicas chosen by weight). */
    public ReplicaCandidate(ServerId id, int weight, boolean up, boolean qualifies) {
        this(id, weight, up, qualifies, -1);
    }

    /** Validates the weight. */
    public ReplicaCandidate {
        Objects.requireNonNull(id, "id");
        if (weight < 1 || weight > 100) {
            throw new IllegalArgumentException("weight of " + id + " must be between 1 and 100, got " + weight);
        }
    }

    /** Whether a read may go to this replica: up and qualifying. */
    public boolean eligible() {
        return up && qualifies;
    }
}
