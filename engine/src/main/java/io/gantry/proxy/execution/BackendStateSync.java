package io.gantry.proxy.execution;

import static io.gantry.proxy.session.SessionContext.LOG;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.BackendPool;
import io.gantry.proxy.backend.InternalCommand;
import io.gantry.proxy.session.LogText;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.state.NextTransaction;
import io.gantry.proxy.state.SessionStateLog;
import io.gantry.proxy.state.SessionTracking;
import io.gantry.proxy.state.SettingReplay;
import io.gantry.topology.Upstreams;
import io.gantry.wire.CapabilityFlags;
import io.gantry.wire.ComQuery;
import io.gantry.wire.CommandType;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Brings each of a session's backend connections to the session's state before it runs the session's command: the
 * session settings it has not applied yet (replayed from the {@link SessionStateLog}, as values), Gantry's own
 * session tracking ({@link SessionTracking}), and a held {@code SET TRANSACTION} ({@link NextTransaction}); and
 * records a setting that succeeded so the other connections replay it. Which connections a session has is
 * {@link SessionBackends}' business; this class reads and writes what each has applied, in its
 * {@link SessionBackend}.
 */
final class BackendStateSync {

    /** Servers already reported as refusing Gantry's session tracking: said once per server, not per connection. */
    private static final Set<String> TRACKING_REFUSED = ConcurrentHashMap.newKeySet();

    /** sql_mode as a login with CLIENT_IGNORE_SPACE leaves it, from the server's default (see restoreLoginSqlMode). */
    private static final String IGNORE_SPACE_AS_AT_LOGIN = "SET SESSION sql_mode = IF(FIND_IN_SET('IGNORE_SPACE', "
            + "@@session.sql_mode), @@session.sql_mode, CONCAT_WS(',', NULLIF(@@session.sql_mode, ''), 'IGNORE_SPACE'))";

    private final SessionContext session;
    private final ByteBufAllocator alloc;
    /** Which server is the primary: only there does a connection need the session's {@code LAST_INSERT_ID()}. */
    private final Upstreams upstreams;

    BackendStateSync(SessionContext session, ByteBufAllocator alloc, Upstreams upstreams) {
        this.session = session;
        this.alloc = alloc;
        this.upstreams = upstreams;
    }

    /**
     * A connection taken from the pool: if it last served the same settings as the session's, it has applied them
     * all; if it served none, it has applied none; otherwise it is reset first (COM_RESET_CONNECTION drops the
     * other session's settings) and the session's are replayed.
     */
    void adopted(SessionBackend backend, BackendPool.Idle pooled) {
        backend.insertId = pooled.insertId();
        if (pooled.appliedState().equals(session.stateLog().contents())) {
            backend.stateVersion = session.stateLog().version();
            backend.tracked = pooled.tracked();
        } else if (pooled.appliedState().isEmpty()) {
            backend.tracked = pooled.tracked();
        } else {
            backend.resetFirst = true;
        }
    }

    /**
     * What the pool keeps with {@code backend}'s connection when the session gives it back: the settings it has
     * applied (the session's, as one text, when it has applied them all; none, when it ran only commands that need
     * none, such as a prepare on a replica), or null when it applied some and cannot go to the pool as it is.
     */
    String appliedState(SessionBackend backend) {
        if (backend.resetFirst || backend.partlyApplied) {
            return null;
        }
        if (session.stateLog().upTo(backend.stateVersion)) {
            return session.stateLog().contents();
        }
        return backend.stateVersion == 0 ? "" : null;
    }

    /** Whether {@code backend} can run the session's next command as it is, with nothing to send first. */
    boolean upToDate(SessionBackend backend) {
        return session.settings().nextTransaction() == null && session.stateLog().upTo(backend.stateVersion)
                && !needsTracking(backend) && !needsInsertId(backend);
    }

