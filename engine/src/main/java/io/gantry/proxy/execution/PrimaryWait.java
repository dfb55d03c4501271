package io.gantry.proxy.execution;

import static io.gantry.proxy.session.SessionContext.LOG;

import io.gantry.proxy.session.SessionContext;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import java.util.concurrent.TimeUnit;

/**
 * A statement that needs the primary waits for one instead of failing ({@code --switchover-hold-ms}): while none is
 * known, or after the server taken for the primary refused it as read-only (it certainly did not run). The health
 * loop is asked to look at once; the statement runs again as soon as a primary is known, or as soon as the round
 * that followed the refusal is in, and at the deadline it runs (or is refused) as it would have without waiting.
 * The wait is on the session's event loop, looked at every {@value #POLL_MS} ms: no thread is held.
 */
public final class PrimaryWait {

    private static final long POLL_MS = 10;

    private final SessionContext session;

    public PrimaryWait(SessionContext session) {
        this.session = session;
    }

    /** Whether a statement may wait now: waiting is on, and the session is not inside a transaction. */
    public boolean allowed(long deadlineNanos) {
        return deadlineNanos != 0 && System.nanoTime() - deadlineNanos < 0
                && session.routeState().transaction() == io.gantry.route.TransactionState.NONE;
    }

    /** The deadline of a statement's wait that starts now, or 0 when statements do not wait. */
    public long deadlineFromNow() {
        long hold = session.services().config().failover().switchoverHold().toNanos();
        return hold == 0 ? 0 : System.nanoTime() + hold;
    }

    /**
     * Waits for a primary.
     *
     * @param refusedBy the primary that refused the statement as read-only, or null when no primary is known
     * @param ready     runs once there is reason to route the statement again
     * @param expired   runs at the deadline
     * @param abandoned runs if the session closes meanwhile (release what the statement holds)
     */
    public void await(UpstreamServer refusedBy, long deadlineNanos, Runnable ready, Runnable expired,
                      Runnable abandoned) {
        Upstreams upstreams = session.services().upstreams();
        String why = refusedBy != null ? "the primary " + refusedBy.address() + " refused a statement as read-only"
                : "no primary: " + upstreams.noPrimaryReason();
        long ticket = upstreams.requestCheck(why);
        LOG.atDebug().addKeyValue("session", session.id())
                .log("session {}: holding a statement for up to {} ms ({})", session.id(),
                        TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime()), why);
        poll(refusedBy, ticket, deadlineNanos, ready, expired, abandoned);
    }

    private void poll(UpstreamServer refusedBy, long ticket, long deadlineNanos, Runnable ready, Runnable expired,
                      Runnable abandoned) {
        if (session.isClosed()) {
            abandoned.run();
            return;
        }
        Upstreams upstreams = session.services().upstreams();
        UpstreamServer primary = upstreams.primaryOrNull();
        boolean routeAgain = primary != null && (primary != refusedBy || upstreams.checkedSince(ticket));
        if (routeAgain) {
            ready.run();
            return;
        }
        if (System.nanoTime() - deadlineNanos >= 0) {
            expired.run();
            return;
        }
        session.ctx().executor().schedule(() -> poll(refusedBy, ticket, deadlineNanos, ready, expired, abandoned),
                POLL_MS, TimeUnit.MILLISECONDS);
    }
}
