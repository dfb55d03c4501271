package io.gantry.proxy.execution;

import static io.gantry.proxy.session.SessionContext.LOG;

import io.gantry.gtid.GtidSet;
import io.gantry.gtid.SampledPosition;
import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.login.ServerGreetings;
import io.gantry.proxy.routing.ReadCounters;
import io.gantry.proxy.routing.ReplicaCandidates;
import io.gantry.proxy.routing.ServerIds;
import io.gantry.proxy.session.LogText;
import io.gantry.proxy.session.ProxyMetrics;
import io.gantry.proxy.session.Reply;
import io.gantry.proxy.session.SessionContext;
import io.gantry.proxy.session.SessionErrors;
import io.gantry.proxy.state.SessionStateLog;
import io.gantry.route.QueryText;
import io.gantry.route.ReadBalance;
import io.gantry.route.ReadGuarantees;
import io.gantry.route.ReplicaCandidate;
import io.gantry.route.ReplicaPreference;
import io.gantry.route.ReplicaRefusal;
import io.gantry.route.RouteDecision;
import io.gantry.route.RouteReason;
import io.gantry.route.RouteTarget;
import io.gantry.route.Router;
import io.gantry.route.RoutingConfig;
import io.gantry.route.ServerId;
import io.gantry.route.SessionRouteState;
import io.gantry.route.StatementClass;
import io.gantry.route.StatementFlag;
import io.gantry.route.StatementKind;
import io.gantry.route.TransactionFlavor;
import io.gantry.route.TransactionState;
import io.gantry.route.WeightedChoice;
import io.gantry.topology.Role;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import io.gantry.wire.ServerVersion;
import java.time.Clock;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Where a session's statement runs: the statement's class and the session's routing state go to the
 * {@link io.gantry.route.Router} with the servers as topology sees them now, and the decision comes back as a server
 * (or as the error the client gets instead). The session-level rules that need more than the router knows live
 * here: a session whose unreplayable state is on an old primary, a session with too many distinct settings, and
 * settings made while no primary is known.
 */
public final class SessionRouting {

    /** Stands for the primary in routing when none is known; a decision for it is answered with an error. */
    private static final ServerId NO_PRIMARY = new ServerId("(no primary)");

    /** Where a statement runs and what it is; or, when it cannot run, what the client gets instead. */
    public record Routed(UpstreamServer server, StatementClass statement, RouteDecision decision, Reply refusal,
                  GtidSet waitFor, boolean noPrimary) {
        public boolean refused() {
            return refusal != null;
        }

        /** Refused because it needs the primary and none is known: it may wait for one (--switchover-hold-ms). */
        public boolean refusedForNoPrimary() {
            return noPrimary;
        }

        /** Whether the read first waits on its replica until that has applied {@link #waitFor}. */
        public boolean waits() {
            return waitFor != null;
        }

        public static Routed refused(Reply refusal) {
            return new Routed(null, null, null, refusal, null, false);
        }

        static Routed noPrimary(Reply refusal) {
            return new Routed(null, null, null, refusal, null, true);
        }
    }

    /**
     * The reasons a read goes where it goes by balance or availability, not by a rule that keeps it off replicas
     * (a hint, {@code --master-preferred}, {@code gantry_read_from_followers}): a cache's account check may go
     * elsewhere instead of these.
     */
    private static final Set<RouteReason> BY_BALANCE_OR_AVAILABILITY = EnumSet.of(RouteReason.READ_MASTER_PERCENTAGE,
            RouteReason.NO_REPLICA_UP, RouteReason.NO_REPLICA_QUALIFIES, RouteReason.READ_ON_SESSION_REPLICA,
            RouteReason.READ_ON_REPLICA, RouteReason.READ_ON_CLOSEST_REPLICA);

    private final SessionContext session;
    private final SessionBackends backends;
    private final Upstreams upstreams;
    private final Router router;
    private final ServerIds serverIds;
    private final ReadCounters readCounters;
    /** The proxy's metrics as they are now (they start after the listener, so they are read at each statement). */
    private final Supplier<ProxyMetrics> metrics;
    /** The greeting of each server: the version a refused write in a read-only transaction is worded for. */
    private final ServerGreetings greetings;
    private final Clock clock;
    /** Asks the position sampler for a sample soon (whichever sampler the proxy runs by then). */
    private final Runnable nudgeSampler;
    /** The replicas as the last statement saw them; reused while nothing about them changes. */
    private final ReplicaCandidates candidates = new ReplicaCandidates();
    private final Function<ServerId, SampledPosition> positionOf;
    /** The last routing's answer: the next one is the same object when nothing about it differs (a record). */
    private Routed lastRouted;
    /** The replicas as the last routing saw them, for {@link #replicaChoice}. */
    private List<ReplicaCandidate> lastReplicas = List.of();