    /**
     * Sends what {@code backend} lacks of the session's state, then hands it to {@code then}; a refusal of the
     * held {@code SET TRANSACTION} or of a replayed setting goes to {@code refused} instead. Everything but the held
     * {@code SET TRANSACTION} goes in one round trip (pipelined): a reset, the settings, the tracking, the last
     * insert id.
     */
    void bringUpToDate(SessionBackend backend, Packet packet, Consumer<BackendConnection> then,
                       Consumer<ErrPacket> refused) {
        BackendConnection connection = backend.connection;
        List<InternalCommand.Step> steps = new ArrayList<>(4);
        ErrPacket[] settingRefused = new ErrPacket[1];
        resetIfPooledElsewhere(backend, steps);
        replaySettings(backend, steps, settingRefused);
        ensureTracking(backend, steps);
        carryInsertId(backend, steps);
        InternalCommand.runAll(connection, steps, () -> {
            if (settingRefused[0] != null) {
                refused.accept(settingRefused[0]);
            } else {
                withNextTransaction(connection, packet, then, refused);
            }
        }, failure -> session.backendFailed(connection.server(), failure));
    }

    /** A COM_RESET_CONNECTION of the client's succeeded on the connection: nothing of the session is left on it. */
    void serverReset(SessionBackend backend) {
        backend.tracked = false;
        backend.insertId = 0;
    }

    /**
     * A session setting succeeded on {@code backend}: records how to replay it on the session's other
     * connections, as values (a setting made from an expression is read back first, see {@link SettingReplay}).
     * After the client's own {@code SET session_track_...}, what it tracks is read first and Gantry's items are
     * added back before the connection's next command. A setting that cannot be replayed goes to
     * {@code notReplayable} with the reason.
     *
     * @param sql the text, or null when the command has no text (COM_INIT_DB, COM_SET_OPTION)
     */
    void settingSucceeded(SessionBackend backend, String sql, byte[] command, Runnable done,
                          Consumer<String> notReplayable) {
        BackendConnection connection = backend.connection;
        Runnable recorded = sql != null && setsWaitTimeout(sql) ? () -> readWaitTimeout(connection, done) : done;
        if (sql == null || !SessionTracking.setsTracking(sql)) {
            recordSetting(backend, sql, command, recorded, notReplayable);
            return;
        }
        backend.tracked = false;
        InternalCommand.queryRow(connection,
                session.queryPayload(SessionTracking.clientTrackingQuery(connection.flavour())),
                (row, error) -> {
                    if (error == null) {
                        List<String> values = new ArrayList<>(row.size());
                        for (InternalCommand.Value value : row) {
                            values.add(value.text());
                        }
                        session.tracking().clientTracks(values);
                    }
                    recordSetting(backend, sql, command, recorded, notReplayable);
                }, failure -> session.backendFailed(connection.server(), failure));
    }

    /**
     * Whether a setting may have changed the session's {@code wait_timeout}. The server enforces it on its own
     * connection only, which the session may have left for the pool: Gantry closes the idle client itself.
     */
    static boolean setsWaitTimeout(String sql) {
        return sql.toLowerCase(Locale.ROOT).contains("wait_timeout");
    }

    /** Reads the session's {@code wait_timeout} back (the statement may have set it from an expression). */
    private void readWaitTimeout(BackendConnection connection, Runnable then) {
        InternalCommand.queryRow(connection, session.queryPayload("SELECT @@session.wait_timeout"), (row, error) -> {
            if (error == null && !row.isEmpty() && row.get(0).text() != null) {
                session.idleLimit(Long.parseLong(row.get(0).text()));
            }
            then.run();
        }, failure -> session.backendFailed(connection.server(), failure));
    }

    private void recordSetting(SessionBackend backend, String sql, byte[] command, Runnable done,
                               Consumer<String> notReplayable) {
        boolean noBackslashEscapes = session.noBackslashEscapes();
        SettingReplay replay = sql == null ? new SettingReplay.Verbatim() : SettingReplay.of(sql, noBackslashEscapes);
        String replaces = sql == null ? null : SettingReplay.replacesKey(sql, noBackslashEscapes);
        if (replay instanceof SettingReplay.Verbatim) {
            backend.stateVersion = record(replaces, command);
            done.run();
        } else if (replay instanceof SettingReplay.NotReplayable cannot) {
            notReplayable.accept(cannot.why());
            done.run();
        } else {
            SettingReplay.ReadBack readBack = (SettingReplay.ReadBack) replay;
            BackendConnection connection = backend.connection;
            InternalCommand.queryRow(connection, session.queryPayload(readBack.query()), (row, error) -> {
                if (error != null) {
                    notReplayable.accept("reading back '" + LogText.abbreviate(sql) + "' failed: "
                            + error.message());
                } else {
                    List<String> literals = new ArrayList<>(row.size());
                    for (InternalCommand.Value value : row) {
                        literals.add(SettingReplay.literal(value.text(), value.numeric(), noBackslashEscapes));
                    }
                    backend.stateVersion = record(replaces, ComQuery.payload(readBack.replayText(literals)));
                }
                done.run();
            }, failure -> session.backendFailed(connection.server(), failure));
        }
    }

