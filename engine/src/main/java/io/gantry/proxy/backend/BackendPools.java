package io.gantry.proxy.backend;

import io.gantry.topology.UpstreamServer;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Every event loop's {@link BackendPool}, and the counters of them all by server and account, which any thread may
 * read ({@code SHOW GANTRY POOLS}, the metrics).
 */
public final class BackendPools {

    /** One server and account's figures, summed over the event loops. */
    public record Figures(String server, String user, long idle, long created, long reused, long pooled,
                          long closedIdle) {
    }

    /** Counters by server and account; written on the event loops, read anywhere. */
    static final class Counters {
        private static final class Of {
            final LongAdder idle = new LongAdder();
            final LongAdder created = new LongAdder();
            final LongAdder reused = new LongAdder();
            final LongAdder pooled = new LongAdder();
            final LongAdder closedIdle = new LongAdder();
        }

        private record ServerUser(String server, String user) {
        }

        private final Map<ServerUser, Of> byServerUser = new ConcurrentHashMap<>();

        private Of of(BackendPool.Key key) {
            return byServerUser.computeIfAbsent(new ServerUser(key.server(), key.user()), k -> new Of());
        }

        void pooled(BackendPool.Key key) {
            Of of = of(key);
            of.pooled.increment();
            of.idle.increment();
        }

        void left(BackendPool.Key key) {
            of(key).idle.decrement();
        }

        void created(BackendPool.Key key) {
            of(key).created.increment();
        }

        void reused(BackendPool.Key key) {
            of(key).reused.increment();
        }

        void closedIdle(BackendPool.Key key) {
            of(key).closedIdle.increment();
        }

        List<Figures> figures() {
            List<Figures> out = new ArrayList<>();
            byServerUser.forEach((key, of) -> out.add(new Figures(key.server(), key.user(), of.idle.sum(),
                    of.created.sum(), of.reused.sum(), of.pooled.sum(), of.closedIdle.sum())));
            out.sort(Comparator.comparing(Figures::server).thenComparing(Figures::user));
            return out;
        }
    }

    /** Opens a connection as {@code login} to {@code server} on {@code loop}, holding a slot of the cap. */
    @FunctionalInterface
    public interface Opener {
        Future<BackendConnection> open(UpstreamServer server, BackendLogin login, EventLoop loop,
                                       Runnable releaseSlot);
    }

    private final BackendPool.Settings settings;
    private final Counters counters = new Counters();
    /** How the pools open connections of their own to keep the warm minimum; none until the proxy sets it. */
    private volatile Opener opener;
    private final Map<EventLoop, BackendPool> pools = new ConcurrentHashMap<>();
    private final ConnectionSlots slots;

    public BackendPools(BackendPool.Settings settings) {
        this.settings = settings;
        this.slots = new ConnectionSlots(settings);
        slots.onWaiting(this::closeOneIdle);
    }

    /** The per-server cap on the sessions' connections, which every new connection of a session takes a slot of. */
    public ConnectionSlots slots() {
        return slots;
    }

    public BackendPool.Settings settings() {
        return settings;
    }

    /**
     * How the pools open connections of their own, to keep {@link BackendPool.Settings#minIdlePerServer()} idle per
     * server: set once by the proxy (without it the warm minimum is only a floor on closing).
     */
    public void onWarming(Opener opener) {
        this.opener = opener;
    }

    /** {@code loop}'s pool: used only on that loop. */
    public BackendPool of(EventLoop loop) {
        BackendPool pool = pools.get(loop); // asked at every statement's end: no lambda made when it exists
        return pool != null ? pool
                : pools.computeIfAbsent(loop, l -> new BackendPool(l, settings, counters, slots, () -> opener));
    }

    /** A session of {@code key} opened a connection of its own (none was pooled, or multiplexing is off). */
    public void created(BackendPool.Key key) {
        counters.created(key);
    }

    /** Per server and account: idle now, and taken from, given to and closed by the pools since the start. */
    public List<Figures> figures() {
        return counters.figures();
    }

    /** Closes every pooled connection to {@code server}, which was marked down, each on its own loop. */
    public void closeServer(String server, String reason) {
        pools.forEach((loop, pool) -> {
            if (!loop.isShuttingDown()) {
                loop.execute(() -> pool.closeServer(server, reason));
            }
        });
    }

    /** A session waits for a slot of {@code server}: each loop closes its oldest idle connection there, if any. */
    private void closeOneIdle(String server) {
        pools.forEach((loop, pool) -> {
            if (!loop.isShuttingDown()) {
                loop.execute(() -> pool.closeOldestOf(server));
            }
        });
    }

    /** Closes every pooled connection, each on its own loop (the proxy stops). */
    public void closeAll() {
        pools.forEach((loop, pool) -> {
            if (!loop.isShuttingDown()) {
                loop.execute(pool::closeAll);
            }
        });
    }
}