    public SessionRouting(SessionContext session, SessionBackends backends, Upstreams upstreams, Router router,
                          ServerIds serverIds, ReadCounters readCounters, Supplier<ProxyMetrics> metrics,
                          ServerGreetings greetings, Clock clock, Runnable nudgeSampler) {
        this.session = session;
        this.backends = backends;
        this.upstreams = upstreams;
        this.router = router;
        this.serverIds = serverIds;
        this.readCounters = readCounters;
        this.metrics = metrics;
        this.greetings = greetings;
        this.clock = clock;
        this.nudgeSampler = nudgeSampler;
        this.positionOf = serverIds::positionOf;
    }

    /**
     * Decides where a SQL text runs, by its class ({@link QueryText#statementClass()}, made once). With
     * {@code commit}, the session's routing state moves on (the statement will run); without, it is only asked. With
     * {@code mayWait}, a read that no replica is known to qualify for may be sent to a replica that it first waits on
     * ({@link Routed#waits()}), with {@code --follower-reads-avoid-waiting=false}: only the text protocol waits; a
     * prepared statement's execute goes to the primary instead. With {@code accountCheck}, the read checks the
     * account's right to a cached answer (the caching room's {@code CacheFill.checksAccount()}): it goes to the
     * highest-weight up server the session's guarantees allow, where the usual rules would let it go to a replica
     * ({@link #accountCheckServer}).
     */
    public Routed route(QueryText text, boolean commit, boolean mayWait, boolean accountCheck) {
        return decide(text.statementClass(), text.sql(), commit, mayWait, accountCheck);
    }

    /**
     * Decides where a statement classified before runs (a prepared statement, classified once at prepare, when the
     * server parsed it too); {@code sql} is its text, for the log.
     */
    public Routed route(StatementClass statement, String sql, boolean commit) {
        return decide(statement, sql, commit, false, false);
    }

    /** Like {@link #route(StatementClass, String, boolean)}, with {@code accountCheck} as in
     *  {@link #route(QueryText, boolean, boolean, boolean)}. */
    public Routed route(StatementClass statement, String sql, boolean commit, boolean accountCheck) {
        return decide(statement, sql, commit, false, accountCheck);
    }

