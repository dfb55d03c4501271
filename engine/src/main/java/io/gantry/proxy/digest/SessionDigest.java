package io.gantry.proxy.digest;

import io.gantry.digest.RanOn;
import io.gantry.digest.SlowStatement;
import io.gantry.digest.SlowStatementLog;
import io.gantry.digest.StatementDigests;
import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.execution.AfterResponse;
import io.gantry.proxy.execution.ResponseForwarder;
import io.gantry.proxy.execution.SessionRouting;
import io.gantry.proxy.prepared.PreparedStatements;
import io.gantry.proxy.session.Reply;
import io.gantry.proxy.session.SessionContext;
import io.gantry.route.QueryText;
import io.gantry.route.RouteReason;
import io.gantry.route.SqlMode;
import io.gantry.route.SqlTokenizer;
import io.gantry.topology.Role;
import io.gantry.topology.UpstreamServer;
import io.gantry.wire.Packet;
import io.gantry.wire.ResponseFraming;
import io.netty.buffer.ByteBuf;
import java.time.Instant;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * One session's statements counted in the proxy's {@link StatementDigests}: each text, execution of a prepared
 * statement and part of a multi-statement text, whether a server, a cache or Gantry answered it. The handler says
 * what the statement is when it starts ({@link #text}, {@link #execution}); its trip says where it was routed
 * ({@link #routed}) and wraps what follows its answer ({@link #completing}) and what reads its packets
 * ({@link #observing}) in this one object, which counts rows, affected rows and the error as they pass and records
 * the statement when its answer is complete. A session runs one statement at a time, so one object serves them all;
 * a statement allocates only the tokenizer of a text's shaping pass (48 bytes) and, the first time its shape is
 * seen on its event loop, the shape's row (see BENCHMARKS.md).
 *
 * <p>A statement at least {@code --slow-statement-ms} slow is also handed to the {@link SlowStatementLog} (one
 * comparison per statement; an entry only for a slow one).
 *
 * <p>With {@code --digests off} ({@link #off}) every method returns at once and the answer is not wrapped: a statement
 * costs a few branches.
 *
 * <p>Latency runs from the handler's start to the end of the answer. A statement whose session ended before its
 * answer is not counted; a refusal by Gantry (no primary, a write in a read-only transaction) counts as Gantry's,
 * with its error code, once the next statement starts.
 */
public final class SessionDigest implements AfterResponse, ResponseForwarder.ResponseRewriter {

    /** Prepared statements whose shapes are kept; past that the map starts again (closed ones stay otherwise). */
    private static final int MAX_REMEMBERED_STATEMENTS = 1024;

    private final boolean counting;
    private final SessionContext session;
    private final StatementDigests digests;
    private final SlowStatementLog slowStatements;
    private final StringBuilder shape = new StringBuilder(128);
    private final Map<PreparedStatements.Statement, String> preparedShapes = new IdentityHashMap<>();

    /** The running statement's text and mode, or its prepared shape; null text and shape: none is running. */
    private String text;
    private SqlMode mode;
    private String preparedShape;
    /** The running execution's prepared text, for the slow-statement log. */
    private String preparedText;
    /** A COM_QUERY's whole text, which says how many statements it holds; null for one statement. */
    private QueryText query;
    private long startedAt;
    private RanOn ranOn;
    private RouteReason reason;
    /** {@code host:port} of the server the running statement went to; null while none. */
    private String server;
    /** The error code of Gantry's refusal of the running statement, recorded if no try gets further, and when. */
    private int refusal;
    private long refusedAt;
    private int errorCode;
    private AfterResponse then;
    private ResponseForwarder.ResponseRewriter inner;
    /** Per result of the answer (several for a multi-statement text): when it ended, its rows, its affected rows. */
    private long[] resultEnds = new long[4];
    private long[] resultRows = new long[4];
    private long[] resultAffected = new long[4];
    private int results;
    private long rows;
    /** Whether the answer's results are timed one by one: the text holds several statements. */
    private boolean timesResults;

    public SessionDigest(SessionContext session, StatementDigests digests, SlowStatementLog slowStatements) {
        this(true, session, digests, slowStatements);
    }

    private SessionDigest(boolean counting, SessionContext session, StatementDigests digests,
                          SlowStatementLog slowStatements) {
        this.counting = counting;
        this.session = session;
        this.digests = digests;
        this.slowStatements = slowStatements;
    }

    /** A session's digest that counts nothing ({@code --digests off}). */
    public static SessionDigest off() {
        return new SessionDigest(false, null, null, null);
    }

    /** A COM_QUERY's text starts (its parts, if it has several, are counted apart). */
    public void text(QueryText statement) {
        if (!counting) {
            return;
        }
        start(statement.sql(), statement.mode(), null, null, statement);
    }

    /** A part of a multi-statement text run on its own starts. */
    public void part(String sql, SqlMode sqlMode) {
        if (!counting) {
            return;
        }
        start(sql, sqlMode, null, null, null);
    }

    /** An execution of a prepared statement starts; its shape is made once per statement. */
    public void execution(PreparedStatements.Statement statement, SqlMode sqlMode) {
        if (!counting) {
            return;
        }
        String known = preparedShapes.get(statement);
        if (known == null) {
            if (preparedShapes.size() >= MAX_REMEMBERED_STATEMENTS) {
                preparedShapes.clear();
            }
            shape.setLength(0);
            known = SqlTokenizer.writeDigestShape(statement.sql(), sqlMode, shape) ? shape.toString()
                    : statement.sql();
            preparedShapes.put(statement, known);
        }
        start(null, sqlMode, known, statement.sql(), null);
    }

    private void start(String sql, SqlMode sqlMode, String prepared, String preparedSql, QueryText whole) {
        recordRefusal();
        text = sql;
        mode = sqlMode;
        preparedShape = prepared;
        preparedText = preparedSql;
        query = whole;
        startedAt = System.nanoTime();
        ranOn = RanOn.GANTRY;
        reason = null;
        server = null;
        errorCode = 0;
        results = 0;
        rows = 0;
    }

    /** The running statement was answered by a cache. */
    public void answeredFromCache() {
        if (!counting) {
            return;
        }
        ranOn = RanOn.CACHE;
        server = null;
        finish(0, 0);
    }

    /**
     * The running statement was answered by Gantry itself, with {@code reply} ({@code rowsSent}: the rows of the
     * result set it wrote).
     */
    public void answeredByGantry(Reply reply, long rowsSent) {
        if (!counting) {
            return;
        }
        ranOn = RanOn.GANTRY;
        server = null;
        finish(errorOf(reply), rowsSent);
    }

    /** Where this try of the running statement goes, or Gantry's refusal of it. */
    public void routed(SessionRouting.Routed routed) {
        if (!counting) {
            return;
        }
        if (routed.refused()) {
            refusal = errorOf(routed.refusal());
            refusedAt = System.nanoTime();
            return;
        }
        refusal = 0;
        ranOn = routed.server().role() == Role.PRIMARY ? RanOn.PRIMARY : RanOn.REPLICA;
        reason = routed.decision().reason();
        server = routed.server().address();
    }

    /** The running statement runs on {@code target} unrouted (its long data went there). */
    public void runsOn(UpstreamServer target) {
        if (!counting) {
            return;
        }
        refusal = 0;
        ranOn = target.role() == Role.PRIMARY ? RanOn.PRIMARY : RanOn.REPLICA;
        reason = null;
        server = target.address();
    }

    /** This object, running {@code next} once it has recorded the statement; {@code next} itself when off. */
    public AfterResponse completing(AfterResponse next) {
        if (!counting) {
            return next;
        }
        then = next;
        return this;
    }

    /** This object, counting the answer's packets on their way to {@code next}; {@code next} itself when off. */
    public ResponseForwarder.ResponseRewriter observing(ResponseForwarder.ResponseRewriter next) {
        if (!counting) {
            return next;
        }
        inner = next;
        results = 0;
        rows = 0;
        errorCode = 0;
        timesResults = statementCount() > 1; // classified already: the route read the text's class
        return this;
    }

    private int statementCount() {
        return query == null ? 1 : query.statementClass().statementCount();
    }

    @Override
    public Packet rewrite(Packet response, ResponseFraming framing) {
        ResponseFraming.PacketKind kind = framing.lastPacketKind();
        if (kind == ResponseFraming.PacketKind.ROW) {
            rows++;
        } else if (kind == ResponseFraming.PacketKind.ERR) {
            ByteBuf payload = response.payload();
            errorCode = payload.getUnsignedShortLE(payload.readerIndex() + 1);
        }
        if (framing.resultsCompleted() > results) {
            endResult(framing.rowCount());
        }
        return inner.rewrite(response, framing);
    }

    private void endResult(long affected) {
        if (results == resultEnds.length) {
            resultEnds = Arrays.copyOf(resultEnds, 2 * results);
            resultRows = Arrays.copyOf(resultRows, 2 * results);
            resultAffected = Arrays.copyOf(resultAffected, 2 * results);
        }
        resultEnds[results] = timesResults ? System.nanoTime() : 0;
        resultRows[results] = rows;
        resultAffected[results] = Math.max(0, affected);
        rows = 0;
        results++;
    }

    @Override
    public void run(BackendConnection connection, ResponseFraming framing, Runnable done) {
        AfterResponse next = then;
        then = null;
        if (timesResults && results > 0) {
            recordParts(statementCount());
        } else {
            long affected = 0;
            long sent = rows;
            for (int i = 0; i < results; i++) {
                affected += resultAffected[i];
                sent += resultRows[i];
            }
            finishWithRows(errorCode, sent, affected);
        }
        next.run(connection, framing, done);
    }

    /**
     * A multi-statement text: each result is its statement's when the text splits into as many shapes as it has
     * statements (an error ends the text, so fewer results may come); otherwise the text is one shape.
     */
    private void recordParts(int statements) {
        long ended = System.nanoTime();
        shape.setLength(0);
        if (!SqlTokenizer.writeDigestShape(text, mode, shape)) {
            shape.setLength(0);
            shape.append(text);
        }
        int[] cuts = statementEnds(shape, statements);
        int answered = results + (errorCode != 0 ? 1 : 0);
        if (cuts == null || answered > statements) {
            long affected = 0;
            long sent = rows;
            for (int i = 0; i < results; i++) {
                affected += resultAffected[i];
                sent += resultRows[i];
            }
            record(shape, errorCode, sent, affected, startedAt, ended);
        } else {
            String whole = shape.toString();
            long from = startedAt;
            for (int i = 0; i < answered; i++) {
                boolean failed = i == results;
                long end = failed ? ended : resultEnds[i];
                shape.setLength(0);
                shape.append(whole, i == 0 ? 0 : cuts[i - 1] + 1, cuts[i]);
                trim(shape);
                record(shape, failed ? errorCode : 0, failed ? rows : resultRows[i],
                        failed ? 0 : resultAffected[i], from, end);
                from = end;
            }
        }
        text = null;
        preparedShape = null;
    }

    /** Where each of the shape's {@code count} statements ends (its {@code ;}, or the end); null if they differ. */
    private static int[] statementEnds(CharSequence shape, int count) {
        int[] ends = new int[count];
        int found = 0;
        for (int i = 0; i < shape.length(); i++) {
            // The shape's tokens are one space apart: a ';' token stands alone.
            if (shape.charAt(i) == ';' && (i == 0 || shape.charAt(i - 1) == ' ')
                    && (i + 1 == shape.length() || shape.charAt(i + 1) == ' ')) {
                if (found < count) {
                    ends[found] = i;
                }
                found++;
            }
        }
        boolean trailing = found > 0 && shape.toString().stripTrailing().endsWith(";");
        if (!trailing) {
            if (found < count) {
                ends[found] = shape.length();
            }
            found++;
        }
        return found == count ? ends : null;
    }

    private static void trim(StringBuilder shape) {
        while (!shape.isEmpty() && shape.charAt(shape.length() - 1) == ' ') {
            shape.setLength(shape.length() - 1);
        }
        while (!shape.isEmpty() && shape.charAt(0) == ' ') {
            shape.deleteCharAt(0);
        }
    }

    /** Gantry refused the previous statement, and nothing ran it after: it counts as Gantry's, with the error. */
    private void recordRefusal() {
        if (refusal != 0 && (text != null || preparedShape != null)) {
            ranOn = RanOn.GANTRY;
            reason = null;
            server = null;
            finishAt(refusedAt, refusal, 0, 0);
        }
        refusal = 0;
    }

    private void finish(int error, long rowsSent) {
        finishWithRows(error, rowsSent, 0);
    }

    private void finishWithRows(int error, long rowsSent, long rowsAffected) {
        finishAt(System.nanoTime(), error, rowsSent, rowsAffected);
    }

    private void finishAt(long endedAt, int error, long rowsSent, long rowsAffected) {
        if (preparedShape != null) {
            record(preparedShape, error, rowsSent, rowsAffected, startedAt, endedAt);
        } else if (text != null) {
            shape.setLength(0);
            if (!SqlTokenizer.writeDigestShape(text, mode, shape)) {
                shape.setLength(0);
                shape.append(text); // a text with no single shape is its own
            }
            record(shape, error, rowsSent, rowsAffected, startedAt, endedAt);
        }
        text = null;
        preparedShape = null;
        preparedText = null;
        refusal = 0;
    }

    /** @param from when the statement started and {@code to} ended, in {@link System#nanoTime()} */
    private void record(CharSequence statementShape, int error, long rowsSent, long rowsAffected, long from,
                        long to) {
        String chosen = session.stateLog().database();
        String schema = chosen != null ? chosen : session.client().initialDatabase();
        long nanos = to - from;
        digests.record(statementShape, schema, session.client().user(), ranOn, reason, error, rowsSent, rowsAffected,
                nanos);
        if (slowStatements.isSlow(nanos)) {
            Instant started = Instant.now().minusNanos(System.nanoTime() - from);
            slowStatements.offer(new SlowStatement(started, nanos, statementShape.toString(),
                    text != null ? text : preparedText, mode, schema == null ? "" : schema, session.client().user(),
                    session.id(), server, ranOn, reason, error, rowsSent, rowsAffected));
        }
    }

    private static int errorOf(Reply reply) {
        if (reply instanceof Reply.Error error) {
            return error.error().errorCode();
        }
        if (reply instanceof Reply.Close close) {
            return close.error().errorCode();
        }
        return 0;
    }
}
