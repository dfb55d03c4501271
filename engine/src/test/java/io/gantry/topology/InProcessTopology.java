package io.gantry.topology;

import io.gantry.gtid.MariaDbGtidSet;
import io.gantry.gtid.SampledPosition;
import java.time.Clock;
import java.time.Instant;
import java.util.List;

/**
 * A primary and a replica as the health loop and the position sampler would leave them, without either running
 * (they need real servers): both up, roles known, the replica caught up. Lives in {@code topology} because those
 * loops' results are set through package-private methods.
 */
public final class InProcessTopology {

    private InProcessTopology() {
    }

    /** A health check found {@code server} not answering: it is down, and the proxy's sessions are told. */
    public static void confirmDown(Upstreams upstreams, UpstreamServer server, String reason) {
        upstreams.confirmDown(server, reason);
    }

    /** The two servers, up, with the first as the primary; positions sampled now. */
    public static Upstreams primaryAndReplica(UpstreamUrl primary, UpstreamUrl replica) {
        Upstreams upstreams = new Upstreams(List.of(primary, replica), Clock.systemUTC());
        List<UpstreamServer> servers = upstreams.servers();
        Instant now = Instant.now();
        servers.get(0).checkSucceeded(Role.PRIMARY, 100, 1000, now);
        servers.get(1).checkSucceeded(Role.REPLICA, 100, 1000, now);
        upstreams.install(servers, new Upstreams.PrimaryChoice(servers.get(0), ""), "benchmark topology");
        sampleNow(upstreams);
        return upstreams;
    }

    /**
     * A new position sample of every server, as the sampler takes every 250 ms: it settles what sessions read
     * before, and keeps the replica within the staleness bound.
     */
    public static void sampleNow(Upstreams upstreams) {
        Instant now = Instant.now();
        for (UpstreamServer server : upstreams.servers()) {
            server.positionSampled(new SampledPosition(MariaDbGtidSet.EMPTY, now, now), 0);
        }
    }
}
