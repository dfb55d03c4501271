package io.gantry.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import io.gantry.topology.UpstreamUrl;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

class FailoverPolicyTest {

    private static final UpstreamUrl A = server("a", 90);
    private static final UpstreamUrl B = server("b", 60);
    private static final UpstreamUrl C = server("c", 30);
    private static final List<UpstreamUrl> ABC = List.of(A, B, C);
    private static final Predicate<String> NONE_DOWN = address -> false;

    // ---- which server ----

    @Test
    void startsWithTheHighestWeightServerNotKnownToBeDown() {
        assertThat(new FailoverPolicy(1, "start").next(ABC, NONE_DOWN)).isEqualTo(A);
        assertThat(new FailoverPolicy(1, "start").next(ABC, Set.of("a:3306")::contains)).isEqualTo(B);
        assertThat(new FailoverPolicy(1, "start").next(ABC, address -> true)).as("all down: the first anyway")
                .isEqualTo(A);
    }

    @Test
    void retriesAFailedServerConnectRetriesTimesThenMovesToTheNext() {
        FailoverPolicy policy = new FailoverPolicy(2, "start");

        assertThat(policy.next(ABC, NONE_DOWN)).isEqualTo(A);
        assertThat(policy.failed(ABC, "refused", true))
                .isEqualTo(new FailoverPolicy.Retry(1, 2, FailoverPolicy.RETRY_PAUSE));
        assertThat(policy.next(ABC, NONE_DOWN)).isEqualTo(A);
        assertThat(policy.failed(ABC, "refused", true))
                .isEqualTo(new FailoverPolicy.Retry(2, 2, FailoverPolicy.RETRY_PAUSE));
        assertThat(policy.next(ABC, NONE_DOWN)).isEqualTo(A);
        assertThat(policy.failed(ABC, "refused", true)).isEqualTo(new FailoverPolicy.MoveOn(false, Duration.ZERO));
        assertThat(policy.next(ABC, NONE_DOWN)).isEqualTo(B);
        assertThat(policy.failed(ABC, "refused", true)).isInstanceOf(FailoverPolicy.Retry.class);
    }

    @Test
    void passesOverAServerThatCannotBeResumedFromWithoutRetries() {
        FailoverPolicy policy = new FailoverPolicy(3, "start");
        policy.next(ABC, NONE_DOWN);

        assertThat(policy.failed(ABC, "lacks transactions", false))
                .isEqualTo(new FailoverPolicy.MoveOn(false, Duration.ZERO));
        assertThat(policy.next(ABC, NONE_DOWN)).isEqualTo(B);
    }

    @Test
    void pausesForARoundWhenEveryServerHasFailedInARowThenWrapsAround() {
        FailoverPolicy policy = new FailoverPolicy(0, "start");

        for (UpstreamUrl expected : List.of(A, B)) {
            assertThat(policy.next(ABC, NONE_DOWN)).isEqualTo(expected);
            assertThat(policy.failed(ABC, "refused", true)).isEqualTo(new FailoverPolicy.MoveOn(false, Duration.ZERO));
        }
        assertThat(policy.next(ABC, NONE_DOWN)).isEqualTo(C);
        assertThat(policy.failed(ABC, "refused", true))
                .isEqualTo(new FailoverPolicy.MoveOn(true, FailoverPolicy.ROUND_PAUSE));
        assertThat(policy.next(ABC, NONE_DOWN)).isEqualTo(A);
        assertThat(policy.failed(ABC, "refused", true)).as("a new round").isEqualTo(
                new FailoverPolicy.MoveOn(false, Duration.ZERO));
    }

    @Test
    void aServerThatStreamedFailsAfreshWithItsOwnRetriesAndRound() {
        FailoverPolicy policy = new FailoverPolicy(1, "start");
        policy.next(ABC, NONE_DOWN);
        policy.failed(ABC, "refused", true);
        policy.next(ABC, NONE_DOWN);
        policy.failed(ABC, "refused", true); // A used its retry: moves to B
        assertThat(policy.next(ABC, NONE_DOWN)).isEqualTo(B);
        policy.streaming();

        assertThat(policy.failed(ABC, "reset", true)).isEqualTo(new FailoverPolicy.Retry(1, 1,
                FailoverPolicy.RETRY_PAUSE));
        assertThat(policy.next(ABC, NONE_DOWN)).isEqualTo(B);
        assertThat(policy.failed(ABC, "refused", true)).isEqualTo(new FailoverPolicy.MoveOn(false, Duration.ZERO));
        assertThat(policy.next(ABC, NONE_DOWN)).isEqualTo(C);
        // A's failure before B streamed no longer counts: C failing (its retry, then the move) is not a failed round.
        policy.failed(ABC, "refused", true);
        assertThat(policy.failed(ABC, "refused", true)).isEqualTo(new FailoverPolicy.MoveOn(false, Duration.ZERO));
        assertThat(policy.next(ABC, NONE_DOWN)).isEqualTo(A);
    }

