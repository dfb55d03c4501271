package io.gantry.route;

import io.gantry.gtid.GtidSet;
import io.gantry.gtid.SampledPosition;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What one session has seen and written, as far as read guarantees are concerned, and whether a replica may serve
 * its next read. Confined to the session's event loop.
 *
 * <p>When a command completes on a server at time t, what it read or wrote is known only once that server is
 * sampled after t: until then the completion is <em>pending</em>, and while a read is pending on server X only X or
 * the primary may serve the session (monotonic reads), while a write is pending no replica may (read-your-writes).
 * Once X has been sampled after t (or, when X is no longer sampled, the primary, which holds everything a replica had
 * at t), its sampled set joins the session's <em>floor</em>: a replica then serves the session only if its executed
 * set contains the floor.
 *
 * <p>A session in a causal scope wider than itself ({@code gantry_read_your_writes_scope = account | token},
 * {@link CausalScope}) also writes what it wrote there, and its reads must also find what the scope's other sessions
 * wrote (and what scopes forgotten since wrote, {@link CausalScopes}).
 */
public final class SessionConsistency {

    /**
     * A command that completed on {@code server} at {@code completedAtMillis}, not yet settled by a sample. Updated in
     * place by later completions on the same server (every read of a session on its replica is one), so the hot
     * path allocates nothing.
     */
    private static final class Pending {
        final ServerId server;
        final boolean write;
        long completedAtMillis;

        Pending(ServerId server, long completedAtMillis, boolean write) {
            this.server = server;
            this.completedAtMillis = completedAtMillis;
            this.write = write;
        }

        ServerId server() {
            return server;
        }

        boolean write() {
            return write;
        }

        long completedAtMillis() {
            return completedAtMillis;
        }
    }

    private final List<Pending> pending = new ArrayList<>(4);
    /** Everything the session has read must be contained by the server of its next read (monotonic reads). */
    private GtidSet readFloor;
    /** Everything the session has written must be contained by the server of its next read (read-your-writes). */
    private GtidSet writeFloor;
    /** The scopes a session's scope is looked up in; null for a session that has only its own. */
    private final CausalScopes scopes;
    /** The key of the session's scope now ({@link CausalScopes#ofAccount}), or null for the session alone. */
    private final Supplier<String> scopeKey;

    /** The read guarantees of a session alone: no scope wider than it. */
    public SessionConsistency() {
        this(null, () -> null);
    }

    /**
     * @param scopes   where the scopes of this proxy are kept
     * @param scopeKey the session's scope now, or null for none: read at each write and read, as a {@code SET}
     *                 or a change of user may change it
     */
    public SessionConsistency(CausalScopes scopes, Supplier<String> scopeKey) {
        this.scopes = scopes;
        this.scopeKey = scopeKey;
    }

    /**
     * A command of the session completed on {@code server}.
     *
     * @param write whether it may have written (then read-your-writes applies to it, if the session has it on)
     */
    public void completed(ServerId server, long atMillis, boolean write) {
        if (write) {
            String key = scopeKey.get();
            if (key != null) {
                scopes.forWrite(key).wroteAt(atMillis);
            }
        }
        for (int i = 0; i < pending.size(); i++) {
            Pending known = pending.get(i);
            if (known.server().equals(server) && known.write() == write) {
                known.completedAtMillis = atMillis; // a later sample settles both
                return;
            }
        }
        pending.add(new Pending(server, atMillis, write));
    }

    /**
     * The session committed these GTIDs on the primary (as the server reported them): from now on a replica serves
     * the session's reads only once it has applied them (read-your-writes).
     */
    public void committed(GtidSet gtids) {
        writeFloor = union(writeFloor, gtids);
        String key = scopeKey.get();
        if (key != null) {
            scopes.forWrite(key).committed(gtids);
        }
    }

    /**
     * The session read data at least as new as {@code position} without a server (a query-cache hit): from now on
     * its reads must not be older (monotonic reads).
     */
    public void readAt(GtidSet position) {
        if (readFloor == null || readFloor.flavour() != position.flavour() || !readFloor.contains(position)) {
            readFloor = union(readFloor, position); // every hit of a session passes here: no new set when it is held
        }
    }

    /**
     * Whether a write of the session, or of its scope, still waits for a sample: until then no one knows what it
     * wrote.
     */
    public boolean hasPendingWrite() {
        for (int i = 0; i < pending.size(); i++) {
            if (pending.get(i).write()) {
                return true;
            }
        }
        return scopePending(scopeKey.get());
    }

