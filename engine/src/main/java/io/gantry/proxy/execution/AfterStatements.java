package io.gantry.proxy.execution;

import static io.gantry.proxy.session.SessionContext.LOG;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.state.HeldState;
import io.gantry.route.StatementClass;
import io.gantry.route.StatementFlag;
import io.gantry.wire.ResponseFraming;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * What a completed statement leaves behind: its effect on the read guarantees ({@link ConsistencyRecorder}), what
 * its connection now holds that replay cannot rebuild ({@link HeldState}), whether that connection keeps warnings
 * or an error a diagnostic statement may ask for, and, for a session setting that succeeded, how to replay it
 * ({@link BackendStateSync}).
 */
final class AfterStatements {

    private final SessionContext session;
    private final BackendStateSync stateSync;
    private final ConsistencyRecorder consistency;
    /** What a connection of the session holds; null for a connection the session no longer has. */
    private final Function<BackendConnection, Set<HeldState>> heldOf;
    /** Told of a connection the session may now give back (see {@link #keepsDiagnostics}). */
    private final Consumer<BackendConnection> mayRelease;
    /**
     * The connection whose last statement left warnings or an error, or null: it stays with the session until the
     * session's next statement, so that {@code SHOW WARNINGS} typed seconds later still reads them there.
     */
    private BackendConnection diagnostics;
    /** The last step made for a statement that is not a setting, and its statement class. */
    private AfterResponse last;
    private StatementClass lastClass;

    AfterStatements(SessionContext session, BackendStateSync stateSync,
                    Function<BackendConnection, Set<HeldState>> heldOf, Consumer<BackendConnection> mayRelease) {
        this.session = session;
        this.stateSync = stateSync;
        this.consistency = new ConsistencyRecorder(session);
        this.heldOf = heldOf;
        this.mayRelease = mayRelease;
    }

    /**
     * Whether {@code connection} keeps the diagnostics of the session's previous statement (its warnings, or its
     * error), which only that connection can list: it is not given to the pool until the session's next statement
     * ran (with multiplexing, the pin for one statement).
     */
    boolean keepsDiagnostics(BackendConnection connection) {
        return connection == diagnostics;
    }

    /** The session ended: no statement will ask for its diagnostics. */
    void forgetDiagnostics() {
        diagnostics = null;
    }

    /** See {@link SessionBackends#afterStatement}. */
    AfterResponse of(StatementClass statement, String sql, byte[] stateCommand) {
        if (stateCommand == null) {
            // Not a setting, so the text plays no part: one per statement class serves its every run (shared
            // classes make that every plain read of the session).
            AfterResponse reused = last;
            if (reused == null || lastClass != statement) {
                reused = run(statement, null, null);
                last = reused;
                lastClass = statement;
            }
            return reused;
        }
        return run(statement, sql, stateCommand);
    }

    private AfterResponse run(StatementClass statement, String sql, byte[] stateCommand) {
        return (connection, framing, done) -> {
            consistency.completedOn(connection.server(), statement);
            Set<HeldState> held = heldOf.apply(connection);
            if (held == null) {
                done.run();
                return;
            }
            int status = framing.serverStatus();
            HeldState.afterStatement(held, statement, status, status != ResponseFraming.NO_STATUS);
            BackendConnection before = diagnostics;
            diagnostics = framing.failed() || framing.warnings() > 0 ? connection : null;
            if (before != null && before != diagnostics) {
                mayRelease.accept(before);
            }
            if (stateCommand == null || framing.failed()) {
                done.run();
            } else {
                stateSync.settingSucceeded(connection, sql, stateCommand, done,
                        why -> keepOnThisConnection(connection, why));
            }
        };
    }

    /** See {@link SessionBackends#keepOnThisConnection}. */
    void keepOnThisConnection(BackendConnection connection, String why) {
        LOG.atInfo().addKeyValue("session", session.id())
                .log("session {}: {}; the session stays on the primary", session.id(), why);
        Set<HeldState> held = heldOf.apply(connection);
        if (held != null) {
            held.add(HeldState.UNREPLAYED_SETTINGS);
        }
        session.pin(StatementFlag.MIXED_SESSION_STATE);
    }
}
