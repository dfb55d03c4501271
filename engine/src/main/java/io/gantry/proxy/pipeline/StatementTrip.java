package io.gantry.proxy.pipeline;

import io.gantry.gtid.GtidSet;
import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.BackendFailure;
import io.gantry.proxy.caching.CacheFill;
import io.gantry.proxy.execution.AfterResponse;
import io.gantry.proxy.execution.PrimaryWait;
import io.gantry.proxy.execution.ResponseForwarder;
import io.gantry.proxy.execution.SessionRouting;
import io.gantry.proxy.session.OwnStatement;
import io.gantry.proxy.session.Reply;
import io.gantry.topology.UpstreamServer;
import io.gantry.wire.Packet;
import io.netty.buffer.ByteBufUtil;
import java.util.function.Consumer;

/**
 * One statement's trip through the {@link StatementPipeline}, from its first try to its answer: the command of this
 * try, where it went ({@link #routed()}), the cache's capture of its answer, whether it may still run elsewhere and
 * how it is made again for that ({@link #again()}), the deadline of its wait for a primary, and what it does after the
 * primary refused it as read-only (it waits for the new primary with the bytes it kept). vertx-sql-client gives each
 * command's trip one object; so does Gantry: what a statement's retries need lives here, per statement, never in a
 * handler's fields.
 *
 * <p>Made by the handler of its command ({@code QueryCommand}: a text, or one part of a multi-statement text;
 * {@code PreparedStatementCommands}: an execution), which says in the methods below what is particular to its command:
 * how it is routed, what follows its answer, what its answer needs, how it goes on a connection and how it is made
 * again. Everything else, every retry included, is the pipeline's. The trip is also the pipeline's callback where one
 * is needed ({@link PrimaryWait.Retry}, {@link ResponseForwarder.ReadOnlyFallback}, the connection's
 * {@link Consumer}), so a statement costs this one object and no closure on its usual way.
 */
