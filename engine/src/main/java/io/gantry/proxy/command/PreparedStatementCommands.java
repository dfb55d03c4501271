package io.gantry.proxy.command;

import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.InternalCommand;
import io.gantry.proxy.caching.CacheFill;
import io.gantry.proxy.caching.CachedReads;
import io.gantry.proxy.digest.SessionDigest;
import io.gantry.proxy.execution.AfterResponse;
import io.gantry.proxy.execution.PrimaryWait;
import io.gantry.proxy.execution.ResponseForwarder;
import io.gantry.proxy.execution.SessionBackends;
import io.gantry.proxy.execution.SessionRouting;
import io.gantry.proxy.pipeline.StatementPipeline;
import io.gantry.proxy.pipeline.StatementTrip;
import io.gantry.proxy.pipeline.TransactionReplay;
import io.gantry.proxy.prepared.PreparedStatements;
import io.gantry.proxy.prepared.StmtExecutePayloads;
import io.gantry.proxy.session.OwnStatement;
import io.gantry.proxy.session.Reply;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.session.SessionErrors;
import io.gantry.route.QueryText;
import io.gantry.route.StatementClass;
import io.gantry.route.StatementKind;
import io.gantry.route.TransactionEffects;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import io.gantry.wire.CommandType;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.Packet;
import io.gantry.wire.ResponseFraming;
import io.gantry.wire.StmtPrepareOk;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.util.collection.LongObjectHashMap;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * The binary protocol's commands (COM_STMT_PREPARE, _EXECUTE, _SEND_LONG_DATA, _RESET, _CLOSE, _FETCH). A statement
 * is prepared where the client first prepares it (the primary), and lazily on any other backend an execution is
 * routed to; the client sees Gantry's own statement ids ({@link PreparedStatements}). An execution goes through the
 * session's {@link StatementPipeline} as an {@link ExecuteTrip}, as a text does.
 */
public final class PreparedStatementCommands {

    private final SessionContext session;
    private final AnswerCorrections answers;
    private final Upstreams upstreams;
    private final ByteBufAllocator alloc;
    private final SessionBackends backends;
    private final SessionRouting routing;
    private final ResponseForwarder forwarder;
    private final PreparedStatements prepared;
    private final CachedReads cachedReads;
    private final SessionDigest digest;
    private final StatementPipeline pipeline;
    /**
     * The running execution's bytes, kept in a buffer of the session's (no allocation per execution) so that a read
     * whose server is marked down before it answered can run again elsewhere ({@link SessionContext#mayRunElsewhere}):
     * its {@link ExecuteTrip}'s, which only the running execution has.
     */
    private byte[] runningExecute = new byte[64];
    private int runningExecuteLength;
    private int runningExecuteSequence;
    /**
     * By client statement id, the corrections of the latest execution of each statement that has some
     * ({@link #corrections}): its cursor's rows, fetched later, are corrected by the same rewriter, which has read
     * their column definitions.
     */
    private final LongObjectHashMap<ResponseForwarder.ResponseRewriter> cursorAnswers = new LongObjectHashMap<>();

    /** @param alloc the client channel's allocator, for the commands Gantry sends */
    public PreparedStatementCommands(SessionContext session, SessionBackends backends, SessionRouting routing,
                                     ResponseForwarder forwarder, StatementPipeline pipeline,
                                     CachedReads cachedReads, SessionDigest digest, AnswerCorrections answers,
                                     Upstreams upstreams, ByteBufAllocator alloc) {
        this.session = session;
        this.answers = answers;
        this.upstreams = upstreams;
        this.alloc = alloc;
        this.cachedReads = cachedReads;
        this.digest = digest;
        this.backends = backends;
        this.routing = routing;
        this.forwarder = forwarder;
        this.pipeline = pipeline;
        this.prepared = session.prepared();
        pipeline.replayExecutionsWith(new TransactionReplay.Executions() {
            @Override
            public void replay(byte[] payload, BackendConnection connection, BackendConnection.ResponseListener answer,
                               Consumer<String> refused) {
                replayExecution(payload, connection, answer, refused);
            }

            @Override
            public OwnStatement asLogged(byte[] payload) {
                return keptExecutionAsLogged(payload);
            }
        });
    }

