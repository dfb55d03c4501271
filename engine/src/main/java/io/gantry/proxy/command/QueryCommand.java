package io.gantry.proxy.command;

import io.gantry.admin.AdminResult;
import io.gantry.admin.AdminSql;
import io.gantry.cache.CacheStatements;
import io.gantry.proxy.caching.CacheFill;
import io.gantry.proxy.caching.CachedReads;
import io.gantry.proxy.digest.SessionDigest;
import io.gantry.proxy.execution.AfterResponse;
import io.gantry.proxy.execution.PreviousCounts;
import io.gantry.proxy.execution.PrimaryWait;
import io.gantry.proxy.execution.ResponseForwarder;
import io.gantry.proxy.execution.SessionBackends;
import io.gantry.proxy.execution.SessionRouting;
import io.gantry.proxy.pipeline.StatementPipeline;
import io.gantry.proxy.pipeline.StatementTrip;
import io.gantry.proxy.session.ClientWriter;
import io.gantry.proxy.session.OwnStatement;
import io.gantry.proxy.session.Reply;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.session.SessionRegistry;
import io.gantry.proxy.state.SingleSetting;
import io.gantry.proxy.state.NextTransaction;
import io.gantry.route.QueryText;
import io.gantry.route.StatementFlag;
import io.gantry.route.StatementKind;
import io.gantry.route.TransactionEffects;
import io.gantry.route.TransactionState;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import io.gantry.wire.CapabilityFlags;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.EventLoop;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * COM_QUERY, its steps over one {@link QueryText}: the session's {@code gantry_...} settings are answered by
 * {@link GantrySettingsCommand}, Gantry's own admin SQL by the admin handler, a KILL of a Gantry session by
 * {@link KillCommand}, a cached answer by the cache; everything else, with {@code CONNECTION_ID()} read as the Gantry
 * session's id, goes through the session's {@link StatementPipeline} as a {@link TextTrip}.
 */
public final class QueryCommand {

    private final SessionContext session;
    private final AnswerCorrections answers;
    private final AdminSql adminSql;
    private final ClientWriter client;
    private final SessionBackends backends;
    private final StatementPipeline pipeline;
    private final KillCommand kill;
    private final AdminCommand admin;
    private final GantrySettingsCommand settings;
    private final CachedReads cachedReads;
    private final SessionDigest digest;
    /** Statement texts up to this size are read through {@link #textScratch}; a larger one gets its own copy. */
    private static final int TEXT_SCRATCH_LIMIT = 4096;
    private byte[] textScratch = new byte[256];
    /** The running statement's text: one value per session, read anew for each statement (see QueryText). */
    private final QueryText statement = new QueryText();

    /**
     * @param adminSql  Gantry's own SQL, asked about each text that names Gantry
     * @param sessions  the proxy's sessions, and {@code upstreams} its servers: where a KILL finds what it names
     * @param loop      the session's event loop, where an admin statement's answer is written
     * @param alloc     the client channel's allocator, for the result sets Gantry makes
     */
    public QueryCommand(SessionContext session, SessionBackends backends, SessionRouting routing,
                        StatementPipeline pipeline, CachedReads cachedReads, SessionDigest digest,
                        AnswerCorrections answers,
                        AdminSql adminSql, SessionRegistry sessions, Upstreams upstreams, ClientWriter client,
                        EventLoop loop, ByteBufAllocator alloc) {
        this.session = session;
        this.answers = answers;
        this.adminSql = adminSql;
        this.client = client;
        this.cachedReads = cachedReads;
        this.digest = digest;
        this.backends = backends;
        this.pipeline = pipeline;
        this.kill = new KillCommand(session, backends, client, sessions, upstreams);
        this.admin = new AdminCommand(session, client, digest, loop, alloc);
        this.settings = new GantrySettingsCommand(session, routing, client, alloc);
    }

