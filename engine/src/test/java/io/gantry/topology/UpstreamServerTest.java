package io.gantry.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class UpstreamServerTest {

    private final UpstreamServer server = new UpstreamServer(UpstreamUrl.parse("mysql://svc:pw@10.0.0.2:3306/app"));

    private void checked(long rttMicros) {
        server.checkSucceeded(Role.REPLICA, rttMicros, 1_000, Instant.EPOCH);
    }

    @Test
    void theFirstCheckSetsTheSmoothedRoundTripAndEachNextOneMovesItByAnEighth() {
        assertThat(server.smoothedRttMicros()).isEqualTo(-1);
        assertThat(server.smoothedRttMillis()).isNull();

        checked(200);
        assertThat(server.smoothedRttMicros()).isEqualTo(200);
        checked(1_000);
        assertThat(server.smoothedRttMicros()).isEqualTo(300);
        assertThat(server.rttMicros()).as("the last check's own").isEqualTo(1_000);
        assertThat(server.smoothedRttMillis()).isEqualTo(0.3);
    }

    @Test
    void oneSlowPingMovesTheSmoothedRoundTripLittleAndALastingChangeShowsWithinRounds() {
        checked(200);
        checked(50_200);
        assertThat(server.smoothedRttMicros()).isEqualTo(6_450);
        for (int i = 0; i < 20; i++) {
            checked(200);
        }
        assertThat(server.smoothedRttMicros()).isLessThan(1_000);
        for (int i = 0; i < 20; i++) {
            checked(5_000);
        }
        assertThat(server.smoothedRttMicros()).isGreaterThan(4_500);
    }

    @Test
    void aServerBackFromDownStartsItsSmoothedRoundTripAfresh() {
        checked(200);
        server.markDown("connect refused", Instant.EPOCH);
        checked(5_000);
        assertThat(server.smoothedRttMicros()).isEqualTo(5_000);
    }
}
