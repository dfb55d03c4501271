package io.gantry.proxy;

import static io.gantry.proxy.SessionContext.LOG;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.BackendFailure;
import io.gantry.proxy.backend.InternalCommand;
import io.gantry.route.ReadBalance;
import io.gantry.route.ServerId;
import io.gantry.route.StatementClass;
import io.gantry.route.StatementFlag;
import io.gantry.topology.UpstreamServer;
import io.gantry.wire.CapabilityFlags;
import io.gantry.wire.CommandType;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.Packet;
import io.gantry.wire.ResponseFraming;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A session's connections to the servers, opened on first use and logged in as the client, and what each of them
 * holds: the session settings it has applied (replayed from the {@link SessionStateLog} before it runs a command),
 * and state that replay cannot rebuild ({@link HeldState}), which decides what losing the connection means.
 */
final class SessionBackends {

    /** What the session knows of one of its backend connections. */
    private static final class BackendUse {
        /** The session-state log version this connection has applied. */
        long appliedStateVersion;
        /** The value of {@link SessionContext#commands} when this connection last ran a command of the client's. */
        long lastCommand;
        /** What it holds that replaying the settings cannot rebuild. */
        final EnumSet<HeldState> held = HeldState.none();
        /** Whether Gantry's own tracking is on (see {@link SessionTracking}); off again after the client's own. */
        boolean tracked;
    }

    /** What happens once a forwarded command's response is complete, before the session takes its next command. */
    interface AfterResponse {
        void run(BackendConnection connection, ResponseFraming framing, Runnable done);

        AfterResponse NOTHING_MORE = (connection, framing, done) -> done.run();
    }

    /** Servers already reported as refusing Gantry's session tracking: said once per server, not per connection. */
    private static final Set<String> TRACKING_REFUSED = ConcurrentHashMap.newKeySet();

    private final SessionContext session;
    private final Map<ServerId, BackendConnection> connections = new HashMap<>();
    private final Map<BackendConnection, BackendUse> uses = new IdentityHashMap<>();
    /** Server thread id of each backend connection, by {@code host:port}; read by other sessions' KILL. */
    private final Map<String, Long> threads = new ConcurrentHashMap<>();
    /** The last {@link #afterStatement} made for a statement that is not a setting, and its statement class. */
    private AfterResponse lastAfterStatement;
    private StatementClass lastAfterClass;

    SessionBackends(SessionContext session) {
        this.session = session;
    }

    /** The session's backend threads now, by {@code host:port}: what a KILL of this session must kill. */
    List<Map.Entry<String, Long>> threads() {
        return new ArrayList<>(threads.entrySet());
    }

    /** Whether the session has a connection to {@code server} (open or not yet known to be lost). */
    boolean isConnectedTo(UpstreamServer server) {
        return connections.containsKey(session.serverId(server));
    }

    /** The session's usable connection to the server with this address, or null. */
    BackendConnection usable(String hostPort) {
        return usable(new ServerId(hostPort));
    }

    BackendConnection usable(ServerId server) {
        BackendConnection connection = connections.get(server);
        return connection != null && connection.isUsable() ? connection : null;
    }

    /**
     * Runs a client command on a server: obtains (or opens) the session's connection to it, brings its session
     * state up to date, then hands the connection to {@code then} (which forwards the command). When
     * {@code unreachable} is given and the server cannot be reached at all (no connection was ever made), it runs
     * instead of ending the session.
     */
    void run(Packet packet, UpstreamServer server, Consumer<BackendConnection> then, Runnable unreachable) {
        BackendConnection ready = readyConnection(server);
        if (ready != null) {
            then.accept(ready);
            return;
        }
        session.phase = SessionContext.Phase.RUNNING;
        obtain(server).addListener(future -> {
            if (!future.isSuccess() && unreachable != null && future.cause() instanceof BackendFailure failure
                    && failure.serverUnreachable() && !server.isReachable()) {
                unreachable.run();
                return;
            }
            if (!future.isSuccess()) {
                packet.release();
                session.backendFailed(server, future.cause());
                return;
            }
            proceed((BackendConnection) future.getNow(), packet, then);
        });
    }

