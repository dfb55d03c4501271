package io.gantry.proxy.command;

import static io.gantry.proxy.session.SessionContext.LOG;

import io.gantry.admin.AdminResult;
import io.gantry.cache.CacheStatements;
import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.InternalCommand;
import io.gantry.proxy.caching.CacheFill;
import io.gantry.proxy.caching.CachedReads;
import io.gantry.proxy.execution.AfterResponse;
import io.gantry.proxy.execution.CausalWait;
import io.gantry.proxy.execution.PreviousCounts;
import io.gantry.proxy.execution.PrimaryWait;
import io.gantry.proxy.execution.ResponseForwarder;
import io.gantry.proxy.execution.SessionBackends;
import io.gantry.proxy.execution.SessionRouting;
import io.gantry.proxy.routing.ReadCounters;
import io.gantry.proxy.session.Reply;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.session.SessionErrors;
import io.gantry.proxy.state.NextTransaction;
import io.gantry.route.QueryText;
import io.gantry.route.ReplicaRefusal;
import io.gantry.route.RouteReason;
import io.gantry.route.StatementFlag;
import io.gantry.route.StatementKind;
import io.gantry.route.TransactionState;
import io.gantry.topology.Role;
import io.gantry.topology.UpstreamServer;
import io.gantry.wire.CapabilityFlags;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * COM_QUERY, one pipeline over one {@link QueryText}: the session's {@code gantry_...} settings are answered by
 * {@link GantrySettingsCommand}, Gantry's own admin SQL by the admin handler, a KILL of a Gantry session by
 * {@link KillCommand}; everything else is routed and forwarded, with {@code CONNECTION_ID()} read as the Gantry
 * session's id.
 */
public final class QueryCommand {

    private final SessionContext session;
    private final SessionBackends backends;
    private final SessionRouting routing;
    private final ResponseForwarder forwarder;
    private final KillCommand kill;
    private final AdminCommand admin;
    private final GantrySettingsCommand settings;
    private final CachedReads cachedReads;
    /** Statement texts up to this size are read through {@link #textScratch}; a larger one gets its own copy. */
    private static final int TEXT_SCRATCH_LIMIT = 4096;
    private byte[] textScratch = new byte[256];
    /** The running statement's text: one value per session, read anew for each statement (see QueryText). */
    private final QueryText statement = new QueryText();
    private final PrimaryWait primaryWait;
    /**
     * What a read outside a transaction does when its server is marked down before it answered: it runs again
     * elsewhere, once ({@link SessionContext#mayRunElsewhere}). One per session, with the read's text kept in the
     * fields below, so that a read costs no closure for it.
     */
    private final Runnable readElsewhere = this::runLostReadElsewhere;
    /** The part of a multi-statement text {@link #runPart} runs now, or null. */
    private MultiStatementRun.Stitch stitch;
    private QueryText lostReadText;
    private QueryText lostReadSent;
    private long lostReadHold;

    public QueryCommand(SessionContext session, SessionBackends backends, SessionRouting routing,
                 ResponseForwarder forwarder, CachedReads cachedReads) {
        this.session = session;
        this.cachedReads = cachedReads;
        this.backends = backends;
        this.routing = routing;
        this.forwarder = forwarder;
        this.kill = new KillCommand(session, backends);
        this.admin = new AdminCommand(session);
        this.settings = new GantrySettingsCommand(session, routing);
        this.primaryWait = new PrimaryWait(session);
    }

