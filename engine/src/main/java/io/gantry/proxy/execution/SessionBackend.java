package io.gantry.proxy.execution;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.state.HeldState;
import io.gantry.route.ServerId;
import java.util.EnumSet;

/**
 * One of a session's backend connections and everything the session knows of it, in one place (as HikariCP's
 * {@code PoolEntry} or MaxScale's {@code RWBackend}): what it is, what the session applied there
 * ({@link BackendStateSync}), what it holds and when it goes back ({@link BackendReleaser}). {@link SessionBackends}
 * keeps one per server. Only the session's event loop touches the mutable fields; another session's KILL reads
 * the final ones.
 */
final class SessionBackend {

    final ServerId server;
    final BackendConnection connection;
    /** The server's id of this connection's thread, which a KILL of the session must kill. */
    final long threadId;

    // ---- why it is held, and when it goes back -------------------------------------------------------------------

    /** What it holds that replaying the settings cannot rebuild. */
    final EnumSet<HeldState> held = HeldState.none();
    /** The value of {@code SessionContext#commands} when it last ran a command of the client's. */
    long lastCommand;
    /** When ({@link System#nanoTime}) it last ran a command of the client's. */
    long lastCommandNanos;
    /** Whether a retention timer is pending for it ({@link BackendReleaser#scheduleRetentionClose}). */
    boolean retentionPending;
    /** Whether a check to give it up at once, for sessions waiting under the cap, is pending. */
    boolean releaseCheckPending;

    // ---- what the session applied there ---------------------------------------------------------------------------

    /** The session-state log version it has applied. */
    long stateVersion;
    /** Whether Gantry's own tracking is on; off again after the client's own {@code SET session_track_...}. */
    boolean tracked;
    /** A pooled connection that served another session's settings: COM_RESET_CONNECTION before the replay. */
    boolean resetFirst;
    /** What {@code LAST_INSERT_ID()} answers on it. */
    long insertId;
    /**
     * A replay was refused there part way (the settings behind the refused one ran all the same): it holds some of
     * the session's settings, not a version of the log, so it cannot go to the pool as it is. Cleared by the next
     * replay that succeeds whole.
     */
    boolean partlyApplied;

    SessionBackend(ServerId server, BackendConnection connection) {
        this.server = server;
        this.connection = connection;
        this.threadId = connection.serverThreadId();
    }
}