    /**
     * A kept execution (a statement of a transaction) as a binlog would log it: only one that binds its parameter
     * types itself, so that its values are read by the types it was sent with; null otherwise.
     */
    private OwnStatement keptExecutionAsLogged(byte[] payload) {
        ByteBuf bytes = Unpooled.wrappedBuffer(payload);
        Optional<PreparedStatements.Statement> found = prepared.find(StmtExecutePayloads.statementId(bytes));
        if (found.isEmpty()) {
            return null;
        }
        PreparedStatements.Statement statement = found.get();
        int count = statement.paramCount();
        byte[] types = count == 0 ? new byte[0] : StmtExecutePayloads.bindsNewTypes(bytes, count)
                ? StmtExecutePayloads.parseExecute(bytes, count).paramTypes() : null;
        return OwnStatement.execution(bytes, statement.sentSql(), count, types, session.noBackslashEscapes());
    }

    /**
     * A transaction replay sends an execution again ({@link TransactionReplay.Executions}): prepared on the new
     * connection first if it is not there yet, then with that connection's statement id and the parameter types it
     * lacks, as any execution is.
     */
    private void replayExecution(byte[] payload, BackendConnection connection,
                                 BackendConnection.ResponseListener answer, Consumer<String> refused) {
        Packet command = new Packet(0, Unpooled.copiedBuffer(payload)); // its id is written over: the kept bytes stay
        long clientId = StmtExecutePayloads.statementId(command.payload());
        Optional<PreparedStatements.Statement> found = prepared.find(clientId);
        if (found.isEmpty()) {
            command.release();
            refused.accept("its prepared statement " + clientId + " was closed since");
            return;
        }
        PreparedStatements.Statement statement = found.get();
        byte[] boundTypes = statement.paramCount() > 0
                && StmtExecutePayloads.bindsNewTypes(command.payload(), statement.paramCount())
                ? StmtExecutePayloads.parseExecute(command.payload(), statement.paramCount()).paramTypes() : null;
        ensurePrepared(connection, statement, backendId -> connection.execute(withBackendTypesAndId(command,
                boundTypes, statement, connection.server().address(), backendId), answer), error -> {
                    command.release();
                    refused.accept("preparing it on " + connection.server().address() + " was refused: "
                            + error.message());
                });
    }

    public Reply prepare(Packet packet) {
        ByteBuf payload = packet.payload();
        // One char per byte (ISO-8859-1): the text re-encodes to the client's exact bytes for other backends.
        String text = payload.toString(payload.readerIndex() + 1, payload.readableBytes() - 1,
                StandardCharsets.ISO_8859_1);
        Optional<ErrPacket> kill = SessionIdentitySql.refusePrepared(text, session.sqlMode());
        if (kill.isPresent()) {
            packet.release();
            return Reply.error(kill.get());
        }
        // CONNECTION_ID() is the Gantry session's id, as in a COM_QUERY: written into the text the servers prepare.
        QueryText asked = QueryText.of(text, session.sqlMode());
        String withId = SessionIdentitySql.withSessionId(asked, session.id());
        QueryText sent = withId.equals(text) ? asked : QueryText.of(withId, asked.mode());
        StatementClass statementClass = sent.statementClass();
        boolean answersCorrected = AnswerCorrections.mayCorrect(asked, sent);
        ResponseForwarder.ResponseRewriter columns = answers.columnsOf(asked, sent);
        Optional<UpstreamServer> target = upstreams.primary();
        if (target.isEmpty()) {
            SessionRouting.Routed routed = routing.route(statementClass, withId, false);
            if (routed.refused()) {
                packet.release();
                return routed.refusal();
            }
            target = Optional.of(routed.server());
        }
        String hostPort = target.get().address();
        Packet command = packet;
        if (sent != asked) {
            command = new Packet(packet.sequenceId(), prepareCommand(withId));
            packet.release();
        }
        Packet prepare = command;
        ResponseForwarder.ResponseRewriter registering = (response, framing) -> {
            if (framing.lastPacketKind() == ResponseFraming.PacketKind.STMT_PREPARE_OK) {
                PreparedStatements.Statement statement = prepared.register(text, withId, answersCorrected,
                        statementClass, hostPort, StmtPrepareOk.decode(response.payload().duplicate()));
                StmtPrepareOk.rewriteStatementId(response.payload(), statement.clientId());
            } else if (framing.lastPacketKind() == ResponseFraming.PacketKind.ERR) {
                prepared.prepareFailed();
            }
            return response;
        };
        ResponseForwarder.ResponseRewriter rewriter = AnswerCorrections.then(registering, columns);
        backends.run(prepare, target.get(), connection -> forwarder.forward(prepare, connection,
                AfterResponse.NOTHING_MORE, rewriter));
        return Reply.LATER;
    }

