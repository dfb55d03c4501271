package io.gantry.proxy.session;

import io.gantry.topology.UpstreamServer;
import io.netty.channel.unix.FileDescriptor;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

/**
 * What the registry of sessions, and another session's KILL, may ask of a session from outside its event loop.
 */
public interface LiveSession {

    /** The session's state (another session's KILL reads its account). */
    SessionContext context();

    /** The session's backend threads now, by {@code host:port}: what a KILL of this session must kill. */
    List<Map.Entry<String, Long>> backendThreads();

    /** Closes the session on its own event loop (a KILL CONNECTION). */
    void closeOnItsLoop();

    /** {@code server} was marked down: the session leaves it, on its own event loop (see SessionBackends). */
    void serverDownOnItsLoop(UpstreamServer server, String reason);

    /** During a drain: ends the session on its own event loop if it holds no transaction. */
    void endOnItsLoopIfIdle();

    /** Whether the session holds nothing a drain waits for (closed, or its server side gone). */
    boolean released();

    /**
     * During a take-over: on its own event loop, holds the session still for the Gantry taking over if it is between
     * two statements with nothing on a server that replay cannot rebuild; ends it as a drain does if it is a TLS
     * session there (its keys cannot move); else leaves it be.
     */
    CompletableFuture<Departure> departOnItsLoop();

    /**
     * The take-over ended without this session moving (the Gantry taking over went away): on its own event loop, its
     * client's next command is read again if {@link #departOnItsLoop} held it back.
     */
    void releaseFromMoveOnItsLoop();

    /** What {@link #departOnItsLoop} made of a session. */
    sealed interface Departure {

        /**
         * Held still for the Gantry taking over: no byte is read from the client meanwhile.
         *
         * @param descriptor the client socket's descriptor, this process's until {@code moved} runs
         * @param state      the session by value ({@link MovedSession#toJson})
         * @param moved      the other process serves it: this one's copy ends without a word to the client
         * @param stays      it did not move: this one serves it on
         * @param open       whether its socket is still open: one its client closed is closed by the event loop even
         *                   while held, and its descriptor's number may then name another file
         */
        record Moving(long id, FileDescriptor descriptor, String state, Runnable moved, Runnable stays,
                      BooleanSupplier open) implements Departure {
        }

        /** A TLS session, ended between two statements as a drain ends it. */
        record Ended(long id) implements Departure {
        }

        /**
         * Not now, for {@code why}: a statement runs, a transaction is open, it logs in, ...
         *
         * @param heldBack whether its client's next command is held back, so that it can move as soon as the
         *                 statement running now is answered: worth looking at again soon
         */
        record NotNow(String why, boolean heldBack) implements Departure {
        }
    }
}
