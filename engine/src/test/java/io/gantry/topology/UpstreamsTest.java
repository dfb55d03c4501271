package io.gantry.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.events.EngineEvent;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class UpstreamsTest {

    private final List<String> events = new ArrayList<>();
    private boolean recording;
    private Upstreams upstreams;
    private UpstreamServer primary;
    private UpstreamServer replica;

    @BeforeEach
    void twoServers() {
        upstreams = new Upstreams(List.of(UpstreamUrl.parse("mysql://svc:pw@10.0.0.1:3306/app"),
                UpstreamUrl.parse("mysql://svc:pw@10.0.0.2:3306/app")), Clock.systemUTC(), event -> {
                    if (recording && event instanceof EngineEvent.Timeline timeline) {
                        events.add(timeline.event().kind() + " " + timeline.event().server() + ": "
                                + timeline.event().reason());
                    }
                });
        primary = upstreams.servers().get(0);
        replica = upstreams.servers().get(1);
        upstreams.markChecked(primary, Role.PRIMARY, 100, 1000);
        upstreams.markChecked(replica, Role.REPLICA, 100, 1000);
        upstreams.setPrimary(primary, "");
        recording = true;
    }

    @Test
    void sessionsAreToldToLeaveAServerOnlyWhenAHealthCheckFindsItDownOncePerSpell() {
        List<String> told = new ArrayList<>();
        try (Upstreams.Listening listening = upstreams.onDown((server, reason) -> told.add(server.address()))) {
            upstreams.markDown(replica, "a session could not connect");
            assertThat(replica.isReachable()).as("new sessions pass it over").isFalse();
            assertThat(told).as("one session's failed connect cuts no other session's connection").isEmpty();

            upstreams.confirmDown(replica, "health check failed: connect and login did not finish within 1500 ms");
            upstreams.confirmDown(replica, "health check failed again");
            assertThat(told).containsExactly("10.0.0.2:3306");

            upstreams.markChecked(replica, Role.REPLICA, 100, 1000);
            upstreams.confirmDown(replica, "health check failed: frozen again");
            assertThat(told).containsExactly("10.0.0.2:3306", "10.0.0.2:3306");
        }
        upstreams.markChecked(replica, Role.REPLICA, 100, 1000);
        upstreams.confirmDown(replica, "after the listener left");
        assertThat(told).hasSize(2);
    }

    @Test
    void brokenReplicaAnswersButServesNoReadsAndItsRecoveryIsAnEvent() {
        upstreams.replicationChecked(replica, new ReplicationProblem(Health.BROKEN,
                "its SQL thread stopped with error 1062: Duplicate entry '1'"));
        assertThat(replica.health()).isEqualTo(Health.BROKEN);
        assertThat(replica.isUp()).isFalse();
        assertThat(replica.isReachable()).isTrue();
        assertThat(replica.healthReason())
                .isEqualTo("replica 10.0.0.2:3306 is broken: its SQL thread stopped with error 1062: Duplicate entry '1'");
        assertThat(upstreams.upReplicas()).isEmpty();

        // The same problem next round: no new event.
        upstreams.replicationChecked(replica, new ReplicationProblem(Health.BROKEN,
                "its SQL thread stopped with error 1062: Duplicate entry '1'"));
        upstreams.replicationChecked(replica, new ReplicationProblem(Health.DIVERGED, "it has executed ..."));
        upstreams.replicationChecked(replica, null);

        assertThat(replica.health()).isEqualTo(Health.UP);
        assertThat(upstreams.upReplicas()).containsExactly(replica);
        assertThat(events).containsExactly(
                "BROKEN 10.0.0.2:3306: replica 10.0.0.2:3306 is broken: its SQL thread stopped with error 1062: "
                        + "Duplicate entry '1'",
                "DIVERGED 10.0.0.2:3306: replica 10.0.0.2:3306 is diverged: it has executed ...",
                "UP 10.0.0.2:3306: replication is healthy again (was diverged: it has executed ...)");
    }

    @Test
    void downWinsOverBrokenAndTheProblemOutlivesTheOutage() {
        upstreams.replicationChecked(replica, new ReplicationProblem(Health.BROKEN, "its SQL thread stopped"));
        upstreams.markDown(replica, "health check failed: Connection refused");
        assertThat(replica.health()).isEqualTo(Health.DOWN);
        assertThat(replica.healthReason()).isEqualTo("health check failed: Connection refused");
        upstreams.markChecked(replica, Role.REPLICA, 100, 1000);
        assertThat(replica.health()).as("until a round finds its replication sound").isEqualTo(Health.BROKEN);
    }

    @Test
    void aListReplacedWithoutAHealthLoopKeepsThePrimaryThatStays() {
        upstreams.replace(List.of(primary.url(), UpstreamUrl.parse("mysql://svc:pw@10.0.0.3:3306/app")), "test");
        assertThat(upstreams.primary()).contains(primary);
        assertThat(upstreams.servers()).extracting(UpstreamServer::address)
                .containsExactly("10.0.0.1:3306", "10.0.0.3:3306");
    }
}