    /** A COM_STMT_PREPARE of {@code sql}, one char per byte. */
    private ByteBuf prepareCommand(String sql) {
        ByteBuf payload = alloc.buffer(sql.length() + 1);
        payload.writeByte(CommandType.COM_STMT_PREPARE.code());
        payload.writeCharSequence(sql, StandardCharsets.ISO_8859_1);
        return payload;
    }

    public Reply execute(Packet packet) {
        long clientId = StmtExecutePayloads.statementId(packet.payload());
        Optional<PreparedStatements.Statement> found = prepared.find(clientId);
        if (found.isEmpty()) {
            packet.release();
            return Reply.error(SessionErrors.unknownStatement(clientId, "mysqld_stmt_execute"));
        }
        PreparedStatements.Statement statement = found.get();
        digest.execution(statement, session.sqlMode());
        // Most executions bind no types (clients send them with the first); only those that do are parsed further.
        byte[] boundTypes = statement.paramCount() > 0
                && StmtExecutePayloads.bindsNewTypes(packet.payload(), statement.paramCount())
                ? StmtExecutePayloads.parseExecute(packet.payload(), statement.paramCount()).paramTypes() : null;
        Optional<PreparedStatements.LongData> longData = prepared.longData(statement.clientId());
        if (longData.isEmpty()) {
            return new ExecuteTrip(packet, statement, boundTypes, false).cachedOrRouted();
        }
        if (longData.get().lost()) {
            prepared.reset(statement.clientId());
            packet.release();
            Reply lost = Reply.error(SessionErrors.longDataLost(longData.get().hostPort()));
            digest.answeredByGantry(lost, 0);
            return lost;
        }
        // The long data went to one server: the execution must go there too, unrouted.
        UpstreamServer target = upstreams.find(longData.get().hostPort()).orElseThrow();
        digest.runsOn(target);
        return pipeline.runOn(new ExecuteTrip(packet, statement, boundTypes, true), target,
                digest.completing(backends.afterStatement(null, null, null)));
    }

    /**
     * What the answers of this execution need before they go to the client, as the same text's would after a
     * COM_QUERY ({@link AnswerCorrections}): kept for the fetches from its cursor, whose rows come without column
     * definitions. Nothing for a statement that noted at prepare that it needs none.
     */
    private ResponseForwarder.ResponseRewriter corrections(PreparedStatements.Statement statement,
                                                           UpstreamServer target) {
        if (!statement.answersCorrected()) {
            return ResponseForwarder.ResponseRewriter.NONE;
        }
        QueryText asked = QueryText.of(statement.sql(), session.sqlMode());
        QueryText sent = statement.sentSql().equals(statement.sql()) ? asked
                : QueryText.of(statement.sentSql(), asked.mode());
        ResponseForwarder.ResponseRewriter corrections = answers.of(asked, sent,
                statement.statementClass().kind(), target);
        cursorAnswers.put(statement.clientId(), corrections);
        return corrections;
    }

