package io.gantry.topology;

import io.gantry.gtid.GtidSet;

/**
 * What one health check of one server found.
 *
 * @param source        whom a replica replicates from ("" for none)
 * @param position      the server's executed GTID set, null when it could not be read
 * @param brokenBecause why the replica's replication is broken, null when it runs
 * @param refused       the server refused the check (full, or the account): {@code writable} is what was known of
 *                      it before, and nothing else is known
 */
record HealthProbe(UpstreamServer server, boolean writable, String source, GtidSet position, String brokenBecause,
                   long rttMicros, long connectMicros, boolean refused) {
}
