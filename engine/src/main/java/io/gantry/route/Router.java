package io.gantry.route;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

/**
 * Decides where one statement runs: the primary or which replica, and why. Pure logic over values; the only state
 * is the random source.
 *
 * <p>The checks, in order (the first that applies decides):
 * <ol start="0">
 *   <li>Inside a read-only transaction, every statement runs where that transaction runs
 *       ({@link RouteReason#IN_READ_ONLY_TRANSACTION}), writes included: the server rejects them as MySQL does in a
 *       read-only transaction, where sending them to the primary would silently run them outside the transaction.
 *       A transaction never moves: if its replica is gone the decision still names it and the proxy fails the
 *       session. A write in a read-only transaction on a replica is refused
 *       ({@link RouteReason#WRITE_IN_READ_ONLY_TRANSACTION}) with the error the server gives inside a read-only
 *       transaction; on the primary the server itself refuses it. Only a {@code BEGIN} of a transaction that may write leaves it (it implicitly ends the read-only
 *       one): primary.</li>
 *   <li>Primary when the statement is not a read (write, DDL, {@code CALL}, locking read, begin of a transaction
 *       that may write, {@code COMMIT}/{@code ROLLBACK}/{@code SAVEPOINT} outside a read-only transaction,
 *       session-state change), when the session is in a read-write transaction or has autocommit off, when the
 *       session is pinned, or when the read needs the session's primary connection (user variables,
 *       {@code LAST_INSERT_ID()}, system variables, server status). Diagnostics of the previous statement
 *       ({@code SHOW WARNINGS}, {@code FOUND_ROWS()}) go to the server that ran it, if it is still up.</li>
 *   <li>Primary when the statement carries the {@code READWRITE} hint. The {@code READONLY} hint skips 3 and 4
 *       only.</li>
 *   <li>Primary when {@code masterPreferred}.</li>
 *   <li>Primary when the {@code readMasterPercentage} draw says so (no draw at 0 or 100).</li>
 *   <li>Primary when {@code readFromFollowers} is off, when no replica is up, or when no up replica qualifies.</li>
 *   <li>Otherwise a replica: under {@link ReadBalance#SESSION} the session's replica while it is up and qualifies
 *       (and, when the closest are preferred, is among them), else one picked by weight among those that are up and
 *       qualify ({@link WeightedChoice}), or among the closest of them ({@link ReplicaPreference}). A
 *       {@code START TRANSACTION READ ONLY} that gets here is placed on that replica, and the whole transaction
 *       stays there.</li>
 * </ol>
 *
 * <p>With autocommit off, even {@code START TRANSACTION READ ONLY} goes to the primary: an implicit transaction
 * would otherwise open on the replica after its {@code COMMIT}.
 *
 * <p>Thread safety: as safe as the random source. {@link #withThreadLocalRandom()} gives a router that any thread
 * may use.
 */
public final class Router {

    private static final RandomGenerator THREAD_LOCAL_RANDOM = () -> ThreadLocalRandom.current().nextLong();

    private final RandomGenerator random;

    /**
     * @param random the source for the percentage draw and the weighted choice; inject a seeded one in tests
     */
    public Router(RandomGenerator random) {
        this.random = Objects.requireNonNull(random, "random");
    }

    /** A router drawing from {@link ThreadLocalRandom} of the calling thread, safe to share between threads. */
    public static Router withThreadLocalRandom() {
        return new Router(THREAD_LOCAL_RANDOM);
    }

