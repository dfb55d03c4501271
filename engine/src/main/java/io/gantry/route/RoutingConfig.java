package io.gantry.route;

import java.util.Objects;

/**
 * The routing settings that apply to one session: the process flags, overridden by the session's own
 * {@code SET gantry_...} settings where "Read guarantees" in docs/routing-and-guarantees.md allows it.
 *
 * @param masterPreferred {@code --master-preferred}: when true every read goes to the primary unless it carries
 *        the {@code READONLY} hint (rule 3). Default {@code false}.
 * @param readMasterPercentage {@code --read-master-percentage}: the share of reads, in percent from 0 to 100, sent
 *        to the primary by a random draw (rule 4). Default {@code 0} (never); {@code 100} sends every read without
 *        the {@code READONLY} hint to the primary.
 * @param readBalance {@code --read-balance}: how replicas are chosen. Default {@link ReadBalance#SESSION}.
 * @param readFromFollowers the session setting {@code gantry_read_from_followers}: when false no read goes to a
 *        replica, hint or not (a consistency requirement, rule 5). Default {@code true}.
 * @param replicaPreference {@code --follower-reads-prefer} and {@code --follower-reads-closest-tolerance-ms}, the
 *        session setting {@code gantry_follower_reads_prefer}: how a replica is picked among those that qualify.
 *        Default {@link ReplicaPreference#WEIGHT}.
 */
public record RoutingConfig(
        boolean masterPreferred,
        int readMasterPercentage,
        ReadBalance readBalance,
        boolean readFromFollowers,
        ReplicaPreference replicaPreference) {

    /** The defaults: no master preference, 0 %, session balance, reads from followers on, replicas by weight. */
    public static final RoutingConfig DEFAULTS = new RoutingConfig(false, 0, ReadBalance.SESSION, true);

    /** These settings with replicas picked by weight. */
    public RoutingConfig(boolean masterPreferred, int readMasterPercentage, ReadBalance readBalance,
                         boolean readFromFollowers) {
        this(masterPreferred, readMasterPercentage, readBalance, readFromFollowers, ReplicaPreference.WEIGHT);
    }

    /** Validates the percentage and the balance. */
    public RoutingConfig {
        if (readMasterPercentage < 0 || readMasterPercentage > 100) {
            throw new IllegalArgumentException("readMasterPercentage (--read-master-percentage) must be between 0 and"
                    + " 100 percent of reads sent to the primary, got " + readMasterPercentage);
        }
        Objects.requireNonNull(readBalance, "readBalance");
        Objects.requireNonNull(replicaPreference, "replicaPreference");
    }

    /** A copy with {@code masterPreferred} changed. */
    public RoutingConfig withMasterPreferred(boolean value) {
        return new RoutingConfig(value, readMasterPercentage, readBalance, readFromFollowers, replicaPreference);
    }

    /** A copy with {@code readMasterPercentage} changed (validated). */
    public RoutingConfig withReadMasterPercentage(int value) {
        return new RoutingConfig(masterPreferred, value, readBalance, readFromFollowers, replicaPreference);
    }

    /** A copy with {@code readBalance} changed. */
    public RoutingConfig withReadBalance(ReadBalance value) {
        return new RoutingConfig(masterPreferred, readMasterPercentage, value, readFromFollowers, replicaPreference);
    }

    /** A copy with {@code readFromFollowers} changed. */
    public RoutingConfig withReadFromFollowers(boolean value) {
        return new RoutingConfig(masterPreferred, readMasterPercentage, readBalance, value, replicaPreference);
    }

    /** A copy with {@code replicaPreference} changed. */
    public RoutingConfig withReplicaPreference(ReplicaPreference value) {
        return new RoutingConfig(masterPreferred, readMasterPercentage, readBalance, readFromFollowers, value);
    }
}
