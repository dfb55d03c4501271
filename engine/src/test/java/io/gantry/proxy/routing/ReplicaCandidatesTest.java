package io.gantry.proxy.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.route.ReplicaCandidate;
import io.gantry.route.ServerId;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReplicaCandidatesTest {

    private static final ServerId REPLICA1 = new ServerId("db2:3306");
    private static final ServerId REPLICA2 = new ServerId("db3:3306");

    private final ReplicaCandidates candidates = new ReplicaCandidates();

    private List<ReplicaCandidate> statement(Object... replicas) {
        candidates.start();
        for (int i = 0; i < replicas.length; i += 4) {
            candidates.add((ServerId) replicas[i], (Integer) replicas[i + 1], (Boolean) replicas[i + 2],
                    (Boolean) replicas[i + 3], -1);
        }
        return candidates.list();
    }

    @Test
    void theSameReplicasGiveTheSameList() {
        List<ReplicaCandidate> first = statement(REPLICA1, 50, true, true, REPLICA2, 30, true, true);
        List<ReplicaCandidate> second = statement(REPLICA1, 50, true, true, REPLICA2, 30, true, true);

        assertThat(second).isSameAs(first).containsExactly(new ReplicaCandidate(REPLICA1, 50, true, true),
                new ReplicaCandidate(REPLICA2, 30, true, true));
    }

    @Test
    void anyChangeGivesANewListWithTheChange() {
        List<ReplicaCandidate> first = statement(REPLICA1, 50, true, true, REPLICA2, 30, true, true);

        assertThat(statement(REPLICA1, 50, true, true, REPLICA2, 90, true, true)).isNotSameAs(first)
                .containsExactly(new ReplicaCandidate(REPLICA1, 50, true, true),
                        new ReplicaCandidate(REPLICA2, 90, true, true));
        assertThat(statement(REPLICA1, 50, false, true, REPLICA2, 90, true, true).get(0).up()).isFalse();
        assertThat(statement(REPLICA1, 50, false, false, REPLICA2, 90, true, true).get(0).qualifies()).isFalse();
        assertThat(statement(REPLICA2, 90, true, true, REPLICA1, 50, false, false))
                .extracting(ReplicaCandidate::id).containsExactly(REPLICA2, REPLICA1);
    }

    @Test
    void aNewSmoothedRoundTripGivesANewList() {
        candidates.start();
        candidates.add(REPLICA1, 50, true, true, 200);
        List<ReplicaCandidate> first = candidates.list();
        candidates.start();
        candidates.add(REPLICA1, 50, true, true, 5_000);

        assertThat(candidates.list()).isNotSameAs(first)
                .containsExactly(new ReplicaCandidate(REPLICA1, 50, true, true, 5_000));
    }

    @Test
    void fewerOrMoreReplicasGiveAListOfTheirOwnSize() {
        statement(REPLICA1, 50, true, true, REPLICA2, 30, true, true);

        assertThat(statement(REPLICA1, 50, true, true)).containsExactly(new ReplicaCandidate(REPLICA1, 50, true, true));
        assertThat(statement()).isEmpty();
        assertThat(statement(REPLICA1, 50, true, true, REPLICA2, 30, true, true)).hasSize(2);
    }
}
