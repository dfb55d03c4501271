package io.gantry.proxy.execution;

import static io.gantry.proxy.session.SessionContext.LOG;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.InternalCommand;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.state.HeldState;
import io.gantry.proxy.state.UserVariables;
import io.gantry.route.QueryText;
import io.gantry.route.StatementClass;
import io.gantry.route.StatementFlag;
import io.gantry.wire.CommandType;
import io.gantry.wire.ResponseFraming;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
    /** What the session knows of a connection; null for a connection the session no longer has. */
    private final Function<BackendConnection, SessionBackend> backendOf;
    /** Told of a connection the session may now give back (see {@link #whyKeptForNextStatement}). */
    private final Consumer<BackendConnection> mayRelease;
    /**
     * The connection the session's last statement left something on that only that connection can answer (its
     * warnings or error, the count of {@code SQL_CALC_FOUND_ROWS}), or null: it stays with the session until the
     * session's next statement, so that {@code SHOW WARNINGS} typed seconds later still reads them there.
     */
    private BackendConnection keptForNext;
    private String keptForNextBecause;
    /**
     * The connection that ran the session's last {@code SQL_CALC_FOUND_ROWS}, until a statement's result set gives
     * {@code FOUND_ROWS()} another value: only it can answer, so it stays with the session that long.
     */
    private BackendConnection countedFoundRows;
    /** The connection that ran the session's last statement, until it leaves the session; then null. */
    private BackendConnection ranLast;
    /** What the session's last statement left for {@code ROW_COUNT()} and {@code FOUND_ROWS()}. */
    private final PreviousCounts counts = new PreviousCounts();
    /**
     * User variables the session's statements set and Gantry has not read back yet, by key, and the connection
     * that holds them ({@link UserVariables}); once read back they travel by value, as settings do.
     */
    private final Map<String, UserVariables.Name> variablesToRead = new LinkedHashMap<>();
    private BackendConnection variablesOn;
    /** Some user variable cannot be carried by value: the connection that holds them keeps the session. */
    private boolean variablesStay;
    /** The last step made for a statement that is not a setting, and its statement class. */
    private AfterResponse last;
    private StatementClass lastClass;

    AfterStatements(SessionContext session, BackendStateSync stateSync, ConsistencyRecorder consistency,
                    Function<BackendConnection, SessionBackend> backendOf, Consumer<BackendConnection> mayRelease) {
        this.session = session;
        this.stateSync = stateSync;
        this.consistency = consistency;
        this.backendOf = backendOf;
        this.mayRelease = mayRelease;
    }

    /**
     * Why {@code connection} stays with the session for now though idle, or null: until the session's next statement
     * (with multiplexing, the pin for one statement) when it has the previous statement's warnings or error; until a
     * result set gives {@code FOUND_ROWS()} another value when it counted a {@code SQL_CALC_FOUND_ROWS}.
     */
    String whyKeptForNextStatement(BackendConnection connection) {
        return connection == keptForNext ? "kept until the next statement: " + keptForNextBecause
                : connection == countedFoundRows ? "kept until a result set replaces it: FOUND_ROWS() of an earlier "
                + "SQL_CALC_FOUND_ROWS is read there" : null;
    }

    /** The session ended: no statement will ask for what its last one left. */
    void forgetKeptForNextStatement() {
        keptForNext = null;
        countedFoundRows = null;
    }

    /**
     * {@code connection} left the session (to the pool, or closed): if it ran the session's last statement, what that
     * statement left for {@code ROW_COUNT()} and {@code FOUND_ROWS()} is now the session's alone to answer.
     */
    void left(BackendConnection connection) {
        if (connection == countedFoundRows) {
            countedFoundRows = null;
        }
        if (connection == ranLast) {
            ranLast = null;
            counts.connectionLeft();
        }
    }

    /** See {@link SessionBackends#answeredWithOk}. */
    void answeredWithOk() {
        ranLast = null;
        counts.answeredWithOk();
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
        if (stateCommand == null && (statement == null || !statement.has(StatementFlag.SETS_USER_VARIABLES))) {
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
            SessionBackend backend = backendOf.apply(connection);
            if (backend == null) {
                done.run();
                return;
            }
            Set<HeldState> held = backend.held;
            int status = framing.serverStatus();
            HeldState.afterStatement(held, statement, status, status != ResponseFraming.NO_STATUS);
            BackendConnection before = keptForNext;
            BackendConnection counted = countedFoundRows;
            boolean diagnostic = statement != null && statement.has(StatementFlag.DIAGNOSTICS);
            // A diagnostic statement that read the kept connection left its diagnostics there (a driver's own
            // SHOW WARNINGS after a warning must not end the pin for the client's).
            boolean pinStaysAsItWas = diagnostic && connection == before && !framing.failed();
            if (!pinStaysAsItWas) {
                keptForNextBecause = framing.failed() || framing.warnings() > 0
                        ? "it has the previous statement's warnings or error"
                        : session.prepared().anyReadsPreviousStatement()
                        ? "a prepared statement of the session reads what the previous statement left (ROW_COUNT(), "
                        + "FOUND_ROWS()), which only this connection can answer" : null;
                keptForNext = keptForNextBecause != null ? connection : null;
            }
            if (statement != null && statement.has(StatementFlag.CALC_FOUND_ROWS) && !framing.failed()) {
                countedFoundRows = connection;
            } else if (framing.rowsOfLastResultSet() != ResponseFraming.NO_RESULT_SET
                    && !diagnostic) {
                countedFoundRows = null; // FOUND_ROWS() reads this result's rows now
            }
            if (before != null && before != keptForNext && before != countedFoundRows) {
                mayRelease.accept(before);
            }
            if (counted != null && counted != countedFoundRows && counted != keptForNext) {
                mayRelease.accept(counted);
            }
            if ((framing.command() == CommandType.COM_QUERY || framing.command() == CommandType.COM_STMT_EXECUTE)
                    && !diagnostic) {
                ranLast = connection;
                counts.ran(framing, statement != null && statement.has(StatementFlag.CALC_FOUND_ROWS));
            } else if (diagnostic) {
                counts.diagnosticRan(framing);
            }
            if (statement != null && statement.has(StatementFlag.SETS_USER_VARIABLES)) {
                userVariablesSet(connection, sql);
            }
            Runnable next = readUserVariablesIfDue(connection, framing, held, done);
            if (stateCommand == null || framing.failed()) {
                next.run();
            } else {
                stateSync.settingSucceeded(backend, sql, stateCommand, next,
                        why -> keepOnThisConnection(connection, why));
            }
        };
    }

    /** A statement that sets user variables ran on {@code connection}: the ones its text names are to be read. */
    private void userVariablesSet(BackendConnection connection, String sql) {
        if (variablesStay) {
            return;
        }
        if (sql == null || variablesOn != null && variablesOn != connection) {
            // Set by a prepared statement (no text to name them), or on two connections: they stay where they are.
            variablesStay = true;
            return;
        }
        variablesOn = connection;
        QueryText text = QueryText.of(sql, session.sqlMode());
        for (UserVariables.Name name : UserVariables.named(sql, text.tokens())) {
            variablesToRead.putIfAbsent(name.key(), name);
        }
        variablesStay = variablesToRead.size() > UserVariables.MAX_VARIABLES;
    }

    /**
     * {@code then}, after reading back the user variables still to read when they are on {@code connection} and the
     * statement left no warning or error there (which the reading would clear before {@code SHOW WARNINGS} could
     * list them; the next statement reads them instead). Read back, they travel by value and the connection no
     * longer holds the session.
     */
    private Runnable readUserVariablesIfDue(BackendConnection connection, ResponseFraming framing,
                                            Set<HeldState> held, Runnable then) {
        if (variablesStay || variablesToRead.isEmpty() || connection != variablesOn || framing.failed()
                || framing.warnings() > 0) {
            return then;
        }
        List<UserVariables.Name> names = List.copyOf(variablesToRead.values());
        return () -> InternalCommand.queryRow(connection,
                session.queryPayload(UserVariables.captureQuery(names)), (row, error) -> {
                    Optional<Map<String, String>> replays = error != null ? Optional.empty()
                            : UserVariables.replays(names, captured(row));
                    SessionBackend backend = backendOf.apply(connection);
                    if (replays.isPresent() && backend != null && stateSync.userVariablesSet(backend, replays.get())) {
                        variablesToRead.clear();
                        variablesOn = null;
                        held.remove(HeldState.USER_VARIABLES);
                    } else {
                        LOG.info("session {}: the user variables {} cannot be carried by value ({}); the session "
                                + "stays on its connection to {}", session.id(), variablesToRead.keySet(),
                                error != null ? error.message() : "too many or too long",
                                connection.server().address());
                        variablesStay = true;
                    }
                    counts.connectionLeft(); // the reading answered ROW_COUNT() and FOUND_ROWS() there
                    then.run();
                }, failure -> session.backendFailed(connection.server(), failure));
    }

    /** The values of {@link UserVariables#captureQuery}'s row, a variable per {@code COLUMNS_PER_VARIABLE} columns. */
    private static List<UserVariables.Captured> captured(List<InternalCommand.Value> row) {
        List<UserVariables.Captured> values = new ArrayList<>();
        for (int i = 0; i + UserVariables.COLUMNS_PER_VARIABLE <= row.size(); i += UserVariables.COLUMNS_PER_VARIABLE) {
            values.add(new UserVariables.Captured(row.get(i).text(), row.get(i).type(), row.get(i + 1).text(),
                    row.get(i + 2).text(), row.get(i + 3).text()));
        }
        return values;
    }

    /** COM_RESET_CONNECTION or COM_CHANGE_USER: the server dropped the session's user variables. */
    void userVariablesDropped() {
        variablesToRead.clear();
        variablesOn = null;
        variablesStay = false;
    }

    /** See {@link SessionBackends#keepOnThisConnection}. */
    void keepOnThisConnection(BackendConnection connection, String why) {
        LOG.atInfo().addKeyValue("session", session.id())
                .log("session {}: {}; the session stays on the primary", session.id(), why);
        SessionBackend backend = backendOf.apply(connection);
        if (backend != null) {
            backend.held.add(HeldState.UNREPLAYED_SETTINGS);
        }
        session.pin(StatementFlag.MIXED_SESSION_STATE);
    }
}
