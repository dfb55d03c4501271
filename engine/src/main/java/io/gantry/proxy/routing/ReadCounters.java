package io.gantry.proxy.routing;

import io.gantry.route.ReplicaRefusal;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Where reads went and why, for {@code SHOW GANTRY STATUS}: reads served by replicas and by the primary, and
 * {@code consistent_prefix_failed_reads}, the reads sent to the primary because no replica met the session's read
 * guarantees, by the reason the replicas were refused. Updated by every session's event loop; no locks.
 */
public final class ReadCounters {

    private final LongAdder replicaReads = new LongAdder();
    private final LongAdder primaryReads = new LongAdder();
    private final Map<ReplicaRefusal, LongAdder> failed = new EnumMap<>(ReplicaRefusal.class);
    private final LongAdder waits = new LongAdder();
    private final LongAdder waitNanos = new LongAdder();

    public ReadCounters() {
        for (ReplicaRefusal refusal : ReplicaRefusal.values()) {
            failed.put(refusal, new LongAdder());
        }
    }

    public void servedByReplica() {
        replicaReads.increment();
    }

    public void servedByPrimary() {
        primaryReads.increment();
    }

    /** A read sent to the primary because every replica was refused; {@code why} is the deciding refusal. */
    public void consistentPrefixFailed(ReplicaRefusal why) {
        failed.get(why).increment();
    }

    /** A read waited on a replica ({@code --follower-reads-avoid-waiting=false}) for {@code nanos}. */
    public void waited(long nanos) {
        waits.increment();
        waitNanos.add(nanos);
    }

    /** The rows of {@code SHOW GANTRY STATUS}, in display order. */
    public Map<String, String> status() {
        Map<String, String> rows = new LinkedHashMap<>();
        rows.put("Reads_served_by_replicas", Long.toString(replicaReads.sum()));
        rows.put("Reads_served_by_primary", Long.toString(primaryReads.sum()));
        long total = 0;
        for (LongAdder count : failed.values()) {
            total += count.sum();
        }
        rows.put("Consistent_prefix_failed_reads", Long.toString(total));
        for (Map.Entry<ReplicaRefusal, LongAdder> entry : failed.entrySet()) {
            rows.put("Consistent_prefix_failed_reads_" + entry.getKey().counterName(),
                    Long.toString(entry.getValue().sum()));
        }
        rows.put("Causal_waits", Long.toString(waits.sum()));
        rows.put("Causal_wait_time_ms", Long.toString(waitNanos.sum() / 1_000_000));
        return rows;
    }
}
