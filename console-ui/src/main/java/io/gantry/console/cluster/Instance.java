package io.gantry.console.cluster;

/**
 * One row of {@code SHOW GANTRY CLUSTER}, as the engine wrote it: one instance of the cluster.
 *
 * @param configVersion    the version of the shared configuration it serves with
 * @param clusterVersion   the newest version
 * @param secondsSinceSeen since its last sign of life, by the primary's clock
 * @param thisInstance     "yes" for the instance the console is connected to
 * @param feedOwner        "yes" for the instance that writes the cluster's change feed now
 */
public record Instance(String instance, String address, String gantryVersion, String configVersion,
                       String clusterVersion, String lastSeen, String secondsSinceSeen, String thisInstance,
                       String feedOwner) {

    /** Whether it serves with an older configuration than the newest. */
    public boolean behind() {
        return !configVersion.isEmpty() && !configVersion.equals(clusterVersion);
    }
}