    /**
     * The usual command's way to its server, without a future or closures: the session's open connection to
     * {@code server} when nothing needs doing on it first (settings to replay, session tracking to set up, a held
     * {@code SET TRANSACTION}), marked as running the session's command; null when {@link #run} must get it ready.
     */
    BackendConnection readyConnection(UpstreamServer server) {
        BackendConnection open = connections.get(session.serverId(server));
        if (open == null || !open.isUsable() || session.nextTransaction != null) {
            return null;
        }
        BackendUse use = uses.get(open);
        if (!session.stateLog.upTo(use == null ? 0L : use.appliedStateVersion) || needsTracking(open, use)) {
            return null;
        }
        session.phase = SessionContext.Phase.RUNNING;
        if (use != null) {
            use.lastCommand = session.commands;
        }
        return open;
    }

    /** Brings the connection's session state up to date, then hands it to {@code then}. */
    private void proceed(BackendConnection connection, Packet packet, Consumer<BackendConnection> then) {
        BackendUse use = uses.get(connection);
        if (use != null) {
            use.lastCommand = session.commands;
        }
        Consumer<ErrPacket> refused = error -> {
            SessionContext.releaseIfHeld(packet);
            session.finish(Reply.error(error));
        };
        syncState(connection, () -> ensureTracking(connection,
                () -> withNextTransaction(connection, packet, then, refused)), refused);
    }

    /**
     * Sends the held {@code SET TRANSACTION} (see {@link NextTransaction}) before the session's next statement, on
     * the statement's server, then the statement.
     */
    private void withNextTransaction(BackendConnection connection, Packet packet, Consumer<BackendConnection> then,
                                     Consumer<ErrPacket> refused) {
        NextTransaction next = session.nextTransaction;
        int command = packet.payload().getUnsignedByte(packet.payload().readerIndex());
        if (next == null || (command != CommandType.COM_QUERY.code() && command != CommandType.COM_STMT_EXECUTE.code())) {
            then.accept(connection);
            return;
        }
        session.nextTransaction = null;
        InternalCommand.run(connection, session.queryPayload(next.statement()), (first, error) -> {
            if (error != null) {
                refused.accept(error);
            } else {
                then.accept(connection);
            }
        }, failure -> session.backendFailed(connection.server(), failure));
    }

    void run(Packet packet, UpstreamServer server, Consumer<BackendConnection> then) {
        run(packet, server, then, null);
    }

    /** The session's connection to a server, opened and logged in on first use. */
    Future<BackendConnection> obtain(UpstreamServer server) {
        ServerId key = session.serverId(server);
        BackendConnection existing = connections.get(key);
        if (existing != null && existing.isUsable()) {
            return session.ctx.executor().newSucceededFuture(existing);
        }
        if (existing != null) {
            BackendUse lost = uses.get(existing);
            drop(key, existing);
            if (lost != null && !lost.held.isEmpty()) {
                return session.ctx.executor().newFailedFuture(new BackendFailure(server.address(), "the connection "
                        + "to " + server.address() + " was lost, and with it " + HeldState.describe(lost.held), null));
            }
        }
        ProxyConfig config = session.services.config();
        Promise<BackendConnection> ready = session.ctx.executor().newPromise();
        BackendConnection.open(server, session.backendLogin(), session.ctx.channel().eventLoop(),
                config.connectTimeout(), config.maxPacketSize(), session.services.login().greetings(),
                session.services.backendChannels()).addListener(future -> {
            if (future.isSuccess()) {
                BackendConnection connection = (BackendConnection) future.getNow();
                if (session.isClosed()) {
                    connection.close();
                    ready.tryFailure(new BackendFailure(server.address(), "the session closed", null));
                    return;
                }
                connections.put(key, connection);
                uses.put(connection, new BackendUse());
                threads.put(server.address(), connection.serverThreadId());
                connection.onIdleClose(() -> closedByServer(key, connection));
                ready.trySuccess(connection);
            } else {
                if (future.cause() instanceof BackendFailure failure && failure.serverUnreachable()) {
                    // The first session to fail marks it down, so the next sessions skip it instead of waiting too.
                    session.services.upstreams().markDown(server, failure.getMessage());
                }
                ready.tryFailure(future.cause());
            }
        });
        return ready;
    }