    @Test
    void takesTheNextServerFromTheCurrentList() {
        FailoverPolicy policy = new FailoverPolicy(0, "start");
        policy.next(ABC, NONE_DOWN);
        policy.streaming();
        List<UpstreamUrl> withoutB = List.of(A, C);

        policy.failed(withoutB, "refused", true);

        assertThat(policy.next(withoutB, NONE_DOWN)).isEqualTo(C);
    }

    @Test
    void retriesTheServerByAddressEvenWhenItsWeightChanged() {
        FailoverPolicy policy = new FailoverPolicy(1, "start");
        policy.next(ABC, NONE_DOWN);
        policy.failed(ABC, "refused", true);

        assertThat(policy.next(List.of(B, A.withWeight(10)), NONE_DOWN)).isEqualTo(A.withWeight(10));
    }

    @Test
    void movesOnFromTheFailedServerNotBackToTheHighestWeight() {
        FailoverPolicy policy = new FailoverPolicy(0, "start");
        assertThat(policy.next(ABC, Set.of("a:3306")::contains)).isEqualTo(B);
        policy.streaming();

        policy.failed(ABC, "reset", true);

        assertThat(policy.next(ABC, NONE_DOWN)).as("A is up again, but no fail-back: C follows B").isEqualTo(C);
        policy.streaming();
        policy.failed(ABC, "reset", true);
        assertThat(policy.next(ABC, NONE_DOWN)).as("wrapping around").isEqualTo(A);
    }

    @Test
    void aRestartBeginsAtTheTopAgainAndForgetsFailures() {
        FailoverPolicy policy = new FailoverPolicy(0, "start");
        policy.next(ABC, NONE_DOWN);
        policy.failed(ABC, "refused", true);
        policy.next(ABC, NONE_DOWN);
        policy.failed(ABC, "refused", true);

        policy.restart("START GANTRY REPLICATION by 'admin'", true);

        assertThat(policy.next(ABC, NONE_DOWN)).isEqualTo(A);
        policy.failed(ABC, "refused", true);
        policy.next(ABC, NONE_DOWN);
        assertThat(policy.failed(ABC, "refused", true)).as("two failures since the restart, of three servers")
                .isEqualTo(new FailoverPolicy.MoveOn(false, Duration.ZERO));
    }