    private Routed decide(StatementClass classified, String sql, boolean commit, boolean mayWait,
                          boolean accountCheck) {
        StatementClass statement = classified;
        if (statement.kind() == StatementKind.TRANSACTION_BEGIN
                && statement.beginFlavor().orElse(null) == TransactionFlavor.DEFAULT
                && session.nextTransactionReadOnly()) {
            // SET TRANSACTION READ ONLY, or the session's transaction_read_only: this BEGIN opens a read-only one.
            statement = new StatementClass(statement.kind(), Optional.of(TransactionFlavor.READ_ONLY),
                    statement.flags(), statement.hint(), statement.statementCount());
        }
        if (commit && statement.kind() == StatementKind.SESSION_STATE && session.stateLog().isFull()
                && !session.routeState().pinned()) {
            LOG.atInfo().addKeyValue("session", session.id())
                    .log("session {}: more than {} distinct session settings; staying on the primary", session.id(),
                            SessionStateLog.MAX_DISTINCT_COMMANDS);
            session.pin(StatementFlag.MIXED_SESSION_STATE);
        }
        SessionRouteState routeState = session.routeState();
        RoutingConfig routing = session.settings().routing();
        UpstreamServer primary = upstreams.primaryOrNull();
        ServerId primaryId = primary != null ? session.serverId(primary) : NO_PRIMARY;
        // Only a read can go to a replica: the guarantees are judged for reads alone.
        boolean read = statement.kind() == StatementKind.READ || statement.kind() == StatementKind.TRANSACTION_BEGIN;
        if (read) {
            session.consistency().settle(primaryId, positionOf);
        }
        long now = clock.millis();
        ReadGuarantees guarantees = session.settings().guarantees();
        ReplicaRefusal refused = null;
        boolean anyQualifies = false;
        List<ReplicaCandidate> waitable = null;
        List<UpstreamServer> servers = upstreams.servers();
        candidates.start();
        for (int i = 0; i < servers.size(); i++) {
            UpstreamServer server = servers.get(i);
            if (primary != server && server.role() == Role.REPLICA) {
                ServerId id = session.serverId(server);
                ReplicaRefusal refusal = read
                        ? session.consistency().judge(id, server.position(), guarantees, now) : null;
                if (refusal != null && server.isUp()) {
                    refused = mostTelling(refused, refusal);
                }
                anyQualifies |= refusal == null && server.isUp();
                candidates.add(id, server.weight(), server.isUp(), refusal == null, server.smoothedRttMicros());
                if (server.isUp() && (refusal == ReplicaRefusal.OWN_WRITES
                        || refusal == ReplicaRefusal.MONOTONIC_FLOOR) && !guarantees.avoidWaiting()
                        && session.consistency().waitingCanQualify(id, guarantees.readYourWrites())) {
                    if (waitable == null) {
                        waitable = new ArrayList<>(2);
                    }
                    waitable.add(new ReplicaCandidate(id, server.weight(), true, true));
                }
            }
        }
        List<ReplicaCandidate> replicas = candidates.list();
        lastReplicas = replicas;
        if ((refused == ReplicaRefusal.OWN_WRITES || refused == ReplicaRefusal.MONOTONIC_FLOOR)
                && (!anyQualifies || routing.readBalance() == ReadBalance.STATEMENT)) {
            // What the session wrote or read, not yet seen in a sample, keeps this read on the primary, or
            // (statement balance) on one replica: sample soon. A session on its own replica under session balance
            // needs no sample to read there.
            nudgeSampler.run();
        }
        SessionRouteState routedAs = routeState;
        if (!routeState.autocommit() && routeState.transaction() == TransactionState.NONE && read
                && session.nextTransactionReadOnly()) {
            // Autocommit off, transactions read-only (a JDBC setReadOnly(true) with autocommit off): the read
            // opens an implicit read-only transaction, placed as START TRANSACTION READ ONLY would be.
            routedAs = routeState.withAutocommit(true);
        }
        RouteDecision decision = router.route(statement, routedAs, routing, primaryId, replicas);
        GtidSet waitFor = null;
        if (mayWait && decision.reason() == RouteReason.NO_REPLICA_QUALIFIES && waitable != null
                && session.consistency().floor(session.settings().guarantees().readYourWrites()) != null) {
            // Replicas refused only for a floor the session knows: wait for it on one of them.
            ServerId chosen = WeightedChoice.pick(waitable, ThreadLocalRandom.current()).orElseThrow().id();
            decision = RouteDecision.of(RouteTarget.REPLICA, chosen, RouteReason.READ_AFTER_WAIT,
                    statement.writeCause(), statement.pinFlag());
            waitFor = session.consistency().floor(session.settings().guarantees().readYourWrites());
        }
        if (accountCheck && waitFor == null && statement.kind() == StatementKind.READ
                && BY_BALANCE_OR_AVAILABILITY.contains(decision.reason())) {
            decision = accountCheckServer(primary, replicas, statement).orElse(decision);
        }
        if (decision.server().equals(NO_PRIMARY) && statement.kind() == StatementKind.SESSION_STATE
                && decision.reason() == RouteReason.SESSION_STATE_CHANGE && !routeState.pinned()) {
            // Without a primary a session setting runs where the session's reads run, and is replayed from
            // there: drivers send settings at connect time, and reads from replicas must go on meanwhile.
            RouteDecision asRead = router.route(StatementClass.of(StatementKind.READ), routeState,
                    routing, primaryId, replicas);
            if (!asRead.server().equals(NO_PRIMARY)) {
                decision = asRead;
            }
        }
        if (decision.server().equals(NO_PRIMARY)) {
            return Routed.noPrimary(Reply.error(SessionErrors.noPrimary("statement", upstreams.noPrimaryReason())));
        }
        if (LOG.isDebugEnabled()) {
            LOG.debug("session {}: {} -> {}{}", session.id(), LogText.abbreviate(sql), decision.describe(),
                    decision.reason() == RouteReason.NO_REPLICA_QUALIFIES ? refusals(primaryId) : "");
        }
        if (commit) {
            Reply refusal = refusal(decision);
            if (refusal != null) {
                return Routed.refused(refusal);
            }
            if (decision.reason() == RouteReason.BEGINS_READ_WRITE_TRANSACTION
                    && routeState.transaction() instanceof TransactionState.ReadOnly readOnly
                    && !readOnly.server().equals(decision.server())) {
                // On a real server BEGIN commits the open transaction first; do that on the replica that holds it.
                backends.endTransactionOn(readOnly.server());
            }
            session.routed(decision);
            metrics.get().routed(decision.target(), decision.reason());
            if (statement.kind() == StatementKind.READ && waitFor == null) {
                count(decision, refused); // a read that waits is counted once the wait is over
            }
        }
        UpstreamServer server = serverIds.server(decision.server());
        Routed last = lastRouted;
        if (waitFor == null && last != null && last.server() == server && last.statement() == statement
                && last.decision() == decision) {
            return last;
        }
        Routed routed = new Routed(server, statement, decision, null, waitFor, false);
        lastRouted = routed;
        return routed;
    }

