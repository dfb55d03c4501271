package io.gantry.proxy.prepared;

import io.gantry.route.ModeHint;
import io.gantry.route.StatementClass;
import io.gantry.route.StatementFlag;
import io.gantry.route.StatementKind;
import io.gantry.route.TransactionFlavor;
import io.gantry.wire.CommandType;
import io.gantry.wire.StmtPrepareOk;
import io.netty.buffer.ByteBuf;
import io.netty.util.collection.LongObjectHashMap;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * The server-side prepared statements of one client session, as the client sees them, and where
 * each is prepared among the session's backends.
 *
 * <p>The client prepares once on Gantry and gets an id Gantry allocates (from 1, never reused in the
 * session). An execution may run on any backend; the statement is prepared there lazily, the
 * first time it runs there, and the backend's own id is recorded under the backend's
 * {@code host:port}. When a backend connection closes, {@link #forgetBackend} drops every id on
 * it; the statements stay and are prepared again on the next connection that needs them.
 *
 * <p>Besides the ids, each statement keeps what a backend would otherwise hold for the client:
 * the last parameter types the client bound (so an execution with {@code new_params_bind_flag = 0}
 * can be completed for a backend that never saw them), the backend that holds long data sent
 * since the last execution (the next execution must run there), and the backend of the last
 * execution (where a cursor opened by it lives, for COM_STMT_FETCH).
 *
 * <p>Every method that takes a client id also accepts {@link #LAST_PREPARED} (MariaDB's -1),
 * meaning the statement registered most recently, unless a prepare failed since.
 *
 * <p>Not thread-safe; one instance belongs to one client session's event loop.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_command_phase_ps.html">Prepared Statements</a>
 * @see <a href="https://mariadb.com/kb/en/com_stmt_execute/">MariaDB COM_STMT_EXECUTE (statement id -1)</a>
 */
public final class PreparedStatements {

    /** MariaDB's statement id -1: "the statement prepared last on this connection". */
    public static final long LAST_PREPARED = 0xFFFF_FFFFL;

    /** The largest client id handed out; {@link #LAST_PREPARED} is reserved. */
    static final long MAX_CLIENT_ID = 0xFFFF_FFFEL;

    private static final long NONE = 0;

    /**
     * A statement as the client prepared it.
     *
     * @param clientId    the id Gantry gave the client, 1 to {@code 0xFFFFFFFE}
     * @param sql         the statement text as the client sent it, one char per byte
     *                    (ISO-8859-1), so it re-encodes to exactly the client's bytes whatever the
     *                    connection's character set; fine for classification, which needs keywords only
     * @param statementClass what the text is, for routing: classified once, at prepare, with the session's mode
     *                    then (the server parsed the text then too), not at every execution
     * @param paramCount  {@code num_params} of the first backend's COM_STMT_PREPARE_OK
     * @param columnCount {@code num_columns} of the first backend's COM_STMT_PREPARE_OK
     * @param sentSql     the text the servers prepare, one char per byte: {@code sql} with the Gantry session's id
     *                    written in for {@code CONNECTION_ID()} (the same string when it has none)
     * @param answersCorrected whether Gantry may correct its answers in passing (values written into
     *                    {@code sentSql}, status variables, the process list): noted once, so that an execution of
     *                    any other statement builds nothing for it
     */
    public record Statement(long clientId, String sql, StatementClass statementClass, int paramCount,
                            int columnCount, String sentSql, boolean answersCorrected) {

        /**
         * @throws IllegalArgumentException if a value is out of range or {@code sql} has a char
         *                                  above 0xFF
         */
        public Statement {
            if (clientId < 1 || clientId > MAX_CLIENT_ID) {
                throw new IllegalArgumentException("client statement id must be 1 to " + MAX_CLIENT_ID
                        + ", was " + clientId);
            }
            Objects.requireNonNull(sql, "sql");
            Objects.requireNonNull(statementClass, "statementClass");
            Objects.requireNonNull(sentSql, "sentSql");
            requireBytes("sql", sql);
            requireBytes("sentSql", sentSql);
            if (paramCount < 0 || paramCount > 0xFFFF || columnCount < 0 || columnCount > 0xFFFF) {
                throw new IllegalArgumentException("paramCount and columnCount must be 0 to 65535, were "
                        + paramCount + " and " + columnCount);
            }
        }

        /** A statement whose text is prepared as the client sent it, and whose answers Gantry leaves alone. */
        public Statement(long clientId, String sql, StatementClass statementClass, int paramCount, int columnCount) {
            this(clientId, sql, statementClass, paramCount, columnCount, sql, false);
        }

        private static void requireBytes(String name, String text) {
            for (int i = 0; i < text.length(); i++) {
                if (text.charAt(i) > 0xFF) {
                    throw new IllegalArgumentException(name + " must hold one byte per char (ISO-8859-1); char "
                            + i + " is U+" + Integer.toHexString(text.charAt(i)).toUpperCase());
                }
            }
        }

        /** The statement text as the servers prepare it ({@link #sentSql}), in the client's bytes. */
        public byte[] sqlBytes() {
            return sentSql.getBytes(StandardCharsets.ISO_8859_1);
        }

        /** Writes the COM_STMT_PREPARE that prepares this statement on another backend. */
        public void writePrepare(ByteBuf out) {
            out.writeByte(CommandType.COM_STMT_PREPARE.code());
            out.writeBytes(sqlBytes());
        }

        /**
         * A copy of a backend's COM_STMT_PREPARE_OK payload carrying {@link #clientId()} instead of
         * the backend's id, for the client; the input is neither consumed nor released.
         *
         * @throws io.gantry.wire.MalformedPacketException if {@code backendPrepareOk} is not a
         *                                                 COM_STMT_PREPARE_OK
         */
        public ByteBuf clientPrepareOk(ByteBuf backendPrepareOk) {
            ByteBuf copy = backendPrepareOk.copy();
            try {
                StmtPrepareOk.rewriteStatementId(copy, clientId);
                return copy;
            } catch (RuntimeException e) {
                copy.release();
                throw e;
            }
        }
    }

    /**
     * Long data (COM_STMT_SEND_LONG_DATA) sent for a statement since its last execution or reset.
     *
     * @param hostPort the backend that holds it; the next execution must run there
     * @param lost     true if that backend's connection closed since, so the data is gone and the
     *                 next execution must fail rather than run without it
     */
    public record LongData(String hostPort, boolean lost) {

        public LongData {
            Objects.requireNonNull(hostPort, "hostPort");
        }
    }

    /** Mutable per-statement state; never leaves this class. */
    private static final class Entry {
        final Statement statement;
        final Map<String, Long> backendIds = new LinkedHashMap<>();
        final Set<String> haveTypes = new HashSet<>();
        byte[] paramTypes;
        LongData longData;
        String executedOn;

        Entry(Statement statement) {
            this.statement = statement;
        }
    }

    /** By client id, keyed by the primitive: every execution looks its statement up several times, unboxed. */
    private final LongObjectHashMap<Entry> statements = new LongObjectHashMap<>();
    private long nextId = 1;
    /** Open statements that {@link #anyReadsPreviousStatement read what the previous statement left}. */
    private int readingPreviousStatement;
    private long lastPrepared = NONE;

    /**
     * Registers a statement once the first backend answered its COM_STMT_PREPARE with OK.
     *
     * @param sql       the statement text of the client's COM_STMT_PREPARE (after the command byte), one char per
     *                  byte (ISO-8859-1)
     * @param sentSql   the text the servers prepare ({@link Statement#sentSql})
     * @param answersCorrected see {@link Statement#answersCorrected}
     * @param statementClass what the text is, for routing its executions
     * @param hostPort  the backend that prepared it
     * @param backendOk that backend's COM_STMT_PREPARE_OK
     * @return the statement, with its new client id; send the client
     *         {@link Statement#clientPrepareOk} of the backend's packet
     * @throws IllegalStateException if the session used up all 2^32 - 2 ids
     */
    public Statement register(String sql, String sentSql, boolean answersCorrected, StatementClass statementClass,
                              String hostPort, StmtPrepareOk backendOk) {
        Objects.requireNonNull(hostPort, "hostPort");
        if (nextId > MAX_CLIENT_ID) {
            throw new IllegalStateException("this session used up all " + MAX_CLIENT_ID + " statement ids");
        }
        Statement statement = new Statement(nextId, sql, statementClass, backendOk.paramCount(),
                backendOk.columnCount(), sentSql, answersCorrected);
        Entry entry = new Entry(statement);
        entry.backendIds.put(hostPort, backendOk.statementId());
        statements.put(statement.clientId(), entry);
        if (readsPreviousStatement(statement)) {
            readingPreviousStatement++;
        }
        lastPrepared = nextId++;
        return statement;
    }

    /** {@link #register(String, String, boolean, StatementClass, String, StmtPrepareOk)} of a text sent as it is. */
    public Statement register(String sql, StatementClass statementClass, String hostPort, StmtPrepareOk backendOk) {
        return register(sql, sql, false, statementClass, hostPort, backendOk);
    }

    /**
     * Notes that a COM_STMT_PREPARE failed: like MariaDB, {@link #LAST_PREPARED} then refers to no
     * statement until the next successful prepare.
     */
    public void prepareFailed() {
        lastPrepared = NONE;
    }

    /** The statement with this client id (or {@link #LAST_PREPARED}), if it is open. */
    public Optional<Statement> find(long clientId) {
        Entry entry = statements.get(resolve(clientId));
        return entry == null ? Optional.empty() : Optional.of(entry.statement);
    }

    /** Number of open statements. */
    public int size() {
        return statements.size();
    }

    // ---- backend ids ---------------------------------------------------------------------------

    /** What {@link #backendIdOrNone} answers for a statement not prepared on the backend (ids are unsigned 32-bit). */
    public static final long NOT_PREPARED = -1;

    /** The backend's own id for the statement if it is prepared on {@code hostPort}; empty if not. */
    public OptionalLong backendId(long clientId, String hostPort) {
        long id = backendIdOrNone(clientId, hostPort);
        return id == NOT_PREPARED ? OptionalLong.empty() : OptionalLong.of(id);
    }

    /** {@link #backendId} without the {@code OptionalLong}, for every execution: {@link #NOT_PREPARED} if not. */
    public long backendIdOrNone(long clientId, String hostPort) {
        Entry entry = statements.get(resolve(clientId));
        Long id = entry == null ? null : entry.backendIds.get(hostPort);
        return id == null ? NOT_PREPARED : id;
    }

    /**
     * Records that the statement is now prepared on {@code hostPort} under {@code backendId} (a
     * lazy prepare answered OK). The backend has not seen any parameter types yet.
     *
     * @return the id it had there before, which should be closed; usually empty
     * @throws IllegalArgumentException if the statement is not open
     */
    public OptionalLong addBackend(long clientId, String hostPort, long backendId) {
        Objects.requireNonNull(hostPort, "hostPort");
        Entry entry = require(clientId);
        Long previous = entry.backendIds.put(hostPort, backendId);
        entry.haveTypes.remove(hostPort);
        return previous == null ? OptionalLong.empty() : OptionalLong.of(previous);
    }

    /** Backends the statement is prepared on, with its id on each; empty if it is not open. */
    public Map<String, Long> backendIds(long clientId) {
        Entry entry = statements.get(resolve(clientId));
        return entry == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(entry.backendIds));
    }

    /**
     * The backend's own ids of the session's statements prepared on {@code hostPort}: what to close there before
     * its connection goes to the pool for other sessions.
     */
    public long[] backendIdsOn(String hostPort) {
        return statements.values().stream().map(entry -> entry.backendIds.get(hostPort)).filter(Objects::nonNull)
                .mapToLong(Long::longValue).toArray();
    }

    /**
     * Whether long data (COM_STMT_SEND_LONG_DATA) sent for a statement waits on {@code hostPort} for the
     * statement's next execution: that connection must stay with the session until then.
     */
    public boolean longDataWaitsOn(String hostPort) {
        for (Entry entry : statements.values()) {
            if (entry.longData != null && !entry.longData.lost() && entry.longData.hostPort().equals(hostPort)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Forgets everything the session had on a backend whose connection closed: its statement ids,
     * the parameter types it knew and the cursor of its last execution. Long data held there is
     * marked {@linkplain LongData#lost() lost}.
     */
    public void forgetBackend(String hostPort) {
        for (Entry entry : statements.values()) {
            entry.backendIds.remove(hostPort);
            entry.haveTypes.remove(hostPort);
            if (hostPort.equals(entry.executedOn)) {
                entry.executedOn = null;
            }
            if (entry.longData != null && entry.longData.hostPort().equals(hostPort)) {
                entry.longData = new LongData(hostPort, true);
            }
        }
    }

    // ---- parameter types -------------------------------------------------------------------------

    /**
     * Remembers the parameter types of an execution that bound them ({@code new_params_bind_flag}
     * set, as sent by the client or completed by Gantry) and that {@code hostPort} now knows them;
     * other backends do not know these types yet.
     *
     * @throws IllegalArgumentException if the statement is not open or is not prepared on
     *                                  {@code hostPort}
     */
    public void typesSent(long clientId, String hostPort, byte[] paramTypes) {
        Entry entry = require(clientId);
        if (!entry.backendIds.containsKey(hostPort)) {
            throw new IllegalArgumentException("statement " + entry.statement.clientId() + " is not prepared on "
                    + hostPort);
        }
        remember(entry, paramTypes);
        entry.haveTypes.add(hostPort);
    }

    /**
     * Remembers the parameter types of an execution that bound them but reached no backend (a query-cache hit): every
     * backend's next execution is sent with them.
     */
    public void typesBound(long clientId, byte[] paramTypes) {
        remember(require(clientId), paramTypes);
    }

    private static void remember(Entry entry, byte[] paramTypes) {
        if (entry.paramTypes == null || !Arrays.equals(entry.paramTypes, paramTypes)) {
            entry.paramTypes = paramTypes.clone();
            entry.haveTypes.clear();
        }
    }

    /** The last parameter types the statement was executed with, if any were bound. */
    public Optional<byte[]> paramTypes(long clientId) {
        Entry entry = statements.get(resolve(clientId));
        return entry == null || entry.paramTypes == null ? Optional.empty() : Optional.of(entry.paramTypes.clone());
    }

    /**
     * The types to bind into an execution on {@code hostPort} that does not bind any: the
     * remembered ones if that backend has not seen them, empty if it has (or none were ever bound).
     */
    public Optional<byte[]> missingTypes(long clientId, String hostPort) {
        Entry entry = statements.get(resolve(clientId));
        if (entry == null || entry.paramTypes == null || entry.haveTypes.contains(hostPort)) {
            return Optional.empty();
        }
        return Optional.of(entry.paramTypes.clone());
    }

    // ---- long data, executions, resets -----------------------------------------------------------

    /**
     * Records a COM_STMT_SEND_LONG_DATA sent to {@code hostPort}.
     *
     * @throws IllegalArgumentException if the statement is not open
     * @throws IllegalStateException    if long data for it already went to another backend (send
     *                                  all of it to {@link #longData}'s backend)
     */
    public void longDataSent(long clientId, String hostPort) {
        Objects.requireNonNull(hostPort, "hostPort");
        Entry entry = require(clientId);
        if (entry.longData != null && !entry.longData.hostPort().equals(hostPort)) {
            throw new IllegalStateException("long data for statement " + entry.statement.clientId()
                    + " is on " + entry.longData.hostPort() + ", not " + hostPort);
        }
        if (entry.longData == null) {
            entry.longData = new LongData(hostPort, false);
        }
    }

    /**
     * Records that long data for the statement could not be delivered to {@code hostPort} (the
     * lazy prepare there failed): the data is {@linkplain LongData#lost() lost} and the next
     * execution must fail rather than run without it.
     *
     * @throws IllegalArgumentException if the statement is not open
     */
    public void longDataLost(long clientId, String hostPort) {
        Objects.requireNonNull(hostPort, "hostPort");
        require(clientId).longData = new LongData(hostPort, true);
    }

    /** Long data sent since the statement's last execution or reset, if any. */
    public Optional<LongData> longData(long clientId) {
        Entry entry = statements.get(resolve(clientId));
        return entry == null ? Optional.empty() : Optional.ofNullable(entry.longData);
    }

    /**
     * Records that the statement was executed on {@code hostPort}: the server has consumed the
     * long data, and a cursor the execution opens lives there.
     *
     * @throws IllegalArgumentException if the statement is not open
     */
    public void executed(long clientId, String hostPort) {
        Objects.requireNonNull(hostPort, "hostPort");
        Entry entry = require(clientId);
        entry.longData = null;
        entry.executedOn = hostPort;
    }

    /** The backend of the statement's last execution (where its cursor is), if still connected. */
    public Optional<String> executedOn(long clientId) {
        Entry entry = statements.get(resolve(clientId));
        return entry == null ? Optional.empty() : Optional.ofNullable(entry.executedOn);
    }

    /**
     * COM_STMT_RESET: forgets the statement's long data and cursor.
     *
     * @return the backends that hold either and must get the reset (in their own ids); empty if
     *         there are none or the statement is not open
     */
    public Set<String> reset(long clientId) {
        Entry entry = statements.get(resolve(clientId));
        if (entry == null) {
            return Set.of();
        }
        Set<String> targets = new LinkedHashSet<>();
        if (entry.longData != null && !entry.longData.lost()) {
            targets.add(entry.longData.hostPort());
        }
        if (entry.executedOn != null) {
            targets.add(entry.executedOn);
        }
        entry.longData = null;
        entry.executedOn = null;
        return Collections.unmodifiableSet(targets);
    }

    /**
     * COM_STMT_CLOSE: forgets the statement.
     *
     * @return the backends it was prepared on, with its id on each, to send COM_STMT_CLOSE to;
     *         empty if it was not open
     */
    public Map<String, Long> close(long clientId) {
        long id = resolve(clientId);
        Entry entry = statements.remove(id);
        if (entry == null) {
            return Map.of();
        }
        if (readsPreviousStatement(entry.statement)) {
            readingPreviousStatement--;
        }
        if (lastPrepared == id) {
            lastPrepared = NONE;
        }
        return Collections.unmodifiableMap(entry.backendIds);
    }

    /**
     * One open statement by value, for a take-over: what the client was told at prepare, how it is classified for
     * routing, and the parameter types it last bound.
     */
    public record KeptStatement(long clientId, String sql, String sentSql, boolean answersCorrected, int paramCount,
                                int columnCount, String kind, String beginFlavor, List<String> flags, String hint,
                                int statementCount, byte[] paramTypes) {
    }

    /** The open statements, the next id and the last prepared one, for {@link #restore} in another process. */
    public record Kept(List<KeptStatement> statements, long nextId, long lastPrepared) {
    }

    /** Whether long data sent for a statement waits on a server for its execution: the session is tied there. */
    public boolean anyLongData() {
        for (Entry entry : statements.values()) {
            if (entry.longData != null) {
                return true;
            }
        }
        return false;
    }

    /** The open statements by value, prepared on no server: each is prepared again where it next runs. */
    public Kept kept() {
        List<KeptStatement> out = new ArrayList<>(statements.size());
        for (Entry entry : statements.values()) {
            Statement statement = entry.statement;
            StatementClass what = statement.statementClass();
            out.add(new KeptStatement(statement.clientId(), statement.sql(), statement.sentSql(),
                    statement.answersCorrected(), statement.paramCount(), statement.columnCount(), what.kind().name(),
                    what.beginFlavor().map(Enum::name).orElse(null),
                    what.flags().stream().map(Enum::name).sorted().toList(), what.hint().name(),
                    what.statementCount(), entry.paramTypes));
        }
        out.sort(Comparator.comparingLong(KeptStatement::clientId));
        return new Kept(out, nextId, lastPrepared);
    }

    /** Takes on another process's session's statements ({@link #kept}), with their ids. */
    public void restore(Kept kept) {
        clear();
        for (KeptStatement kept1 : kept.statements()) {
            Set<StatementFlag> flags = EnumSet.noneOf(StatementFlag.class);
            kept1.flags().forEach(flag -> flags.add(StatementFlag.valueOf(flag)));
            StatementClass what = new StatementClass(StatementKind.valueOf(kept1.kind()),
                    Optional.ofNullable(kept1.beginFlavor()).map(TransactionFlavor::valueOf), flags,
                    ModeHint.valueOf(kept1.hint()), kept1.statementCount());
            Statement statement = new Statement(kept1.clientId(), kept1.sql(), what, kept1.paramCount(),
                    kept1.columnCount(), kept1.sentSql(), kept1.answersCorrected());
            Entry entry = new Entry(statement);
            entry.paramTypes = kept1.paramTypes();
            statements.put(statement.clientId(), entry);
            if (readsPreviousStatement(statement)) {
                readingPreviousStatement++;
            }
        }
        nextId = kept.nextId();
        lastPrepared = kept.lastPrepared();
    }

    /**
     * Forgets every statement, for COM_RESET_CONNECTION or COM_CHANGE_USER (which deallocate them
     * on the server) or when the session ends. Ids are not handed out again.
     */
    public void clear() {
        statements.clear();
        readingPreviousStatement = 0;
        lastPrepared = NONE;
    }

    /**
     * Whether an open statement reads what the previous statement left ({@code ROW_COUNT()}, {@code FOUND_ROWS()},
     * {@code SHOW WARNINGS}): its execution cannot be given those values in its text, so the connection that ran the
     * session's last statement must answer it.
     */
    public boolean anyReadsPreviousStatement() {
        return readingPreviousStatement > 0;
    }

    private static boolean readsPreviousStatement(Statement statement) {
        return statement.statementClass().has(StatementFlag.PREVIOUS_STATEMENT);
    }

    private long resolve(long clientId) {
        return clientId == LAST_PREPARED ? lastPrepared : clientId;
    }

    private Entry require(long clientId) {
        Entry entry = statements.get(resolve(clientId));
        if (entry == null) {
            throw new IllegalArgumentException("no open statement with id " + Long.toUnsignedString(clientId));
        }
        return entry;
    }
}
