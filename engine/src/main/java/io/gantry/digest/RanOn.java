package io.gantry.digest;

/** Where a statement was answered, for its shape's digest. */
public enum RanOn {
    /** The writable server. */
    PRIMARY,
    /** A read-only server. */
    REPLICA,
    /** A query cache, no server asked. */
    CACHE,
    /** Gantry itself: its own statements ({@code SHOW GANTRY ...}, {@code SET gantry_...}) and its refusals. */
    GANTRY
}
