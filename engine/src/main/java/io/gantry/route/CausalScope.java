package io.gantry.route;

import io.gantry.gtid.GtidSet;
import io.gantry.gtid.SampledPosition;

/**
 * The writes of a causal scope wider than a session ({@code gantry_read_your_writes_scope = account | token}): what
 * every session of the scope wrote through this Gantry, which each of their reads must find on its server. Shared by
 * sessions on every event loop: a write updates it under its lock, a read takes one volatile snapshot.
 *
 * <p>As for a session ({@link SessionConsistency}), a write whose GTIDs the server reported joins the floor at once;
 * one whose GTIDs are unknown is <em>pending</em> until the primary is sampled after it, and until then no replica
 * serves the scope's reads. Only the latest pending write is kept: a sample after it settles the earlier ones too.
 */
public final class CausalScope {

    /** What the scope's reads must find: the floor (null before a write), and the latest unsettled write (0: none). */
    record Writes(GtidSet floor, long pendingSinceMillis) {

        boolean pending() {
            return pendingSinceMillis != 0;
        }
    }

    private static final Writes NONE = new Writes(null, 0);

    private volatile Writes writes = NONE;
    /** Set once the registry forgot this scope: its writes from then on go to {@link #successor}. */
    private CausalScope successor;

    Writes writes() {
        return writes;
    }

    /** A session of the scope committed {@code gtids} on the primary, as the server reported them. */
    void committed(GtidSet gtids) {
        CausalScope forward;
        synchronized (this) {
            forward = successor;
            if (forward == null) {
                Writes now = writes;
                writes = new Writes(union(now.floor(), gtids), now.pendingSinceMillis());
                return;
            }
        }
        forward.committed(gtids);
    }

    /** A session of the scope wrote on the primary at {@code atMillis}, GTIDs unknown. */
    void wroteAt(long atMillis) {
        CausalScope forward;
        synchronized (this) {
            forward = successor;
            if (forward == null) {
                Writes now = writes;
                writes = new Writes(now.floor(), Math.max(now.pendingSinceMillis(), atMillis));
                return;
            }
        }
        forward.wroteAt(atMillis);
    }

    /**
     * Settles the pending write with a sample of the primary taken strictly after it (by the millisecond: a sample
     * asked for in the same millisecond may predate the write): its executed set joins the floor.
     */
    void settle(SampledPosition primary) {
        Writes now = writes;
        if (!now.pending() || primary == null || primary.sampledAt().toEpochMilli() <= now.pendingSinceMillis()) {
            return;
        }
        synchronized (this) {
            now = writes;
            if (now.pending() && primary.sampledAt().toEpochMilli() > now.pendingSinceMillis()) {
                writes = new Writes(union(now.floor(), primary.executed()), 0);
            }
        }
    }

    /**
     * The registry forgets this scope (among its least written): what it holds goes to {@code into}, and so does every
     * write that still arrives, from a session that looked it up before.
     */
    void retireInto(CausalScope into) {
        Writes held;
        synchronized (this) {
            successor = into;
            held = writes;
        }
        if (held.floor() != null) {
            into.committed(held.floor());
        }
        if (held.pending()) {
            into.wroteAt(held.pendingSinceMillis());
        }
    }

    /** Whether the registry forgot this scope ({@link #retireInto}). */
    synchronized boolean retired() {
        return successor != null;
    }

    static GtidSet union(GtidSet floor, GtidSet added) {
        if (floor == null || floor.flavour() != added.flavour()) {
            return added; // another flavour took over: the old floor cannot be compared any more
        }
        return floor.union(added);
    }
}
