package io.gantry.cluster;

/** A change of the shared configuration that could not be made, or a cluster that cannot be read; says why. */
public class ClusterException extends RuntimeException {

    public ClusterException(String message) {
        super(message);
    }

    public ClusterException(String message, Throwable cause) {
        super(message, cause);
    }

    /** Another instance changed the configuration first: this change was not made. */
    public static final class Conflict extends ClusterException {
        public Conflict(String message) {
            super(message);
        }
    }
}