    /**
     * Routes one statement.
     *
     * @param statement the classified COM_QUERY text
     * @param session the session's current routing state
     * @param config the settings for this session
     * @param primary the current primary
     * @param replicas the replicas with their weight, health and qualification for this session
     */
    public RouteDecision route(StatementClass statement, SessionRouteState session, RoutingConfig config,
            ServerId primary, List<ReplicaCandidate> replicas) {
        Objects.requireNonNull(statement, "statement");
        Objects.requireNonNull(session, "session");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(primary, "primary");
        Objects.requireNonNull(replicas, "replicas");
        Optional<StatementFlag> pin = statement.pinFlag();

        // 0. A read-only transaction runs entirely on one server.
        if (session.transaction() instanceof TransactionState.ReadOnly readOnly) {
            if (statement.kind() == StatementKind.TRANSACTION_BEGIN && !statement.beginsReadOnlyTransaction()) {
                return toPrimary(primary, RouteReason.BEGINS_READ_WRITE_TRANSACTION, Optional.empty(), pin);
            }
            ServerId server = readOnly.server();
            RouteTarget target = server.equals(primary) ? RouteTarget.PRIMARY : RouteTarget.REPLICA;
            RouteReason reason = target == RouteTarget.REPLICA && changesData(statement)
                    ? RouteReason.WRITE_IN_READ_ONLY_TRANSACTION : RouteReason.IN_READ_ONLY_TRANSACTION;
            return RouteDecision.of(target, server, reason, statement.writeCause(), pin);
        }

        // 1. Not a read, or the session's state ties it to the primary.
        if (session.transaction() instanceof TransactionState.ReadWrite) {
            return toPrimary(primary, RouteReason.IN_READ_WRITE_TRANSACTION, statement.writeCause(), pin);
        }
        boolean beginReadOnly = false;
        switch (statement.kind()) {
            case WRITE:
                return toPrimary(primary, RouteReason.NOT_A_READ, statement.writeCause(), pin);
            case SESSION_STATE:
                return toPrimary(primary, RouteReason.SESSION_STATE_CHANGE, Optional.empty(), pin);
            case TRANSACTION_END:
            case TRANSACTION_SAVEPOINT:
                return toPrimary(primary, RouteReason.NOT_A_READ, Optional.empty(), pin);
            case TRANSACTION_BEGIN:
                if (!statement.beginsReadOnlyTransaction()) {
                    return toPrimary(primary, RouteReason.BEGINS_READ_WRITE_TRANSACTION, Optional.empty(), pin);
                }
                beginReadOnly = true;
                break;
            case READ:
            default:
                break;
        }
        if (!session.autocommit()) {
            return toPrimary(primary, RouteReason.AUTOCOMMIT_OFF, Optional.empty(), pin);
        }
        if (session.pinned()) {
            return toPrimary(primary, RouteReason.SESSION_PINNED, session.pinnedBy(), pin);
        }
        Optional<StatementFlag> primaryOnly = statement.firstFlag(StatementFlag.Effect.PRIMARY_ONLY_READ);
        if (primaryOnly.isPresent()) {
            return toPrimary(primary, RouteReason.PRIMARY_ONLY_READ, primaryOnly, pin);
        }
        if (statement.has(StatementFlag.PREVIOUS_STATEMENT) && session.previousServer().isPresent()) {
            Optional<RouteDecision> previous = previousServer(session.previousServer().get(), primary, replicas, pin);
            if (previous.isPresent()) {
                return previous.get();
            }
        }

        // 2. Hint READWRITE.
        ModeHint hint = statement.hint();
        if (hint == ModeHint.READ_WRITE) {
            return toPrimary(primary, RouteReason.HINT_READWRITE, Optional.empty(), pin);
        }

        // 3 and 4, skipped by the READONLY hint.
        if (hint != ModeHint.READ_ONLY) {
            if (config.masterPreferred()) {
                return toPrimary(primary, RouteReason.MASTER_PREFERRED, Optional.empty(), pin);
            }
            if (drawPicksPrimary(config.readMasterPercentage())) {
                return toPrimary(primary, RouteReason.READ_MASTER_PERCENTAGE, Optional.empty(), pin);
            }
        }

        // 5. Consistency requirements and availability.
        if (!config.readFromFollowers()) {
            return toPrimary(primary, RouteReason.FOLLOWER_READS_OFF, Optional.empty(), pin);
        }
        boolean anyUp = false;
        boolean anyEligible = false;
        for (int i = 0; i < replicas.size(); i++) {
            ReplicaCandidate candidate = replicas.get(i);
            anyUp |= candidate.up();
            anyEligible |= candidate.eligible();
        }
        if (!anyUp) {
            return toPrimary(primary, RouteReason.NO_REPLICA_UP, Optional.empty(), pin);
        }
        if (!anyEligible) {
            return toPrimary(primary, RouteReason.NO_REPLICA_QUALIFIES, Optional.empty(), pin);
        }

        // 6. A replica.
        ReplicaPreference preference = config.replicaPreference();
        long closestRoundTrip = preference.closestRoundTrip(replicas);
        if (config.readBalance() == ReadBalance.SESSION && session.sessionReplica().isPresent()) {
            ServerId kept = session.sessionReplica().get();
            for (int i = 0; i < replicas.size(); i++) {
                ReplicaCandidate candidate = replicas.get(i);
                if (candidate.id().equals(kept) && preference.admits(candidate, closestRoundTrip)) {
                    return toReplica(kept, beginReadOnly
                            ? RouteReason.READ_ONLY_TRANSACTION_ON_REPLICA : RouteReason.READ_ON_SESSION_REPLICA, pin);
                }
            }
        }
        ServerId chosen = preference.pick(replicas, random).orElseThrow().id();
        RouteReason reason = beginReadOnly ? RouteReason.READ_ONLY_TRANSACTION_ON_REPLICA
                : closestRoundTrip >= 0 ? RouteReason.READ_ON_CLOSEST_REPLICA : RouteReason.READ_ON_REPLICA;
        return toReplica(chosen, reason, pin);
    }

