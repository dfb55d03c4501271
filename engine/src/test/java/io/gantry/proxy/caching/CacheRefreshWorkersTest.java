package io.gantry.proxy.caching;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.topology.UpstreamServer;
import io.gantry.topology.UpstreamUrl;
import io.gantry.topology.Upstreams;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class CacheRefreshWorkersTest {

    @Test
    void aWorkerPicksAmongTheUpServersAtRandomWhateverTheirRoleOrWeight() {
        Upstreams upstreams = new Upstreams(List.of(new UpstreamUrl("10.0.0.1", 3306, "app", "u", "p", 100),
                new UpstreamUrl("10.0.0.2", 3306, "app", "u", "p", 1),
                new UpstreamUrl("10.0.0.3", 3306, "app", "u", "p", 50)), Clock.systemUTC());
        UpstreamServer down = upstreams.servers().get(2);
        upstreams.markDown(down, "killed");
        Random random = new Random(7);
        Map<String, Integer> picks = new HashMap<>();
        for (int i = 0; i < 1_000; i++) {
            picks.merge(CacheRefreshWorkers.pickUp(upstreams.servers(), random).orElseThrow().address(), 1,
                    Integer::sum);
        }
        assertThat(picks).containsOnlyKeys("10.0.0.1:3306", "10.0.0.2:3306");
        assertThat(picks.get("10.0.0.2:3306")).as("weight does not matter").isBetween(400, 600);
        upstreams.servers().forEach(server -> upstreams.markDown(server, "gone"));
        assertThat(CacheRefreshWorkers.pickUp(upstreams.servers(), random)).isEmpty();
    }
}
