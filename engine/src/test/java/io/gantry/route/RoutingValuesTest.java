package io.gantry.route;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RoutingValuesTest {

    private static final ServerId PRIMARY = new ServerId("db1:3306");
    private static final ServerId REPLICA = new ServerId("db2:3306");

    @Test
    void defaultsMatchTheDesign() {
        assertThat(RoutingConfig.DEFAULTS.masterPreferred()).isFalse();
        assertThat(RoutingConfig.DEFAULTS.readMasterPercentage()).isZero();
        assertThat(RoutingConfig.DEFAULTS.readBalance()).isEqualTo(ReadBalance.SESSION);
        assertThat(RoutingConfig.DEFAULTS.readFromFollowers()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, 101, Integer.MAX_VALUE})
    void readMasterPercentageOutsideZeroToHundredIsRejected(int percentage) {
        assertThatThrownBy(() -> RoutingConfig.DEFAULTS.withReadMasterPercentage(percentage))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--read-master-percentage")
                .hasMessageContaining("between 0 and 100")
                .hasMessageContaining("got " + percentage);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 50, 100})
    void readMasterPercentageInsideTheRangeIsAccepted(int percentage) {
        assertThat(RoutingConfig.DEFAULTS.withReadMasterPercentage(percentage).readMasterPercentage())
                .isEqualTo(percentage);
    }

    @Test
    void readBalanceParsesTheFlag() {
        assertThat(ReadBalance.fromFlag("session")).isEqualTo(ReadBalance.SESSION);
        assertThat(ReadBalance.fromFlag(" Statement ")).isEqualTo(ReadBalance.STATEMENT);
        assertThatThrownBy(() -> ReadBalance.fromFlag("random"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'session' or 'statement'").hasMessageContaining("'random'");
        assertThatThrownBy(() -> ReadBalance.fromFlag(null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void serverIdIsHostAndPort() {
        assertThat(ServerId.of("db1", 3306)).isEqualTo(new ServerId("db1:3306"));
        assertThat(ServerId.of("::1", 3306)).hasToString("[::1]:3306");
        assertThatThrownBy(() -> new ServerId(" ")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ServerId.of("db1", 0)).hasMessageContaining("got 0");
    }

    @Test
    void statementClassRequiresAFlavourExactlyForBegin() {
        assertThatThrownBy(() -> new StatementClass(StatementKind.READ, Optional.of(TransactionFlavor.READ_ONLY),
                Set.of(), ModeHint.NONE, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new StatementClass(StatementKind.TRANSACTION_BEGIN, Optional.empty(),
                Set.of(), ModeHint.NONE, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(StatementClass.begin(TransactionFlavor.READ_ONLY).beginsReadOnlyTransaction()).isTrue();
    }

    @Test
    void statementClassReportsTheMostTellingFlags() {
        StatementClass statement = StatementClass.of(StatementKind.WRITE, StatementFlag.SETS_USER_VARIABLES,
                StatementFlag.USER_LOCK, StatementFlag.USES_USER_VARIABLES);
        assertThat(statement.writeCause()).contains(StatementFlag.USER_LOCK);
        assertThat(statement.pinFlag()).contains(StatementFlag.USER_LOCK);
        assertThat(statement.firstFlag(StatementFlag.Effect.PRIMARY_ONLY_READ))
                .contains(StatementFlag.USES_USER_VARIABLES);
        assertThatThrownBy(() -> statement.flags().add(StatementFlag.LOCKING_READ))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void serverStatusSetsTheTransactionState() {
        SessionRouteState initial = SessionRouteState.INITIAL;
        assertThat(initial.withServerStatus(REPLICA, true, true, true).transaction())
                .isEqualTo(new TransactionState.ReadOnly(REPLICA));
        assertThat(initial.withServerStatus(PRIMARY, true, false, true).transaction())
                .isEqualTo(TransactionState.READ_WRITE);
        assertThat(initial.withServerStatus(PRIMARY, false, false, false))
                .extracting(SessionRouteState::transaction, SessionRouteState::autocommit)
                .containsExactly(TransactionState.NONE, false);
    }

    @Test
    void afterRoutingKeepsTheFirstPinAndRemembersChosenReplicasOnly() {
        RouteDecision pinByLock = new RouteDecision(RouteTarget.PRIMARY, PRIMARY, RouteReason.NOT_A_READ,
                Optional.of(StatementFlag.TABLE_LOCK), Optional.of(StatementFlag.TABLE_LOCK));
        RouteDecision pinByVariable = new RouteDecision(RouteTarget.PRIMARY, PRIMARY, RouteReason.NOT_A_READ,
                Optional.of(StatementFlag.SETS_USER_VARIABLES), Optional.of(StatementFlag.SETS_USER_VARIABLES));
        SessionRouteState pinned = SessionRouteState.INITIAL.afterRouting(pinByLock).afterRouting(pinByVariable);
        assertThat(pinned.pinnedBy()).contains(StatementFlag.TABLE_LOCK);
        assertThat(pinned.previousServer()).contains(PRIMARY);

        RouteDecision onReplica = new RouteDecision(RouteTarget.REPLICA, REPLICA, RouteReason.READ_ON_REPLICA,
                Optional.empty(), Optional.empty());
        RouteDecision followsPrevious = new RouteDecision(RouteTarget.PRIMARY, PRIMARY,
                RouteReason.FOLLOWS_PREVIOUS_STATEMENT, Optional.empty(), Optional.empty());
        SessionRouteState state = SessionRouteState.INITIAL.afterRouting(onReplica).afterRouting(followsPrevious);
        assertThat(state.sessionReplica()).contains(REPLICA);
        assertThat(state.previousServer()).contains(PRIMARY);
    }
}
