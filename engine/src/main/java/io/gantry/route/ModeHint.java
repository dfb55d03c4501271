package io.gantry.route;

/**
 * The routing hint a client put in a comment: <code>/*#mode=READWRITE*&#47;</code> or <code>/*#mode=READONLY*&#47;</code>
 * (case-insensitive, spaces allowed around {@code #}, {@code mode}, {@code =}), also accepted as a line comment
 * ({@code -- #mode=READONLY} or {@code #mode=READONLY}). When a text carries both, {@link #READ_WRITE} wins.
 */
public enum ModeHint {
    /** No hint. */
    NONE("no hint"),
    /** <code>/*#mode=READWRITE*&#47;</code>: send this statement to the primary (rule 2). */
    READ_WRITE("hint mode=READWRITE"),
    /**
     * <code>/*#mode=READONLY*&#47;</code>: skip {@code --master-preferred} and the {@code --read-master-percentage} draw
     * (rules 3 and 4). It never sends a write, a read-write transaction or a pinned session to a replica, and never
     * overrides the consistency rules (rule 5).
     */
    READ_ONLY("hint mode=READONLY");

    private final String description;

    ModeHint(String description) {
        this.description = description;
    }

    /** The hint as an operator reads it: "no hint", "hint mode=READWRITE", "hint mode=READONLY". */
    public String description() {
        return description;
    }
}
