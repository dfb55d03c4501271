package io.gantry.route;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The session's routing state moves on with each decision, and stays the same object when nothing changes. */
class SessionRouteStateTest {

    private static final ServerId PRIMARY = new ServerId("db1:3306");
    private static final ServerId REPLICA = new ServerId("db2:3306");
    private static final ServerId OTHER_REPLICA = new ServerId("db3:3306");

    @Test
    void aReadOnTheSameReplicaAgainChangesNothing() {
        SessionRouteState first = SessionRouteState.INITIAL.afterRouting(toReplica(REPLICA,
                RouteReason.READ_ON_REPLICA));
        assertThat(first.sessionReplica()).contains(REPLICA);
        assertThat(first.previousServer()).contains(REPLICA);
        assertThat(first.afterRouting(toReplica(REPLICA, RouteReason.READ_ON_SESSION_REPLICA))).isSameAs(first);
    }

    @Test
    void anotherServerOrAPinMovesTheStateOn() {
        SessionRouteState onReplica = SessionRouteState.INITIAL.afterRouting(toReplica(REPLICA,
                RouteReason.READ_ON_REPLICA));
        SessionRouteState onPrimary = onReplica.afterRouting(new RouteDecision(RouteTarget.PRIMARY, PRIMARY,
                RouteReason.NOT_A_READ, Optional.empty(), Optional.empty()));
        assertThat(onPrimary.previousServer()).contains(PRIMARY);
        assertThat(onPrimary.sessionReplica()).contains(REPLICA);
        SessionRouteState moved = onPrimary.afterRouting(toReplica(OTHER_REPLICA, RouteReason.READ_ON_REPLICA));
        assertThat(moved.sessionReplica()).contains(OTHER_REPLICA);
        SessionRouteState pinned = moved.afterRouting(new RouteDecision(RouteTarget.PRIMARY, PRIMARY,
                RouteReason.NOT_A_READ, Optional.empty(), Optional.of(StatementFlag.TEMPORARY_TABLE)));
        assertThat(pinned.pinnedBy()).contains(StatementFlag.TEMPORARY_TABLE);
        assertThat(pinned.afterRouting(new RouteDecision(RouteTarget.PRIMARY, PRIMARY, RouteReason.NOT_A_READ,
                Optional.empty(), Optional.empty()))).isSameAs(pinned);
    }

    @Test
    void aStatusThatChangesNothingKeepsTheState() {
        SessionRouteState state = SessionRouteState.INITIAL.afterRouting(toReplica(REPLICA,
                RouteReason.READ_ON_REPLICA));
        assertThat(state.withServerStatus(REPLICA, false, false, true)).isSameAs(state);
        SessionRouteState inTransaction = state.withServerStatus(REPLICA, true, true, true);
        assertThat(inTransaction.transaction()).isEqualTo(new TransactionState.ReadOnly(REPLICA));
        assertThat(inTransaction.withServerStatus(REPLICA, true, true, true)).isSameAs(inTransaction);
        assertThat(inTransaction.withServerStatus(REPLICA, false, false, false).autocommit()).isFalse();
    }

    private static RouteDecision toReplica(ServerId replica, RouteReason reason) {
        return new RouteDecision(RouteTarget.REPLICA, replica, reason, Optional.empty(), Optional.empty());
    }
}
