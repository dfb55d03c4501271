package io.gantry.proxy.session;

import static io.gantry.proxy.session.SessionContext.LOG;

import io.netty.channel.EventLoop;
import java.util.concurrent.TimeUnit;

/**
 * The session's own {@code wait_timeout}, once it set one. Direct, the server closes a connection idle for longer;
 * through Gantry the session's server connections may be in the pool by then, so Gantry closes the client connection
 * itself, as the server would (without a packet, as MariaDB does). Only sessions that set it pay for the clock.
 */
final class IdleLimit {

    private final SessionContext session;
    private final EventLoop loop;
    private final ClientWriter client;
    /** The limit in ms (0: none set, the server's default applies). */
    private long limitMillis;
    /** When the session last became ready for a command (System.nanoTime). */
    private long readySinceNanos;
    /** Whether a check is scheduled. */
    private boolean checkPending;

    IdleLimit(SessionContext session, EventLoop loop, ClientWriter client) {
        this.session = session;
        this.loop = loop;
        this.client = client;
    }

    /** The limit as a server read it back after the session set it; 0 or less: none. */
    void set(long seconds) {
        limitMillis = Math.max(0, seconds) * 1000;
    }

    /** The limit in seconds; 0: none set. */
    long seconds() {
        return limitMillis / 1000;
    }

    /** The session became ready for a command: the idle time counts from now. */
    void ready() {
        if (limitMillis > 0) {
            readySinceNanos = System.nanoTime();
            if (!checkPending) {
                schedule(limitMillis);
            }
        }
    }

    private void schedule(long delayMillis) {
        checkPending = true;
        loop.schedule(this::check, delayMillis, TimeUnit.MILLISECONDS);
    }

    /** Closes the session if it has waited for a command for longer than the limit, or looks again later. */
    private void check() {
        checkPending = false;
        if (session.isClosed() || limitMillis == 0) {
            return;
        }
        if (session.phase() != SessionContext.Phase.READY) {
            schedule(limitMillis); // a command runs: the limit counts from when it is done
            return;
        }
        long idleMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - readySinceNanos);
        if (idleMillis < limitMillis) {
            schedule(limitMillis - idleMillis);
            return;
        }
        LOG.atInfo().addKeyValue("session", session.id())
                .log("session {}: closing: idle for {} s, longer than its wait_timeout of {} s, as the server would",
                        session.id(), idleMillis / 1000, limitMillis / 1000);
        session.closeSession();
        client.close();
    }
}