    /**
     * A setting that cannot fail, answered by Gantry without a server ({@code QueryCommand}): recorded as one that ran
     * is, with no connection having it yet.
     */
    void settingAnsweredByGantry(String sql) {
        record(SettingReplay.replacesKey(sql, session.noBackslashEscapes()), ComQuery.payload(sql));
    }

    /** Records a setting in the session's state log, in place of the older one it replaces when it has a key. */
    private long record(String replaces, byte[] command) {
        return replaces == null ? session.stateLog().record(command)
                : session.stateLog().recordSetting(replaces, command);
    }

    /**
     * The user variables a statement on {@code backend} set, carried by value from now on: each replay
     * ({@code SET @a = <literal>}, by the variable's key) replaces the variable's older one in the session's state,
     * and {@code backend}, which holds the values already, is up to date with it. False, and nothing recorded,
     * when the session's state holds too many commands to take them.
     */
    boolean userVariablesSet(SessionBackend backend, Map<String, String> replays) {
        if (session.stateLog().isFull()
                || session.stateLog().size() + replays.size() > SessionStateLog.MAX_DISTINCT_COMMANDS) {
            return false;
        }
        boolean upToDate = session.stateLog().upTo(backend.stateVersion);
        replays.forEach((key, replay) -> session.stateLog().record("user variable " + key,
                ComQuery.payload(replay)));
        if (upToDate) {
            backend.stateVersion = session.stateLog().version();
        }
        return true;
    }

    /**
     * COM_RESET_CONNECTION on a pooled connection that served another session's settings, first. A server that
     * refuses it (one without COM_RESET_CONNECTION) gets the connection closed: the session's command goes on a
     * connection of its own, and closing stops the commands sent behind the reset.
     */
    private void resetIfPooledElsewhere(SessionBackend backend, List<InternalCommand.Step> steps) {
        if (!backend.resetFirst) {
            return;
        }
        BackendConnection connection = backend.connection;
        backend.resetFirst = false;
        serverReset(backend);
        ByteBuf reset = alloc.buffer(1).writeByte(CommandType.COM_RESET_CONNECTION.code());
        steps.add(new InternalCommand.Step(reset, (first, error) -> {
            if (error != null) {
                LOG.debug("session {}: {} refused COM_RESET_CONNECTION on a pooled connection ({}); closing it",
                        session.id(), connection.server().address(), error.message());
                connection.close();
                session.backendFailed(connection.server(), new java.io.IOException(
                        "a pooled connection could not be reset: " + error.message()));
            }
        }));
        restoreLoginSqlMode(connection, steps);
    }

    /**
     * The server adds IGNORE_SPACE to a connection's sql_mode at login when the client asks for CLIENT_IGNORE_SPACE,
     * and a COM_RESET_CONNECTION does not add it again: without this, a session on a reset connection would parse
     * {@code COUNT (*)} differently from one that logged in directly.
     */
    private void restoreLoginSqlMode(BackendConnection connection, List<InternalCommand.Step> steps) {
        if ((session.client().capabilities() & CapabilityFlags.CLIENT_IGNORE_SPACE) == 0) {
            return;
        }
        steps.add(new InternalCommand.Step(session.queryPayload(IGNORE_SPACE_AS_AT_LOGIN), (first, error) -> {
            if (error != null) {
                LOG.warn("session {}: {} refused to restore IGNORE_SPACE on a reset pooled connection ({})",
                        session.id(), connection.server().address(), error.message());
            }
        }));
    }

