package io.gantry.proxy.caching;

import io.gantry.cache.CachedResult;
import io.gantry.cache.QueryCache;
import io.gantry.cache.QueryCaches;
import io.gantry.cache.Rerun;
import io.gantry.gtid.GtidSet;
import io.gantry.gtid.SampledPosition;
import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.execution.AfterResponse;
import io.gantry.proxy.execution.ResponseForwarder;
import io.gantry.topology.Role;
import io.gantry.wire.Packet;
import io.gantry.wire.PacketFrameEncoder;
import io.gantry.wire.ResponseFraming;
import io.gantry.wire.ServerStatus;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;

/**
 * The capture of one proxied answer for a cache: every packet the client gets is copied as framed, up to
 * {@code --cache-max-entry-bytes}; once the answer completed without an error, the account counts as allowed to
 * read the query, and the copy is stored if the answer is a plain result set and its server held the cache's last
 * eviction.
 */
public final class CacheFill {

    /**
     * Status flags that make an answer unfit to replay to another command: it belongs to a transaction or a cursor,
     * or carries more than one result or session state.
     */
    private static final int UNSAFE_STATUS = ServerStatus.SERVER_STATUS_IN_TRANS
            | ServerStatus.SERVER_MORE_RESULTS_EXISTS | ServerStatus.SERVER_SESSION_STATE_CHANGED
            | ServerStatus.SERVER_STATUS_CURSOR_EXISTS | ServerStatus.SERVER_STATUS_IN_TRANS_READONLY;

    /** The statement was answered from a cache. */
    public static final CacheFill ANSWERED = new CacheFill(null, null, null, null, null, false);

    private final QueryCaches caches;
    private final QueryCache cache;
    private final QueryCaches.EntryKey entryKey;
    private final Long key;
    private final String account;
    private final boolean checksAccount;
    /** How a refresh worker runs the statement again, stored with the entry; null when its cache does not
     *  refresh ahead. */
    private Rerun rerun;
    private long ticket;
    private GtidSet filledAt;
    private long startedMillis;
    private boolean fromPrimary;
    private long serverLagMillis;
    private ByteBuf captured;
    private boolean abandoned;

    CacheFill(QueryCaches caches, QueryCache cache, QueryCaches.EntryKey entryKey, Long key, String account,
              boolean checksAccount) {
        this.caches = caches;
        this.cache = cache;
        this.entryKey = entryKey;
        this.key = key;
        this.account = account;
        this.checksAccount = checksAccount;
    }

    /** A refresh worker's run of {@code entry}'s statement: it replaces the entry by the same rules. */
    static CacheFill refresh(QueryCaches caches, QueryCaches.EntryKey entryKey, CachedResult entry) {
        CacheFill fill = new CacheFill(caches, entryKey.cache(), entryKey, entry.key(), null, false);
        fill.rerun = entry.rerun();
        return fill;
    }

    /** Stores with the entry how a refresh worker runs the statement again (its cache refreshes ahead). */
    void refreshesBy(Rerun how) {
        this.rerun = how;
    }

    QueryCache cache() {
        return cache;
    }

    /**
     * Whether the statement runs to check the session's account: the entry would have been served to it, had it
     * run the query on a server lately.
     */
    public boolean checksAccount() {
        return checksAccount;
    }

    /** The statement goes to {@code connection} now: the position and eviction count its answer is judged by. */
    public void start(BackendConnection connection) {
        ticket = cache.fillTicket();
        SampledPosition position = connection.server().position();
        filledAt = position == null ? null : position.executed();
        serverLagMillis = connection.server().lagMillis();
        startedMillis = System.currentTimeMillis();
        fromPrimary = connection.server().role() == Role.PRIMARY;
        abandoned = filledAt == null;
    }

    public ResponseForwarder.ResponseRewriter capturing(ResponseForwarder.ResponseRewriter inner) {
        return (response, framing) -> {
            Packet out = inner.rewrite(response, framing);
            capture(out, framing);
            return out;
        };
    }

    public AfterResponse completing(AfterResponse inner) {
        return (connection, framing, done) -> {
            complete(framing);
            inner.run(connection, framing, done);
        };
    }

    /** Copies one packet of the answer (the caller keeps it). */
    void capture(Packet packet, ResponseFraming framing) {
        if (abandoned) {
            return;
        }
        if (captured == null && framing.lastPacketKind() != ResponseFraming.PacketKind.COLUMN_COUNT) {
            abandoned = true; // not a result set
            return;
        }
        int length = packet.payload().readableBytes();
        int size = (captured == null ? 0 : captured.writerIndex()) + length
                + Packet.HEADER_SIZE * Packet.frameCount(length);
        if (size > caches.maxEntryBytes()) {
            abandoned = true;
            release();
            return;
        }
        if (captured == null) {
            captured = Unpooled.buffer(Math.max(256, size));
        }
        PacketFrameEncoder.writeFramed(packet, captured);
    }

    /** The answer is complete: returns whether it was stored. */
    boolean complete(ResponseFraming framing) {
        if (framing.failed()) {
            release();
            return false;
        }
        if (account != null) {
            caches.accountRan(cache, account, System.currentTimeMillis());
        }
        int status = framing.serverStatus();
        boolean stored = !abandoned && captured != null && status != ResponseFraming.NO_STATUS
                && (status & UNSAFE_STATUS) == 0 && ServerStatus.has(status, ServerStatus.SERVER_STATUS_AUTOCOMMIT)
                && caches.fill(entryKey, new CachedResult(ByteBufUtil.getBytes(captured), filledAt, ticket,
                startedMillis, key, rerun), fromPrimary, serverLagMillis);
        release();
        return stored;
    }

    private void release() {
        captured = null; // a heap buffer: nothing to give back
    }
}
