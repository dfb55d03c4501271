package io.gantry.topology;

/** What a server does in the topology, detected from {@code read_only}, never configured. */
public enum Role {
    /** Writable ({@code read_only=OFF}): takes writes. */
    PRIMARY,
    /** Read-only: serves reads. */
    REPLICA,
    /** Not probed yet, or down since before its role was known. */
    UNKNOWN
}
