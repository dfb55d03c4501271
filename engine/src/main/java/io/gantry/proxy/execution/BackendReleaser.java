package io.gantry.proxy.execution;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.BackendPools;
import io.gantry.proxy.backend.InternalCommand;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.state.HeldState;
import io.gantry.route.ReadBalance;
import io.gantry.topology.Upstreams;
import io.gantry.wire.CommandType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import java.util.concurrent.TimeUnit;

/**
 * When one of a session's connections ({@link SessionBackends}) leaves it, to the pool or closed, and why one
 * stays: the counterpart of {@link BackendOpener}. It hears of every completed statement, so the state of its timers
 * lives in the connection's {@link SessionBackend} and a statement sets no new timer while one is pending.
 */
final class BackendReleaser {

    private final SessionContext session;
    private final SessionBackends backends;
    private final BackendStateSync stateSync;
    private final AfterStatements afterStatements;
    /** The session's event loop, where its timers run. */
    private final EventLoop loop;
    private final ByteBufAllocator alloc;
    /** {@code --connection-retention-ms} and the read balance of the flags. */
    private final ProxyConfig config;
    private final Upstreams upstreams;
    /** Whose per-server cap may have sessions waiting for room. */
    private final BackendPools pools;

    BackendReleaser(SessionContext session, SessionBackends backends, BackendStateSync stateSync,
                    AfterStatements afterStatements, EventLoop loop, ByteBufAllocator alloc, ProxyConfig config,
                    Upstreams upstreams, BackendPools pools) {
        this.loop = loop;
        this.alloc = alloc;
        this.session = session;
        this.backends = backends;
        this.stateSync = stateSync;
        this.afterStatements = afterStatements;
        this.config = config;
        this.upstreams = upstreams;
        this.pools = pools;
    }

    /**
     * Gives {@code connection} to the pool if it can serve another session as it is: idle, holding nothing replay
     * cannot rebuild (no transaction, user variables, temporary tables, locks, cursor, long data waiting for an
     * execution), in the session's initial database, and with the session's settings all applied; the session's
     * prepared statements there are closed first. Otherwise it is closed. Either way the session forgets it.
     */
    void release(SessionBackend backend) {
        boolean poolable = poolable(backend);
        String appliedState = stateSync.appliedState(backend);
        if (poolable) {
            closePreparedStatements(backend);
        }
        backends.drop(backend);
        if (poolable) {
            backends.pool().give(session.client().poolKey(backend.server.hostPort()), backend.connection,
                    appliedState, backend.tracked, backend.insertId, session.client().backendLogin());
        } else {
            backend.connection.close();
        }
    }

    /**
     * Closes the session's prepared statements on a connection it gives to the pool (COM_STMT_CLOSE has no answer,
     * so this costs no round trip): another session must not find them there, and the server's count of prepared
     * statements ({@code max_prepared_stmt_count}) must not grow with every session that passed. The session
     * prepares them again, lazily, on the next connection that executes them.
     */
    private void closePreparedStatements(SessionBackend backend) {
        for (long backendId : session.prepared().backendIdsOn(backend.server.hostPort())) {
            ByteBuf close = alloc.buffer(5).writeByte(CommandType.COM_STMT_CLOSE.code())
                    .writeIntLE((int) backendId);
            InternalCommand.run(backend.connection, close, (first, error) -> { }, failure -> { });
        }
    }

    /** Whether {@code backend} can serve another session of the same login as it is (see {@link #release}). */
    private boolean poolable(SessionBackend backend) {
        return whyKept(backend) == null && backend.connection.isUsable() && !backend.connection.isBusy();
    }

    /** Why {@code backend} stays with the session when idle instead of going to the pool, or null if it goes. */
    String whyKept(SessionBackend backend) {
        if (backends.pool() == null) {
            return "its own for the session's life (--multiplex off)";
        } else if (!backend.held.isEmpty()) {
            return "pinned: it holds " + HeldState.describe(backend.held);
        } else if (afterStatements.whyKeptForNextStatement(backend.connection) != null) {
            return afterStatements.whyKeptForNextStatement(backend.connection);
        } else if (session.prepared().longDataWaitsOn(backend.server.hostPort())) {
            return "pinned: it holds long data sent for a prepared statement's next execution";
        } else if (session.stateLog().changedDatabase()) {
            return "pinned: the session changed its database (USE)";
        } else if (backend.partlyApplied) {
            return "pinned: a server refused one of the session's settings there, so it holds only some of them";
        } else if (stateSync.appliedState(backend) == null) {
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
        if (backends.pool() == null && (config.routing().readBalance() != ReadBalance.STATEMENT
                || upstreams.primary().map(p -> p == connection.server()).orElse(false))) {
            return;
        }
        SessionBackend backend = backends.of(connection);
        if (backend == null) {
            return;
        }
        if (waitersFor(connection) && !backend.releaseCheckPending) {
            backend.releaseCheckPending = true;
            long lastUse = backend.lastCommand;
            loop.execute(() -> {
                backend.releaseCheckPending = false;
                if (!session.isClosed() && backends.has(backend) && backend.lastCommand == lastUse
                        && poolable(backend)) {
                    release(backend);
                }
            });
        }
        if (!backend.retentionPending) {
            backend.retentionPending = true;
            scheduleRetention(backend, backend.lastCommand);
        }
    }

    /**
     * Whether sessions wait for room under the cap of {@code connection}'s server: then a connection the session
     * does not use goes at the end of its statement, not one retention later, so that the waiters are not held up
     * by sessions that merely paused (see {@link #scheduleRetentionClose}).
     */
    private boolean waitersFor(BackendConnection connection) {
        return backends.pool() != null && pools.slots().hasWaiters(connection.server().address());
    }

    /** @param lastUse the session's command that used the connection last when the timer was set */
    private void scheduleRetention(SessionBackend backend, long lastUse) {
        loop.schedule(() -> {
            backend.retentionPending = false;
            if (session.isClosed() || !backends.has(backend)) {
                return;
            }
            // Only a use of this connection counts: statements Gantry answers itself (SHOW GANTRY SESSION, a cache
            // hit) or that ran on another server leave it idle.
            if (backend.lastCommand != lastUse || backend.connection.isBusy()) {
                backend.retentionPending = true;
                scheduleRetention(backend, backend.lastCommand);
            } else if (backends.pool() == null) {
                backends.drop(backend);
                backend.connection.close();
            } else if (poolable(backend)) {
                release(backend);
            }
        }, config.connectionRetention().toMillis(), TimeUnit.MILLISECONDS);
    }
}
