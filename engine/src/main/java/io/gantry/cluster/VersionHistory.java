package io.gantry.cluster;

/**
 * How much of the versions' history the cluster keeps: the newest {@value #KEPT} versions. Each version holds the
 * whole configuration, so an instance behind by more than that (one that was stopped through a thousand changes)
 * needs none of the pruned ones: it takes the newest version whole instead of applying them in order.
 */
final class VersionHistory {

    /** Versions kept; a few hundred bytes each, and far more than any instance falls behind while it runs. */
    static final int KEPT = 1000;

    private VersionHistory() {
    }

    /** The highest version that may be deleted when {@code latest} is the newest, 0 for none. */
    static long prunableUpTo(long latest) {
        return Math.max(0, latest - KEPT);
    }

    /**
     * Whether an instance that applied {@code applied} would have to skip pruned versions to go on from the oldest
     * one left, {@code oldestLeft}: then it takes the newest whole.
     */
    static boolean missesPruned(long applied, long oldestLeft) {
        return oldestLeft > applied + 1;
    }
}
