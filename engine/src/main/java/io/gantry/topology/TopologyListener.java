package io.gantry.topology;

/**
 * Hears what happens to the servers, for the failover timeline and health history. Called on the thread that
 * noticed (the health loop, or a session's event loop for a failed connection): implementations must hand the work
 * off quickly and never block.
 */
public interface TopologyListener {

    /** What kind of change. */
    enum Change {
        DOWN, UP, BROKEN, DIVERGED, ROLE_CHANGE, PRIMARY_CHANGE, LIST_CHANGED, WEIGHT_CHANGED,
        /** Not a server's: a client host blocked after failed logins (server is then the host). */
        HOST_BLOCKED
    }

    /** A change to one server (or, for {@link Change#LIST_CHANGED}, to the list; server may then be null). */
    void onChange(String server, Change change, String reason);

    /** One health round finished; every server's state is current. */
    default void onHealthRound(java.util.List<UpstreamServer> servers) {
    }

    /** Does nothing. */
    TopologyListener NONE = (server, change, reason) -> { };
}
