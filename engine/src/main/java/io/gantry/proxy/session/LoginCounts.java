package io.gantry.proxy.session;

/**
 * What one session counts for in the proxy's limits: a place in the login gate's queue (while it waits for its turn
 * to log in), a pending login in the login gate (from its greeting until the login ends) and a session toward
 * {@code --max-client-connections} (from the end of the login on). Each is left exactly once, whichever way the
 * session ends.
 */
public final class LoginCounts {

    private final ProxyServices services;
    private final String host;
    private boolean pending;
    private boolean admitted;
    /** The turn the session waits for in the login gate's queue, or null. */
    private Runnable queuedTurn;

    LoginCounts(ProxyServices services, String host) {
        this.services = services;
        this.host = host;
    }

    /** The client waits in the login gate's queue for {@code turn}. */
    public void queued(Runnable turn) {
        queuedTurn = turn;
    }

    /** The wait in the queue ended (the turn came, or the wait ran out). */
    public void leftQueue() {
        queuedTurn = null;
    }

    /** The client was greeted: it counts as a pending login until {@link #leavePending}. */
    public void pending() {
        pending = true;
    }

    public boolean isPending() {
        return pending;
    }

    /** The login ended: returns whether it was pending until now (so the login gate is left once). */
    public boolean leavePending() {
        boolean was = pending;
        pending = false;
        return was;
    }

    public boolean isAdmitted() {
        return admitted;
    }

    /** The session counts toward {@code --max-client-connections} from now on, until it closes. */
    public void admitted() {
        admitted = true;
    }

    /** The session closed: it leaves what it still counts in. */
    void closed() {
        // Still queued: out of the queue. Already admitted but not yet told (its turn is on its way to this
        // session's event loop): the turn leaves the gate when it finds the session closed.
        if (queuedTurn != null) {
            services.login().gate().withdraw(host, queuedTurn);
            queuedTurn = null;
        }
        if (leavePending()) {
            services.login().gate().leave(host);
        }
        if (admitted) {
            admitted = false;
            services.sessions().closed();
        }
    }
}
