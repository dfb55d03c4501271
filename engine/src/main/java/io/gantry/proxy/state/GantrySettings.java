package io.gantry.proxy.state;

import io.gantry.route.ReadGuarantees;
import io.gantry.route.RoutingConfig;

/**
 * A session's own Gantry settings: its routing settings and read guarantees (the flags' values until its own
 * {@code SET gantry_...} changes them), and a {@code SET TRANSACTION} held for its next statement. Read and written
 * on the session's event loop.
 */
public final class GantrySettings {

    private RoutingConfig routing;
    private ReadGuarantees guarantees;
    /** {@code SET TRANSACTION ... READ ONLY|READ WRITE} not yet sent: for the session's next statement. */
    private NextTransaction nextTransaction;

    public GantrySettings(RoutingConfig routing, ReadGuarantees guarantees) {
        reset(routing, guarantees);
    }

    /** Every setting back to the flags' values (a new session, a reset, a change of user); nothing held. */
    public void reset(RoutingConfig flagsRouting, ReadGuarantees flagsGuarantees) {
        this.routing = flagsRouting;
        this.guarantees = flagsGuarantees;
        this.nextTransaction = null;
    }

    public RoutingConfig routing() {
        return routing;
    }

    public ReadGuarantees guarantees() {
        return guarantees;
    }

    /** The held {@code SET TRANSACTION}, or null. */
    public NextTransaction nextTransaction() {
        return nextTransaction;
    }

    /** The session's own {@code SET gantry_...}: the routing settings and read guarantees it runs with now. */
    public void use(RoutingConfig newRouting, ReadGuarantees newGuarantees) {
        this.routing = newRouting;
        this.guarantees = newGuarantees;
    }

    /** {@code SET TRANSACTION ... READ ONLY|READ WRITE}, held for the session's next statement. */
    public void holdNextTransaction(NextTransaction next) {
        this.nextTransaction = next;
    }

    /** The held {@code SET TRANSACTION} went to the next statement's server. */
    public void nextTransactionSent() {
        this.nextTransaction = null;
    }
}
