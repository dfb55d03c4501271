package io.gantry.proxy.execution;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.BackendFailure;
import io.gantry.proxy.backend.BackendPool;
import io.gantry.proxy.backend.BackendPools;
import io.gantry.proxy.backend.ConnectionSlots;
import io.gantry.proxy.session.SessionContext;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import java.util.function.Consumer;

/**
 * Opens and logs in a new connection to a server for a session ({@link SessionBackends}), under the per-server cap:
 * with a cap, a slot of it first ({@link ConnectionSlots}), which may mean waiting for room.
 */
final class BackendOpener {

    private final SessionContext session;
    /** The session's event loop: a new connection runs there. */
    private final EventLoop loop;
    /** The pools, told of each connection made, and their per-server cap. */
    private final BackendPools pools;
    /** The proxy's way to open and log in a connection (see {@code ProxyServices.backendOpener}). */
    private final BackendPools.Opener connector;
    /** Where a server that cannot be reached is marked down. */
    private final Upstreams upstreams;

    BackendOpener(SessionContext session, EventLoop loop, BackendPools pools, BackendPools.Opener connector,
                  Upstreams upstreams) {
        this.session = session;
        this.loop = loop;
        this.pools = pools;
        this.connector = connector;
        this.upstreams = upstreams;
    }

    /**
     * A connection to {@code server} for the session: a new one, given to {@code opened}, or, while the session waits
     * for room under the cap, one of its pool key that another session of this loop gives back meanwhile, given to
     * {@code handed} (a storm of logins then reuses connections instead of closing one and opening another for each).
     * Either happens on the session's event loop before the future completes; it fails with the cap's error, the
     * server's, or because the session closed meanwhile (a connection that arrives then is closed).
     */
    Future<BackendConnection> open(UpstreamServer server, BackendPool.Key poolKey, Consumer<BackendConnection> opened,
                                   Consumer<BackendPool.Idle> handed) {
        Promise<BackendConnection> ready = loop.newPromise();
        ConnectionSlots slots = pools.slots();
        Future<Void> slot = slots.acquire(server, loop);
        BackendPool pool = slot.isDone() || !pools.settings().multiplex() ? null : pools.of(loop);
        Promise<BackendPool.Idle> given = pool == null ? null : pool.awaitGiven(poolKey);
        slot.addListener(granted -> {
            if (given != null) {
                pool.stopWaiting(poolKey, given);
            }
            if (ready.isDone()) {
                if (granted.isSuccess()) {
                    slots.release(server.address()); // a connection given back came first
                }
            } else if (!granted.isSuccess()) {
                ready.tryFailure(granted.cause());
            } else if (session.isClosed()) {
                slots.release(server.address());
                ready.tryFailure(new BackendFailure(server.address(), "the session closed", null));
            } else {
                login(server, ready, opened, () -> slots.release(server.address()));
            }
        });
        if (given != null) {
            given.addListener(handOver -> {
                BackendPool.Idle idle = given.getNow();
                if (ready.isDone() || idle == null) {
                    return;
                }
                // Out of the cap's queue: the slot, if it passed to this session meanwhile, goes back when it lands.
                slots.withdraw(server.address(), slot);
                if (session.isClosed()) {
                    idle.connection().close();
                    ready.tryFailure(new BackendFailure(server.address(), "the session closed", null));
                    return;
                }
                handed.accept(idle);
                ready.trySuccess(idle.connection());
            });
        }
        return ready;
    }

    /** Opens and logs in; {@code releaseSlot} gives the cap's slot back when the connection closes. */
    private void login(UpstreamServer server, Promise<BackendConnection> ready, Consumer<BackendConnection> opened,
                       Runnable releaseSlot) {
        connector.open(server, session.client().backendLogin(), loop, releaseSlot).addListener(future -> {
            if (future.isSuccess()) {
                BackendConnection connection = (BackendConnection) future.getNow();
                if (session.isClosed()) {
                    connection.close();
                    ready.tryFailure(new BackendFailure(server.address(), "the session closed", null));
                    return;
                }
                opened.accept(connection);
                pools.created(session.client().poolKey(server.address()));
                ready.trySuccess(connection);
            } else {
                if (future.cause() instanceof BackendFailure failure && failure.serverUnreachable()) {
                    // The first session to fail marks it down, so the next sessions skip it instead of waiting too.
                    upstreams.markDown(server, failure.getMessage());
                }
                ready.tryFailure(future.cause());
            }
        });
    }
}
