package io.gantry.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The health round's primary rule: the one writable server, never a guess between several. */
class PrimaryChoiceTest {

    private final UpstreamServer a = server("10.0.0.1:3306");
    private final UpstreamServer b = server("10.0.0.2:3306");
    private final UpstreamServer c = server("10.0.0.3:3306");

    @Test
    void theOneWritableServerIsThePrimary() {
        Upstreams.PrimaryChoice choice = HealthChecker.choosePrimary(results(
                probe(a, true, ""), probe(b, false, a.address()), probe(c, false, a.address())));
        assertThat(choice.primary()).isSameAs(a);
    }

    @Test
    void twoWritableServersAreNeverGuessedBetweenEvenWhenTheReplicasPointAtOne() {
        // The unsafe promotion: b made writable while a still is, and c still replicating from a.
        Upstreams.PrimaryChoice choice = HealthChecker.choosePrimary(results(
                probe(a, true, ""), probe(b, true, ""), probe(c, false, a.address())));
        assertThat(choice.primary()).isNull();
        assertThat(choice.reasonWhenNone()).contains("several servers are writable at once")
                .contains(a.address()).contains(b.address()).doesNotContain(c.address());
    }

    @Test
    void noWritableServerAndNoAnswerHaveTheirOwnReasons() {
        assertThat(HealthChecker.choosePrimary(results(probe(a, false, ""))).reasonWhenNone())
                .contains("no writable server");
        assertThat(HealthChecker.choosePrimary(Map.of()).reasonWhenNone()).contains("no server answers");
    }

    @Test
    void aServerThatRefusedTheCheckCountsWithWhatWasKnownOfIt() {
        HealthProbe refused = new HealthProbe(a, true, "", null, null, -1, -1, true);
        assertThat(HealthChecker.choosePrimary(results(refused, probe(b, false, a.address()))).primary())
                .isSameAs(a);
    }

    private static HealthProbe probe(UpstreamServer server, boolean writable, String source) {
        return new HealthProbe(server, writable, source, null, null, 100, 1000, false);
    }

    private static Map<UpstreamServer, HealthProbe> results(HealthProbe... probes) {
        Map<UpstreamServer, HealthProbe> results = new LinkedHashMap<>();
        for (HealthProbe probe : probes) {
            results.put(probe.server(), probe);
        }
        return results;
    }

    private static UpstreamServer server(String address) {
        return new UpstreamServer(UpstreamUrl.parse("mysql://app:app@" + address + "/app"));
    }
}