    /**
     * The highest-weight up server of the list (the first of them in the list's order on a tie) for a cache's account
     * check, when the session's guarantees allow it (the primary always; a replica when it qualifies); empty when they
     * do not, and the read is routed as usual.
     */
    private Optional<RouteDecision> accountCheckServer(UpstreamServer primary, List<ReplicaCandidate> replicas,
                                                       StatementClass statement) {
        UpstreamServer heaviest = null;
        for (UpstreamServer server : upstreams.servers()) {
            if (server.isUp() && (heaviest == null || server.weight() > heaviest.weight())) {
                heaviest = server;
            }
        }
        if (heaviest == null) {
            return Optional.empty();
        }
        ServerId id = session.serverId(heaviest);
        if (heaviest == primary) {
            return Optional.of(new RouteDecision(RouteTarget.PRIMARY, id, RouteReason.CACHE_ACCOUNT_CHECK,
                    Optional.empty(), statement.pinFlag()));
        }
        for (ReplicaCandidate replica : replicas) {
            if (replica.id().equals(id) && replica.eligible()) {
                return Optional.of(new RouteDecision(RouteTarget.REPLICA, id, RouteReason.CACHE_ACCOUNT_CHECK,
                        Optional.empty(), statement.pinFlag()));
            }
        }
        return Optional.empty();
    }

    private void count(RouteDecision decision, ReplicaRefusal refused) {
        if (decision.target() == RouteTarget.REPLICA) {
            readCounters.servedByReplica();
            return;
        }
        readCounters.servedByPrimary();
        if (decision.reason() == RouteReason.NO_REPLICA_QUALIFIES && refused != null) {
            readCounters.consistentPrefixFailed(refused);
        }
    }

    /** The refusal that says most about why a read went to the primary: the session's own needs before lag. */
    private static ReplicaRefusal mostTelling(ReplicaRefusal known, ReplicaRefusal next) {
        return known == null || next.ordinal() < known.ordinal() ? next : known;
    }

    /** See {@link SessionBackends#describeConnections}. */
    public String describeConnections() {
        return backends.describeConnections();
    }

