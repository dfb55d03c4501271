package io.gantry.proxy.state;

import io.gantry.route.ReadGuarantees;
import io.gantry.route.RoutingConfig;

/**
 * A session's own Gantry settings: its routing settings and read guarantees (the flags' values until its own
 * {@code SET gantry_...} changes them), and a {@code SET TRANSACTION} held for its next statement. Read and written
 * on the session's event loop.
 */
public final class GantrySettings {

    /** The flags' values: what a new session starts with, and what {@code DEFAULT} and a reset go back to. */
    private final RoutingConfig flagsRouting;
    private final ReadGuarantees flagsGuarantees;
    private RoutingConfig routing;
    private ReadGuarantees guarantees;
    /** {@code SET TRANSACTION ... READ ONLY|READ WRITE} not yet sent: for the session's next statement. */
    private NextTransaction nextTransaction;

    public GantrySettings(RoutingConfig flagsRouting, ReadGuarantees flagsGuarantees) {
        this.flagsRouting = flagsRouting;
        this.flagsGuarantees = flagsGuarantees;
        reset();
    }

    /** Every setting back to the flags' values (a reset, a change of user); nothing held. */
    public void reset() {
        this.routing = flagsRouting;
        this.guarantees = flagsGuarantees;
        this.nextTransaction = null;
    }

    /** The routing settings as the flags set them, whatever the session's own {@code SET gantry_...} made of them. */
    public RoutingConfig flagsRouting() {
        return flagsRouting;
    }

    /** The read guarantees as the flags set them. */
    public ReadGuarantees flagsGuarantees() {
        return flagsGuarantees;
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
