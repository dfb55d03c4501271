package io.gantry.route;

/** The role of the server a statement goes to. */
public enum RouteTarget {
    /** The writable server ({@code read_only=OFF}). */
    PRIMARY,
    /** One of the read-only servers. */
    REPLICA
}