    /**
     * The statement's text is read once into a {@link QueryText}, which every step below reads: each step looks
     * only at a text that holds its words, so an ordinary statement costs each of them one bit test. In order:
     * statements Gantry answers itself ({@link #answeredByGantry}), then {@code CONNECTION_ID()} read as the
     * session's id, the cache, and the route.
     */
    public Reply run(Packet packet) {
        QueryText text = statement.read(text(packet.payload()), session.sqlMode());
        digest.text(text);
        Reply answered = answeredByGantry(text);
        if (answered != null) {
            packet.release();
            if (answered != Reply.LATER) {
                digest.answeredByGantry(answered, 0); // an admin statement's answer is counted when written
            }
            return answered;
        }
        Packet command = packet;
        String sql = text.sql();
        QueryText sent = text;
        PreviousCounts counts = countsToWriteIn(text);
        String diagnosticsAnswered = counts == null ? null
                : SessionIdentitySql.diagnosticsAsSet(text, counts.rowCount());
        String withValues = diagnosticsAnswered != null ? diagnosticsAnswered
                : counts == null ? SessionIdentitySql.withSessionId(text, session.id())
                : SessionIdentitySql.withSessionValues(text, session.id(), counts.rowCount(), counts.foundRows());
        if (!withValues.equals(sql)) {
            // CONNECTION_ID() is the Gantry session's id, whichever backend runs the statement; ROW_COUNT() and
            // FOUND_ROWS() are the session's own once the connection that ran its previous statement has left it.
            command = new Packet(0, session.queryPayload(withValues));
            packet.release();
            sent = diagnosticsAnswered != null ? QueryText.standingFor(withValues, text)
                    : QueryText.of(withValues, text.mode());
        }
        CacheFill fill = cachedReads.text(text);
        if (fill == CacheFill.ANSWERED) {
            digest.answeredFromCache();
            command.release();
            return Reply.DONE;
        }
        return pipeline.run(new TextTrip(command, text, sent, fill, true, PrimaryWait.NOT_STARTED, null));
    }

    /**
     * The answer to a statement that never reaches a server, or null for one that does: the session's
     * {@code gantry_...} settings, {@code EXPLAIN LAST STATEMENT}, Gantry's admin and cache statements, a
     * {@code SET TRANSACTION} held for the next statement, a KILL of a Gantry session (or one Gantry refuses).
     */
    private Reply answeredByGantry(QueryText text) {
        Reply ownSetting = settings.run(text);
        if (ownSetting != null) {
            return ownSetting;
        }
        if (CacheStatements.isExplainLastStatement(text)) {
            return admin.answer(CompletableFuture.completedFuture(cachedReads.explainLastStatement()));
        }
        Optional<CompletionStage<AdminResult>> adminReply = adminSql
                .handle(text, session.client().user());
        if (adminReply.isPresent()) {
            return admin.answer(adminReply.get());
        }
        if (session.routeState().transaction() == TransactionState.NONE) {
            NextTransaction next = NextTransaction.parse(text);
            if (next != null) {
                // Held for the next statement's server (see NextTransaction); inside a transaction the server
                // refuses it, so it is only held outside one.
                session.settings().holdNextTransaction(next);
                return Reply.OK;
            }
        }
        if (answersSettingItself(text)) {
            return Reply.OK;
        }
        SessionIdentitySql.KillText killText = SessionIdentitySql.inspectKill(text);
        if (killText instanceof SessionIdentitySql.KillText.Single single) {
            return kill.run(single.kill());
        }
        if (killText instanceof SessionIdentitySql.KillText.Several several) {
            if ((session.client().capabilities() & CapabilityFlags.CLIENT_MULTI_STATEMENTS) == 0) {
                // The server would not run the text either: without the capability ';' ends nothing.
                return Reply.error(ErrPacket.of(1064, "42000", "You have an error in your SQL syntax: the client "
                        + "did not enable multi-statements (CLIENT_MULTI_STATEMENTS); "
                        + SessionIdentitySql.SEND_ALONE));
            }
            return new MultiStatementRun(session, client, kill, this::runPart, several.parts()).start();
        }
        if (killText instanceof SessionIdentitySql.KillText.Refused refused) {
            // Never forwarded: the server would take a Gantry session id for one of its thread ids.
            return Reply.error(refused.error());
        }
        return null;
    }

    /**
     * Answers a setting the server would only acknowledge, outside a transaction: {@code SET autocommit} to the value
     * it has (nothing changes), or {@code SET character_set_results = NULL} (it cannot fail: recorded for every
     * connection of the session to take before its next statement, as a setting that ran is). The server's answer
     * is a plain OK, which Gantry gives itself. Not for a client that tracks session state: the server's OK would
     * carry the variable's tracked value.
     */
    private boolean answersSettingItself(QueryText text) {
        SingleSetting setting = SingleSetting.parse(text);
        if (setting == null || session.inTransaction()
                || session.routeState().transaction() != TransactionState.NONE
                || (session.client().capabilities() & CapabilityFlags.CLIENT_SESSION_TRACK) != 0) {
            return false;
        }
        Boolean autocommit = setting.autocommit();
        if (autocommit != null && autocommit.equals(session.autocommit())) {
            backends.answeredWithOk();
            return true;
        }
        if (setting.resultsCharsetToNull() && !session.stateLog().isFull()) {
            backends.settingAnsweredByGantry(text.sql());
            backends.answeredWithOk();
            return true;
        }
        return false;
    }

