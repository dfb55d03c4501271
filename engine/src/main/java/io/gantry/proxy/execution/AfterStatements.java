package io.gantry.proxy.execution;

import static io.gantry.proxy.session.SessionContext.LOG;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.state.HeldState;
import io.gantry.route.StatementClass;
import io.gantry.route.StatementFlag;
import io.gantry.wire.ResponseFraming;
import java.util.Set;
import java.util.function.Function;

/**
 * What a completed statement leaves behind: its effect on the read guarantees ({@link ConsistencyRecorder}), what
 * its connection now holds that replay cannot rebuild ({@link HeldState}), and, for a session setting that
 * succeeded, how to replay it ({@link BackendStateSync}).
 */
final class AfterStatements {

    private final SessionContext session;
    private final BackendStateSync stateSync;
    private final ConsistencyRecorder consistency;
    /** What a connection of the session holds; null for a connection the session no longer has. */
    private final Function<BackendConnection, Set<HeldState>> heldOf;
    /** The last step made for a statement that is not a setting, and its statement class. */
    private AfterResponse last;
    private StatementClass lastClass;

    AfterStatements(SessionContext session, BackendStateSync stateSync,
                    Function<BackendConnection, Set<HeldState>> heldOf) {
        this.session = session;
        this.stateSync = stateSync;
        this.consistency = new ConsistencyRecorder(session);
        this.heldOf = heldOf;
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
