package io.gantry.route;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The records routing shares between statements instead of making one per statement: shared only when equal. */
class SharedRoutingValuesTest {

    private static final ServerId PRIMARY = new ServerId("shared-db1:3306");
    private static final ServerId REPLICA = new ServerId("shared-db2:3306");

    @Test
    void aPlainDecisionIsSharedPerServerTargetAndReason() {
        RouteDecision first = RouteDecision.of(RouteTarget.REPLICA, REPLICA, RouteReason.READ_ON_REPLICA,
                Optional.empty(), Optional.empty());
        RouteDecision again = RouteDecision.of(RouteTarget.REPLICA, new ServerId("shared-db2:3306"),
                RouteReason.READ_ON_REPLICA, Optional.empty(), Optional.empty());

        assertThat(again).isSameAs(first);
        assertThat(first).isEqualTo(new RouteDecision(RouteTarget.REPLICA, REPLICA, RouteReason.READ_ON_REPLICA,
                Optional.empty(), Optional.empty()));
    }

    @Test
    void decisionsThatDifferInAnyPartAreDistinct() {
        RouteDecision replicaRead = RouteDecision.of(RouteTarget.REPLICA, REPLICA, RouteReason.READ_ON_REPLICA,
                Optional.empty(), Optional.empty());
        RouteDecision otherReason = RouteDecision.of(RouteTarget.REPLICA, REPLICA, RouteReason.READ_ON_SESSION_REPLICA,
                Optional.empty(), Optional.empty());
        RouteDecision otherTarget = RouteDecision.of(RouteTarget.PRIMARY, REPLICA, RouteReason.READ_ON_REPLICA,
                Optional.empty(), Optional.empty());
        RouteDecision otherServer = RouteDecision.of(RouteTarget.REPLICA, PRIMARY, RouteReason.READ_ON_REPLICA,
                Optional.empty(), Optional.empty());

        assertThat(otherReason).isNotEqualTo(replicaRead);
        assertThat(otherReason.reason()).isEqualTo(RouteReason.READ_ON_SESSION_REPLICA);
        assertThat(otherTarget).isNotEqualTo(replicaRead);
        assertThat(otherTarget.target()).isEqualTo(RouteTarget.PRIMARY);
        assertThat(otherServer).isNotEqualTo(replicaRead);
        assertThat(otherServer.server()).isEqualTo(PRIMARY);
        assertThat(replicaRead.server()).isEqualTo(REPLICA);
    }

    @Test
    void aDecisionWithACauseOrAPinIsItsOwn() {
        RouteDecision pinned = RouteDecision.of(RouteTarget.PRIMARY, PRIMARY, RouteReason.NOT_A_READ,
                Optional.empty(), Optional.of(StatementFlag.TEMPORARY_TABLE));
        RouteDecision caused = RouteDecision.of(RouteTarget.PRIMARY, PRIMARY, RouteReason.NOT_A_READ,
                Optional.of(StatementFlag.LOCKING_READ), Optional.empty());
        RouteDecision plain = RouteDecision.of(RouteTarget.PRIMARY, PRIMARY, RouteReason.NOT_A_READ,
                Optional.empty(), Optional.empty());

        assertThat(pinned.pinsSession()).contains(StatementFlag.TEMPORARY_TABLE);
        assertThat(caused.cause()).contains(StatementFlag.LOCKING_READ);
        assertThat(plain.cause()).isEmpty();
        assertThat(plain.pinsSession()).isEmpty();
        assertThat(RouteDecision.of(RouteTarget.PRIMARY, PRIMARY, RouteReason.NOT_A_READ, Optional.empty(),
                Optional.of(StatementFlag.TEMPORARY_TABLE))).isNotSameAs(pinned).isEqualTo(pinned);
    }

    @Test
    void plainStatementsShareTheirClassAndOthersDoNot() {
        StatementClass read = StatementClassifier.classify("SELECT c FROM sbtest1 WHERE id=5021");
        StatementClass otherRead = StatementClassifier.classify("select 1");
        StatementClass write = StatementClassifier.classify("UPDATE t SET a = 1");

        assertThat(otherRead).isSameAs(read);
        assertThat(read).isEqualTo(StatementClass.of(StatementKind.READ));
        assertThat(write).isSameAs(StatementClassifier.classify("DELETE FROM t")).isEqualTo(
                StatementClass.of(StatementKind.WRITE));
        // A flag, a hint, a second statement or a transaction's flavour each make a class of their own.
        StatementClass locking = StatementClassifier.classify("SELECT * FROM t FOR UPDATE");
        assertThat(locking.kind()).isEqualTo(StatementKind.WRITE);
        assertThat(locking.flags()).isNotEmpty();
        assertThat(locking).isNotEqualTo(write);
        StatementClass hinted = StatementClassifier.classify("/*#mode=READWRITE*/ SELECT 1");
        assertThat(hinted.hint()).isEqualTo(ModeHint.READ_WRITE);
        assertThat(hinted).isNotEqualTo(read);
        StatementClass two = StatementClassifier.classify("SELECT 1; SELECT 2");
        assertThat(two.statementCount()).isEqualTo(2);
        assertThat(two).isNotEqualTo(read);
        assertThat(StatementClassifier.classify("START TRANSACTION READ ONLY").beginsReadOnlyTransaction()).isTrue();
        assertThat(StatementClassifier.classify("BEGIN").beginFlavor()).contains(TransactionFlavor.DEFAULT);
        assertThat(StatementClass.plain(StatementKind.READ)).isSameAs(read);
    }
}