    /** Whether some completion still waits for a sample (the sampler should be asked for one). */
    public boolean hasPending() {
        return !pending.isEmpty();
    }

    /**
     * Moves completions whose server, or the primary, has been sampled since into the floors.
     *
     * @param positions each server's latest sampled position (null when unknown)
     */
    public void settle(ServerId primary, Function<ServerId, SampledPosition> positions) {
        String key = scopeKey.get();
        if (key != null && primary != null) {
            CausalScope scope = scopes.forRead(key);
            if (scope != null && scope.writes().pending()) {
                scope.settle(positions.apply(primary));
            }
            if (scopes.forgotten().writes().pending()) {
                scopes.forgotten().settle(positions.apply(primary));
            }
        }
        for (int i = pending.size() - 1; i >= 0; i--) {
            Pending entry = pending.get(i);
            SampledPosition own = positions.apply(entry.server());
            SampledPosition settling = after(own, entry) ? own : null;
            // The primary settles only a completion whose own server is no longer sampled (down, removed). While
            // that server is sampled, its own next sample is the floor: the primary, sampled first in each round and
            // always ahead of a replica under writes, would give a floor no replica holds yet, and keep the session
            // on the primary for as long as writes go on.
            if (settling == null && own == null && primary != null && !primary.equals(entry.server())) {
                SampledPosition ofPrimary = positions.apply(primary);
                settling = after(ofPrimary, entry) ? ofPrimary : null;
            }
            if (settling != null) {
                if (entry.write()) {
                    writeFloor = union(writeFloor, settling.executed());
                } else {
                    readFloor = union(readFloor, settling.executed());
                }
                pending.remove(i);
            }
        }
    }

    private static boolean after(SampledPosition position, Pending entry) {
        // Strictly later by the millisecond: a sample asked for in the same millisecond may predate the completion.
        return position != null && position.sampledAt().toEpochMilli() > entry.completedAtMillis();
    }

    /**
     * Why {@code replica} may not serve the session's next read, or null when it may.
     *
     * @param position the replica's latest sampled position, or null when unknown
     */
    public ReplicaRefusal judge(ServerId replica, SampledPosition position, ReadGuarantees guarantees,
                                long nowMillis) {
        if (position == null) {
            return ReplicaRefusal.POSITION_UNKNOWN;
        }
        long safeAgeMillis = nowMillis - position.safeTime().toEpochMilli();
        if (!guarantees.maxStaleReadBound().isZero() && safeAgeMillis > guarantees.maxStaleReadBound().toMillis()) {
            return ReplicaRefusal.TOO_STALE;
        }
        if (!guarantees.followerReadStaleness().isZero()
                && safeAgeMillis > guarantees.followerReadStaleness().toMillis()) {
            return ReplicaRefusal.TOO_STALE;
        }
        for (int i = 0; i < pending.size(); i++) {
            Pending entry = pending.get(i);
            if (entry.write()) {
                if (guarantees.readYourWrites()) {
                    return ReplicaRefusal.OWN_WRITES;
                }
            } else if (!entry.server().equals(replica)) {
                return ReplicaRefusal.MONOTONIC_FLOOR;
            }
        }
        if (guarantees.readYourWrites() && (!contains(position.executed(), writeFloor)
                || !scopeHolds(scopeKey.get(), position.executed()))) {
            return ReplicaRefusal.OWN_WRITES;
        }
        if (!contains(position.executed(), readFloor)) {
            return ReplicaRefusal.MONOTONIC_FLOOR;
        }
        return null;
    }

    /**
     * Whether {@code replica} will qualify once it has applied {@link #floor}: no completion still waits for a sample
     * that could refuse it (a write, under read-your-writes; a read on another server).
     */
    public boolean waitingCanQualify(ServerId replica, boolean readYourWrites) {
        for (int i = 0; i < pending.size(); i++) {
            Pending entry = pending.get(i);
            if (entry.write() ? readYourWrites : !entry.server().equals(replica)) {
                return false;
            }
        }
        return !readYourWrites || !scopePending(scopeKey.get());
    }

    /**
     * The GTIDs the session's commits produced, as the servers reported them ({@code @@gantry_last_write_position}),
     * or null before its first.
     */
    public GtidSet writePosition() {
        return writeFloor;
    }

    /** The floor a server must contain to serve the next read (for {@code EXPLAIN GANTRY ROUTE}), or null. */
    public GtidSet floor(boolean readYourWrites) {
        if (!readYourWrites) {
            return readFloor;
        }
        GtidSet floor = writeFloor == null ? readFloor : readFloor == null ? writeFloor : union(readFloor, writeFloor);
        String key = scopeKey.get();
        if (key != null) {
            floor = withScopeFloor(floor, scopes.forRead(key));
            floor = withScopeFloor(floor, scopes.forgotten());
        }
        return floor;
    }