    /**
     * Turns Gantry's own session tracking on for a connection (see {@link SessionTracking}) unless it is on, then
     * runs {@code then}. A server that refuses it only costs the exact GTIDs: the session falls back on samples.
     */
    private void ensureTracking(BackendConnection connection, Runnable then) {
        BackendUse use = uses.get(connection);
        if (!needsTracking(connection, use)) {
            then.run();
            return;
        }
        use.tracked = true;
        String setup = SessionTracking.setupStatement(connection.serverVersion());
        InternalCommand.run(connection, session.queryPayload(setup), (first, error) -> {
            if (error != null && TRACKING_REFUSED.add(connection.server().address())) {
                LOG.atWarn().addKeyValue("server", connection.server().address())
                        .log("backend {}: refused Gantry's session tracking ({}): read-your-writes waits for a sample "
                                + "of the primary instead of the session's own GTIDs", connection.server().address(),
                                error.message());
            }
            then.run();
        }, failure -> session.backendFailed(connection.server(), failure));
    }

    /** Whether Gantry's session tracking is still to be set up on the connection. */
    private static boolean needsTracking(BackendConnection connection, BackendUse use) {
        return use != null && !use.tracked
                && CapabilityFlags.has(connection.capabilities(), CapabilityFlags.CLIENT_SESSION_TRACK);
    }

    /** The server set the connection's session variables back to their defaults (COM_RESET_CONNECTION). */
    void trackingReset(BackendConnection connection) {
        BackendUse use = uses.get(connection);
        if (use != null) {
            use.tracked = false;
        }
    }

    /**
     * A server closed one of the session's idle connections (its {@code wait_timeout}, a KILL, a restart). If the
     * connection held state replay cannot rebuild, or the session has been idle since it last used it (so the
     * server's idle timeout is the session's own), the session ends as a direct one would; otherwise the
     * connection is forgotten and reopened on next use.
     */
    private void closedByServer(ServerId key, BackendConnection connection) {
        BackendUse use = uses.get(connection);
        if (use != null && !session.isClosed()) {
            if (!use.held.isEmpty()) {
                String held = HeldState.describe(use.held);
                LOG.atWarn().addKeyValue("session", session.id).addKeyValue("server", key.hostPort())
                        .log("session {}: {} closed the session's connection, which held {}; ending the session, as a "
                                + "direct connection would end", session.id, key.hostPort(), held);
                session.endSession(SessionErrors.sessionEnded("Gantry: " + key.hostPort() + " closed this "
                        + "session's connection, which held " + held + "; this session is closed"), this::closeAll);
                return;
            }
            if (use.lastCommand == session.commands) {
                LOG.atInfo().addKeyValue("session", session.id).addKeyValue("server", key.hostPort())
                        .log("session {}: {} closed the session's connection while the session was idle (its "
                                + "wait_timeout, or the server went away); ending the session, as the server would",
                                session.id, key.hostPort());
                session.endSession(SessionErrors.closedWhileIdle(key.hostPort()), this::closeAll);
                return;
            }
        }
        drop(key, connection);
    }

    /** Forgets a connection that closed or is being closed, with everything the session knew about it. */
    private void drop(ServerId key, BackendConnection connection) {
        if (connections.remove(key, connection)) {
            threads.remove(key.hostPort(), connection.serverThreadId());
            uses.remove(connection);
            session.prepared.forgetBackend(key.hostPort());
        }
    }

    /** Closes every backend connection of the session and forgets what it knew about them. */
    void closeAll() {
        for (BackendConnection connection : connections.values()) {
            connection.close();
        }
        connections.clear();
        threads.clear();
        uses.clear();
        session.prepared.clear();
    }