    /**
     * The statement's text, one char per byte: routing only needs keywords, and ISO-8859-1 maps every byte to one
     * char and cannot fail to decode. Copied once, through the session's own scratch array (a direct buffer's
     * bytes would otherwise be copied twice).
     */
    private String text(ByteBuf payload) {
        int length = payload.readableBytes() - 1;
        if (length > TEXT_SCRATCH_LIMIT) {
            return payload.toString(payload.readerIndex() + 1, length, StandardCharsets.ISO_8859_1);
        }
        if (textScratch.length < length) {
            textScratch = new byte[Math.max(length, 2 * textScratch.length)];
        }
        payload.getBytes(payload.readerIndex() + 1, textScratch, 0, length);
        return new String(textScratch, 0, length, StandardCharsets.ISO_8859_1);
    }

    /**
     * What the session's previous statement left for {@code ROW_COUNT()} and {@code FOUND_ROWS()}, when {@code text}
     * may ask for them and only the session still knows them (the connection that ran it went to the pool); else null.
     */
    private PreviousCounts countsToWriteIn(QueryText text) {
        PreviousCounts counts = backends.countsToWriteIn();
        // EXECUTE IMMEDIATE's literal SQL may ask too: the classifier does not look into literals.
        return counts != null && (text.statementClass().has(StatementFlag.PREVIOUS_STATEMENT)
                || text.mentions(QueryText.Word.IMMEDIATE)) ? counts : null;
    }

    /**
     * Runs one part of a multi-statement text with KILLs in it ({@link MultiStatementRun}) as a statement of its own,
     * its answer stitched into the text's. It neither waits for a primary nor runs again elsewhere: a part's answer
     * must come now, in its place.
     */
    private Reply runPart(String sql, MultiStatementRun.Stitch part) {
        QueryText text = QueryText.of(sql, session.sqlMode());
        digest.part(sql, text.mode());
        String withId = SessionIdentitySql.withSessionId(text, session.id());
        QueryText sent = withId.equals(sql) ? text : QueryText.of(withId, text.mode());
        return pipeline.run(new TextTrip(new Packet(0, session.queryPayload(withId)), text, sent, null, false,
                PrimaryWait.OFF, part));
    }

    /**
     * A COM_QUERY's trip through the {@link StatementPipeline}: routed by its text, the answer corrected as the text
     * asks ({@link AnswerCorrections}) and, for a part of a multi-statement text, stitched into the text's answer;
     * made again from its text to run elsewhere.
     */
    private final class TextTrip extends StatementTrip {
        /** The client's text, and the text as sent (with the session's values written in), the same when none is. */
        private final QueryText text;
        private final QueryText sent;
        /** The part of a multi-statement text this text is, or null. */
        private final MultiStatementRun.Stitch stitch;

        TextTrip(Packet command, QueryText text, QueryText sent, CacheFill fill, boolean mayGoElsewhere,
                 long holdUntil, MultiStatementRun.Stitch stitch) {
            super(pipeline, command, fill, mayGoElsewhere, holdUntil, false);
            this.text = text;
            this.sent = sent;
            this.stitch = stitch;
        }

        @Override
        protected SessionRouting.Routed route(SessionRouting routing, boolean accountCheck) {
            SessionRouting.Routed routed = routing.route(sent, true, true, accountCheck);
            digest.routed(routed);
            return routed;
        }

        @Override
        protected AfterResponse after(SessionRouting.Routed routed) {
            byte[] stateCommand = routed.statement().kind() == StatementKind.SESSION_STATE
                    ? ByteBufUtil.getBytes(command().payload()) : null;
            AfterResponse tracked = backends.afterStatement(routed.statement(), sent.sql(), stateCommand);
            return digest.completing(stitch == null ? tracked : stitch.after(tracked));
        }

        @Override
        protected ResponseForwarder.ResponseRewriter rewriter(UpstreamServer server) {
            ResponseForwarder.ResponseRewriter own = answers.of(text, sent,
                    routed().statement().kind(), server);
            return digest.observing(stitch == null ? own : stitch.rewriter(own));
        }

        @Override
        protected Packet again() {
            return new Packet(0, session.queryPayload(sent.sql()));
        }

        @Override
        protected String notReplayableBecause() {
            return null;
        }

        @Override
        protected boolean mayEndTransaction() {
            return routed().statement().kind() != StatementKind.TRANSACTION_SAVEPOINT
                    && !TransactionEffects.leavesTransactionOpen(sent);
        }

        @Override
        protected String text() {
            return sent.sql();
        }

        @Override
        protected OwnStatement asLogged() {
            return new OwnStatement.Text(OwnStatement.asLogged(sent.sql()));
        }

        @Override
        protected boolean reroutesUnreachableReplica() {
            return true;
        }
    }
}
