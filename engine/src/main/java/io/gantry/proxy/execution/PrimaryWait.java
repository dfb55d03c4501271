package io.gantry.proxy.execution;

import static io.gantry.proxy.session.SessionContext.LOG;

import io.gantry.proxy.session.Reply;
import io.gantry.proxy.session.SessionContext;
import io.gantry.route.SessionRouteState;
import io.gantry.route.TransactionState;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import io.gantry.wire.Packet;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A statement that needs the primary waits for one instead of failing ({@code --switchover-hold-ms}): while none is
 * known, or after the server taken for the primary refused it as read-only (it certainly did not run). The health
 * loop is asked to look at once; the statement runs again as soon as a primary is known, or as soon as the round
 * that followed the refusal is in, and at the deadline it runs (or is refused) as it would have without waiting.
 * The wait is on the session's event loop, looked at every {@value #POLL_MS} ms: no thread is held.
 *
 * <p>A statement's wait is one deadline across its tries: {@link #NOT_STARTED} before it first waits, {@link #OFF}
 * once it may wait no more.
 */
public final class PrimaryWait {

    /** A statement that has not waited yet: its deadline is set when it starts to. */
    public static final long NOT_STARTED = Long.MIN_VALUE;
    /** A statement that waits no more (its wait ran out, or statements do not wait). */
    public static final long OFF = 0;

    private static final long POLL_MS = 10;

    private final SessionContext session;
    private final Upstreams upstreams;
    /** {@code --switchover-hold-ms}: how long a statement waits at most; zero refuses at once. */
    private final Duration switchoverHold;
    /** The session's event loop, where the wait polls. */
    private final EventLoop loop;

    /** How a held statement runs again: routed anew with the deadline of its wait. */
    @FunctionalInterface
    public interface Retry {
        Reply run(Packet command, long holdUntil);
    }

    public PrimaryWait(SessionContext session, Upstreams upstreams, Duration switchoverHold, EventLoop loop) {
        this.session = session;
        this.upstreams = upstreams;
        this.switchoverHold = switchoverHold;
        this.loop = loop;
    }

    /**
     * Holds a statement refused because no primary is known, when it may still wait: true when it waits (the
     * command is then the wait's, and {@code retry} answers it), false when the refusal stands.
     */
    public boolean holdForPrimary(Packet command, long holdUntil, Retry retry) {
        long deadline = deadline(holdUntil);
        if (!allowed(deadline)) {
            return false;
        }
        await(null, null, deadline, () -> session.finish(retry.run(command, deadline)),
                () -> session.finish(retry.run(command, OFF)), command::release);
        return true;
    }

    /**
     * The deadline until which a write outside a transaction waits if the primary refuses it as read-only (so it did
     * not run), for the primary the health loop finds then; {@link #OFF} when it may not wait (waiting is off or ran
     * out, or the session is in a transaction, where the statement cannot move alone). With autocommit off a write
     * that no open transaction precedes may wait too: refused, it opened none, so it moves alone (a transaction Gantry
     * can replay is not asked here: it waits for its replay). Asked before the write is sent, as its bytes must be
     * kept on the heap for the wait ({@link #afterRefusal}).
     */
    public long deadlineAfterRefusal(long holdUntil) {
        if (holdUntil == OFF) {
            return OFF;
        }
        long deadline = deadline(holdUntil);
        SessionRouteState state = session.routeState();
        return allowed(deadline) && (state.autocommit() || state.transaction() == TransactionState.NONE) ? deadline
                : OFF;
    }

    /**
     * The primary {@code refusedBy} refused a write as read-only: it waits for the primary the health loop finds now,
     * and runs again there as {@code payload} (the command as the client sent it, with {@code sequenceId}) through
     * {@code retry}; at {@code deadline} ({@link #deadlineAfterRefusal}) it runs again as it would have without waiting.
     */
    public void afterRefusal(UpstreamServer refusedBy, long deadline, int sequenceId, byte[] payload, Retry retry) {
        await(refusedBy, null, deadline,
                () -> session.finish(retry.run(new Packet(sequenceId, Unpooled.wrappedBuffer(payload)), deadline)),
                () -> session.finish(retry.run(new Packet(sequenceId, Unpooled.wrappedBuffer(payload)), OFF)),
                () -> { });
    }

    /**
     * Holds a statement whose new connection to the primary {@code unreachable} could not be made (nothing was sent),
     * when it may still wait: until the health loop has looked at every server since, or found another primary.
     * True when it waits (the command is then the wait's), false when it may not.
     */
    public boolean holdAfterUnreachable(UpstreamServer unreachable, Packet command, long holdUntil, Retry retry) {
        long deadline = deadline(holdUntil);
        // No transaction open on a server (a BEGIN routed but not sent opens none): nothing stays behind.
        if (deadline == OFF || System.nanoTime() - deadline >= 0 || session.inTransaction()) {
            return false;
        }
        await(unreachable, "the primary " + unreachable.address() + " cannot be reached", deadline,
                () -> session.finish(retry.run(command, deadline)), () -> session.finish(retry.run(command, OFF)),
                command::release);
        return true;
    }

    /**
     * A transaction replay waits for the primary to replay on: one other than {@code lost} (the server whose
     * connection with the transaction was lost), or {@code lost} itself once the health loop has looked at every
     * server since; {@code ready} runs then, {@code expired} at {@code deadlineNanos}. Unlike a statement's wait it
     * is allowed inside a transaction: it is the transaction that waits. {@code abandoned} runs if the session closes
     * meanwhile.
     */
    public void awaitForReplay(UpstreamServer lost, String why, long deadlineNanos, Runnable ready, Runnable expired,
                               Runnable abandoned) {
        await(lost, why, deadlineNanos, ready, expired, abandoned);
    }

    /** The deadline of a statement's wait: set now if it has not waited yet, 0 when statements do not wait. */
    private long deadline(long holdUntil) {
        if (holdUntil != NOT_STARTED) {
            return holdUntil;
        }
        long hold = switchoverHold.toNanos();
        return hold == 0 ? OFF : System.nanoTime() + hold;
    }

    /** Whether a statement may wait now: waiting is on, and the session is not inside a transaction. */
    private boolean allowed(long deadlineNanos) {
        return deadlineNanos != OFF && System.nanoTime() - deadlineNanos < 0
                && session.routeState().transaction() == TransactionState.NONE;
    }

    /**
     * Waits for a primary.
     *
     * @param refusedBy the primary that refused the statement as read-only (or lost its transaction), or null when
     *                  no primary is known
     * @param why       why it waits, for the log and the health loop; null: said from {@code refusedBy}
     * @param ready     runs once there is reason to route the statement again
     * @param expired   runs at the deadline
     * @param abandoned runs if the session closes meanwhile (release what the statement holds)
     */
    private void await(UpstreamServer refusedBy, String why, long deadlineNanos, Runnable ready, Runnable expired,
                       Runnable abandoned) {
        if (why == null) {
            why = refusedBy != null ? "the primary " + refusedBy.address() + " refused a statement as read-only"
                    : "no primary: " + upstreams.noPrimaryReason();
        }
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
        loop.schedule(() -> poll(refusedBy, ticket, deadlineNanos, ready, expired, abandoned),
                POLL_MS, TimeUnit.MILLISECONDS);
    }
}
