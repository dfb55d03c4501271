package io.gantry.proxy.session;

import io.gantry.topology.UpstreamServer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The client sessions of one proxy: their ids (what {@code CONNECTION_ID()} returns and {@code KILL} takes), the
 * count of logged-in ones against {@code --max-client-connections}, and the drain before a stop. Thread-safe:
 * sessions on every event loop register, count and release here.
 */
public final class SessionRegistry {

    private final int maxClientConnections;
    private final AtomicLong connectionIds = new AtomicLong();
    private final AtomicInteger loggedIn = new AtomicInteger();
    private final Map<Long, LiveSession> sessions = new ConcurrentHashMap<>();
    private volatile boolean draining;
    private final CompletableFuture<Void> drained = new CompletableFuture<>();

    public SessionRegistry(int maxClientConnections) {
        this.maxClientConnections = maxClientConnections;
    }

    /** The id of a new client connection. */
    public long nextId() {
        return connectionIds.incrementAndGet();
    }

    /** Whether logged-in sessions already fill {@code --max-client-connections}. */
    public boolean full() {
        return loggedIn.get() >= maxClientConnections;
    }

    /** Counts a new logged-in session; false when {@code --max-client-connections} is reached (it is refused). */
    public boolean admit() {
        if (loggedIn.incrementAndGet() > maxClientConnections) {
            loggedIn.decrementAndGet();
            return false;
        }
        return true;
    }

    /**
     * Counts a session moved here from the Gantry taken over: it was admitted there, so it is counted even beyond
     * {@code --max-client-connections} rather than cut.
     */
    public void admitMoved() {
        loggedIn.incrementAndGet();
    }

    /**
     * How many ids a Gantry taking over leaves to this one: what it may still give between the release of its data
     * directory and the moment it stops accepting (a few seconds at most).
     */
    static final long IDS_LEFT_FOR_TAKE_OVER = 100_000;

    /**
     * The highest id this registry gives until it stops accepting, for a Gantry taking over: it gives ids above it, so
     * that the sessions of both keep distinct ids ({@code CONNECTION_ID()}).
     */
    public long idsUpToForTakeOver() {
        return connectionIds.get() + IDS_LEFT_FOR_TAKE_OVER;
    }

    /** New connections take ids above {@code id}: the Gantry taken over gave those up to it. */
    public void idsAfter(long id) {
        connectionIds.accumulateAndGet(id, Math::max);
    }

    /** The sessions now, in no order. */
    public List<LiveSession> all() {
        return List.copyOf(sessions.values());
    }

    /** An admitted session ended. */
    void closed() {
        loggedIn.decrementAndGet();
    }

    public void register(long id, LiveSession session) {
        sessions.put(id, session);
    }

    void unregister(long id) {
        sessions.remove(id);
    }

    /** {@code server} was marked down: every session leaves it (see {@link LiveSession#serverDownOnItsLoop}). */
    public void serverDown(UpstreamServer server, String reason) {
        sessions.values().forEach(session -> session.serverDownOnItsLoop(server, reason));
    }

    /**
     * The Gantry session id of each session connection to {@code hostPort}, by that connection's server thread id:
     * what {@code SHOW PROCESSLIST} through Gantry shows in place of those threads' ids.
     */
    public Map<Long, Long> sessionsByThreadOn(String hostPort) {
        Map<Long, Long> byThread = new HashMap<>();
        sessions.forEach((id, session) -> {
            for (Map.Entry<String, Long> thread : session.backendThreads()) {
                if (thread.getKey().equals(hostPort) && thread.getValue() >= 0) {
                    byThread.put(thread.getValue(), id);
                }
            }
        });
        return byThread;
    }

    public Optional<LiveSession> find(long id) {
        return Optional.ofNullable(sessions.get(id));
    }

    /**
     * New clients are refused from now on; sessions outside a transaction end, the others when they hold none. The
     * future completes when no session holds a transaction or a running command any more.
     */
    public CompletableFuture<Void> drain() {
        draining = true;
        sessions.values().forEach(LiveSession::endOnItsLoopIfIdle);
        released();
        return drained;
    }

    public boolean isDraining() {
        return draining;
    }

    /** A session ended or let its server side go: the drain is done when every session has. */
    void released() {
        if (draining && !drained.isDone() && sessions.values().stream().allMatch(LiveSession::released)) {
            drained.complete(null);
        }
    }

    /** Sessions that still hold a transaction or a running command (during a drain, those it waits for). */
    public long busy() {
        return sessions.values().stream().filter(session -> !session.released()).count();
    }

    /** Logged-in sessions. */
    public int loggedIn() {
        return loggedIn.get();
    }

    /** Client connections, logged in or not. */
    public int connected() {
        return sessions.size();
    }
}