    /**
     * The statement's text is read once into a {@link QueryText}, which every step below reads: each step looks
     * only at a text that holds its words, so an ordinary statement costs each of them one bit test. In order:
     * statements Gantry answers itself ({@link #answeredByGantry}), then {@code CONNECTION_ID()} read as the
     * session's id, the cache, and the route.
     */
    public Reply run(Packet packet) {
        QueryText text = statement.read(text(packet.payload()), session.sqlMode());
        Reply answered = answeredByGantry(text);
        if (answered != null) {
            packet.release();
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
            command.release();
            return Reply.DONE;
        }
        return runQuery(command, text, sent, true, fill, PrimaryWait.NOT_STARTED);
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
        Optional<CompletionStage<AdminResult>> adminReply = session.services().adminSql()
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
            return new MultiStatementRun(session, kill, this::runPart, several.parts()).start();
        }
        if (killText instanceof SessionIdentitySql.KillText.Refused refused) {
            // Never forwarded: the server would take a Gantry session id for one of its thread ids.
            return Reply.error(refused.error());
        }
        return null;
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
     * Routes and runs a COM_QUERY.
     *
     * @param text the client's text; {@code sent} the text as sent (with the session id in place of
     *        {@code CONNECTION_ID()}), the same value when there is none
     * @param mayGoElsewhere whether a plain read may be routed again when its replica turns out unreachable
     * @param fill           captures the answer for a cache that has the statement's shape, or null
     * @param holdUntil      when the statement's wait for a primary ends ({@link PrimaryWait})
     */
    private Reply runQuery(Packet command, QueryText text, QueryText sent, boolean mayGoElsewhere,
                           CacheFill fill, long holdUntil) {
        String sql = text.sql();
        String withId = sent.sql();
        SessionRouting.Routed routed = routing.route(sent, true, true, fill != null && fill.checksAccount());
        if (routed.refused()) {
            if (routed.refusedForNoPrimary() && primaryWait.holdForPrimary(command, holdUntil,
                    (again, deadline) -> runQuery(again, text, sent, mayGoElsewhere, fill, deadline))) {
                return Reply.LATER;
            }
            command.release();
            return routed.refusal();
        }
        byte[] stateCommand = routed.statement().kind() == StatementKind.SESSION_STATE
                ? ByteBufUtil.getBytes(command.payload()) : null;
        AfterResponse sampled = cachedReads.sampled(text,
                backends.afterStatement(routed.statement(), withId, stateCommand));
        AfterResponse after = stitch == null ? sampled : stitch.after(sampled);
        cachedReads.routed(fill, routed);
        ResponseForwarder.ResponseRewriter own = AnswerCorrections.of(session, text, sent, routed.statement().kind(),
                routed.server());
        ResponseForwarder.ResponseRewriter rewriter = stitch == null ? own : stitch.rewriter(own);
        // A read that would open a new connection to a replica loses nothing if that replica is gone: obtain()
        // marks it down and the read is routed again, once, instead of ending the session.
        boolean fresh = mayGoElsewhere && routed.statement().kind() == StatementKind.READ
                && routed.server().role() == Role.REPLICA && !backends.isConnectedTo(routed.server());
        Runnable elsewhere = fresh ? () -> {
            LOG.atInfo().addKeyValue("session", session.id()).addKeyValue("server", routed.server().address())
                    .log("session {}: {} cannot be reached; routing the read again", session.id(),
                            routed.server().address());
            session.finish(runQuery(command, text, sent, false, fill, holdUntil));
        } : null;
        Runnable onReadOnly = fallbacks(command, text, sent, mayGoElsewhere, routed, holdUntil);
        if (routed.waits()) {
            backends.run(command, routed.server(), connection -> waitThenForward(command, connection, routed, after,
                    rewriter), elsewhere);
            return Reply.LATER;
        }
        if (fill != null) {
            AfterResponse filling = fill.completing(after);
            ResponseForwarder.ResponseRewriter capturing = fill.capturing(rewriter);
            backends.run(command, routed.server(), connection -> {
                fill.start(connection);
                forwarder.forward(command, connection, filling, capturing, onReadOnly);
            }, elsewhere);
            return Reply.LATER;
        }
        BackendConnection ready = backends.readyConnection(routed.server());
        if (ready != null) {
            forwarder.forward(command, ready, after, rewriter, onReadOnly); // the usual read or write: no closure
            return Reply.LATER;
        }
        backends.run(command, routed.server(), connection -> forwarder.forward(command, connection, after, rewriter,
                onReadOnly), elsewhere);
        return Reply.LATER;
    }

    /**
     * What the statement does instead of failing when its first try shows it can run again. A write outside a
     * transaction refused as read-only waits for the new primary ({@link PrimaryWait}): returned, for the
     * forwarder. A read outside a transaction (a session setting too) whose server is marked down before it
     * answered runs again elsewhere, once: told to the session.
     */
    private Runnable fallbacks(Packet command, QueryText text, QueryText sent, boolean mayGoElsewhere,
                               SessionRouting.Routed routed, long holdUntil) {
        StatementKind kind = routed.statement().kind();
        if (kind == StatementKind.WRITE) {
            session.mayRunElsewhere(null);
            return primaryWait.afterReadOnlyRefusal(command, routed.server(), holdUntil,
                    (again, deadline) -> runQuery(again, text, sent, mayGoElsewhere, null, deadline));
        }
        if (mayGoElsewhere && routing.mayRunAgain(routed.statement())) {
            lostReadText = text;
            lostReadSent = sent;
            lostReadHold = holdUntil;
            session.mayRunElsewhere(readElsewhere);
        } else {
            session.mayRunElsewhere(null);
        }
        return null;
    }

    private void runLostReadElsewhere() {
        QueryText text = lostReadText;
        QueryText sent = lostReadSent;
        lostReadText = null;
        lostReadSent = null;
        session.finish(runQuery(new Packet(0, session.queryPayload(sent.sql())), text, sent, false, null,
                lostReadHold));
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
        String withId = SessionIdentitySql.withSessionId(text, session.id());
        QueryText sent = withId.equals(sql) ? text : QueryText.of(withId, text.mode());
        stitch = part;
        try {
            return runQuery(new Packet(0, session.queryPayload(withId)), text, sent, false, null, PrimaryWait.OFF);
        } finally {
            stitch = null;
        }
    }

    /**
     * Waits on the read's replica until it has applied what the session needs ({@code MASTER_GTID_WAIT},
     * {@code WAIT_FOR_EXECUTED_GTID_SET}), then reads there; after {@code --causal-wait-timeout-ms}, the read goes
     * to the primary instead, never to another replica.
     */
    private void waitThenForward(Packet command, BackendConnection connection, SessionRouting.Routed routed,
                                 AfterResponse after, ResponseForwarder.ResponseRewriter rewriter) {
        long started = System.nanoTime();
        Duration timeout = session.settings().guarantees().causalWaitTimeout();
        String wait = CausalWait.query(connection.flavour(), routed.waitFor(), timeout);
        InternalCommand.queryRow(connection, session.queryPayload(wait), (row, error) -> {
            ReadCounters counters = session.services().readCounters();
            counters.waited(System.nanoTime() - started);
            if (CausalWait.caughtUp(row, error)) {
                counters.servedByReplica();
                forwarder.forward(command, connection, after, rewriter);
                return;
            }
            counters.servedByPrimary();
            counters.consistentPrefixFailed(ReplicaRefusal.WAIT_TIMED_OUT);
            LOG.debug("session {}: {} did not apply {} within {} ms{}; reading from the primary", session.id(),
                    connection.server().address(), routed.waitFor(),
                    timeout.toMillis(), error == null ? "" : " (" + error.message() + ")");
            Optional<UpstreamServer> primary = session.services().upstreams().primary();
            if (primary.isEmpty()) {
                command.release();
                session.finish(Reply.error(SessionErrors.noPrimary("read",
                        session.services().upstreams().noPrimaryReason())));
                return;
            }
            session.readOn(session.serverId(primary.get()));
            backends.run(command, primary.get(), primaryConnection -> forwarder.forward(command, primaryConnection,
                    after, rewriter));
        }, failure -> {
            command.release(); // not sent: a read that may run elsewhere is made again from its text
            session.backendFailed(connection.server(), failure);
        });
    }
}
