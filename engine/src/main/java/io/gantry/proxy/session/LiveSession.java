package io.gantry.proxy.session;

import io.gantry.topology.UpstreamServer;
import java.util.List;
import java.util.Map;

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
}
