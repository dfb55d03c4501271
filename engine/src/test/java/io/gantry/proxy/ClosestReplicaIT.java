package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.DelayingRelay;
import io.gantry.TopologyKinds;
import io.gantry.proxy.ProxyHarness.Driver;
import io.gantry.route.ReadBalance;
import io.gantry.route.ReadGuarantees;
import io.gantry.route.ReplicaPreference;
import io.gantry.route.RoutingConfig;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.UpstreamUrl;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --follower-reads-prefer} against real servers: one replica reached directly (a loopback round trip, about
 * 0.2 ms), the other through a {@link DelayingRelay} that holds each chunk 2.5 ms each way (about 5 ms). The far one
 * has four times the near one's weight, so that only the preference can send reads to the near one. Each session's
 * first read on a replica is its replica choice (session balance): a read that went to the primary instead (right
 * after the driver's own connect-time reads, monotonic reads allow only the primary until the next position sample)
 * did not qualify for a replica and is tried again.
 */
class ClosestReplicaIT {

    private static final Logger LOG = LoggerFactory.getLogger(ClosestReplicaIT.class);
    private static final Duration DELAY_EACH_WAY = Duration.ofMillis(5).dividedBy(2);
    private static final int NEAR_WEIGHT = 20;
    private static final int FAR_WEIGHT = 80;
    private static final int SESSIONS = 200;

    private static Topology topology;
    private static DatabaseServer near;
    private static DatabaseServer far;
    private static DelayingRelay relay;

    @BeforeAll
    static void relayInFrontOfOneReplica() throws IOException {
        topology = TopologyKinds.shared(TopologyKind.MARIADB);
        near = topology.replicas().get(0);
        far = topology.replicas().get(1);
        relay = DelayingRelay.start(far.host(), far.port(), DELAY_EACH_WAY);
    }

    @AfterAll
    static void closeRelay() throws IOException {
        if (relay != null) {
            relay.close();
        }
    }

    @Test
    void closestSendsAtLeastNinetyFivePercentOfQualifyingReadsToTheNearReplica() throws SQLException {
        try (ProxyHarness gantry = start(true)) {
            long onNear = replicaChoices(gantry, "closest");
            assertThat(onNear).isGreaterThanOrEqualTo(SESSIONS * 95L / 100);
        }
    }

    @Test
    void weightSplitsQualifyingReadsByTheWeightsWhateverTheRoundTrips() throws SQLException {
        try (ProxyHarness gantry = start(false)) {
            long onNear = replicaChoices(gantry, "weight");
            // 20 % expected: 40 of 200, with a standard deviation of 5.7; the bounds are five of them away.
            assertThat(onNear).isBetween(12L, 68L);
        }
    }

    /** A Gantry in front of the primary, the near replica directly and the far one through the relay. */
    private static ProxyHarness start(boolean closest) {
        ProxyHarness gantry = ProxyHarness.start(topology,
                config -> config.withRouting(new RoutingConfig(false, 0, ReadBalance.SESSION, true,
                                ReplicaPreference.WEIGHT.withClosest(closest)))
                        // Samples every 20 ms: a new session's first read waits for one before a replica qualifies.
                        .withReadGuarantees(new ReadGuarantees(true, Duration.ZERO, Duration.ofSeconds(60),
                                Duration.ofMillis(20))),
                urls -> urls.stream().map(url -> url.port() == near.port() ? url.withWeight(NEAR_WEIGHT)
                        : url.port() == far.port() ? new UpstreamUrl(relay.host(), relay.port(), url.database(),
                        url.user(), url.password(), FAR_WEIGHT) : url).toList(),
                event -> { }, Duration.ofMillis(250));
        // Both replicas' round trips are measured before the first read, as they are a few rounds after a start.
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> gantry.proxy.upstreams().servers().stream()
                .allMatch(server -> server.smoothedRttMicros() >= 0));
        return gantry;
    }

    /** How many of {@link #SESSIONS} new sessions chose the near replica; logs the figures. */
    private static long replicaChoices(ProxyHarness gantry, String preference) throws SQLException {
        long onNear = 0;
        long onFar = 0;
        long onPrimary = 0;
        for (int i = 0; i < SESSIONS; i++) {
            try (Connection connection = gantry.connect(Driver.MARIADB_CONNECTOR_J)) {
                DatabaseServer server = gantry.whereRuns(connection, "SELECT @@server_id");
                while (server.equals(topology.primary())) {
                    onPrimary++;
                    sleep(5);
                    server = gantry.whereRuns(connection, "SELECT @@server_id");
                }
                if (server.equals(near)) {
                    onNear++;
                } else {
                    onFar++;
                }
            }
        }
        List<UpstreamServer> servers = gantry.proxy.upstreams().servers();
        LOG.info("{}: of {} sessions' replica choices {} went to the near replica ({} %) and {} to the far one; "
                        + "{} reads went to the primary before a replica qualified; smoothed round trips: {}",
                preference, SESSIONS, onNear, onNear * 100 / SESSIONS, onFar, onPrimary,
                servers.stream().map(s -> s.address() + " " + s.smoothedRttMillis() + " ms").toList());
        assertThat(onNear + onFar).isEqualTo(SESSIONS);
        return onNear;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
