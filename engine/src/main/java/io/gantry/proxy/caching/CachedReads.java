package io.gantry.proxy.caching;

import io.gantry.admin.AdminResult;
import io.gantry.cache.CachedResult;
import io.gantry.cache.QueryCache;
import io.gantry.cache.QueryCaches;
import io.gantry.cache.Rerun;
import io.gantry.gtid.GtidSet;
import io.gantry.gtid.SampledPosition;
import io.gantry.proxy.execution.SessionRouting;
import io.gantry.proxy.login.ClientIdentity;
import io.gantry.proxy.prepared.PreparedStatements;
import io.gantry.proxy.prepared.StmtExecutePayloads;
import io.gantry.proxy.routing.ServerIds;
import io.gantry.proxy.session.ClientWriter;
import io.gantry.proxy.session.SessionContext;
import io.gantry.route.QueryText;
import io.gantry.route.ReadGuarantees;
import io.gantry.route.RouteReason;
import io.gantry.route.ServerId;
import io.gantry.route.SessionRouteState;
import io.gantry.route.SqlTokenizer;
import io.gantry.route.TransactionState;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import io.gantry.wire.ComQuery;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.time.Clock;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A session's use of the query caches. A SELECT (text, or a prepared statement's execution) whose shape has a cache
 * is answered from memory when an entry for its parameters is current, the session's account ran the query on a
 * server lately ({@link QueryCaches#ACCOUNT_RECHECK}), and the entry is as new as the session's read guarantees ask;
 * the stored packets go out as they are (their sequence ids start at 1, as every answer to a new command does), and
 * no server is asked. Otherwise the statement is proxied as usual and its answer captured on the way to the client
 * ({@link CacheFill}), without decoding a row, for the next time.
 *
 * <p>Only sessions outside any transaction, in autocommit, with nothing held on one connection (temporary tables,
 * user variables, locks pin a session) and on the upstream database use the caches. While no cache is defined a
 * statement costs one volatile read here.
 */
public final class CachedReads {

    /** Where a statement was answered, for {@code EXPLAIN LAST STATEMENT}. */
    enum Answer {
        NONE, CACHE_HIT, CACHE_MISS, PROXIED
    }

    private final SessionContext session;
    private final ClientWriter client;
    private final Upstreams upstreams;
    /** The proxy's caches as they are now: they are made after the listener starts, so they are read each time. */
    private final Supplier<QueryCaches> currentCaches;
    private final Clock clock;
    private final Function<ServerId, SampledPosition> positions;
    private final StringBuilder shape = new StringBuilder(128);
    private final StringBuilder literals = new StringBuilder(32);
    private final StringBuilder listLengths = new StringBuilder(8);
    /** Each prepared statement's cache (or {@link #NO_CACHE}), for the caches as they were at {@link #indexed}. */
    private final Map<PreparedStatements.Statement, PreparedCache> preparedCaches = new IdentityHashMap<>();
    private static final PreparedCache NO_CACHE = new PreparedCache(null, "");

    /**
     * The cache of a prepared statement's shape, and the lengths of its lists after {@code IN}, which its entries'
     * keys begin with: the shape collapses each list, and two texts of one shape may bind the same values in lists of
     * other lengths.
     */
    private record PreparedCache(QueryCache cache, String listLengths) {
    }
    private static final int MAX_REMEMBERED_STATEMENTS = 1024;
    private QueryCaches indexed;
    private int indexedGeneration = -1;
    private String format;
    private long formatVersion = -1;
    private Rerun.Format resultFormat;
    private String account;
    private String accountUser;

    private Answer lastAnswer = Answer.NONE;
    private QueryCache lastCache;
    private String lastServer;
    /** When the previous statement checked the account's right to a cached answer: why it ran where it ran. */
    private RouteReason lastAccountCheck;

    public CachedReads(SessionContext session, ClientWriter client, Upstreams upstreams, ServerIds serverIds,
                       Supplier<QueryCaches> currentCaches, Clock clock) {
        this.session = session;
        this.client = client;
        this.upstreams = upstreams;
        this.currentCaches = currentCaches;
        this.clock = clock;
        this.positions = serverIds::positionOf;
    }

    /** The statement goes where {@code routed} says; {@code fill} is its cache's capture, or null. */
    public void routed(CacheFill fill, SessionRouting.Routed routed) {
        if (fill == null) {
            lastAnswer = Answer.PROXIED;
            lastCache = null;
        }
        lastServer = routed.server().address();
        lastAccountCheck = fill != null && fill.checksAccount() ? routed.decision().reason() : null;
    }

    /** {@code EXPLAIN LAST STATEMENT}: where the session's previous statement was answered. */
    public AdminResult explainLastStatement() {
        String destination = switch (lastAnswer) {
            case NONE -> "none";
            case CACHE_HIT -> "cache";
            case CACHE_MISS -> "cache miss, then upstream";
            case PROXIED -> "upstream";
        };
        String detail = switch (lastAnswer) {
            case NONE -> "no statement ran yet in this session";
            case CACHE_HIT -> "answered from cache " + lastCache.name() + ", no server asked";
            case CACHE_MISS -> lastAccountCheck == null ? "cache " + lastCache.name() + " had no entry "
                    + "this session could be served, so " + lastServer + " answered"
                    : "cache " + lastCache.name() + " had an entry, but this account had not run the query on a "
                    + "server lately, so " + lastServer + " checked its right to it and answered ("
                    + (lastAccountCheck == RouteReason.CACHE_ACCOUNT_CHECK ? lastAccountCheck.description()
                    : "routed as usual, " + lastAccountCheck.description()) + ")";
            case PROXIED -> "proxied to " + lastServer + " (no cache has this query)";
        };
        return AdminResult.Rows.ofText(List.of("Query_destination", "Detail"), List.of(List.of(destination, detail)));
    }

    /** The query caches when the session may use them now, else null. */
    private QueryCaches usable() {
        QueryCaches caches = currentCaches.get();
        if (caches == null || caches.isEmpty()) {
            return null;
        }
        SessionRouteState state = session.routeState();
        if (state.transaction() != TransactionState.NONE || !state.autocommit() || state.pinned()
                || session.settings().nextTransaction() != null || session.stateLog().changedDatabase()
                || !session.client().initialDatabase().equalsIgnoreCase(caches.defaultDatabase())) {
            return null;
        }
        return caches;
    }

    /**
     * A COM_QUERY's text: {@link CacheFill#ANSWERED} when a cache answered it, a fill to capture the answer with when a
     * cache has its shape but no entry to serve, or null when no cache is concerned.
     */
    public CacheFill text(QueryText text) {
        QueryCaches caches = usable();
        if (caches == null || !text.leadsWith("SELECT")) {
            return null;
        }
        String sql = text.sql();
        shape.setLength(0);
        literals.setLength(0);
        listLengths.setLength(0);
        if (!SqlTokenizer.writeCacheShape(sql, text.mode(), shape, literals, listLengths)) {
            return null;
        }
        QueryCache cache = caches.find(shape);
        if (cache == null) {
            return null;
        }
        CacheFill fill = lookUp(caches, cache, false, entryParameters(listLengths, literals), textKey(cache));
        if (fill != CacheFill.ANSWERED && !cache.refresh().isZero()) {
            fill.refreshesBy(new Rerun(resultFormat(), null, ComQuery.payload(sql)));
        }
        return fill;
    }

    /**
     * A COM_STMT_EXECUTE of {@code statement}, as {@link #text}.
     *
     * @param boundTypes the types the execution binds, or null when it binds none
     */
    public CacheFill execute(PreparedStatements.Statement statement, ByteBuf payload, byte[] boundTypes) {
        QueryCaches caches = usable();
        if (caches == null || payload.readableBytes() < StmtExecutePayloads.NULL_BITMAP_OFFSET) {
            return null;
        }
        PreparedCache prepared = preparedCache(caches, statement);
        if (prepared == NO_CACHE) {
            return null;
        }
        QueryCache cache = prepared.cache();
        byte[] types = boundTypes != null || statement.paramCount() == 0 ? boundTypes
                : session.prepared().paramTypes(statement.clientId()).orElse(null);
        String parameters = StmtExecutePayloads.parameterKey(payload, statement.paramCount(), types);
        if (parameters == null) {
            return null;
        }
        Long key = cache.shape().keyParameter() == 0
                ? StmtExecutePayloads.firstIntegerParameter(payload, statement.paramCount(), types) : null;
        CacheFill fill = lookUp(caches, cache, true, entryParameters(prepared.listLengths(), parameters), key);
        if (fill != CacheFill.ANSWERED && !cache.refresh().isZero()) {
            ByteBuf prepare = Unpooled.buffer(statement.sql().length() + 1);
            statement.writePrepare(prepare);
            fill.refreshesBy(new Rerun(resultFormat(), ByteBufUtil.getBytes(prepare), executeBindingTypes(statement,
                    payload, boundTypes, types)));
        }
        return fill;
    }

    /** The execution as a new connection needs it: one that has never seen the statement gets its types with it. */
    private static byte[] executeBindingTypes(PreparedStatements.Statement statement, ByteBuf payload,
                                              byte[] boundTypes, byte[] types) {
        if (statement.paramCount() == 0 || boundTypes != null) {
            return ByteBufUtil.getBytes(payload);
        }
        ByteBuf withTypes = StmtExecutePayloads.withParamTypes(payload, statement.paramCount(), types);
        try {
            return ByteBufUtil.getBytes(withTypes);
        } finally {
            withTypes.release();
        }
    }

    /** An entry's parameters: its values, after the lengths of its lists after {@code IN} where it has any. */
    private static String entryParameters(CharSequence listLengths, CharSequence values) {
        return listLengths.isEmpty() ? values.toString() : listLengths + "\1" + values;
    }

    private PreparedCache preparedCache(QueryCaches caches, PreparedStatements.Statement statement) {
        if (indexed != caches || indexedGeneration != caches.generation()) {
            preparedCaches.clear();
            indexed = caches;
            indexedGeneration = caches.generation();
        }
        PreparedCache known = preparedCaches.get(statement);
        if (known == null) {
            if (preparedCaches.size() >= MAX_REMEMBERED_STATEMENTS) {
                preparedCaches.clear(); // closed statements stay here otherwise; the open ones are shaped again
            }
            shape.setLength(0);
            literals.setLength(0);
            listLengths.setLength(0);
            QueryCache found = QueryText.of(statement.sql(), session.sqlMode()).leadsWith("SELECT")
                    && SqlTokenizer.writeCacheShape(statement.sql(), session.sqlMode(), shape, literals, listLengths)
                    && literals.isEmpty() ? caches.find(shape) : null;
            known = found == null ? NO_CACHE : new PreparedCache(found, listLengths.toString());
            preparedCaches.put(statement, known);
        }
        return known;
    }

    private CacheFill lookUp(QueryCaches caches, QueryCache cache, boolean binary, String parameters, Long key) {
        long now = clock.millis();
        QueryCaches.EntryKey entryKey = new QueryCaches.EntryKey(cache, binary, format(), parameters);
        // Read before the entry is judged current: the stream publishes its position after the evictions up to it,
        // so every eviction this position covers is seen by the lookup below. Read after, a position could cover
        // an eviction the lookup missed, and the entry it evicted would pass as new enough.
        GtidSet streamPosition = caches.freshness().live() ? caches.streamPosition() : null;
        CachedResult entry = caches.lookup(entryKey, now);
        if (entry == null) {
            return miss(caches, cache, entryKey, key, false);
        }
        if (!newEnough(caches, entry, now, streamPosition)) {
            caches.notServed(cache);
            return miss(caches, cache, entryKey, key, false);
        }
        if (!caches.accountChecked(cache, account(), now)) {
            // The entry would be served, but this account has not shown lately that it may run the query.
            caches.notServed(cache);
            return miss(caches, cache, entryKey, key, true);
        }
        caches.refreshIfDue(entryKey, entry, now);
        session.consistency().readAt(entry.filledAt());
        client.writeFramed(Unpooled.wrappedBuffer(entry.packets()));
        client.flush();
        lastAnswer = Answer.CACHE_HIT;
        lastCache = cache;
        lastServer = null;
        lastAccountCheck = null;
        return CacheFill.ANSWERED;
    }

    private CacheFill miss(QueryCaches caches, QueryCache cache, QueryCaches.EntryKey entryKey, Long key,
                      boolean checksAccount) {
        lastAnswer = Answer.CACHE_MISS;
        lastCache = cache;
        return new CacheFill(caches, cache, entryKey, key, account(), checksAccount);
    }

    /**
     * Whom the servers' grants are checked for: the user and the host the client came from (the servers match the
     * account by both, so one user name from two hosts may have two sets of grants).
     */
    private String account() {
        if (account == null || accountUser != session.client().user()) {
            accountUser = session.client().user();
            account = session.client().user() + "@" + session.host();
        }
        return account;
    }

    /**
     * Whether a hit keeps the session's guarantees: an entry is as new as its fill's position, and while the stream
     * keeps the caches fresh as new as the stream's position read before the entry was looked up
     * ({@code streamPosition}, null when the stream does not keep them fresh); it must hold the session's floor
     * (what it wrote, under read-your-writes, and what it read, as settled by position samples), and be no staler
     * than the session's bounds. A write still waiting for a sample (its GTID was not reported) makes the floor unknown: no
     * hit then. A read still waiting for one does not hold hits back: every miss is such a read, and a session that
     * reads without pause would otherwise never hit again (see "Limits" in docs/caches.md).
     */
    private boolean newEnough(QueryCaches caches, CachedResult entry, long now, GtidSet streamPosition) {
        ReadGuarantees guarantees = session.settings().guarantees();
        if (session.consistency().hasPending()) {
            // Hits ask no server, so the samples taken since the session's last read are looked at here.
            Optional<UpstreamServer> primary = upstreams.primary();
            session.consistency().settle(primary.isPresent() ? session.serverId(primary.get()) : null, positions);
            if (guarantees.readYourWrites() && session.consistency().hasPendingWrite()) {
                return false;
            }
        }
        GtidSet floor = session.consistency().floor(guarantees.readYourWrites());
        if (floor != null && !contains(entry.filledAt(), floor) && !contains(streamPosition, floor)) {
            return false;
        }
        long stale = caches.stalenessMillis(entry, now);
        return (guarantees.followerReadStaleness().isZero() || stale <= guarantees.followerReadStaleness().toMillis())
                && (guarantees.maxStaleReadBound().isZero() || stale <= guarantees.maxStaleReadBound().toMillis());
    }

    private static boolean contains(GtidSet position, GtidSet floor) {
        return position != null && position.flavour() == floor.flavour() && position.contains(floor);
    }

    /** The text statement's key column value, when its literal there is a plain integer. */
    private Long textKey(QueryCache cache) {
        int wanted = cache.shape().keyParameter();
        if (wanted < 0) {
            return null;
        }
        int start = 0;
        for (int i = 0; i < wanted; i++) {
            start = literals.indexOf("\0", start) + 1;
        }
        int end = literals.indexOf("\0", start);
        if (end <= start || end - start > 18) {
            return null;
        }
        long value = 0;
        for (int i = start; i < end; i++) {
            char c = literals.charAt(i);
            if (c < '0' || c > '9') {
                return null;
            }
            value = value * 10 + (c - '0');
        }
        return value;
    }

    /**
     * What else a result's bytes depend on besides the query and its parameters: the capabilities and collation of
     * the login and the session settings made since (character sets, time zone, SQL mode).
     */
    private String format() {
        long version = session.stateLog().version();
        if (format == null || version != formatVersion) {
            ClientIdentity client = session.client();
            format = client.capabilities() + "/" + client.mariaDbCapabilities() + "/" + client.collationId() + "/"
                    + session.stateLog().settingsContents();
            formatVersion = version;
            resultFormat = null;
        }
        return format;
    }

    /** The same format as a refresh worker logs in with it; one object for the session's entries of one format. */
    private Rerun.Format resultFormat() {
        String key = format();
        if (resultFormat == null) {
            ClientIdentity client = session.client();
            resultFormat = new Rerun.Format(key + "/" + client.initialDatabase(), client.capabilities(),
                    client.mariaDbCapabilities(), client.collationId(), client.initialDatabase(),
                    session.stateLog().since(0));
        }
        return resultFormat;
    }
}