    /**
     * A COM_STMT_EXECUTE's trip through the {@link StatementPipeline}: routed by the class its statement got at
     * prepare, looked up in the cache on each try, prepared on a connection that does not have it yet and sent there
     * with that connection's statement id (and the parameter types, if that connection never got them), made again
     * from its bytes to run elsewhere. It runs elsewhere or waits for a primary while it may still do both.
     */
    private final class ExecuteTrip extends StatementTrip {
        private final PreparedStatements.Statement statement;
        /** The types the execution binds, or null when it binds none. */
        private final byte[] boundTypes;

        /** Whether it sends long data first: its transaction is then not replayable (the data is not kept). */
        private final boolean withLongData;

        ExecuteTrip(Packet command, PreparedStatements.Statement statement, byte[] boundTypes, boolean withLongData) {
            super(pipeline, command, null, true, PrimaryWait.NOT_STARTED, true);
            this.statement = statement;
            this.boundTypes = boundTypes;
            this.withLongData = withLongData;
        }

        /** Answered by a cache, or routed through the pipeline with the cache's capture. */
        Reply cachedOrRouted() {
            CacheFill fill = cachedReads.execute(statement, command().payload(), boundTypes);
            if (fill == CacheFill.ANSWERED) {
                digest.answeredFromCache();
                if (boundTypes != null) {
                    // The client binds types once; the backend that runs its next execution must get them.
                    prepared.typesBound(statement.clientId(), boundTypes);
                }
                command().release();
                return Reply.DONE;
            }
            fill(fill);
            return pipeline.run(this);
        }

        @Override
        protected Reply retried() {
            return cachedOrRouted();
        }

        @Override
        protected SessionRouting.Routed route(SessionRouting routing, boolean accountCheck) {
            SessionRouting.Routed routed = routing.route(statement.statementClass(), statement.sql(), true,
                    accountCheck);
            digest.routed(routed);
            return routed;
        }

        @Override
        protected AfterResponse after(SessionRouting.Routed routed) {
            AfterResponse tracked = backends.afterStatement(routed.statement(), null, null);
            if (routed.statement().kind() != StatementKind.SESSION_STATE) {
                return digest.completing(tracked);
            }
            // A setting made through a prepared statement cannot be replayed on other backends.
            return digest.completing((connection, framing, done) -> {
                backends.keepOnThisConnection(connection, "a session setting made by a prepared statement");
                tracked.run(connection, framing, done);
            });
        }

        @Override
        protected ResponseForwarder.ResponseRewriter rewriter(UpstreamServer server) {
            return digest.observing(corrections(statement, server));
        }

        /** On a connection it is not known to be prepared on, the statement is prepared there first. */
        @Override
        protected void send(Packet command, BackendConnection connection) {
            long known = prepared.backendIdOrNone(statement.clientId(), connection.server().address());
            if (known != PreparedStatements.NOT_PREPARED) {
                sendPrepared(command, connection, known); // the usual execution: no closure
                return;
            }
            ensurePrepared(connection, statement, backendId -> sendPrepared(command, connection, backendId),
                    error -> {
                        SessionContext.releaseIfHeld(command);
                        session.finish(Reply.error(error));
                    });
        }

        private void sendPrepared(Packet command, BackendConnection connection, long backendId) {
            String hostPort = connection.server().address();
            Packet withId = withBackendTypesAndId(command, boundTypes, statement, hostPort, backendId);
            prepared.executed(statement.clientId(), hostPort);
            forward(withId, connection);
        }

        /** The execution's bytes, in a buffer of the session's: no allocation per execution. */
        @Override
        protected void keepForElsewhere() {
            ByteBuf payload = command().payload();
            int length = payload.readableBytes();
            if (runningExecute.length < length) {
                runningExecute = new byte[Math.max(length, 2 * runningExecute.length)];
            }
            payload.getBytes(payload.readerIndex(), runningExecute, 0, length);
            runningExecuteLength = length;
            runningExecuteSequence = command().sequenceId();
        }

        @Override
        protected Packet again() {
            byte[] bytes = Arrays.copyOf(runningExecute, runningExecuteLength);
            return new Packet(runningExecuteSequence, Unpooled.wrappedBuffer(bytes));
        }