    /**
     * {@code LAST_INSERT_ID()} follows the session, not the connection: a connection to the primary that does not
     * hold the session's last insert id (a pooled one, or one opened after another was lost) is given it
     * ({@code SELECT LAST_INSERT_ID(n)}).
     */
    private void carryInsertId(SessionBackend backend, List<InternalCommand.Step> steps) {
        if (!needsInsertId(backend)) {
            return;
        }
        long insertId = session.lastInsertId();
        steps.add(new InternalCommand.Step(session.queryPayload("SELECT LAST_INSERT_ID(" + insertId + ")"),
                (first, error) -> {
                    if (error == null) {
                        backend.insertId = insertId;
                    }
                }));
    }

    private boolean needsInsertId(SessionBackend backend) {
        return backend.insertId != session.lastInsertId()
                && upstreams.isPrimary(backend.connection.server());
    }

    /**
     * The session-state commands this connection has not run yet; the first refusal goes to {@code refused}, and
     * the connection counts as having applied them only when none was refused (they are replayed again next time:
     * settings are values, so running one twice changes nothing).
     */
    private void replaySettings(SessionBackend backend, List<InternalCommand.Step> steps, ErrPacket[] refused) {
        List<byte[]> missing = session.stateLog().since(backend.stateVersion);
        long version = session.stateLog().version();
        for (int i = 0; i < missing.size(); i++) {
            byte[] command = missing.get(i);
            if (SessionTracking.setsTracking(new String(command, StandardCharsets.ISO_8859_1))) {
                backend.tracked = false; // the client's list replaced Gantry's: add its items back afterwards
            }
            boolean last = i == missing.size() - 1;
            steps.add(new InternalCommand.Step(Unpooled.wrappedBuffer(command), (first, error) -> {
                if (error != null && refused[0] == null) {
                    refused[0] = error;
                }
                if (last) {
                    backend.partlyApplied = refused[0] != null;
                    if (refused[0] == null) {
                        backend.stateVersion = version;
                    }
                }
            }));
        }
    }

    /**
     * Turns Gantry's own session tracking on for a connection unless it is on. A server that refuses it only costs
     * the exact GTIDs: the session falls back on samples.
     */
    private void ensureTracking(SessionBackend backend, List<InternalCommand.Step> steps) {
        if (!needsTracking(backend)) {
            return;
        }
        BackendConnection connection = backend.connection;
        backend.tracked = true;
        String setup = SessionTracking.setupStatement(connection.serverVersion());
        steps.add(new InternalCommand.Step(session.queryPayload(setup), (first, error) -> {
            if (error != null && TRACKING_REFUSED.add(connection.server().address())) {
                LOG.atWarn().addKeyValue("server", connection.server().address())
                        .log("backend {}: refused Gantry's session tracking ({}): read-your-writes waits for a sample "
                                + "of the primary instead of the session's own GTIDs", connection.server().address(),
                                error.message());
            }
        }));
    }

    /** Whether Gantry's session tracking is still to be set up on the connection. */
    private static boolean needsTracking(SessionBackend backend) {
        return !backend.tracked
                && CapabilityFlags.has(backend.connection.capabilities(), CapabilityFlags.CLIENT_SESSION_TRACK);
    }

    /**
     * Sends the held {@code SET TRANSACTION} (see {@link NextTransaction}) before the session's next statement, on
     * the statement's server, then the statement.
     */
    private void withNextTransaction(BackendConnection connection, Packet packet, Consumer<BackendConnection> then,
                                     Consumer<ErrPacket> refused) {
        NextTransaction next = session.settings().nextTransaction();
        int command = packet.payload().getUnsignedByte(packet.payload().readerIndex());
        if (next == null
                || (command != CommandType.COM_QUERY.code() && command != CommandType.COM_STMT_EXECUTE.code())) {
            then.accept(connection);
            return;
        }
        session.settings().nextTransactionSent();
        InternalCommand.run(connection, session.queryPayload(next.statement()), (first, error) -> {
            if (error != null) {
                refused.accept(error);
            } else {
                then.accept(connection);
            }
        }, failure -> session.backendFailed(connection.server(), failure));
    }
}
