package io.gantry.proxy.execution;

import static io.gantry.proxy.session.SessionContext.LOG;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.state.HeldState;
import io.gantry.route.StatementClass;
import io.gantry.route.StatementFlag;
import io.gantry.wire.CommandType;
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
    /** Told of a connection the session may now give back (see {@link #whyKeptForNextStatement}). */
    private final Consumer<BackendConnection> mayRelease;
    /**
     * The connection the session's last statement left something on that only that connection can answer (its
     * warnings or error, the count of {@code SQL_CALC_FOUND_ROWS}), or null: it stays with the session until the
     * session's next statement, so that {@code SHOW WARNINGS} typed seconds later still reads them there.
     */
    private BackendConnection keptForNext;
    private String keptForNextBecause;
    /** The connection that ran the session's last statement, until it leaves the session; then null. */
    private BackendConnection ranLast;
    /** What the session's last statement left for {@code ROW_COUNT()} and {@code FOUND_ROWS()}. */
    private final PreviousCounts counts = new PreviousCounts();
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
     * Why {@code connection} stays with the session until the session's next statement (with multiplexing, the pin
     * for one statement), or null: it has the previous statement's warnings or error, or the count of its
     * {@code SQL_CALC_FOUND_ROWS}, which only that connection can give.
     */
    String whyKeptForNextStatement(BackendConnection connection) {
        return connection == keptForNext ? keptForNextBecause : null;
    }

    /** The session ended: no statement will ask for what its last one left. */
    void forgetKeptForNextStatement() {
        keptForNext = null;
    }

    /**
     * {@code connection} left the session (to the pool, or closed): if it ran the session's last statement, what that
     * statement left for {@code ROW_COUNT()} and {@code FOUND_ROWS()} is now the session's alone to answer.
     */
    void left(BackendConnection connection) {
        if (connection == ranLast) {
            ranLast = null;
            counts.connectionLeft();
        }
    }

    /**
     * What the session's previous statement left for {@code ROW_COUNT()} and {@code FOUND_ROWS()} when the connection
     * that ran it is no longer the session's, so that a statement asking for them is answered with the values written
     * into its text; null while that connection is still the session's (it answers) or before any statement.
     */
    PreviousCounts countsToWriteIn() {
        return counts.toWriteIn() ? counts : null;
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
            BackendConnection before = keptForNext;
            keptForNextBecause = framing.failed() || framing.warnings() > 0
                    ? "it has the previous statement's warnings or error"
                    : statement != null && statement.has(StatementFlag.CALC_FOUND_ROWS)
                    ? "FOUND_ROWS() of the previous statement's SQL_CALC_FOUND_ROWS is read there" : null;
            keptForNext = keptForNextBecause != null ? connection : null;
            if (before != null && before != keptForNext) {
                mayRelease.accept(before);
            }
            if ((framing.command() == CommandType.COM_QUERY || framing.command() == CommandType.COM_STMT_EXECUTE)
                    && (statement == null || !statement.has(StatementFlag.DIAGNOSTICS))) {
                ranLast = connection;
                counts.ran(framing, statement != null && statement.has(StatementFlag.CALC_FOUND_ROWS));
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
