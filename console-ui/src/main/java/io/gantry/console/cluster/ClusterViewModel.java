package io.gantry.console.cluster;

import io.gantry.console.engine.AdminCalls;
import io.gantry.console.rows.StatementRows;
import java.time.Clock;
import java.util.concurrent.Executor;

/**
 * The instances of the cluster the engine is in ({@code SHOW GANTRY CLUSTER}): read on connect, when a server
 * changes (a weight changed anywhere in the cluster is a new version), and on demand. An engine in no cluster
 * says so, and how to start one, in the message.
 */
public final class ClusterViewModel extends StatementRows<Instance> {

    public ClusterViewModel(Executor ui, AdminCalls engine, Clock clock) {
        super(ui, engine, clock, "SHOW GANTRY CLUSTER", row -> new Instance(row.text("Instance"),
                row.text("Address"), row.text("Gantry_version"), row.text("Config_version"),
                row.text("Cluster_version"), row.text("Last_seen"), row.text("Seconds_since_seen"),
                row.text("This_instance"), row.text("Feed_owner")), "No instance has joined yet.", "the cluster");
    }
}
