package io.gantry.topology;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * One kept service connection per server, for a loop that asks every server again and again (the health loop's
 * pings, the position samples): a connection opened for one round is used again by the next, so what a round
 * measures is the question and not the login. A connection that fails is dropped, and the loop opens a new one; one
 * whose server left the list is closed at the loop's next round, and all are closed with the loop.
 *
 * <p>Safe from several threads as long as each server's connection is used by one thread at a time (the health loop
 * probes servers in parallel, one task per server).
 *
 * @param <T> what is kept: a connection, or a connection with its prepared statement
 */
final class KeptConnections<T> implements AutoCloseable {

    private final Map<UpstreamServer, T> kept = new ConcurrentHashMap<>();
    /** Closes one; a connection that fails on closing is gone anyway, so it must not throw. */
    private final Consumer<T> closer;
    /** Set by {@link #close}: a connection a round still running hands in afterwards is closed, not kept. */
    private volatile boolean closed;

    KeptConnections(Consumer<T> closer) {
        this.closer = closer;
    }

    /** The server's kept connection, or null when none is open. */
    T get(UpstreamServer server) {
        return kept.get(server);
    }

    /** Keeps {@code connection} for the server, closing the one it replaces (and it, once closed). */
    void keep(UpstreamServer server, T connection) {
        T before = kept.put(server, connection);
        if (before != null && before != connection) {
            closer.accept(before);
        }
        if (closed) {
            drop(server);
        }
    }

    /** Closes and forgets the server's connection (it failed); the next use opens a new one. */
    void drop(UpstreamServer server) {
        T gone = kept.remove(server);
        if (gone != null) {
            closer.accept(gone);
        }
    }

    /** Applies {@code action} to every kept connection, from any thread (see {@link GtidSampler#close}). */
    void forEach(Consumer<T> action) {
        kept.values().forEach(action);
    }

    /** Closes the connections of servers no longer in {@code servers}. */
    void retain(List<UpstreamServer> servers) {
        for (UpstreamServer server : List.copyOf(kept.keySet())) {
            if (!servers.contains(server)) {
                drop(server);
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        retain(List.of());
    }
}