    /**
     * Every rule and guarantee that decides where {@code sql} would run now, as (item, detail) rows, without running
     * it or moving the session's state on: {@code EXPLAIN GANTRY ROUTE}.
     */
    public List<List<String>> explain(String sql) {
        List<List<String>> rows = new ArrayList<>();
        QueryText text = QueryText.of(sql, session.sqlMode());
        Routed routed = route(text, false, true, false);
        StatementClass statement = routed.refused() ? text.statementClass() : routed.statement();
        rows.add(List.of("statement", statement.inWords()));
        rows.add(List.of("session", session.routeState().inWords()));
        ReadGuarantees guarantees = session.settings().guarantees();
        rows.add(List.of("settings", "gantry_read_from_followers="
                + (session.settings().routing().readFromFollowers() ? "ON" : "OFF")
                + ", gantry_read_your_writes=" + (guarantees.readYourWrites() ? "ON" : "OFF")
                + ", gantry_follower_reads_prefer=" + session.settings().routing().replicaPreference().sqlName()
                + ", gantry_follower_read_staleness_ms=" + (guarantees.followerReadStaleness().isZero() ? "none"
                : guarantees.followerReadStaleness().toMillis())
                + ", --max-stale-read-bound-ms=" + guarantees.maxStaleReadBound().toMillis()
                + ", --follower-reads-avoid-waiting=" + guarantees.avoidWaiting()
                + (guarantees.avoidWaiting() ? "" : ", --causal-wait-timeout-ms="
                + guarantees.causalWaitTimeout().toMillis())));
        String scope = session.consistency().scope();
        GtidSet scopeFloor = session.consistency().scopeFloor();
        rows.add(List.of("causal scope", scope == null ? guarantees.scope().sqlName() + ": the session's own writes"
                : scope + (scopeFloor == null ? ": nothing written in it" : ": its writes up to " + shown(scopeFloor))));
        GtidSet floor = session.consistency().floor(guarantees.readYourWrites());
        rows.add(List.of("floor", floor == null ? "none" : shown(floor)));
        List<String> pending = session.consistency().pendingDescriptions();
        rows.add(List.of("pending", pending.isEmpty() ? "none" : String.join("; ", pending)));
        rows.add(List.of("connections", backends.describeConnections()));
        long now = clock.millis();
        Optional<UpstreamServer> primary = upstreams.primary();
        for (UpstreamServer server : upstreams.servers()) {
            SampledPosition position = server.position();
            StringBuilder detail = new StringBuilder().append(server.role().name().toLowerCase(Locale.ROOT))
                    .append(", ").append(server.health().sqlName()).append(", weight ").append(server.weight())
                    .append(", round trip ").append(server.smoothedRttMicros() < 0 ? "unknown"
                            : ReplicaPreference.millis(server.smoothedRttMicros()) + " ms smoothed")
                    .append(", executed ").append(position == null ? "unknown" : shown(position.executed()))
                    .append(", lag ").append(server.lagMillis()).append(" ms");
            if (position != null) {
                detail.append(", safe time ").append(now - position.safeTime().toEpochMilli()).append(" ms ago");
            }
            if (primary.orElse(null) != server && server.role() == Role.REPLICA) {
                ReplicaRefusal refusal = session.consistency().judge(session.serverId(server), position, guarantees,
                        now);
                detail.append(": ").append(refusal == null ? "qualifies" : "refused, " + refusal.description());
            }
            rows.add(List.of(server.address(), detail.toString()));
        }
        rows.add(List.of("replica choice", replicaChoice()));
        rows.add(List.of("decision", routed.refused() ? "refused: " + describe(routed.refusal())
                : routed.decision().inWords()
                + (routed.waits() ? "; waits for " + shown(routed.waitFor()) + " there, up to "
                + guarantees.causalWaitTimeout().toMillis() + " ms, then the primary" : "")));
        return rows;
    }

    /**
     * How a replica is picked for the session's reads now, in an operator's words ({@code SHOW GANTRY SESSION},
     * {@code EXPLAIN GANTRY ROUTE}): the preference and, when it is the closest, which replicas that qualify for a
     * plain read are close now. Routes a plain read without running it, as {@link #explain} does.
     */
    public String replicaChoice() {
        route(QueryText.of("SELECT 1", session.sqlMode()), false, false, false);
        return describeReplicaChoice(lastReplicas);
    }

    /**
     * The session's replica preference in words and, when it is the closest, which of {@code replicas} are close:
     * "closest: ...; close now: db2:3306 (0.21 ms); farther: db3:3306 (5.30 ms)".
     */
    private String describeReplicaChoice(List<ReplicaCandidate> replicas) {
        ReplicaPreference preference = session.settings().routing().replicaPreference();
        StringBuilder words = new StringBuilder(preference.inWords());
        if (!preference.closest()) {
            return words.toString();
        }
        long closestRoundTrip = preference.closestRoundTrip(replicas);
        if (closestRoundTrip < 0) {
            return words.append("; no replica that qualifies has a measured round trip yet, so by weight alone")
                    .toString();
        }
        StringBuilder close = new StringBuilder();
        StringBuilder farther = new StringBuilder();
        for (ReplicaCandidate replica : replicas) {
            if (replica.eligible()) {
                StringBuilder list = preference.admits(replica, closestRoundTrip) ? close : farther;
                list.append(list.isEmpty() ? "" : ", ").append(replica.id()).append(" (")
                        .append(replica.roundTripMicros() < 0 ? "not measured yet"
                                : ReplicaPreference.millis(replica.roundTripMicros()) + " ms").append(')');
            }
        }
        words.append("; close now: ").append(close);
        if (!farther.isEmpty()) {
            words.append("; farther: ").append(farther);
        }
        return words.toString();
    }

