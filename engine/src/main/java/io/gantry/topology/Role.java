package io.gantry.topology;

/** What a server does in the topology, detected from {@code read_only}, never configured. */
public enum Role {
    /** The one writable server ({@code read_only=OFF}): takes writes. */
    PRIMARY,
    /**
     * Writable, but not the primary: another server is writable at the same time (a promotion in the unsafe order,
     * or a replica without {@code read_only}). Gantry never guesses which of them takes writes, so none does, and
     * it serves no reads either until one of them is read-only again.
     */
    WRITABLE,
    /** Read-only: serves reads. */
    REPLICA,
    /** Not probed yet, or down since before its role was known. */
    UNKNOWN
}