    /** Closes every connection but the one to {@code keep} (a COM_RESET_CONNECTION keeps the primary's). */
    void closeAllBut(ServerId keep) {
        for (Iterator<Map.Entry<ServerId, BackendConnection>> it = connections.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<ServerId, BackendConnection> entry = it.next();
            if (!entry.getKey().equals(keep)) {
                entry.getValue().close();
                threads.remove(entry.getKey().hostPort(), entry.getValue().serverThreadId());
                uses.remove(entry.getValue());
                session.prepared.forgetBackend(entry.getKey().hostPort());
                it.remove();
            }
        }
    }

    /** Commits the read-only transaction the session holds on {@code server}, if its connection is still there. */
    void endTransactionOn(ServerId server) {
        BackendConnection connection = usable(server);
        if (connection == null) {
            return;
        }
        InternalCommand.run(connection, session.queryPayload("COMMIT"), (first, error) -> { },
                failure -> LOG.debug("session {}: ending the read-only transaction on {} failed: {}", session.id,
                        server, failure.getMessage()));
    }

    /** Under statement balance, an idle replica connection is kept only briefly for the next statement. */
    void scheduleRetentionClose(BackendConnection connection) {
        ProxyServices services = session.services;
        if (services.config().routing().readBalance() != ReadBalance.STATEMENT
                || services.upstreams().primary().map(p -> p == connection.server()).orElse(false)) {
            return;
        }
        long commandsAtSchedule = session.commands;
        session.ctx.executor().schedule(() -> {
            if (session.commands == commandsAtSchedule && !connection.isBusy() && !session.isClosed()) {
                ServerId key = session.serverId(connection.server());
                if (connections.get(key) == connection) {
                    drop(key, connection);
                    connection.close();
                }
            }
        }, services.config().connectionRetention().toMillis(), TimeUnit.MILLISECONDS);
    }

    // ---- held state ------------------------------------------------------------------------------------------

    /**
     * A connection of the session that holds state replay cannot rebuild, or null.
     *
     * @param tyingOnly only state that ties the whole session to that server (not a transaction or a cursor)
     */
    BackendConnection holding(boolean tyingOnly) {
        for (Map.Entry<BackendConnection, BackendUse> entry : uses.entrySet()) {
            Set<HeldState> held = entry.getValue().held;
            if (tyingOnly ? HeldState.tiesSession(held) : !held.isEmpty()) {
                return entry.getKey();
            }
        }
        return null;
    }

    /** What {@code connection} holds, in words ("a transaction, user variables"). */
    String describeHeld(BackendConnection connection) {
        BackendUse use = uses.get(connection);
        return use == null ? "nothing" : HeldState.describe(use.held);
    }

    /** The server dropped everything the connection held (a successful COM_RESET_CONNECTION). */
    void heldStateReset(BackendConnection connection) {
        BackendUse use = uses.get(connection);
        if (use != null) {
            use.held.clear();
        }
    }

    /**
     * Notes what a statement left on its connection and, for a session setting that succeeded, records how to
     * replay it.
     *
     * @param statement the statement's class, or null for a command that is not a statement
     * @param sql the text, or null when the command has no text to look into (COM_INIT_DB, COM_SET_OPTION)
     * @param stateCommand the session-setting command as sent, or null when it is not one
     */
    AfterResponse afterStatement(StatementClass statement, String sql, byte[] stateCommand) {
        if (stateCommand == null) {
            // Not a setting, so the text plays no part: one per statement class serves its every run (shared
            // classes make that every plain read of the session).
            AfterResponse last = lastAfterStatement;
            if (last == null || lastAfterClass != statement) {
                last = afterStatementRun(statement, null, null);
                lastAfterStatement = last;
                lastAfterClass = statement;
            }
            return last;
        }
        return afterStatementRun(statement, sql, stateCommand);
    }