    private static String shown(GtidSet set) {
        return set.isEmpty() ? "(empty)" : set.toString();
    }

    private static String describe(Reply refusal) {
        if (refusal instanceof Reply.Error error) {
            return error.error().message();
        }
        // Only errors refuse a statement; anything else would be a bug, named here without the record's fields.
        return refusal instanceof Reply.Close close ? close.error().message()
                : "(" + refusal.getClass().getSimpleName().toLowerCase(Locale.ROOT) + ")";
    }

    /** Why each replica was refused, for the debug log. */
    private String refusals(ServerId primaryId) {
        StringBuilder out = new StringBuilder(" (");
        long now = clock.millis();
        ReadGuarantees guarantees = session.settings().guarantees();
        for (UpstreamServer server : upstreams.servers()) {
            ServerId id = session.serverId(server);
            if (!id.equals(primaryId) && server.role() == Role.REPLICA) {
                ReplicaRefusal refusal = session.consistency().judge(id, server.position(), guarantees, now);
                out.append(out.length() > 2 ? ", " : "").append(server.address()).append(": ")
                        .append(refusal == null ? "qualifies now" : refusal.description());
            }
        }
        return out.append(')').toString();
    }

    /**
     * Why a decision cannot be carried out as the statement's route, or null when it can; {@link Reply#LATER} when the
     * session's transaction is to be replayed on the new primary first (its connection was let go for it).
     */
    private Reply refusal(RouteDecision decision) {
        if (decision.reason() == RouteReason.WRITE_IN_READ_ONLY_TRANSACTION) {
            String shownVersion = greetings.source(upstreams.primary()).serverVersion();
            return Reply.error(SessionErrors.writeInReadOnlyTransaction(ServerVersion.parse(shownVersion)));
        }
        if (decision.target() == RouteTarget.PRIMARY
                && session.routeState().transaction() instanceof TransactionState.ReadWrite) {
            BackendConnection holder = backends.holdingTransaction();
            if (holder != null && !session.serverId(holder.server()).equals(decision.server())) {
                if (backends.letGoForReplay(holder, "the primary moved from " + holder.server().address() + " to "
                        + decision.server().hostPort())) {
                    return Reply.LATER; // not refused: the transaction is replayed on the new primary first
                }
                // Going on would run the rest of the transaction on the new primary, outside it, and a COMMIT there
                // would answer OK for work that is lost: the session ends, and its old connection rolls it back.
                LOG.atWarn().addKeyValue("session", session.id()).addKeyValue("server", holder.server().address())
                        .log("session {}: the primary moved from {} to {} during the session's transaction; closing "
                                + "the session (the transaction is rolled back)", session.id(),
                                holder.server().address(), decision.server().hostPort());
                return Reply.close(SessionErrors.sessionEnded("Gantry: the primary moved from "
                        + holder.server().address() + " to " + decision.server().hostPort() + " during this "
                        + "transaction; it cannot go on and is rolled back; this session is closed, reconnect"));
            }
        }
        if (decision.target() == RouteTarget.PRIMARY && session.routeState().pinned()) {
            BackendConnection holder = backends.holding(true);
            if (holder != null && !session.serverId(holder.server()).equals(decision.server())) {
                String held = backends.describeHeld(holder);
                LOG.atWarn().addKeyValue("session", session.id()).addKeyValue("server", holder.server().address())
                        .log("session {}: the primary is now {}, but the session's {} are on {}; closing the session",
                                session.id(), decision.server().hostPort(), held, holder.server().address());
                return Reply.close(SessionErrors.sessionEnded("Gantry: the primary is now "
                        + decision.server().hostPort() + ", but this session's " + held + " stayed on "
                        + holder.server().address() + "; this session is closed, reconnect"));
            }
        }
        return null;
    }

    /**
     * Whether {@code statement} may run again elsewhere if its server stops answering before any of its answer
     * reached the client: a read, or a session setting (drivers send theirs as they connect), outside any
     * transaction and pin, changes nothing but the lost connection. Not one that calls a stored function, which
     * may write.
     */
    public boolean mayRunAgain(StatementClass statement) {
        SessionRouteState state = session.routeState();
        return (statement.kind() == StatementKind.READ || statement.kind() == StatementKind.SESSION_STATE)
                && !statement.has(StatementFlag.STORED_FUNCTION) && state.transaction() == TransactionState.NONE
                && state.autocommit() && !state.pinned();
    }
}