        @Override
        protected String notReplayableBecause() {
            return withLongData ? "a prepared statement with long data (COM_STMT_SEND_LONG_DATA) ran in it" : null;
        }

        /** The execution as sent, with the client's statement id again: a replay prepares it anew. */
        @Override
        protected byte[] replayCommand(Packet sent) {
            byte[] bytes = ByteBufUtil.getBytes(sent.payload());
            long id = statement.clientId();
            bytes[1] = (byte) id;
            bytes[2] = (byte) (id >>> 8);
            bytes[3] = (byte) (id >>> 16);
            bytes[4] = (byte) (id >>> 24);
            return bytes;
        }

        @Override
        protected boolean mayEndTransaction() {
            return !TransactionEffects.leavesTransactionOpen(QueryText.of(statement.sql(), session.sqlMode()));
        }

        /** From the bytes kept for running again, with the types it binds or the ones the client bound last. */
        @Override
        protected OwnStatement asLogged() {
            if (withLongData || runningExecuteLength == 0) {
                return null;
            }
            byte[] types = statement.paramCount() == 0 ? new byte[0]
                    : boundTypes != null ? boundTypes : prepared.paramTypes(statement.clientId()).orElse(null);
            return OwnStatement.execution(Unpooled.wrappedBuffer(runningExecute, 0, runningExecuteLength),
                    statement.sentSql(), statement.paramCount(), types, session.noBackslashEscapes());
        }
    }

    /**
     * The execute packet as this backend needs it: its own statement id, and the parameter types if the client
     * sent them only to another backend (the client sends types once; each backend needs them once).
     *
     * @param boundTypes the types the execution binds, or null when it binds none
     */
    private Packet withBackendTypesAndId(Packet packet, byte[] boundTypes, PreparedStatements.Statement statement,
                                         String hostPort, long backendId) {
        Packet command = packet;
        if (statement.paramCount() > 0) {
            if (boundTypes != null) {
                prepared.typesSent(statement.clientId(), hostPort, boundTypes);
            } else {
                Optional<byte[]> missing = prepared.missingTypes(statement.clientId(), hostPort);
                if (missing.isPresent()) {
                    command = new Packet(0, StmtExecutePayloads.withParamTypes(packet.payload(),
                            statement.paramCount(), missing.get()));
                    packet.release();
                    prepared.typesSent(statement.clientId(), hostPort, missing.get());
                }
            }
        }
        StmtExecutePayloads.setStatementId(command.payload(), backendId);
        return command;
    }

    public Reply sendLongData(Packet packet) {
        long clientId = StmtExecutePayloads.statementId(packet.payload());
        Optional<PreparedStatements.Statement> found = prepared.find(clientId);
        Optional<PreparedStatements.LongData> longData = found.flatMap(st -> prepared.longData(st.clientId()));
        if (found.isEmpty() || longData.map(PreparedStatements.LongData::lost).orElse(false)) {
            packet.release(); // no response is ever sent for long data; the execute will report the problem
            return Reply.DONE;
        }
        PreparedStatements.Statement statement = found.get();
        UpstreamServer target;
        if (longData.isPresent()) {
            target = upstreams.find(longData.get().hostPort()).orElseThrow();
        } else {
            SessionRouting.Routed routed = routing.route(statement.statementClass(), statement.sql(), false);
            if (routed.refused()) {
                // Long data never gets an answer: the execute that follows reports the loss instead.
                prepared.longDataLost(statement.clientId(), "the primary (none is known)");
                packet.release();
                return Reply.DONE;
            }
            target = routed.server();
        }
        backends.run(packet, target, connection -> ensurePrepared(connection, statement, backendId -> {
            StmtExecutePayloads.setStatementId(packet.payload(), backendId);
            prepared.longDataSent(statement.clientId(), connection.server().address());
            forwarder.forward(packet, connection, AfterResponse.NOTHING_MORE,
                    ResponseForwarder.ResponseRewriter.NONE);
        }, error -> {
            prepared.longDataLost(statement.clientId(), connection.server().address());
            packet.release();
            session.finish(Reply.DONE);
        }));
        return Reply.LATER;
    }

