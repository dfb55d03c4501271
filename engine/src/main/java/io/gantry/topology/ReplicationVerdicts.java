package io.gantry.topology;

import io.gantry.gtid.GtidSet;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * After a health round: each replica judged broken (its replication stopped with an error), diverged (it holds
 * transactions the primary lacks: errant GTIDs) or sound, on {@link Upstreams}.
 */
final class ReplicationVerdicts {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicationVerdicts.class);

    private final Upstreams upstreams;
    /** A server's kept health-check connection, free once the round's probes are done; null when none is open. */
    private final Function<UpstreamServer, Connection> keptConnection;

    ReplicationVerdicts(Upstreams upstreams, Function<UpstreamServer, Connection> keptConnection) {
        this.upstreams = upstreams;
        this.keptConnection = keptConnection;
    }

    /**
     * Marks each replica broken, diverged or sound. Divergence is judged against a primary sample taken after the
     * replica's: the round's own primary sample may be older than a replica's (they are read in parallel, and a
     * replica can apply a write the primary made in between), so a replica it does not contain is compared again
     * with a fresh sample of the primary, read after every probe of the round has finished. Only a replica the
     * fresh sample does not contain holds transactions the primary lacks.
     */
    void judge(Map<UpstreamServer, HealthProbe> results) {
        UpstreamServer primary = upstreams.primary().orElse(null);
        HealthProbe primaryProbe = primary == null ? null : results.get(primary);
        FreshPrimary fresh = new FreshPrimary(primary, primaryProbe);
        for (HealthProbe probe : results.values()) {
            UpstreamServer server = probe.server();
            if (server == primary || probe.writable() || probe.refused()) {
                upstreams.replicationChecked(server, null);
                continue;
            }
            if (probe.brokenBecause() != null) {
                upstreams.replicationChecked(server, new ReplicationProblem(Health.BROKEN, probe.brokenBecause()));
                continue;
            }
            upstreams.replicationChecked(server, divergence(probe, primaryProbe, fresh));
        }
    }

    /**
     * {@link Health#DIVERGED} when the replica holds transactions the primary lacks, null when it does not. When it
     * cannot be told (no primary, a position that cannot be read), a replica known diverged stays so until it is
     * shown sound, and any other is taken as sound.
     */
    private static ReplicationProblem divergence(HealthProbe replica, HealthProbe primaryProbe, FreshPrimary fresh) {
        ReplicationProblem known = replica.server().replicationProblem();
        ReplicationProblem unknown = known != null && known.health() == Health.DIVERGED ? known : null;
        if (primaryProbe == null || primaryProbe.position() == null || replica.position() == null
                || replica.position().flavour() != primaryProbe.position().flavour()) {
            return unknown;
        }
        if (primaryProbe.position().contains(replica.position())) {
            return null;
        }
        GtidSet later = fresh.get();
        if (later == null) {
            return unknown;
        }
        if (later.contains(replica.position())) {
            return null;
        }
        return new ReplicationProblem(Health.DIVERGED, "it has executed transactions the primary "
                + primaryProbe.server().address() + " lacks (errant GTIDs; the replica is at " + replica.position()
                + ", the primary at " + later + ")");
    }

    /** The primary's executed set read once, lazily, after the round's probes; null if it cannot be read. */
    private final class FreshPrimary {
        private final UpstreamServer primary;
        private final HealthProbe probe;
        private boolean read;
        private GtidSet position;

        FreshPrimary(UpstreamServer primary, HealthProbe probe) {
            this.primary = primary;
            this.probe = probe;
        }

        GtidSet get() {
            if (!read) {
                read = true;
                Connection connection = keptConnection.apply(primary);
                if (connection != null) {
                    try (Statement statement = connection.createStatement()) {
                        position = HealthProbes.position(statement, probe.position().flavour(), primary);
                    } catch (SQLException e) {
                        LOG.debug("topology: cannot sample the primary {} again: {}", primary.address(),
                                e.toString());
                    }
                }
            }
            return position;
        }
    }
}