    /**
     * Whether the server would refuse the statement in a read-only transaction: a write by its verb (INSERT, DDL,
     * ...) or one that advances a sequence or loads data. Locking reads, named locks, temporary tables and user
     * variables are allowed there, so they go to the transaction's server like its reads.
     */
    private static boolean changesData(StatementClass statement) {
        if (statement.kind() != StatementKind.WRITE) {
            return false;
        }
        Optional<StatementFlag> cause = statement.writeCause();
        return cause.isEmpty() || cause.get() == StatementFlag.SEQUENCE || cause.get() == StatementFlag.LOAD_DATA;
    }

    private Optional<RouteDecision> previousServer(
            ServerId previous, ServerId primary, List<ReplicaCandidate> replicas, Optional<StatementFlag> pin) {
        if (previous.equals(primary)) {
            return Optional.of(toPrimary(primary, RouteReason.FOLLOWS_PREVIOUS_STATEMENT,
                    Optional.of(StatementFlag.PREVIOUS_STATEMENT), pin));
        }
        for (int i = 0; i < replicas.size(); i++) {
            ReplicaCandidate candidate = replicas.get(i);
            if (candidate.id().equals(previous) && candidate.up()) {
                return Optional.of(new RouteDecision(RouteTarget.REPLICA, previous,
                        RouteReason.FOLLOWS_PREVIOUS_STATEMENT, Optional.of(StatementFlag.PREVIOUS_STATEMENT), pin));
            }
        }
        // That server is gone, and with it the diagnostics: route like any other read.
        return Optional.empty();
    }

    private boolean drawPicksPrimary(int percentage) {
        if (percentage <= 0) {
            return false;
        }
        if (percentage >= 100) {
            return true;
        }
        return random.nextInt(100) < percentage;
    }

    private static RouteDecision toPrimary(
            ServerId primary, RouteReason reason, Optional<StatementFlag> cause, Optional<StatementFlag> pin) {
        return RouteDecision.of(RouteTarget.PRIMARY, primary, reason, cause, pin);
    }

    private static RouteDecision toReplica(ServerId replica, RouteReason reason, Optional<StatementFlag> pin) {
        return RouteDecision.of(RouteTarget.REPLICA, replica, reason, Optional.empty(), pin);
    }
}