    private AfterResponse afterStatementRun(StatementClass statement, String sql, byte[] stateCommand) {
        return (connection, framing, done) -> {
            session.completedOn(connection.server(), statement);
            BackendUse use = uses.get(connection);
            if (use == null) {
                done.run();
                return;
            }
            int status = framing.serverStatus();
            HeldState.afterStatement(use.held, statement, status, status != ResponseFraming.NO_STATUS);
            if (stateCommand == null || framing.failed()) {
                done.run();
            } else if (sql != null && SessionTracking.setsTracking(sql)) {
                // The client replaced what is tracked: learn what it asked for, and add Gantry's items back
                // before the connection's next command.
                use.tracked = false;
                InternalCommand.queryRow(connection,
                        session.queryPayload(SessionTracking.clientTrackingQuery(connection.flavour())),
                        (row, error) -> {
                            if (error == null) {
                                List<String> values = new ArrayList<>(row.size());
                                for (InternalCommand.Value value : row) {
                                    values.add(value.text());
                                }
                                session.tracking.clientTracks(values);
                            }
                            recordSetting(connection, use, sql, stateCommand, done);
                        }, failure -> session.backendFailed(connection.server(), failure));
            } else {
                recordSetting(connection, use, sql, stateCommand, done);
            }
        };
    }

    /**
     * Records a session setting that succeeded on {@code connection} for replay on the session's other backends,
     * as values: a setting made from an expression is read back first (see {@link SettingReplay}).
     */
    private void recordSetting(BackendConnection connection, BackendUse use, String sql, byte[] command,
                               Runnable done) {
        boolean noBackslashEscapes = session.noBackslashEscapes();
        SettingReplay replay = sql == null ? new SettingReplay.Verbatim() : SettingReplay.of(sql, noBackslashEscapes);
        if (replay instanceof SettingReplay.Verbatim) {
            use.appliedStateVersion = session.stateLog.record(command);
            done.run();
        } else if (replay instanceof SettingReplay.NotReplayable notReplayable) {
            keepOnThisConnection(connection, notReplayable.why());
            done.run();
        } else {
            SettingReplay.ReadBack readBack = (SettingReplay.ReadBack) replay;
            InternalCommand.queryRow(connection, session.queryPayload(readBack.query()), (row, error) -> {
                if (error != null) {
                    keepOnThisConnection(connection, "reading back '" + SessionContext.abbreviate(sql)
                            + "' failed: " + error.message());
                } else {
                    List<String> literals = new ArrayList<>(row.size());
                    for (InternalCommand.Value value : row) {
                        literals.add(SettingReplay.literal(value.text(), value.numeric(), noBackslashEscapes));
                    }
                    use.appliedStateVersion = session.stateLog.record(
                            SessionContext.queryCommand(readBack.replayText(literals)));
                }
                done.run();
            }, failure -> session.backendFailed(connection.server(), failure));
        }
    }

    /** A setting that cannot be replayed: the session stays where it was made, and loses it with the connection. */
    void keepOnThisConnection(BackendConnection connection, String why) {
        LOG.atInfo().addKeyValue("session", session.id)
                .log("session {}: {}; the session stays on the primary", session.id, why);
        BackendUse use = uses.get(connection);
        if (use != null) {
            use.held.add(HeldState.UNREPLAYED_SETTINGS);
        }
        if (!session.routeState.pinned()) {
            session.routeState = session.routeState.withPin(StatementFlag.MIXED_SESSION_STATE);
        }
    }

    // ---- settings replay -------------------------------------------------------------------------------------

    /** Replays the session-state commands this connection has not run yet, one at a time. */
    private void syncState(BackendConnection connection, Runnable then, Consumer<ErrPacket> onError) {
        BackendUse use = uses.get(connection);
        long applied = use == null ? 0L : use.appliedStateVersion;
        List<byte[]> missing = session.stateLog.since(applied);
        if (missing.isEmpty()) {
            then.run();
            return;
        }
        InternalCommand.runInOrder(connection, missing, command -> {
            if (SessionTracking.setsTracking(new String(command, StandardCharsets.ISO_8859_1))) {
                trackingReset(connection); // the client's list replaced Gantry's: add its items back afterwards
            }
        }, () -> {
            if (use != null) {
                use.appliedStateVersion = session.stateLog.version();
            }
            then.run();
        }, onError, failure -> session.backendFailed(connection.server(), failure));
    }
}
