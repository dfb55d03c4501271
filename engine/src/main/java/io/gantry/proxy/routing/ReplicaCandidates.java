package io.gantry.proxy.routing;

import io.gantry.route.ReplicaCandidate;
import io.gantry.route.ServerId;
import java.util.Arrays;
import java.util.List;

/**
 * The replicas as one session's routing sees them for a statement, built anew for every statement but made of the
 * previous statement's objects while nothing about a replica changed (weight, health, whether it qualifies, its
 * smoothed round trip, which a health round changes): the usual statement then allocates no candidate and no list.
 * The list handed out is unmodifiable, so reusing it is safe whoever keeps it. Used on the session's event loop
 * only.
 */
public final class ReplicaCandidates {

    private List<ReplicaCandidate> last = List.of();
    private ReplicaCandidate[] building = new ReplicaCandidate[4];
    private int size;
    private boolean changed;

    /** Begins the candidates of a new statement. */
    public void start() {
        size = 0;
        changed = false;
    }

    /** The next replica, in list order; {@code roundTripMicros} is its smoothed round trip, -1 while unknown. */
    public void add(ServerId id, int weight, boolean up, boolean qualifies, long roundTripMicros) {
        ReplicaCandidate candidate = size < last.size() ? last.get(size) : null;
        if (candidate == null || !candidate.id().equals(id) || candidate.weight() != weight || candidate.up() != up
                || candidate.qualifies() != qualifies || candidate.roundTripMicros() != roundTripMicros) {
            candidate = new ReplicaCandidate(id, weight, up, qualifies, roundTripMicros);
            changed = true;
        }
        if (size == building.length) {
            building = Arrays.copyOf(building, size * 2);
        }
        building[size++] = candidate;
    }

    /** The statement's candidates: the previous statement's list when they are the same. */
    public List<ReplicaCandidate> list() {
        if (changed || size != last.size()) {
            last = List.of(Arrays.copyOf(building, size));
        }
        Arrays.fill(building, 0, size, null);
        return last;
    }
}