public abstract class StatementTrip implements PrimaryWait.Retry, ResponseForwarder.ReadOnlyFallback,
        ResponseForwarder.LostFallback, Consumer<BackendConnection> {

    private final StatementPipeline pipeline;
    /**
     * Whether running elsewhere and waiting for a primary are one allowance or two. An execution may run elsewhere
     * only while its wait for a primary has not run out; a text may run elsewhere even then. Either, once it ran
     * elsewhere, may still wait for a primary (a read on a crashed server goes again where routing sends it, which
     * may be the primary being replaced).
     */
    private final boolean oneAllowance;
    private Packet command;
    private CacheFill fill;
    private boolean mayGoElsewhere;
    private long holdUntil;
    private SessionRouting.Routed routed;
    private AfterResponse after;
    private ResponseForwarder.ResponseRewriter rewriter;
    /** The deadline of the wait after a read-only refusal, {@link PrimaryWait#OFF} when this try may not wait. */
    private long refusalDeadline = PrimaryWait.OFF;
    /**
     * This try's command as it stood before the send (an execution's still with the client's statement id), kept for
     * a run after a read-only refusal: the buffer sent goes with the send.
     */
    private byte[] refusedPayload;
    private int refusedSequence;
    /**
     * The primary's position sampled before this try was sent, when a loss before its answer leaves its commit in
     * doubt (a statement of a transaction Gantry follows, or an autocommit write): a commit of it comes after it.
     */
    private GtidSet sentAfter;
    /** When this try was sent ({@link System#nanoTime()}), when it would be in doubt if lost. */
    private long sentNanos;
    /** Whether this try is an autocommit write, in doubt if lost: it runs again only if it did not commit. */
    private boolean autocommitWrite;

    /**
     * @param command        the command of the first try
     * @param fill           the capture of its answer for a cache that has the statement's shape, or null
     * @param mayGoElsewhere whether a read may be routed again when its server turns out unreachable or down
     * @param holdUntil      when its wait for a primary ends ({@link PrimaryWait#NOT_STARTED}, {@link PrimaryWait#OFF})
     * @param oneAllowance   see the field of that name
     */
    protected StatementTrip(StatementPipeline pipeline, Packet command, CacheFill fill, boolean mayGoElsewhere,
                            long holdUntil, boolean oneAllowance) {
        this.pipeline = pipeline;
        this.command = command;
        this.fill = fill;
        this.mayGoElsewhere = mayGoElsewhere;
        this.holdUntil = holdUntil;
        this.oneAllowance = oneAllowance;
    }

    // ---- what is particular to the command -------------------------------------------------------------------

    /** Where this try goes, routed as the command routes (committing the session's routing state). */
    protected abstract SessionRouting.Routed route(SessionRouting routing, boolean accountCheck);

    /** What follows the answer on its connection (a setting recorded, held state noted, the next part run). */
    protected abstract AfterResponse after(SessionRouting.Routed routed);

    /** What the answer's packets need on their way to the client, from {@code server}. */
    protected abstract ResponseForwarder.ResponseRewriter rewriter(UpstreamServer server);

    /**
     * Sends the command on {@code connection}: as it is by default; an execution is prepared there first and gets
     * that connection's statement id. Ends in {@link #forward}.
     */
    protected void send(Packet command, BackendConnection connection) {
        forward(command, connection);
    }

    /** Keeps what {@link #again()} needs, before the command is sent (its buffer goes with the send). */
    protected void keepForElsewhere() {
    }

    /** The command made again from what the trip kept, for its run elsewhere. */
    protected abstract Packet again();

    /** The next try, routed anew: the pipeline's run by default (an execution looks its cache up again first). */
    protected Reply retried() {
        return pipeline.run(this);
    }

    /**
     * Why a transaction this statement runs in cannot be replayed on a new primary, or null when it can
     * ({@link #replayCommand}).
     */
    protected String notReplayableBecause() {
        return "a statement of a kind Gantry does not replay ran in it";
    }

    /**
     * The command a replay sends again, from {@code sent} (this try's command as it goes to its connection): a copy
     * of its bytes by default; an execution's carries the client's statement id, as a replay prepares it anew.
     */
    protected byte[] replayCommand(Packet sent) {
        return ByteBufUtil.getBytes(sent.payload());
    }

    /**
     * Whether the statement may end the transaction it runs in (a {@code COMMIT}, a statement that commits
     * implicitly): lost on its way, its outcome is unknown, and it is never run again blindly.
     */
    protected boolean mayEndTransaction() {
        return true;
    }

    /**
     * The statement's text as it went to the server, or null for a command that is not a text (an execution): only a
     * text is compared with what a new primary logged, when its commit is in doubt.
     */
    protected String text() {
        return null;
    }

    /**
     * This try's statement as a server's binlog would log it, for telling whether a commit in doubt was its; null
     * when that cannot be told. Called after the send: an execution reads the bytes it kept for running again.
     */
    protected OwnStatement asLogged() {
        return null;
    }

    /** Whether a read that would open a new connection to a replica is routed again if that replica is gone. */
    protected boolean reroutesUnreachableReplica() {
        return false;
    }

    // ---- what the handlers read ------------------------------------------------------------------------------

    /** The command of this try. */
    protected final Packet command() {
        return command;
    }

    /** Where this try went; null for a trip run on a server it must take ({@link StatementPipeline#runOn}). */
    protected final SessionRouting.Routed routed() {
        return routed;
    }

    protected final CacheFill fill() {
        return fill;
    }

    /** The capture of a later try's own cache look-up, or null. */
    protected final void fill(CacheFill next) {
        fill = next;
    }

    /** Sends {@code command} (this try's, made ready for {@code connection}) with what the pipeline made for it. */
    protected final void forward(Packet command, BackendConnection connection) {
        pipeline.forward(this, command, connection);
    }

    // ---- the pipeline's callbacks ----------------------------------------------------------------------------

    /** {@link PrimaryWait.Retry}: the statement runs again with the deadline of its wait. */
    @Override
    public final Reply run(Packet again, long deadline) {
        command = again;
        holdUntil = deadline;
        return retried();
    }

    /** {@link ResponseForwarder.ReadOnlyFallback}: the write waits for the new primary, then runs again there. */
    @Override
    public final void refusedAsReadOnly() {
        fill = null;
        pipeline.awaitAfterRefusal(this);
    }

    /** {@link ResponseForwarder.LostFallback}: the transaction is replayed on the new primary, then this runs. */
    @Override
    public final void lostBeforeAnswer(BackendConnection connection, BackendFailure failure) {
        pipeline.lostBeforeAnswer(this, connection, failure);
    }

    /** The connection of this try is ready. */
    @Override
    public final void accept(BackendConnection connection) {
        pipeline.connected(this, connection);
    }

    // ---- the pipeline's state --------------------------------------------------------------------------------

    boolean mayGoElsewhere() {
        return mayGoElsewhere && (!oneAllowance || holdUntil != PrimaryWait.OFF);
    }

    /** Its server went down before it answered: it runs again elsewhere, once. */
    Reply elsewhere() {
        Packet next = again();
        mayGoElsewhere = false;
        fill = null;
        return run(next, holdUntil);
    }

    /** Its new connection's replica could not be reached: it is routed again, once, as it is. */
    Reply rerouted() {
        mayGoElsewhere = false;
        return pipeline.run(this);
    }

    long holdUntil() {
        return holdUntil;
    }

    /** This try goes to the primary at {@code position}; an autocommit write, or a statement of a transaction. */
    void inDoubtIfLost(GtidSet position, boolean isAutocommitWrite) {
        sentAfter = position;
        sentNanos = System.nanoTime();
        autocommitWrite = isAutocommitWrite;
    }

    /** When this try was sent, if it would be in doubt when lost. */
    long sentNanos() {
        return sentNanos;
    }

    /** The primary's position before this try was sent, or null when it was not known. */
    GtidSet sentAfter() {
        return sentAfter;
    }

    boolean autocommitWrite() {
        return autocommitWrite;
    }

    void routed(SessionRouting.Routed routed) {
        this.routed = routed;
    }

    void answerWith(AfterResponse after, ResponseForwarder.ResponseRewriter rewriter) {
        this.after = after;
        this.rewriter = rewriter;
    }

    AfterResponse after() {
        return after;
    }

    ResponseForwarder.ResponseRewriter rewriter() {
        return rewriter;
    }

    /** This try may wait after a read-only refusal until {@code deadline}, with the command's bytes kept. */
    void mayWaitAfterRefusal(long deadline, byte[] payload, int sequenceId) {
        refusalDeadline = deadline;
        refusedPayload = payload;
        refusedSequence = sequenceId;
    }

    void mayNotWaitAfterRefusal() {
        refusalDeadline = PrimaryWait.OFF;
        refusedPayload = null;
    }

    /** This trip as the forwarder's fallback after a read-only refusal, or null when it may not wait. */
    ResponseForwarder.ReadOnlyFallback readOnlyFallback() {
        return refusalDeadline != PrimaryWait.OFF ? this : null;
    }

    long refusalDeadline() {
        return refusalDeadline;
    }

    byte[] refusedPayload() {
        return refusedPayload;
    }

    int refusedSequence() {
        return refusedSequence;
    }
}
