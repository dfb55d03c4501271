package io.gantry.cluster;

import io.gantry.authority.Authority;
import io.gantry.authority.Event;
import io.gantry.authority.Retention;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The cluster's one timeline: every instance's events in the table {@code events} of the cluster's schema, and in
 * each instance's own Authority, so that {@code gantry.events} and the console show the whole cluster's timeline and
 * keep it while the primary is down. At each sync round of {@link ClusterMember} (under its lock) this instance
 * pushes its own events it has not pushed yet, those recorded while the primary was unreachable too, with their own
 * times, and pulls the other instances' events it does not hold yet, per instance by id. Both go in batches of
 * {@value #BATCH} per instance and round; a full batch asks for another round at once.
 *
 * <p>Where each side stands is kept in memory: what this instance pushed is read back from the shared table on each
 * new connection (after a restart, or on a new primary that may lack the last rows), what it holds of the others
 * from its Authority once. Not thread safe: its owner calls it under its lock.
 */
final class SharedTimeline {

    /** Events pushed, or pulled per instance, in one round at most. */
    static final int BATCH = 500;

    private final ClusterStore store;
    private final String instance;
    private final Authority authority;
    private final Retention retention;
    private final Clock clock;

    /** The connection {@link #pushedUpTo} was read on; another one reads it again. */
    private Connection readOn;
    private long pushedUpTo;
    /** Per other instance, the highest id of its events this instance holds or has passed over; null until read. */
    private Map<String, Long> pulledUpTo;

    /**
     * What one round did.
     *
     * @param pulled how many events of other instances it stored
     * @param more   whether a batch was full: another round should follow at once
     */
    record Round(int pulled, boolean more) {
    }

    SharedTimeline(ClusterStore store, String instance, Authority authority, Retention retention, Clock clock) {
        this.store = store;
        this.instance = instance;
        this.authority = authority;
        this.retention = retention;
        this.clock = clock;
    }

    /** Pushes this instance's new events, then pulls the others'. */
    Round exchange(Connection connection) throws SQLException {
        boolean more = push(connection);
        if (pulledUpTo == null) {
            pulledUpTo = new HashMap<>(authority.pulledEventsUpTo());
        }
        // Older events than this instance keeps would be pruned here within the hour: not worth pulling.
        Instant since = clock.instant().minus(retention.duration());
        int pulled = 0;
        for (Map.Entry<String, Long> newest : store.newestEventIds(connection, instance).entrySet()) {
            String other = newest.getKey();
            long held = pulledUpTo.getOrDefault(other, 0L);
            if (newest.getValue() <= held) {
                continue;
            }
            ClusterStore.EventBatch batch = store.eventsAfter(connection, other, held, since, BATCH);
            pulled += authority.storeEventsOfOtherInstances(batch.events());
            // A batch that is not full read everything up to the newest id seen above (an instance pushes its
            // events in id order, each batch in one transaction), so past events older than the retention too.
            pulledUpTo.put(other, batch.full() ? batch.upTo() : newest.getValue());
            more |= batch.full();
        }
        return new Round(pulled, more);
    }

    /**
     * Pushes this instance's events not pushed yet, a batch at most.
     *
     * @return whether the batch was full
     */
    boolean push(Connection connection) throws SQLException {
        if (connection != readOn) {
            pushedUpTo = store.newestEventId(connection, instance);
            readOn = connection;
        }
        List<Event> own = authority.ownEventsAfter(pushedUpTo, BATCH);
        if (own.isEmpty()) {
            return false;
        }
        store.addEvents(connection, instance, own);
        pushedUpTo = own.get(own.size() - 1).id();
        return own.size() == BATCH;
    }

    /**
     * Deletes this instance's events older than its retention from the shared table (each instance prunes its own).
     *
     * @return how many were deleted
     */
    int prune(Connection connection) throws SQLException {
        Instant cutoff = clock.instant().minus(retention.duration());
        int total = 0;
        int deleted;
        do {
            deleted = store.pruneEvents(connection, instance, cutoff, 10_000);
            total += deleted;
        } while (deleted == 10_000);
        return total;
    }
}
