package io.gantry.proxy.execution;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.state.HeldState;
import java.util.EnumSet;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * What a session knows of each of its backend connections ({@link SessionBackends}): what it holds that replaying
 * the settings cannot rebuild, when it last ran a command of the client's, and whether a retention timer is pending.
 */
final class BackendUses {

    /** What the session knows of one of its backend connections. */
    static final class Use {
        /** The value of {@code SessionContext#commands} when this connection last ran a command of the client's. */
        long lastCommand;
        /** What it holds that replaying the settings cannot rebuild. */
        final EnumSet<HeldState> held = HeldState.none();
        /** Whether a retention timer is pending for it ({@link BackendReleaser#scheduleRetentionClose}). */
        boolean retentionPending;
        /** Whether a check to give it up at once, for sessions waiting under the cap, is pending. */
        boolean releaseCheckPending;
    }

    private final Map<BackendConnection, Use> uses = new IdentityHashMap<>();

    /** What the session knows of {@code connection}, or null for one it does not hold. */
    Use get(BackendConnection connection) {
        return uses.get(connection);
    }

    /** What {@code connection} holds, or null for a connection the session does not hold. */
    Set<HeldState> heldOf(BackendConnection connection) {
        Use use = uses.get(connection);
        return use == null ? null : use.held;
    }

    void add(BackendConnection connection) {
        uses.put(connection, new Use());
    }

    void remove(BackendConnection connection) {
        uses.remove(connection);
    }

    void clear() {
        uses.clear();
    }

    /** A connection whose held state matches {@code what}, or null. */
    BackendConnection holding(Predicate<Set<HeldState>> what) {
        for (Map.Entry<BackendConnection, Use> entry : uses.entrySet()) {
            if (what.test(entry.getValue().held)) {
                return entry.getKey();
            }
        }
        return null;
    }

    /** What {@code connection} holds, in words ("a transaction, user variables"). */
    String describeHeld(BackendConnection connection) {
        Use use = uses.get(connection);
        return use == null ? "nothing" : HeldState.describe(use.held);
    }
}