    public Reply reset(Packet packet) {
        long clientId = StmtExecutePayloads.statementId(packet.payload());
        Optional<PreparedStatements.Statement> found = prepared.find(clientId);
        if (found.isEmpty()) {
            packet.release();
            return Reply.error(SessionErrors.unknownStatement(clientId, "mysqld_stmt_reset"));
        }
        // Long data and open cursors live on the backends that hold them; reset there, answer here.
        for (String hostPort : prepared.reset(found.get().clientId())) {
            BackendConnection connection = backends.usable(hostPort);
            OptionalLong backendId = prepared.backendId(found.get().clientId(), hostPort);
            if (connection != null && backendId.isPresent()) {
                InternalCommand.run(connection, StmtExecutePayloads.withStatementId(packet.payload(),
                        backendId.getAsLong()), (first, error) -> { }, failure -> { });
            }
        }
        packet.release();
        return Reply.OK;
    }

    public Reply close(Packet packet) {
        long clientId = StmtExecutePayloads.statementId(packet.payload());
        Optional<PreparedStatements.Statement> found = prepared.find(clientId);
        if (found.isPresent()) {
            cursorAnswers.remove(found.get().clientId());
            for (Map.Entry<String, Long> backend : prepared.close(found.get().clientId()).entrySet()) {
                // Never open a connection just to close a statement: a closed connection took it along.
                BackendConnection connection = backends.usable(backend.getKey());
                if (connection != null) {
                    InternalCommand.run(connection, StmtExecutePayloads.withStatementId(packet.payload(),
                            backend.getValue()), (first, error) -> { }, failure -> { });
                }
            }
        }
        packet.release(); // COM_STMT_CLOSE has no response
        return Reply.DONE;
    }

    public Reply fetch(Packet packet) {
        long clientId = StmtExecutePayloads.statementId(packet.payload());
        Optional<PreparedStatements.Statement> found = prepared.find(clientId);
        Optional<String> hostPort = found.flatMap(st -> prepared.executedOn(st.clientId()));
        OptionalLong backendId = hostPort.isPresent()
                ? prepared.backendId(found.get().clientId(), hostPort.get()) : OptionalLong.empty();
        BackendConnection connection = hostPort.map(backends::usable).orElse(null);
        if (backendId.isEmpty() || connection == null) {
            packet.release();
            return Reply.error(SessionErrors.noOpenCursor(clientId));
        }
        StmtExecutePayloads.setStatementId(packet.payload(), backendId.getAsLong());
        AfterResponse after = backends.afterStatement(null, null, null);
        ResponseForwarder.ResponseRewriter corrections = cursorAnswers.isEmpty()
                ? ResponseForwarder.ResponseRewriter.NONE
                : cursorAnswers.getOrDefault(found.get().clientId(), ResponseForwarder.ResponseRewriter.NONE);
        backends.run(packet, connection.server(), c -> forwarder.forward(packet, c, after, corrections));
        return Reply.LATER;
    }

    /** Prepares a statement on this backend if it is not prepared there yet, then passes its id there on. */
    private void ensurePrepared(BackendConnection connection, PreparedStatements.Statement statement,
                                LongConsumer then, Consumer<ErrPacket> onError) {
        String hostPort = connection.server().address();
        long known = prepared.backendIdOrNone(statement.clientId(), hostPort);
        if (known != PreparedStatements.NOT_PREPARED) {
            then.accept(known);
            return;
        }
        ByteBuf prepare = alloc.buffer();
        statement.writePrepare(prepare);
        InternalCommand.run(connection, prepare, (first, error) -> {
            if (error != null) {
                onError.accept(error);
                return;
            }
            StmtPrepareOk ok = StmtPrepareOk.decode(Unpooled.wrappedBuffer(first));
            prepared.addBackend(statement.clientId(), hostPort, ok.statementId());
            then.accept(ok.statementId());
        }, failure -> session.backendFailed(connection.server(), failure));
    }
}
