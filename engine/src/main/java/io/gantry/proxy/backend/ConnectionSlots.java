package io.gantry.proxy.backend;

import io.gantry.topology.UpstreamServer;
import io.gantry.wire.ErrPacket;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * How many connections Gantry's sessions may have open to one server at once ({@code
 * --max-backend-connections-per-server}; by default four fifths of the server's own {@code max_connections}, as the
 * health check reads it), so that a storm of clients cannot take a server past its limit. A session that needs a new
 * connection takes a slot first; when every slot is taken it waits (on its own event loop, holding no thread) in a
 * bounded queue, first come first served, while the pools are asked to close an idle connection of that server. A
 * freed slot passes straight to the first waiter. A wait that outlasts {@code --backend-wait-timeout-ms} fails with
 * error 1040 naming the server and the cap; it marks nothing down (the server is fine, Gantry is at its cap).
 *
 * <p>Thread-safe: sessions of every event loop take and free slots; each server's count has its own lock.
 */
public final class ConnectionSlots {

    /** Waiters per server beyond which a session is refused at once rather than queued. */
    static final int MAX_WAITING = 10_000;

    private static final class PerServer {
        int open;
        final ArrayDeque<Promise<Void>> waiting = new ArrayDeque<>();
        /** How long each new connection waited for its slot (0 when one was free), over the last minutes. */
        final WaitTimes waits = new WaitTimes();
        final LongAdder waited = new LongAdder();
    }

    private final BackendPool.Settings settings;
    private final Map<String, PerServer> servers = new ConcurrentHashMap<>();
    /** Asks the pools to close an idle connection to the server named: its slot then goes to a waiter. */
    private volatile Consumer<String> freeIdle = server -> { };

    public ConnectionSlots(BackendPool.Settings settings) {
        this.settings = settings;
    }

    /** Set once the pools exist: how a waiting session asks them to give up an idle connection. */
    void onWaiting(Consumer<String> closeOneIdle) {
        this.freeIdle = closeOneIdle;
    }

    /** The cap on {@code server} now: the setting, or four fifths of its {@code max_connections}; 0 for none. */
    public int capOf(UpstreamServer server) {
        if (settings.maxPerServer() > 0) {
            return settings.maxPerServer();
        }
        int max = server.maxConnections();
        return max <= 0 ? 0 : Math.max(1, max * 4 / 5);
    }

    /**
     * A slot for a connection the pools open on their own (to keep their warm minimum): only when one is free and no
     * session waits for one, so that warming never takes room a session needs. Freed with {@link #release}.
     */
    boolean tryAcquire(UpstreamServer server) {
        int cap = capOf(server);
        PerServer slots = servers.computeIfAbsent(server.address(), address -> new PerServer());
        synchronized (slots) {
            if (!slots.waiting.isEmpty() || cap != 0 && slots.open >= cap) {
                return false;
            }
            slots.open++;
            return true;
        }
    }

    /**
     * A slot for a new connection to {@code server}: at once when one is free, else when one frees up (completed on
     * {@code loop}), or failed with a {@link BackendFailure} carrying error 1040 after the wait. The caller frees it
     * with {@link #release} once the connection it opened is closed, or its opening failed.
     */
    public Future<Void> acquire(UpstreamServer server, EventLoop loop) {
        int cap = capOf(server);
        PerServer slots = servers.computeIfAbsent(server.address(), address -> new PerServer());
        Promise<Void> granted;
        synchronized (slots) {
            if (cap == 0 || slots.open < cap) {
                slots.open++;
                slots.waits.record(0);
                return loop.newSucceededFuture(null);
            }
            if (slots.waiting.size() >= MAX_WAITING || settings.maxWait().isZero()) {
                return loop.newFailedFuture(atCap(server, cap, slots.waiting.size() >= MAX_WAITING
                        ? MAX_WAITING + " sessions wait for one already" : "none is free"));
            }
            granted = loop.newPromise();
            slots.waiting.add(granted);
        }
        long since = System.nanoTime();
        slots.waited.increment();
        granted.addListener(done -> slots.waits.record(System.nanoTime() - since));
        loop.schedule(() -> {
            boolean gaveUp;
            synchronized (slots) {
                gaveUp = slots.waiting.remove(granted);
            }
            if (gaveUp) {
                granted.tryFailure(atCap(server, cap, "none was freed within " + settings.maxWait().toMillis()
                        + " ms (--backend-wait-timeout-ms)"));
            }
        }, settings.maxWait().toMillis(), TimeUnit.MILLISECONDS);
        freeIdle.accept(server.address());
        return granted;
    }

    /**
     * Takes a session out of the queue of {@code server}'s waiters (it was given a connection another way); false when
     * the slot had already passed to it, which it must then {@link #release}.
     */
    public boolean withdraw(String server, Future<Void> waiting) {
        PerServer slots = servers.get(server);
        if (slots == null) {
            return false;
        }
        synchronized (slots) {
            return slots.waiting.remove(waiting);
        }
    }

    /** A slot taken by {@link #acquire} is free again: the first waiter gets it, or the count goes down. */
    public void release(String server) {
        PerServer slots = servers.get(server);
        if (slots == null) {
            return;
        }
        Promise<Void> next;
        synchronized (slots) {
            next = slots.waiting.poll();
            if (next == null) {
                slots.open = Math.max(0, slots.open - 1);
                return;
            }
        }
        // The slot passes to the waiter as it is: the count stays. Its listeners run on its own loop.
        next.trySuccess(null);
    }

    /** Whether sessions wait for a slot of {@code server}: an idle connection should make room rather than pool. */
    public boolean hasWaiters(String server) {
        PerServer slots = servers.get(server);
        if (slots == null) {
            return false;
        }
        synchronized (slots) {
            return !slots.waiting.isEmpty();
        }
    }

    /**
     * One server's slots now.
     *
     * @param open        connections open (or opening) to it for the sessions
     * @param waiting     sessions waiting for one
     * @param waited      sessions that ever had to wait for one
     * @param waitP99Millis the 99th percentile of the time a new connection waited for its slot, over about the
     *                    last two minutes (0 when one was free)
     */
    public record Use(int open, int waiting, long waited, double waitP99Millis) {
    }

    /** {@code server}'s slots now. */
    public Use use(String server) {
        PerServer slots = servers.get(server);
        if (slots == null) {
            return new Use(0, 0, 0, 0);
        }
        double p99 = slots.waits.p99Millis();
        synchronized (slots) {
            return new Use(slots.open, slots.waiting.size(), slots.waited.sum(), p99);
        }
    }

    private static BackendFailure atCap(UpstreamServer server, int cap, String why) {
        return new BackendFailure(server.address(), ErrPacket.of(1040, "08004", "Too many connections: Gantry "
                + "has " + cap + " connections open to " + server.address() + ", its cap "
                + "(--max-backend-connections-per-server), and " + why));
    }
}
