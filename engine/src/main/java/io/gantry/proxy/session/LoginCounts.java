package io.gantry.proxy.session;

/**
 * What one session counts for in the proxy's limits: a pending login in the login gate (from the connection until
 * the login ends) and a session toward {@code --max-client-connections} (from the end of the login on). Each is
 * left exactly once, whichever way the session ends.
 */
public final class LoginCounts {

    private final ProxyServices services;
    private final String host;
    private boolean pending;
    private boolean admitted;

    LoginCounts(ProxyServices services, String host) {
        this.services = services;
        this.host = host;
    }

    /** The client connected: it counts as a pending login until {@link #leavePending}. */
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
        if (leavePending()) {
            services.login().gate().leave(host);
        }
        if (admitted) {
            admitted = false;
            services.sessions().closed();
        }
    }
}
