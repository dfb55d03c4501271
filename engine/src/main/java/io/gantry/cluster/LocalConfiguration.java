package io.gantry.cluster;

/**
 * This instance's copy of the shared configuration: the lists it serves with, kept in its Authority so that it
 * starts and serves with them while the primary is unreachable.
 */
public interface LocalConfiguration {

    /** The configuration this instance serves with now. */
    SharedConfiguration current();

    /**
     * Serves with {@code next} from now on: the lists and weights changed, in the Authority and live, with the
     * timeline's events saying {@code reason}.
     *
     * @throws ClusterException when this instance cannot serve with it (an account whose password it does not know)
     */
    void apply(SharedConfiguration next, String reason);
}