    @Test
    void refusesAnEmptyListAndNegativeRetries() {
        assertThatThrownBy(() -> new FailoverPolicy(0, "start").next(List.of(), NONE_DOWN))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new FailoverPolicy(-1, "start")).isInstanceOf(IllegalArgumentException.class);
    }

    // ---- what reaching a server means ----

    @Test
    void theFirstServerStreamedFromIsAStartWithItsReason() {
        FailoverPolicy policy = new FailoverPolicy(0, "Gantry started");
        policy.next(ABC, NONE_DOWN);

        assertThat(policy.streaming()).isEqualTo(new FailoverPolicy.FirstStart("Gantry started"));
    }

    @Test
    void aFailureBeforeTheFirstStreamIsPartOfTheStartsReason() {
        FailoverPolicy policy = new FailoverPolicy(0, "Gantry started");
        policy.next(ABC, NONE_DOWN);
        policy.failed(ABC, "Connection refused", true);
        policy.next(ABC, NONE_DOWN);

        assertThat(policy.streaming()).isEqualTo(
                new FailoverPolicy.FirstStart("Gantry started; then a:3306 failed: Connection refused"));
    }

    @Test
    void aMoveNamesEveryServerPassedOverSinceTheLastStream() {
        FailoverPolicy policy = new FailoverPolicy(0, "start");
        policy.next(ABC, NONE_DOWN);
        policy.streaming();
        policy.failed(ABC, "killed", true);
        policy.next(ABC, NONE_DOWN);
        policy.failed(ABC, "lacks transactions", false);
        assertThat(policy.next(ABC, NONE_DOWN)).isEqualTo(C);

        assertThat(policy.streaming()).isEqualTo(new FailoverPolicy.Moved("a:3306",
                "a:3306 failed: killed; then b:3306 failed: lacks transactions"));

        policy.failed(ABC, "killed", true);
        policy.next(ABC, NONE_DOWN);
        assertThat(policy.streaming()).as("the reason starts again after a stream")
                .isEqualTo(new FailoverPolicy.Moved("c:3306", "c:3306 failed: killed"));
    }

    @Test
    void streamingFromTheSameServerAgainIsAReconnectionUnlessAStartCommandAskedToBeAnnounced() {
        FailoverPolicy policy = new FailoverPolicy(1, "start");
        policy.next(ABC, NONE_DOWN);
        policy.streaming();
        policy.failed(ABC, "reset", true);
        policy.next(ABC, NONE_DOWN);
        assertThat(policy.streaming()).isEqualTo(new FailoverPolicy.Reconnected());

        policy.restart("ALTER GANTRY CHANGE CDC by 'admin'", false);
        policy.next(ABC, NONE_DOWN);
        assertThat(policy.streaming()).isEqualTo(new FailoverPolicy.Reconnected());

        policy.restart("START GANTRY REPLICATION by 'admin'", true);
        policy.next(ABC, NONE_DOWN);
        assertThat(policy.streaming()).isEqualTo(new FailoverPolicy.Restarted("START GANTRY REPLICATION by 'admin'"));

        policy.failed(ABC, "reset", true);
        policy.next(ABC, NONE_DOWN);
        assertThat(policy.streaming()).as("announced once").isEqualTo(new FailoverPolicy.Reconnected());
    }

    @Test
    void aStartCommandOnAnotherServerIsAMoveWithTheCommandAndTheFailuresAsReason() {
        FailoverPolicy policy = new FailoverPolicy(0, "start");
        policy.next(ABC, NONE_DOWN);
        policy.streaming();

        policy.restart("START GANTRY REPLICATION by 'admin'", true);
        policy.next(ABC, NONE_DOWN);
        policy.failed(ABC, "Connection refused", true);
        policy.next(ABC, NONE_DOWN);

        assertThat(policy.streaming()).isEqualTo(new FailoverPolicy.Moved("a:3306",
                "START GANTRY REPLICATION by 'admin'; then a:3306 failed: Connection refused"));
    }

    @Test
    void reportsASkippedServerOnceUntilTheStreamStreamsAgain() {
        FailoverPolicy policy = new FailoverPolicy(0, "start");

        assertThat(policy.firstSkipOf(B)).isTrue();
        assertThat(policy.firstSkipOf(B)).isFalse();
        assertThat(policy.firstSkipOf(C)).isTrue();
        policy.next(ABC, NONE_DOWN);
        policy.streaming();
        assertThat(policy.firstSkipOf(B)).isTrue();
    }

    // ---- from which position ----

    @Test
    void withNothingAppliedStartsAtTheServersCurrentPosition() {
        GtidSet current = GtidSet.parse("0-1-40", Flavour.MARIADB);

        assertThat(FailoverPolicy.resume("a:3306", Optional.empty(), GtidSet.parse("0-1-40", Flavour.MARIADB),
                current)).isEqualTo(new FailoverPolicy.From(current, true));
    }

    @Test
    void resumesFromTheAppliedPositionOnAServerThatHoldsIt() {
        GtidSet applied = GtidSet.parse("0-1-10", Flavour.MARIADB);

        assertThat(FailoverPolicy.resume("a:3306", Optional.of(applied), GtidSet.parse("0-1-12", Flavour.MARIADB),
                GtidSet.parse("0-1-12", Flavour.MARIADB))).isEqualTo(new FailoverPolicy.From(applied, false));
        GtidSet mysqlApplied = GtidSet.parse("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-10", Flavour.MYSQL);
        GtidSet mysqlHas = GtidSet.parse("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-12", Flavour.MYSQL);
        assertThat(FailoverPolicy.resume("a:3306", Optional.of(mysqlApplied), mysqlHas, mysqlHas))
                .isEqualTo(new FailoverPolicy.From(mysqlApplied, false));
    }

    @Test
    void refusesAServerThatLacksAppliedTransactions() {
        GtidSet applied = GtidSet.parse("0-1-10", Flavour.MARIADB);

        FailoverPolicy.Resume behind = FailoverPolicy.resume("b:3306", Optional.of(applied),
                GtidSet.parse("0-1-8", Flavour.MARIADB), GtidSet.parse("0-1-8", Flavour.MARIADB));
        // The domain went on with another server's transactions before reaching ours: contains() would accept it.
        FailoverPolicy.Resume diverged = FailoverPolicy.resume("c:3306", Optional.of(applied),
                GtidSet.parse("0-1-8,0-2-10", Flavour.MARIADB), GtidSet.parse("0-2-10", Flavour.MARIADB));
        FailoverPolicy.Resume mysqlGap = FailoverPolicy.resume("d:3306",
                Optional.of(GtidSet.parse("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-10", Flavour.MYSQL)),
                GtidSet.parse("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-4:6-12", Flavour.MYSQL),
                GtidSet.parse("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-4:6-12", Flavour.MYSQL));

        assertThat(behind).isEqualTo(new FailoverPolicy.Lacking("b:3306 lacks transactions the change stream "
                + "already applied (it has 0-1-8, applied 0-1-10); not resuming from it"));
        assertThat(diverged).isInstanceOf(FailoverPolicy.Lacking.class);
        assertThat(mysqlGap).isInstanceOf(FailoverPolicy.Lacking.class);
    }

    private static UpstreamUrl server(String host, int weight) {
        return new UpstreamUrl(host, 3306, "app", "gantry", "secret", weight);
    }
}
