package io.gantry.proxy.execution;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.BackendPools;
import io.gantry.proxy.backend.InternalCommand;
import io.gantry.proxy.session.ProxyServices;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.state.HeldState;
import io.gantry.route.ReadBalance;
import io.gantry.route.ServerId;
import io.gantry.wire.CommandType;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.TimeUnit;

/**
 * When one of a session's connections ({@link SessionBackends}) leaves it, to the pool or closed, and why one
 * stays: the counterpart of {@link BackendOpener}. It hears of every completed statement, so the state of its timers
 * lives in the connection's {@link BackendUses.Use} and a statement sets no new timer while one is pending.
 */
final class BackendReleaser {

    private final SessionContext session;
    private final SessionBackends backends;
    private final BackendStateSync stateSync;
    private final BackendUses uses;
    private final AfterStatements afterStatements;

    BackendReleaser(SessionContext session, SessionBackends backends, BackendStateSync stateSync, BackendUses uses,
                    AfterStatements afterStatements) {
        this.session = session;
        this.backends = backends;
        this.stateSync = stateSync;
        this.uses = uses;
        this.afterStatements = afterStatements;
    }

    /**
     * Gives {@code connection} to the pool if it can serve another session as it is: idle, holding nothing replay
     * cannot rebuild (no transaction, user variables, temporary tables, locks, cursor, long data waiting for an
     * execution), in the session's initial database, and with the session's settings all applied; the session's
     * prepared statements there are closed first. Otherwise it is closed. Either way the session forgets it.
     */
    void release(ServerId key, BackendConnection connection) {
        boolean poolable = poolable(key, connection);
        String appliedState = stateSync.appliedState(connection);
        boolean tracked = stateSync.tracked(connection);
        long insertId = stateSync.insertId(connection);
        if (poolable) {
            closePreparedStatements(key, connection);
        }
        backends.drop(key, connection);
        if (poolable) {
            backends.pool().give(session.client().poolKey(key.hostPort()), connection, appliedState, tracked,
                    insertId, session.client().backendLogin());
        } else {
            connection.close();
        }
    }

    /**
     * Closes the session's prepared statements on a connection it gives to the pool (COM_STMT_CLOSE has no answer,
     * so this costs no round trip): another session must not find them there, and the server's count of prepared
     * statements ({@code max_prepared_stmt_count}) must not grow with every session that passed. The session
     * prepares them again, lazily, on the next connection that executes them.
     */
    private void closePreparedStatements(ServerId key, BackendConnection connection) {
        for (long backendId : session.prepared().backendIdsOn(key.hostPort())) {
            ByteBuf close = session.ctx().alloc().buffer(5).writeByte(CommandType.COM_STMT_CLOSE.code())
                    .writeIntLE((int) backendId);
            InternalCommand.run(connection, close, (first, error) -> { }, failure -> { });
        }
    }

    /** Whether {@code connection} can serve another session of the same login as it is (see {@link #release}). */
    private boolean poolable(ServerId key, BackendConnection connection) {
        return whyKept(key, connection) == null && connection.isUsable() && !connection.isBusy();
    }

    /** Why {@code connection} stays with the session when idle instead of going to the pool, or null if it goes. */
    String whyKept(ServerId key, BackendConnection connection) {
        BackendUses.Use use = uses.get(connection);
        if (backends.pool() == null) {
            return "its own for the session's life (--multiplex off)";
        } else if (use == null) {
            return "not the session's";
        } else if (!use.held.isEmpty()) {
            return "pinned: it holds " + HeldState.describe(use.held);
        } else if (afterStatements.whyKeptForNextStatement(connection) != null) {
            return afterStatements.whyKeptForNextStatement(connection);
        } else if (session.prepared().longDataWaitsOn(key.hostPort())) {
            return "pinned: it holds long data sent for a prepared statement's next execution";
        } else if (session.stateLog().changedDatabase()) {
            return "pinned: the session changed its database (USE)";
        } else if (stateSync.partlyApplied(connection)) {
            return "pinned: a server refused one of the session's settings there, so it holds only some of them";
        } else if (stateSync.appliedState(connection) == null) {
            return "pinned: it holds settings the pool cannot carry";
        }
        return null;
    }

    /**
     * A connection idle for {@code --connection-retention-ms} leaves the session: with multiplexing it goes to the
     * pool for any session of the same login when it can travel (see {@link #poolable}; one that cannot stays, the
     * session pinned to it); without, under statement balance, an idle replica connection is closed. At most one
     * timer per connection is pending: a connection used again meanwhile (by a command of the session that ran on
     * it, not one Gantry answered or that ran elsewhere) is looked at again one retention later.
     * While sessions wait for room under its server's cap, it goes at the end of each statement the session does not
     * follow at once with another (a busy session under that pressure gives its connection up between statements).
     */
    void scheduleRetentionClose(BackendConnection connection) {
        ProxyServices services = session.services();
        if (backends.pool() == null && (services.config().routing().readBalance() != ReadBalance.STATEMENT
                || services.upstreams().primary().map(p -> p == connection.server()).orElse(false))) {
            return;
        }
        BackendUses.Use use = uses.get(connection);
        if (use == null) {
            return;
        }
        if (waitersFor(connection) && !use.releaseCheckPending) {
            use.releaseCheckPending = true;
            long lastUse = use.lastCommand;
            session.ctx().executor().execute(() -> {
                use.releaseCheckPending = false;
                ServerId key = session.serverId(connection.server());
                if (!session.isClosed() && backends.has(key, connection) && use.lastCommand == lastUse
                        && poolable(key, connection)) {
                    release(key, connection);
                }
            });
        }
        if (!use.retentionPending) {
            use.retentionPending = true;
            scheduleRetention(connection, use, use.lastCommand);
        }
    }

    /**
     * Whether sessions wait for room under the cap of {@code connection}'s server: then a connection the session
     * does not use goes at the end of its statement, not one retention later, so that the waiters are not held up
     * by sessions that merely paused (see {@link #scheduleRetentionClose}).
     */
    private boolean waitersFor(BackendConnection connection) {
        BackendPools pools = session.services().backendPools();
        return pools != null && backends.pool() != null && pools.slots().hasWaiters(connection.server().address());
    }

    /** @param lastUse the session's command that used the connection last when the timer was set */
    private void scheduleRetention(BackendConnection connection, BackendUses.Use use, long lastUse) {
        session.ctx().executor().schedule(() -> {
            use.retentionPending = false;
            ServerId key = session.serverId(connection.server());
            if (session.isClosed() || !backends.has(key, connection)) {
                return;
            }
            // Only a use of this connection counts: statements Gantry answers itself (SHOW GANTRY SESSION, a cache
            // hit) or that ran on another server leave it idle.
            if (use.lastCommand != lastUse || connection.isBusy()) {
                use.retentionPending = true;
                scheduleRetention(connection, use, use.lastCommand);
            } else if (backends.pool() == null) {
                backends.drop(key, connection);
                connection.close();
            } else if (poolable(key, connection)) {
                release(key, connection);
            }
        }, session.services().config().connectionRetention().toMillis(), TimeUnit.MILLISECONDS);
    }
}
