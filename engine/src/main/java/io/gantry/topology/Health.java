package io.gantry.topology;

/** Whether a server takes new work. */
public enum Health {
    /** The last check or connection succeeded. */
    UP,
    /** A check or a session's connection failed; new sessions skip it until a check succeeds. */
    DOWN
}