    /** The floor of the session's scope (its own writes in it included), or null: none, or the session alone. */
    public GtidSet scopeFloor() {
        String key = scopeKey.get();
        return key == null ? null : withScopeFloor(withScopeFloor(null, scopes.forRead(key)), scopes.forgotten());
    }

    /** The key of the session's scope now ({@code account:app}), or null when it has only its own. */
    public String scope() {
        return scopeKey.get();
    }

    private static GtidSet withScopeFloor(GtidSet floor, CausalScope scope) {
        GtidSet added = scope == null ? null : scope.writes().floor();
        return added == null ? floor : floor == null ? added : union(floor, added);
    }

    /** Whether a write of the scope {@code key} (or of a scope forgotten) still waits for a sample. */
    private boolean scopePending(String key) {
        if (key == null) {
            return false;
        }
        CausalScope scope = scopes.forRead(key);
        return scope != null && scope.writes().pending() || scopes.forgotten().writes().pending();
    }

    /** Whether {@code executed} holds every write of the scope {@code key}, and of the scopes forgotten. */
    private boolean scopeHolds(String key, GtidSet executed) {
        if (key == null) {
            return true;
        }
        CausalScope scope = scopes.forRead(key);
        if (scope != null && !holds(scope.writes(), executed)) {
            return false;
        }
        return holds(scopes.forgotten().writes(), executed);
    }

    private static boolean holds(CausalScope.Writes writes, GtidSet executed) {
        return !writes.pending() && contains(executed, writes.floor());
    }

    /** The servers whose completions still wait for a sample, for {@code EXPLAIN GANTRY ROUTE}. */
    public List<String> pendingDescriptions() {
        List<String> out = new ArrayList<>();
        for (Pending entry : pending) {
            out.add((entry.write() ? "write" : "read") + " on " + entry.server().hostPort() + " at "
                    + Instant.ofEpochMilli(entry.completedAtMillis()));
        }
        String key = scopeKey.get();
        if (key != null) {
            CausalScope scope = scopes.forRead(key);
            if (scope != null && scope.writes().pending()) {
                out.add("write of " + key + " on the primary at "
                        + Instant.ofEpochMilli(scope.writes().pendingSinceMillis()));
            }
            if (scopes.forgotten().writes().pending()) {
                out.add("write of a forgotten scope on the primary at "
                        + Instant.ofEpochMilli(scopes.forgotten().writes().pendingSinceMillis()));
            }
        }
        return out;
    }

    /**
     * What the session has read and written, by value, for a take-over: the floors as GTID text (empty for none) and
     * the completions still waiting for a sample.
     */
    public record Kept(String readFloor, String writeFloor, List<KeptCompletion> pending) {
    }

    /** A completion on {@code server} ({@code host:port}) still waiting for a sample. */
    public record KeptCompletion(String server, boolean write, long completedAtMillis) {
    }

    /** This session's floors and waiting completions, to continue in another process ({@link #restore}). */
    public Kept kept() {
        List<KeptCompletion> waiting = new ArrayList<>(pending.size());
        for (Pending entry : pending) {
            waiting.add(new KeptCompletion(entry.server().hostPort(), entry.write(), entry.completedAtMillis()));
        }
        return new Kept(readFloor == null ? null : readFloor.toString(),
                writeFloor == null ? null : writeFloor.toString(), waiting);
    }

    /** Takes on what another process's session had ({@link #kept}): the same floors and waiting completions. */
    public void restore(Kept kept) {
        clear();
        readFloor = kept.readFloor() == null ? null : GtidSet.parseAnyFlavour(kept.readFloor());
        writeFloor = kept.writeFloor() == null ? null : GtidSet.parseAnyFlavour(kept.writeFloor());
        for (KeptCompletion entry : kept.pending()) {
            pending.add(new Pending(new ServerId(entry.server()), entry.completedAtMillis(), entry.write()));
        }
    }

    /** A new login or a COM_RESET_CONNECTION: nothing seen or written before counts any more. */
    public void clear() {
        pending.clear();
        readFloor = null;
        writeFloor = null;
    }

    private static GtidSet union(GtidSet floor, GtidSet added) {
        return CausalScope.union(floor, added);
    }

    private static boolean contains(GtidSet executed, GtidSet floor) {
        return floor == null || floor.flavour() != executed.flavour() || executed.contains(floor);
    }
}
