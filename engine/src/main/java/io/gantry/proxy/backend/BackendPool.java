package io.gantry.proxy.backend;

import io.gantry.topology.UpstreamServer;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Promise;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The idle backend connections of one event loop, shared by that loop's sessions (connection multiplexing). A
 * connection is only ever given to a session of the same {@link Key}: the same server, account, secret, initial
 * database, collation and capabilities, so it answers exactly as one the session opened itself would. The newest
 * idle connection is taken first (its server-side caches are warm); the oldest go when a server has more idle ones
 * than {@link Settings#maxIdlePerServer()} or have been idle for {@link Settings#idleTimeout()}.
 *
 * <p>Every method runs on the pool's event loop: sessions and their connections live there, so nothing here
 * takes a lock, and a connection never changes threads. Only {@link BackendPools}' counters are read elsewhere.
 */
public final class BackendPool {

    private static final Logger LOG = LoggerFactory.getLogger(BackendPool.class);

    /**
     * What a pooled connection logged in as and negotiated: it serves only sessions with the same key.
     *
     * @param server the server's {@code host:port}
     * @param secretDigest {@link BackendSecret#digest()} of the secret it logged in with, wrapped for equality
     */
    public record Key(String server, String user, String database, int collationId, int capabilities,
                      int mariaDbCapabilities, SecretDigest secretDigest) {

        /** The key of {@code login}'s connections to {@code server}. */
        public static Key of(String server, BackendLogin login, SecretDigest digest) {
            return new Key(server, login.user(), login.database(), login.collationId(), login.capabilities(),
                    login.mariaDbCapabilities(), digest);
        }

        @Override
        public String toString() {
            return "'" + user + "'@" + server + (database.isEmpty() ? "" : "/" + database);
        }
    }

    /** A secret's digest with value equality (a record of an array would compare identities). */
    public record SecretDigest(byte[] bytes) {
        public static SecretDigest of(BackendSecret secret) {
            return new SecretDigest(secret == null ? new byte[0] : secret.digest());
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof SecretDigest that && java.security.MessageDigest.isEqual(bytes, that.bytes);
        }

        @Override
        public int hashCode() {
            return java.util.Arrays.hashCode(bytes);
        }

        @Override
        public String toString() {
            return "SecretDigest[redacted]";
        }
    }

    /**
     * How the pools behave.
     *
     * @param multiplex        whether sessions share backend connections at all ({@code --multiplex})
     * @param idleTimeout      how long a pooled connection may stay idle before it is closed
     *                         ({@code --backend-idle-timeout-ms})
     * @param maxIdlePerServer idle connections kept per server on each event loop ({@code --backend-max-idle})
     * @param maxPerServer     connections the sessions may have open to one server at once
     *                         ({@code --max-backend-connections-per-server}); 0 for automatic, four fifths of the
     *                         server's {@code max_connections} ({@link ConnectionSlots})
     * @param maxWait          how long a session waits for one when all are taken ({@code --backend-wait-timeout-ms})
     * @param minIdlePerServer idle connections per server on each event loop that the idle timeout does not close
     *                         ({@code --backend-min-idle}; when not given, {@link #defaultMinIdle}): kept warm
     *                         for the next burst; the server's own {@code wait_timeout}, a restart or the server
     *                         going down still close them, and the pool opens new ones once the server is up (as
     *                         the account that last left one there)
     */
    public record Settings(boolean multiplex, Duration idleTimeout, int maxIdlePerServer, int maxPerServer,
                           Duration maxWait, int minIdlePerServer) {
        /** The warm minimum when {@code --backend-min-idle} is not given and {@code --backend-max-idle} allows it. */
        public static final int DEFAULT_MIN_IDLE = 2;

        public static final Settings DEFAULTS = new Settings(true, Duration.ofSeconds(60), 64, 0,
                Duration.ofSeconds(5), DEFAULT_MIN_IDLE);

        /**
         * The warm minimum when {@code --backend-min-idle} is not given: {@link #DEFAULT_MIN_IDLE}, or
         * {@code maxIdlePerServer} when that is less. A minimum above the idle cap could never be kept (the cap closes
         * the excess), so a smaller {@code --backend-max-idle} alone makes every idle connection it allows a warm one.
         */
        public static int defaultMinIdle(int maxIdlePerServer) {
            return Math.min(DEFAULT_MIN_IDLE, maxIdlePerServer);
        }

        /** The defaults of the cap, its wait and the warm minimum. */
        public Settings(boolean multiplex, Duration idleTimeout, int maxIdlePerServer) {
            this(multiplex, idleTimeout, maxIdlePerServer, DEFAULTS.maxPerServer(), DEFAULTS.maxWait());
        }

        /** The default warm minimum (or fewer, with fewer idle connections kept at all). */
        public Settings(boolean multiplex, Duration idleTimeout, int maxIdlePerServer, int maxPerServer,
                        Duration maxWait) {
            this(multiplex, idleTimeout, maxIdlePerServer, maxPerServer, maxWait, defaultMinIdle(maxIdlePerServer));
        }

        public Settings {
            // The cap first: a warm minimum derived from a wrong cap is not the operator's mistake.
            if (maxIdlePerServer < 0 || maxIdlePerServer > 100_000) {
                throw new IllegalArgumentException("--backend-max-idle must be between 0 and 100000, not "
                        + maxIdlePerServer);
            }
            if (minIdlePerServer < 0) {
                throw new IllegalArgumentException("--backend-min-idle must be 0 or more, not " + minIdlePerServer);
            }
            if (minIdlePerServer > maxIdlePerServer) {
                throw new IllegalArgumentException("--backend-min-idle " + minIdlePerServer + " must not be more than "
                        + "--backend-max-idle " + maxIdlePerServer + ": idle connections beyond --backend-max-idle "
                        + "are closed, so no more can be kept warm");
            }
            if (maxPerServer < 0 || maxPerServer > 1_000_000) {
                throw new IllegalArgumentException("--max-backend-connections-per-server must be auto or between 1 "
                        + "and 1000000, not " + maxPerServer);
            }
            if (maxWait.isNegative() || maxWait.compareTo(Duration.ofMinutes(10)) > 0) {
                throw new IllegalArgumentException("--backend-wait-timeout-ms must be between 0 and 600000, not "
                        + maxWait.toMillis());
            }
            if (idleTimeout.isNegative() || idleTimeout.isZero()) {
                throw new IllegalArgumentException("--backend-idle-timeout-ms must be positive, not "
                        + idleTimeout.toMillis());
            }
        }
    }

    /**
     * A connection as the pool keeps it: with what it has applied of the session state it last served (opaque to
     * the pool: the taker compares it with its own), whether Gantry's session tracking is on on it, and the last
     * insert id it holds (what {@code LAST_INSERT_ID()} answers on it).
     */
    public record Idle(BackendConnection connection, String appliedState, boolean tracked, long insertId,
                       long sinceNanos) {
    }

    /**
     * Whose connections a server's warm minimum is made of: the account that last gave one to the pool there. Its
     * secret stays the session's (the pool keeps no copy): once that session ended and cleared it, nothing is opened
     * until another session gives the pool a connection there.
     */
    private record WarmLogin(Key key, UpstreamServer server, BackendLogin login) {
    }

    private final EventLoop loop;
    private final Settings settings;
    private final BackendPools.Counters counters;
    private final ConnectionSlots slots;
    private final Supplier<BackendPools.Opener> opener;
    private final Map<Key, ArrayDeque<Idle>> idle = new HashMap<>();
    /** Idle connections per server, over every key: what {@link Settings#maxIdlePerServer()} bounds. */
    private final Map<String, Integer> idlePerServer = new HashMap<>();
    /** Per server, the login to open connections as to keep the warm minimum; forgotten when that fails. */
    private final Map<String, WarmLogin> warmLogins = new HashMap<>();
    /** Per server, connections the pool is opening for its warm minimum. */
    private final Map<String, Integer> warming = new HashMap<>();
    /**
     * Sessions of this loop that wait for room under the per-server cap, by key: a connection of theirs given back
     * meanwhile passes to the first of them as it is, instead of being closed to free its slot for a new login.
     */
    private final Map<Key, ArrayDeque<Promise<Idle>>> waitingHere = new HashMap<>();
    private boolean sweeping;

    BackendPool(EventLoop loop, Settings settings, BackendPools.Counters counters, ConnectionSlots slots,
                Supplier<BackendPools.Opener> opener) {
        this.loop = loop;
        this.settings = settings;
        this.counters = counters;
        this.slots = slots;
        this.opener = opener;
    }

    /** The newest usable idle connection of {@code key}, now the caller's; null when there is none. */
    public Idle take(Key key) {
        ArrayDeque<Idle> connections = idle.get(key);
        while (connections != null && !connections.isEmpty()) {
            Idle newest = connections.pollLast();
            left(key);
            if (newest.connection().isUsable() && !newest.connection().isBusy()) {
                newest.connection().onIdleClose(() -> { });
                counters.reused(key);
                return newest;
            }
            newest.connection().close();
        }
        return null;
    }

    /**
     * Keeps {@code connection}, idle and in no session's use, for the next session of {@code key}; closes it
     * instead when it cannot serve one, or when the server has {@link Settings#maxIdlePerServer()} idle already.
     *
     * @param login the giving session's login, which the pool opens connections as to keep the warm minimum while
     *              that session lasts; null for none
     */
    public void give(Key key, BackendConnection connection, String appliedState, boolean tracked, long insertId,
                     BackendLogin login) {
        if (connection.isUsable() && !connection.isBusy() && slots.hasWaiters(key.server())) {
            Promise<Idle> waiter = nextWaitingHere(key);
            if (waiter != null) {
                counters.reused(key);
                waiter.trySuccess(new Idle(connection, appliedState, tracked, insertId, System.nanoTime()));
                return;
            }
        }
        if (!connection.isUsable() || connection.isBusy() || settings.maxIdlePerServer() == 0
                || slots.hasWaiters(key.server())) {
            // Sessions waiting for a connection to that server get its slot instead (see ConnectionSlots).
            connection.close();
            return;
        }
        if (idlePerServer.getOrDefault(key.server(), 0) >= settings.maxIdlePerServer()) {
            closeOldestOf(key.server());
        }
        Idle entry = new Idle(connection, appliedState, tracked, insertId, System.nanoTime());
        if (settings.minIdlePerServer() > 0 && login != null) {
            warmLogins.put(key.server(), new WarmLogin(key, connection.server(), login));
        }
        idle.computeIfAbsent(key, k -> new ArrayDeque<>()).addLast(entry);
        idlePerServer.merge(key.server(), 1, Integer::sum);
        counters.pooled(key);
        // A server that closes an idle pooled connection (its wait_timeout, a restart) takes it out of the pool.
        connection.onIdleClose(() -> remove(key, entry));
        startSweeping();
    }

    /**
     * Waits, as a session of this loop waiting for a slot of the cap, for a connection of {@code key} that another
     * session gives back meanwhile ({@link #give}); withdraw with {@link #stopWaiting} when the slot comes first.
     */
    public Promise<Idle> awaitGiven(Key key) {
        Promise<Idle> given = loop.newPromise();
        waitingHere.computeIfAbsent(key, k -> new ArrayDeque<>()).addLast(given);
        return given;
    }

    /** No longer waits for a connection given back (the slot came first, or the wait ended). */
    public void stopWaiting(Key key, Promise<Idle> given) {
        ArrayDeque<Promise<Idle>> waiters = waitingHere.get(key);
        if (waiters != null && waiters.remove(given) && waiters.isEmpty()) {
            waitingHere.remove(key);
        }
    }

    private Promise<Idle> nextWaitingHere(Key key) {
        ArrayDeque<Promise<Idle>> waiters = waitingHere.get(key);
        if (waiters == null) {
            return null;
        }
        Promise<Idle> first = waiters.pollFirst();
        if (waiters.isEmpty()) {
            waitingHere.remove(key);
        }
        return first;
    }

    /** Closes every idle connection (the proxy stops). */
    public void closeAll() {
        for (Map.Entry<Key, ArrayDeque<Idle>> entry : idle.entrySet()) {
            for (Idle each : entry.getValue()) {
                each.connection().close();
                counters.left(entry.getKey());
            }
        }
        idle.clear();
        idlePerServer.clear();
    }

    /**
     * Closes the idle connections to {@code server}, which was marked down: none of them would answer; nor is the
     * warm minimum kept there until a session gives the pool a connection to it again.
     */
    void closeServer(String server, String reason) {
        warmLogins.remove(server);
        for (Iterator<Map.Entry<Key, ArrayDeque<Idle>>> keys = idle.entrySet().iterator(); keys.hasNext(); ) {
            Map.Entry<Key, ArrayDeque<Idle>> entry = keys.next();
            if (!entry.getKey().server().equals(server)) {
                continue;
            }
            for (Idle each : entry.getValue()) {
                left(entry.getKey());
                counters.closedIdle(entry.getKey());
                each.connection().onIdleClose(() -> { });
                each.connection().abandon(BackendFailure.serverDown(server, reason));
            }
            keys.remove();
        }
    }

    /** Idle connections of every key, for tests and {@code SHOW GANTRY POOLS}. */
    int idleCount() {
        return idlePerServer.values().stream().mapToInt(Integer::intValue).sum();
    }

    private void remove(Key key, Idle entry) {
        ArrayDeque<Idle> connections = idle.get(key);
        if (connections != null && connections.remove(entry)) {
            left(key);
        }
    }

    private void left(Key key) {
        idlePerServer.computeIfPresent(key.server(), (server, count) -> count <= 1 ? null : count - 1);
        counters.left(key);
    }

    /** Closes the connection to {@code server} idle the longest, if there is one. */
    void closeOldestOf(String server) {
        Key oldestKey = null;
        Idle oldest = null;
        for (Map.Entry<Key, ArrayDeque<Idle>> entry : idle.entrySet()) {
            Idle first = entry.getValue().peekFirst();
            if (entry.getKey().server().equals(server) && first != null
                    && (oldest == null || first.sinceNanos() < oldest.sinceNanos())) {
                oldest = first;
                oldestKey = entry.getKey();
            }
        }
        if (oldest != null) {
            idle.get(oldestKey).pollFirst();
            left(oldestKey);
            counters.closedIdle(oldestKey);
            oldest.connection().close();
        }
    }

    /**
     * Once a second while anything is idle or kept warm: closes what has been idle for longer than the idle timeout,
     * but for the last {@link Settings#minIdlePerServer()} of each server, and opens connections where a server has
     * fewer than that idle (its own {@code wait_timeout} or a restart closed them) ({@link #warm}).
     */
    private void startSweeping() {
        if (sweeping) {
            return;
        }
        sweeping = true;
        long period = Math.min(1000, settings.idleTimeout().toMillis());
        loop.schedule(this::sweep, period, TimeUnit.MILLISECONDS);
    }

    private void sweep() {
        sweeping = false;
        long oldestAllowed = System.nanoTime() - settings.idleTimeout().toNanos();
        for (Iterator<Map.Entry<Key, ArrayDeque<Idle>>> keys = idle.entrySet().iterator(); keys.hasNext(); ) {
            Map.Entry<Key, ArrayDeque<Idle>> entry = keys.next();
            ArrayDeque<Idle> connections = entry.getValue();
            String server = entry.getKey().server();
            while (!connections.isEmpty() && connections.peekFirst().sinceNanos() - oldestAllowed < 0
                    && idlePerServer.getOrDefault(server, 0) > settings.minIdlePerServer()) {
                Idle expired = connections.pollFirst();
                left(entry.getKey());
                counters.closedIdle(entry.getKey());
                expired.connection().close();
            }
            if (connections.isEmpty()) {
                keys.remove();
            }
        }
        warm();
        if (!idle.isEmpty() || !warmLogins.isEmpty()) {
            startSweeping();
        }
    }

    /**
     * Opens connections to each server that has fewer than {@link Settings#minIdlePerServer()} idle, as the account
     * that last gave the pool one there while that session lasts, so that a quiet application's next burst does not
     * wait for new logins: only while the server is up, and only with room under its cap that no session waits for.
     * A login that fails stops the warming of that server until a session gives the pool a connection to it again.
     */
    private void warm() {
        BackendPools.Opener open = opener.get();
        if (open == null) {
            return;
        }
        for (WarmLogin warm : List.copyOf(warmLogins.values())) {
            String server = warm.key().server();
            if (warm.login().secret() != null && warm.login().secret().isCleared()) {
                warmLogins.remove(server, warm);
                continue;
            }
            int missing = settings.minIdlePerServer() - idlePerServer.getOrDefault(server, 0)
                    - warming.getOrDefault(server, 0);
            for (int i = 0; i < missing && warm.server().isUp() && slots.tryAcquire(warm.server()); i++) {
                warming.merge(server, 1, Integer::sum);
                open.open(warm.server(), warm.login(), loop, () -> slots.release(server)).addListener(done -> {
                    warming.computeIfPresent(server, (s, count) -> count <= 1 ? null : count - 1);
                    if (done.isSuccess()) {
                        counters.created(warm.key());
                        give(warm.key(), (BackendConnection) done.getNow(), "", false, 0, warm.login());
                    } else if (warmLogins.remove(server, warm)) {
                        LOG.info("pool: keeping connections to {} warm stopped: {}; it starts again with the "
                                + "next connection a session leaves there", server, done.cause().getMessage());
                    }
                });
            }
        }
    }
}
