package io.gantry.route;

import static io.gantry.route.RouteReason.AUTOCOMMIT_OFF;
import static io.gantry.route.RouteReason.BEGINS_READ_WRITE_TRANSACTION;
import static io.gantry.route.RouteReason.FOLLOWER_READS_OFF;
import static io.gantry.route.RouteReason.FOLLOWS_PREVIOUS_STATEMENT;
import static io.gantry.route.RouteReason.HINT_READWRITE;
import static io.gantry.route.RouteReason.IN_READ_ONLY_TRANSACTION;
import static io.gantry.route.RouteReason.IN_READ_WRITE_TRANSACTION;
import static io.gantry.route.RouteReason.MASTER_PREFERRED;
import static io.gantry.route.RouteReason.NOT_A_READ;
import static io.gantry.route.RouteReason.NO_REPLICA_QUALIFIES;
import static io.gantry.route.RouteReason.NO_REPLICA_UP;
import static io.gantry.route.RouteReason.PRIMARY_ONLY_READ;
import static io.gantry.route.RouteReason.READ_MASTER_PERCENTAGE;
import static io.gantry.route.RouteReason.READ_ONLY_TRANSACTION_ON_REPLICA;
import static io.gantry.route.RouteReason.READ_ON_CLOSEST_REPLICA;
import static io.gantry.route.RouteReason.READ_ON_REPLICA;
import static io.gantry.route.RouteReason.READ_ON_SESSION_REPLICA;
import static io.gantry.route.RouteReason.SESSION_PINNED;
import static io.gantry.route.RouteReason.SESSION_STATE_CHANGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class RouterTest {

    private static final ServerId PRIMARY = new ServerId("db1:3306");
    private static final ServerId R1 = new ServerId("db2:3306");
    private static final ServerId R2 = new ServerId("db3:3306");

    private static final List<ReplicaCandidate> ONLY_R1_ELIGIBLE = List.of(
            new ReplicaCandidate(R1, 50, true, true), new ReplicaCandidate(R2, 50, false, true));
    private static final List<ReplicaCandidate> BOTH_ELIGIBLE = List.of(
            new ReplicaCandidate(R1, 50, true, true), new ReplicaCandidate(R2, 50, true, true));
    private static final List<ReplicaCandidate> ALL_DOWN = List.of(
            new ReplicaCandidate(R1, 50, false, true), new ReplicaCandidate(R2, 50, false, true));
    private static final List<ReplicaCandidate> NONE_QUALIFIES = List.of(
            new ReplicaCandidate(R1, 50, true, false), new ReplicaCandidate(R2, 50, false, true));

    private static final StatementClass READ = StatementClass.of(StatementKind.READ);
    private static final StatementClass WRITE = StatementClass.of(StatementKind.WRITE);
    private static final SessionRouteState FRESH = SessionRouteState.INITIAL;
    private static final RoutingConfig DEFAULTS = RoutingConfig.DEFAULTS;

    private final Router router = new Router(new SplittableRandom(7));

    /** One routing case: inputs and the expected target, server and reason. */
    private record Scenario(
            StatementClass statement, SessionRouteState session, RoutingConfig config,
            List<ReplicaCandidate> replicas, RouteTarget target, ServerId server, RouteReason reason,
            Optional<StatementFlag> cause) {
    }

    private static Arguments scenario(String name, StatementClass statement, SessionRouteState session,
            RoutingConfig config, List<ReplicaCandidate> replicas, RouteTarget target, ServerId server,
            RouteReason reason) {
        return scenario(name, statement, session, config, replicas, target, server, reason, null);
    }

    private static Arguments scenario(String name, StatementClass statement, SessionRouteState session,
            RoutingConfig config, List<ReplicaCandidate> replicas, RouteTarget target, ServerId server,
            RouteReason reason, StatementFlag cause) {
        return arguments(Named.of(name, new Scenario(statement, session, config, replicas, target, server, reason,
                Optional.ofNullable(cause))));
    }

    private static StatementClass hinted(StatementClass statement, ModeHint hint) {
        return statement.withHint(hint);
    }

    static Stream<Arguments> precedence() {
        RouteTarget p = RouteTarget.PRIMARY;
        RouteTarget r = RouteTarget.REPLICA;
        SessionRouteState inReadWrite = FRESH.withTransaction(TransactionState.READ_WRITE);
        SessionRouteState pinned = FRESH.withPin(StatementFlag.TEMPORARY_TABLE);
        SessionRouteState autocommitOff = FRESH.withAutocommit(false);
        StatementClass readOnlyHint = hinted(READ, ModeHint.READ_ONLY);
        StatementClass readWriteHint = hinted(READ, ModeHint.READ_WRITE);
        StatementClass beginReadOnly = StatementClass.begin(TransactionFlavor.READ_ONLY);
        RoutingConfig masterPreferred = DEFAULTS.withMasterPreferred(true);
        RoutingConfig allToMaster = DEFAULTS.withReadMasterPercentage(100);
        RoutingConfig noFollowers = DEFAULTS.withReadFromFollowers(false);
        return Stream.of(
                // rule 1
                scenario("write goes to the primary", WRITE, FRESH, DEFAULTS, ONLY_R1_ELIGIBLE, p, PRIMARY, NOT_A_READ),
                scenario("locking read goes to the primary with its cause",
                        StatementClass.of(StatementKind.WRITE, StatementFlag.LOCKING_READ), FRESH, DEFAULTS,
                        ONLY_R1_ELIGIBLE, p, PRIMARY, NOT_A_READ, StatementFlag.LOCKING_READ),
                scenario("READONLY hint cannot send a write to a replica", hinted(WRITE, ModeHint.READ_ONLY), FRESH,
                        DEFAULTS, ONLY_R1_ELIGIBLE, p, PRIMARY, NOT_A_READ),
                scenario("READONLY hint cannot send a locking read to a replica",
                        hinted(StatementClass.of(StatementKind.WRITE, StatementFlag.LOCKING_READ), ModeHint.READ_ONLY),
                        FRESH, DEFAULTS, ONLY_R1_ELIGIBLE, p, PRIMARY, NOT_A_READ, StatementFlag.LOCKING_READ),
                scenario("read inside a read-write transaction", READ, inReadWrite, DEFAULTS, ONLY_R1_ELIGIBLE, p,
                        PRIMARY, IN_READ_WRITE_TRANSACTION),
                scenario("READONLY hint cannot take a read out of a read-write transaction", readOnlyHint,
                        inReadWrite, DEFAULTS, ONLY_R1_ELIGIBLE, p, PRIMARY, IN_READ_WRITE_TRANSACTION),
                scenario("BEGIN goes to the primary", StatementClass.begin(TransactionFlavor.DEFAULT), FRESH, DEFAULTS,
                        ONLY_R1_ELIGIBLE, p, PRIMARY, BEGINS_READ_WRITE_TRANSACTION),
                scenario("READONLY hint cannot send a read-write BEGIN to a replica",
                        hinted(StatementClass.begin(TransactionFlavor.READ_WRITE), ModeHint.READ_ONLY), FRESH,
                        DEFAULTS, ONLY_R1_ELIGIBLE, p, PRIMARY, BEGINS_READ_WRITE_TRANSACTION),
                scenario("session-state change runs on the primary and is replayed",
                        StatementClass.of(StatementKind.SESSION_STATE), FRESH, DEFAULTS, ONLY_R1_ELIGIBLE, p, PRIMARY,
                        SESSION_STATE_CHANGE),
                scenario("COMMIT outside a read-only transaction", StatementClass.of(StatementKind.TRANSACTION_END),
                        FRESH, DEFAULTS, ONLY_R1_ELIGIBLE, p, PRIMARY, NOT_A_READ),
                scenario("SAVEPOINT outside a read-only transaction",
                        StatementClass.of(StatementKind.TRANSACTION_SAVEPOINT), FRESH, DEFAULTS, ONLY_R1_ELIGIBLE, p,
                        PRIMARY, NOT_A_READ),
                scenario("autocommit off keeps reads on the primary", READ, autocommitOff, DEFAULTS, ONLY_R1_ELIGIBLE,
                        p, PRIMARY, AUTOCOMMIT_OFF),
                scenario("READONLY hint cannot override autocommit off", readOnlyHint, autocommitOff, DEFAULTS,
                        ONLY_R1_ELIGIBLE, p, PRIMARY, AUTOCOMMIT_OFF),
                scenario("read-only BEGIN with autocommit off", beginReadOnly, autocommitOff, DEFAULTS,
                        ONLY_R1_ELIGIBLE, p, PRIMARY, AUTOCOMMIT_OFF),
                scenario("pinned session reads on the primary", READ, pinned, DEFAULTS, ONLY_R1_ELIGIBLE, p, PRIMARY,
                        SESSION_PINNED, StatementFlag.TEMPORARY_TABLE),
                scenario("READONLY hint cannot unpin a session", readOnlyHint, pinned, DEFAULTS, ONLY_R1_ELIGIBLE, p,
                        PRIMARY, SESSION_PINNED, StatementFlag.TEMPORARY_TABLE),
                scenario("write in a pinned session is reported as a write", WRITE, pinned, DEFAULTS,
                        ONLY_R1_ELIGIBLE, p, PRIMARY, NOT_A_READ),
                scenario("read of a user variable", StatementClass.of(StatementKind.READ,
                        StatementFlag.USES_USER_VARIABLES), FRESH, DEFAULTS, ONLY_R1_ELIGIBLE, p, PRIMARY,
                        PRIMARY_ONLY_READ, StatementFlag.USES_USER_VARIABLES),
                scenario("READONLY hint cannot send LAST_INSERT_ID() to a replica",
                        hinted(StatementClass.of(StatementKind.READ, StatementFlag.SESSION_FUNCTION),
                                ModeHint.READ_ONLY), FRESH, DEFAULTS, ONLY_R1_ELIGIBLE, p, PRIMARY, PRIMARY_ONLY_READ,
                        StatementFlag.SESSION_FUNCTION),
                // rule 2
                scenario("READWRITE hint", readWriteHint, FRESH, DEFAULTS, ONLY_R1_ELIGIBLE, p, PRIMARY,
                        HINT_READWRITE),
                scenario("READWRITE hint comes before master-preferred", readWriteHint, FRESH, masterPreferred,
                        ONLY_R1_ELIGIBLE, p, PRIMARY, HINT_READWRITE),
                scenario("READWRITE hint comes before no replica up", readWriteHint, FRESH, DEFAULTS, ALL_DOWN, p,
                        PRIMARY, HINT_READWRITE),
                // rule 3
                scenario("master-preferred", READ, FRESH, masterPreferred, ONLY_R1_ELIGIBLE, p, PRIMARY,
                        MASTER_PREFERRED),
                scenario("master-preferred comes before the percentage", READ, FRESH,
                        masterPreferred.withReadMasterPercentage(100), ONLY_R1_ELIGIBLE, p, PRIMARY, MASTER_PREFERRED),
                scenario("master-preferred comes before no replica up", READ, FRESH, masterPreferred, ALL_DOWN, p,
                        PRIMARY, MASTER_PREFERRED),
                scenario("READONLY hint skips master-preferred", readOnlyHint, FRESH, masterPreferred,
                        ONLY_R1_ELIGIBLE, r, R1, READ_ON_REPLICA),
                scenario("master-preferred keeps a read-only transaction on the primary", beginReadOnly, FRESH,
                        masterPreferred, ONLY_R1_ELIGIBLE, p, PRIMARY, MASTER_PREFERRED),
                scenario("READONLY hint places a read-only transaction on a replica despite master-preferred",
                        hinted(beginReadOnly, ModeHint.READ_ONLY), FRESH, masterPreferred, ONLY_R1_ELIGIBLE, r, R1,
                        READ_ONLY_TRANSACTION_ON_REPLICA),
                // rule 4
                scenario("percentage 100 sends every read to the primary", READ, FRESH, allToMaster,
                        ONLY_R1_ELIGIBLE, p, PRIMARY, READ_MASTER_PERCENTAGE),
                scenario("percentage comes before no replica up", READ, FRESH, allToMaster, ALL_DOWN, p, PRIMARY,
                        READ_MASTER_PERCENTAGE),
                scenario("READONLY hint skips the percentage draw", readOnlyHint, FRESH, allToMaster,
                        ONLY_R1_ELIGIBLE, r, R1, READ_ON_REPLICA),
                // rule 5
                scenario("follower reads off", READ, FRESH, noFollowers, ONLY_R1_ELIGIBLE, p, PRIMARY,
                        FOLLOWER_READS_OFF),
                scenario("READONLY hint cannot override follower reads off", readOnlyHint, FRESH, noFollowers,
                        ONLY_R1_ELIGIBLE, p, PRIMARY, FOLLOWER_READS_OFF),
                scenario("no replica configured", READ, FRESH, DEFAULTS, List.of(), p, PRIMARY, NO_REPLICA_UP),
                scenario("no replica up", READ, FRESH, DEFAULTS, ALL_DOWN, p, PRIMARY, NO_REPLICA_UP),
                scenario("READONLY hint cannot use a replica that is down", readOnlyHint, FRESH, masterPreferred,
                        ALL_DOWN, p, PRIMARY, NO_REPLICA_UP),
                scenario("no replica qualifies", READ, FRESH, DEFAULTS, NONE_QUALIFIES, p, PRIMARY,
                        NO_REPLICA_QUALIFIES),
                scenario("READONLY hint cannot use a replica that does not qualify", readOnlyHint, FRESH,
                        DEFAULTS, NONE_QUALIFIES, p, PRIMARY, NO_REPLICA_QUALIFIES),
                scenario("read-only transaction with no replica up", beginReadOnly, FRESH, DEFAULTS, ALL_DOWN, p,
                        PRIMARY, NO_REPLICA_UP),
                // replica choice
                scenario("plain read goes to a replica", READ, FRESH, DEFAULTS, ONLY_R1_ELIGIBLE, r, R1,
                        READ_ON_REPLICA),
                scenario("read never goes to a replica that does not qualify", READ, FRESH, DEFAULTS, List.of(
                        new ReplicaCandidate(R1, 100, true, false), new ReplicaCandidate(R2, 1, true, true)), r, R2,
                        READ_ON_REPLICA),
                scenario("read-only transaction is placed on a replica", beginReadOnly, FRESH, DEFAULTS,
                        ONLY_R1_ELIGIBLE, r, R1, READ_ONLY_TRANSACTION_ON_REPLICA));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("precedence")
    void rulesApplyInDesignOrder(Scenario s) {
        RouteDecision decision = router.route(s.statement(), s.session(), s.config(), PRIMARY, s.replicas());
        assertThat(decision.target()).as("target").isEqualTo(s.target());
        assertThat(decision.server()).as("server").isEqualTo(s.server());
        assertThat(decision.reason()).as("reason").isEqualTo(s.reason());
        if (s.cause().isPresent()) {
            assertThat(decision.cause()).as("cause").isEqualTo(s.cause());
        }
    }

    static Stream<Arguments> insideReadOnlyTransaction() {
        RouteTarget p = RouteTarget.PRIMARY;
        RouteTarget r = RouteTarget.REPLICA;
        SessionRouteState onR1 = FRESH.withTransaction(new TransactionState.ReadOnly(R1));
        SessionRouteState onPrimary = FRESH.withTransaction(new TransactionState.ReadOnly(PRIMARY));
        return Stream.of(
                scenario("read stays on the transaction's replica", READ, onR1, DEFAULTS, BOTH_ELIGIBLE, r, R1,
                        IN_READ_ONLY_TRANSACTION),
                scenario("master-preferred does not move the transaction", READ, onR1,
                        DEFAULTS.withMasterPreferred(true), BOTH_ELIGIBLE, r, R1, IN_READ_ONLY_TRANSACTION),
                scenario("READWRITE hint does not move the transaction", hinted(READ, ModeHint.READ_WRITE), onR1,
                        DEFAULTS, BOTH_ELIGIBLE, r, R1, IN_READ_ONLY_TRANSACTION),
                scenario("write on the transaction's replica is refused with 1792, not run outside it", WRITE, onR1,
                        DEFAULTS, BOTH_ELIGIBLE, r, R1, RouteReason.WRITE_IN_READ_ONLY_TRANSACTION),
                scenario("write in a read-only transaction on the primary goes there: the server refuses it", WRITE,
                        onPrimary, DEFAULTS, BOTH_ELIGIBLE, p, PRIMARY, IN_READ_ONLY_TRANSACTION),
                scenario("COMMIT ends the transaction where it runs", StatementClass.of(StatementKind.TRANSACTION_END),
                        onR1, DEFAULTS, BOTH_ELIGIBLE, r, R1, IN_READ_ONLY_TRANSACTION),
                scenario("ROLLBACK TO SAVEPOINT stays in the transaction",
                        StatementClass.of(StatementKind.TRANSACTION_SAVEPOINT), onR1, DEFAULTS, BOTH_ELIGIBLE, r, R1,
                        IN_READ_ONLY_TRANSACTION),
                scenario("the transaction does not move when its replica stops qualifying", READ, onR1, DEFAULTS,
                        List.of(new ReplicaCandidate(R1, 50, true, false), new ReplicaCandidate(R2, 50, true, true)),
                        r, R1, IN_READ_ONLY_TRANSACTION),
                scenario("the transaction does not move when its replica is down", READ, onR1, DEFAULTS, ALL_DOWN, r,
                        R1, IN_READ_ONLY_TRANSACTION),
                scenario("a new read-only BEGIN stays on the same replica",
                        StatementClass.begin(TransactionFlavor.READ_ONLY), onR1, DEFAULTS, BOTH_ELIGIBLE, r, R1,
                        IN_READ_ONLY_TRANSACTION),
                scenario("BEGIN of a transaction that may write leaves for the primary",
                        StatementClass.begin(TransactionFlavor.DEFAULT), onR1, DEFAULTS, BOTH_ELIGIBLE, p, PRIMARY,
                        BEGINS_READ_WRITE_TRANSACTION),
                scenario("read-only transaction on the primary stays there", READ, onPrimary, DEFAULTS, BOTH_ELIGIBLE,
                        p, PRIMARY, IN_READ_ONLY_TRANSACTION));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("insideReadOnlyTransaction")
    void readOnlyTransactionRunsEntirelyOnOneServer(Scenario s) {
        rulesApplyInDesignOrder(s);
    }

    static Stream<Arguments> fromSql() {
        return Stream.of(
                arguments("SELECT * FROM t", DEFAULTS, RouteTarget.REPLICA, READ_ON_REPLICA),
                arguments("SELECT * FROM t FOR UPDATE", DEFAULTS, RouteTarget.PRIMARY, NOT_A_READ),
                arguments("/*#mode=READONLY*/ INSERT INTO t VALUES (1)", DEFAULTS, RouteTarget.PRIMARY, NOT_A_READ),
                arguments("/*#mode=READONLY*/ SELECT GET_LOCK('a', 1)", DEFAULTS, RouteTarget.PRIMARY, NOT_A_READ),
                arguments("/*#mode=READONLY*/ SELECT * FROM t", DEFAULTS.withMasterPreferred(true),
                        RouteTarget.REPLICA, READ_ON_REPLICA),
                arguments("SELECT * FROM t /*#mode=READWRITE*/", DEFAULTS, RouteTarget.PRIMARY, HINT_READWRITE),
                arguments("SET NAMES utf8mb4", DEFAULTS, RouteTarget.PRIMARY, SESSION_STATE_CHANGE),
                arguments("START TRANSACTION READ ONLY", DEFAULTS, RouteTarget.REPLICA,
                        READ_ONLY_TRANSACTION_ON_REPLICA),
                arguments("START TRANSACTION", DEFAULTS, RouteTarget.PRIMARY, BEGINS_READ_WRITE_TRANSACTION),
                arguments("SELECT LAST_INSERT_ID()", DEFAULTS, RouteTarget.PRIMARY, PRIMARY_ONLY_READ),
                arguments("SHOW WARNINGS", DEFAULTS, RouteTarget.REPLICA, READ_ON_REPLICA),
                arguments("garbage", DEFAULTS, RouteTarget.PRIMARY, NOT_A_READ),
                arguments("", DEFAULTS, RouteTarget.PRIMARY, NOT_A_READ));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("fromSql")
    void classifiedSqlIsRouted(String sql, RoutingConfig config, RouteTarget target, RouteReason reason) {
        RouteDecision decision = router.route(StatementClassifier.classify(sql), FRESH, config, PRIMARY,
                ONLY_R1_ELIGIBLE);
        assertThat(decision.target()).isEqualTo(target);
        assertThat(decision.reason()).isEqualTo(reason);
    }

    @Test
    void percentageDrawPicksThePrimaryBelowTheThreshold() {
        RoutingConfig thirty = DEFAULTS.withReadMasterPercentage(30);
        assertThat(new Router(fixedInt(29)).route(READ, FRESH, thirty, PRIMARY, ONLY_R1_ELIGIBLE).reason())
                .isEqualTo(READ_MASTER_PERCENTAGE);
        assertThat(new Router(fixedInt(30)).route(READ, FRESH, thirty, PRIMARY, ONLY_R1_ELIGIBLE).reason())
                .isEqualTo(READ_ON_REPLICA);
    }

    @Test
    void percentageZeroNeverDraws() {
        RandomGenerator noIntDraws = new RandomGenerator() {
            @Override
            public long nextLong() {
                return 0;
            }

            @Override
            public int nextInt(int bound) {
                throw new AssertionError("the percentage draw must not run at 0");
            }
        };
        RouteDecision decision = new Router(noIntDraws).route(READ, FRESH, DEFAULTS, PRIMARY, ONLY_R1_ELIGIBLE);
        assertThat(decision.reason()).isEqualTo(READ_ON_REPLICA);
    }

    @Test
    void percentageSendsThatShareOfReadsToThePrimary() {
        Router seeded = new Router(new SplittableRandom(11));
        RoutingConfig quarter = DEFAULTS.withReadMasterPercentage(25).withReadBalance(ReadBalance.STATEMENT);
        int draws = 20_000;
        int toPrimary = 0;
        for (int i = 0; i < draws; i++) {
            if (seeded.route(READ, FRESH, quarter, PRIMARY, BOTH_ELIGIBLE).toPrimary()) {
                toPrimary++;
            }
        }
        assertThat(toPrimary / (double) draws).isBetween(0.23, 0.27);
    }

    @Test
    void sessionBalanceKeepsTheSessionReplicaWhileItQualifies() {
        SessionRouteState onR2 = FRESH.withSessionReplica(R2);
        for (int i = 0; i < 200; i++) {
            RouteDecision decision = router.route(READ, onR2, DEFAULTS, PRIMARY, BOTH_ELIGIBLE);
            assertThat(decision.server()).isEqualTo(R2);
            assertThat(decision.reason()).isEqualTo(READ_ON_SESSION_REPLICA);
        }
    }

    @Test
    void sessionBalancePicksAnotherReplicaWhenTheSessionReplicaStopsQualifyingOrGoesDown() {
        SessionRouteState onR2 = FRESH.withSessionReplica(R2);
        List<ReplicaCandidate> r2Stale = List.of(
                new ReplicaCandidate(R1, 50, true, true), new ReplicaCandidate(R2, 50, true, false));
        assertThat(router.route(READ, onR2, DEFAULTS, PRIMARY, r2Stale))
                .extracting(RouteDecision::server, RouteDecision::reason).containsExactly(R1, READ_ON_REPLICA);
        assertThat(router.route(READ, onR2, DEFAULTS, PRIMARY, ONLY_R1_ELIGIBLE))
                .extracting(RouteDecision::server, RouteDecision::reason).containsExactly(R1, READ_ON_REPLICA);
        assertThat(router.route(READ, FRESH.withSessionReplica(new ServerId("gone:3306")), DEFAULTS, PRIMARY,
                ONLY_R1_ELIGIBLE)).extracting(RouteDecision::server, RouteDecision::reason)
                .containsExactly(R1, READ_ON_REPLICA);
    }

    @Test
    void sessionBalanceKeepsTheSessionReplicaForAReadOnlyTransaction() {
        RouteDecision decision = router.route(StatementClass.begin(TransactionFlavor.READ_ONLY),
                FRESH.withSessionReplica(R2), DEFAULTS, PRIMARY, BOTH_ELIGIBLE);
        assertThat(decision.server()).isEqualTo(R2);
        assertThat(decision.reason()).isEqualTo(READ_ONLY_TRANSACTION_ON_REPLICA);
    }

    @Test
    void statementBalancePicksPerStatementByWeight() {
        Router seeded = new Router(new SplittableRandom(3));
        RoutingConfig perStatement = DEFAULTS.withReadBalance(ReadBalance.STATEMENT);
        List<ReplicaCandidate> weighted = List.of(
                new ReplicaCandidate(R1, 20, true, true), new ReplicaCandidate(R2, 80, true, true));
        SessionRouteState stickyToR1 = FRESH.withSessionReplica(R1);
        Map<ServerId, Integer> counts = new HashMap<>();
        int draws = 20_000;
        for (int i = 0; i < draws; i++) {
            RouteDecision decision = seeded.route(READ, stickyToR1, perStatement, PRIMARY, weighted);
            assertThat(decision.reason()).isEqualTo(READ_ON_REPLICA);
            counts.merge(decision.server(), 1, Integer::sum);
        }
        assertThat(counts.get(R2) / (double) draws).isBetween(0.78, 0.82);
    }

    @Test
    void closestPicksTheNearReplicaAndSaysSo() {
        RoutingConfig closest = DEFAULTS.withReplicaPreference(ReplicaPreference.WEIGHT.withClosest(true));
        List<ReplicaCandidate> farIsHeavier = List.of(
                new ReplicaCandidate(R1, 10, true, true, 200), new ReplicaCandidate(R2, 90, true, true, 5_000));
        for (int i = 0; i < 200; i++) {
            assertThat(router.route(READ, FRESH, closest, PRIMARY, farIsHeavier))
                    .extracting(RouteDecision::server, RouteDecision::reason)
                    .containsExactly(R1, READ_ON_CLOSEST_REPLICA);
        }
        assertThat(router.route(READ, FRESH, closest, PRIMARY, BOTH_ELIGIBLE).reason())
                .as("no round trip measured: by weight").isEqualTo(READ_ON_REPLICA);
    }

    @Test
    void closestMovesASessionOffItsReplicaOnceThatIsNoLongerClose() {
        RoutingConfig closest = DEFAULTS.withReplicaPreference(ReplicaPreference.WEIGHT.withClosest(true));
        List<ReplicaCandidate> r2Near = List.of(
                new ReplicaCandidate(R1, 50, true, true, 5_000), new ReplicaCandidate(R2, 50, true, true, 200));
        List<ReplicaCandidate> r2Far = List.of(
                new ReplicaCandidate(R1, 50, true, true, 200), new ReplicaCandidate(R2, 50, true, true, 5_000));
        SessionRouteState onR2 = FRESH.withSessionReplica(R2);

        assertThat(router.route(READ, onR2, closest, PRIMARY, r2Near))
                .extracting(RouteDecision::server, RouteDecision::reason).containsExactly(R2, READ_ON_SESSION_REPLICA);
        assertThat(router.route(READ, onR2, closest, PRIMARY, r2Far))
                .extracting(RouteDecision::server, RouteDecision::reason).containsExactly(R1, READ_ON_CLOSEST_REPLICA);
        assertThat(router.route(READ, onR2, DEFAULTS, PRIMARY, r2Far).server())
                .as("by weight the session keeps its replica").isEqualTo(R2);
    }

    @Test
    void diagnosticsFollowThePreviousStatementsServer() {
        StatementClass showWarnings = StatementClass.of(StatementKind.READ, StatementFlag.PREVIOUS_STATEMENT);
        RouteDecision onReplica = router.route(showWarnings, FRESH.withPreviousServer(R2),
                DEFAULTS.withMasterPreferred(true), PRIMARY, List.of(new ReplicaCandidate(R2, 50, true, false)));
        assertThat(onReplica).extracting(RouteDecision::target, RouteDecision::server, RouteDecision::reason)
                .containsExactly(RouteTarget.REPLICA, R2, FOLLOWS_PREVIOUS_STATEMENT);

        RouteDecision onPrimary = router.route(showWarnings, FRESH.withPreviousServer(PRIMARY), DEFAULTS, PRIMARY,
                BOTH_ELIGIBLE);
        assertThat(onPrimary).extracting(RouteDecision::target, RouteDecision::reason)
                .containsExactly(RouteTarget.PRIMARY, FOLLOWS_PREVIOUS_STATEMENT);

        RouteDecision previousGone = router.route(showWarnings, FRESH.withPreviousServer(R2), DEFAULTS, PRIMARY,
                ONLY_R1_ELIGIBLE);
        assertThat(previousGone).extracting(RouteDecision::server, RouteDecision::reason)
                .containsExactly(R1, READ_ON_REPLICA);

        RouteDecision firstStatement = router.route(showWarnings, FRESH, DEFAULTS, PRIMARY, ONLY_R1_ELIGIBLE);
        assertThat(firstStatement.reason()).isEqualTo(READ_ON_REPLICA);
    }

    @Test
    void pinningStatementPinsTheSessionForGood() {
        SessionRouteState session = FRESH;
        RouteDecision read = router.route(READ, session, DEFAULTS, PRIMARY, ONLY_R1_ELIGIBLE);
        session = session.afterRouting(read);
        assertThat(read.pinsSession()).isEmpty();
        assertThat(session.pinned()).isFalse();

        StatementClass createTemp = StatementClassifier.classify("CREATE TEMPORARY TABLE tmp (a INT)");
        RouteDecision create = router.route(createTemp, session, DEFAULTS, PRIMARY, ONLY_R1_ELIGIBLE);
        assertThat(create.toPrimary()).isTrue();
        assertThat(create.reason()).isEqualTo(NOT_A_READ);
        assertThat(create.cause()).contains(StatementFlag.TEMPORARY_TABLE);
        assertThat(create.pinsSession()).contains(StatementFlag.TEMPORARY_TABLE);
        session = session.afterRouting(create);

        StatementClass drop = StatementClassifier.classify("DROP TEMPORARY TABLE tmp");
        session = session.afterRouting(router.route(drop, session, DEFAULTS, PRIMARY, ONLY_R1_ELIGIBLE));
        for (String sql : List.of("SELECT * FROM tmp", "/*#mode=READONLY*/ SELECT 1", "SHOW TABLES")) {
            RouteDecision decision = router.route(StatementClassifier.classify(sql), session, DEFAULTS, PRIMARY,
                    ONLY_R1_ELIGIBLE);
            assertThat(decision.reason()).as(sql).isEqualTo(SESSION_PINNED);
            assertThat(decision.cause()).as(sql).contains(StatementFlag.TEMPORARY_TABLE);
            session = session.afterRouting(decision);
        }
    }

    @Test
    void sessionStateChangesDoNotPin() {
        StatementClass setNames = StatementClassifier.classify("SET NAMES utf8mb4");
        RouteDecision decision = router.route(setNames, FRESH, DEFAULTS, PRIMARY, ONLY_R1_ELIGIBLE);
        assertThat(decision.reason()).isEqualTo(SESSION_STATE_CHANGE);
        assertThat(decision.pinsSession()).isEmpty();
        assertThat(FRESH.afterRouting(decision).pinned()).isFalse();
    }

    @Test
    void readOnlyTransactionLifecycleStaysOnOneReplica() {
        SessionRouteState session = FRESH;
        RouteDecision begin = router.route(StatementClassifier.classify("START TRANSACTION READ ONLY"), session,
                DEFAULTS, PRIMARY, BOTH_ELIGIBLE);
        assertThat(begin.reason()).isEqualTo(READ_ONLY_TRANSACTION_ON_REPLICA);
        ServerId replica = begin.server();
        session = session.afterRouting(begin).withServerStatus(replica, true, true, true);

        for (String sql : List.of("SELECT * FROM t", "SELECT * FROM t FOR UPDATE", "INSERT INTO t VALUES (1)",
                "/*#mode=READWRITE*/ SELECT 1", "COMMIT")) {
            RouteDecision decision = router.route(StatementClassifier.classify(sql), session,
                    DEFAULTS.withMasterPreferred(true), PRIMARY, BOTH_ELIGIBLE);
            assertThat(decision.server()).as(sql).isEqualTo(replica);
            assertThat(decision.reason()).as(sql).isEqualTo(sql.startsWith("INSERT")
                    ? RouteReason.WRITE_IN_READ_ONLY_TRANSACTION : IN_READ_ONLY_TRANSACTION);
            session = session.afterRouting(decision);
        }
        session = session.withServerStatus(replica, false, false, true);
        assertThat(session.transaction()).isEqualTo(TransactionState.NONE);

        RouteDecision after = router.route(READ, session, DEFAULTS, PRIMARY, BOTH_ELIGIBLE);
        assertThat(after).extracting(RouteDecision::server, RouteDecision::reason)
                .containsExactly(replica, READ_ON_SESSION_REPLICA);
    }

    @Test
    void decisionDescribesItselfForLogs() {
        RouteDecision decision = router.route(StatementClassifier.classify("CREATE TEMPORARY TABLE t (a INT)"), FRESH,
                DEFAULTS, PRIMARY, ONLY_R1_ELIGIBLE);
        assertThat(decision).hasToString("PRIMARY db1:3306 NOT_A_READ(TEMPORARY_TABLE), pins session: TEMPORARY_TABLE");
        assertThat(router.route(READ, FRESH, DEFAULTS, PRIMARY, ONLY_R1_ELIGIBLE).describe())
                .isEqualTo("REPLICA db2:3306 READ_ON_REPLICA");
    }

    @Test
    void everyReasonHasARuleAndADescription() {
        for (RouteReason reason : RouteReason.values()) {
            assertThat(reason.rule()).as(reason.name()).isBetween(0, 7);
            assertThat(reason.description()).as(reason.name()).isNotBlank();
        }
        assertThat(READ_ON_REPLICA.choosesReplica()).isTrue();
        assertThat(NO_REPLICA_UP.choosesReplica()).isFalse();
        assertThat(RouteReason.CACHE_ACCOUNT_CHECK.choosesReplica()).as("a check moves no session").isFalse();
    }

    @Test
    void threadLocalRouterRoutes() {
        RouteDecision decision = Router.withThreadLocalRandom().route(READ, FRESH,
                DEFAULTS.withReadMasterPercentage(50), PRIMARY, BOTH_ELIGIBLE);
        assertThat(decision.reason()).isIn(READ_MASTER_PERCENTAGE, READ_ON_REPLICA);
    }

    private static RandomGenerator fixedInt(int value) {
        return new RandomGenerator() {
            @Override
            public long nextLong() {
                return 0;
            }

            @Override
            public int nextInt(int bound) {
                return value;
            }
        };
    }
}
