package io.gantry;

import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The topologies of one test class, one per flavour and number of replicas, started by the first test that asks
 * for it and shared by the others: starting servers (MySQL's above all, 3-4 s each) cost more than many of the
 * tests themselves. Hold it in a static field; call {@link #restore} after each test and {@link #close} after all.
 * A test that promotes a replica leaves the promoted server as the primary: tests find the servers through
 * {@link Topology#primary()} and {@link Topology#replicas()}, never by name.
 */
public final class ClassTopologies implements AutoCloseable {

    private final String name;
    private final Map<String, Topology> started = new LinkedHashMap<>();

    /** @param name the directory prefix of the class's servers */
    public ClassTopologies(String name) {
        this.name = name;
    }

    /** The class's topology of this kind with this many replicas, started on first use; skipped where unavailable. */
    public synchronized Topology get(TopologyKind kind, int replicas) {
        TopologyKinds.assumeAvailable(kind);
        return started.computeIfAbsent(kind + "/" + replicas,
                key -> TopologyKinds.startPrivate(kind, name + "-" + replicas, replicas));
    }

    /**
     * Undoes what a test may have left: every server running (a test thaws what it froze itself), every replica
     * read-only, replicating and caught up.
     */
    public synchronized void restore() {
        for (Topology topology : started.values()) {
            for (DatabaseServer server : topology.servers()) {
                if (!server.isRunning()) {
                    topology.start(server);
                }
            }
            for (DatabaseServer replica : topology.replicas()) {
                try (Connection root = topology.connectAsAdmin(replica);
                     Statement statement = root.createStatement()) {
                    statement.execute("SET GLOBAL read_only = ON");
                } catch (SQLException e) {
                    throw new IllegalStateException(replica.name() + ": cannot make it read-only again", e);
                }
                topology.resumeReplication(replica);
            }
            topology.awaitReplicasCaughtUp(Duration.ofSeconds(30));
        }
    }

    @Override
    public synchronized void close() {
        started.values().forEach(Topology::close);
        started.clear();
    }
}
