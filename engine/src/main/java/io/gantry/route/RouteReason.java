package io.gantry.route;

/**
 * Why a statement went where it went: one value per routing rule, in the order {@link Router} checks them.
 * {@link #rule()} is the step of "How statements are routed" in docs/routing-and-guarantees.md the reason belongs to
 * (0 for the placement of a read-only transaction, which comes first; 6 for the replica choice; 7 for a read Gantry
 * places after the rules for a need of its own), and {@link #description()} is a sentence for logs and the admin
 * surface.
 */
public enum RouteReason {
    /** Inside a read-only transaction every statement (even its COMMIT) runs where the transaction runs. */
    IN_READ_ONLY_TRANSACTION(0, "inside a read-only transaction, which runs entirely on one server"),
    /**
     * A write inside a read-only transaction held by a replica: refused with error 1792, as the server refuses it
     * in a read-only transaction, and sent nowhere (the replica would answer 1290 for its {@code read_only}).
     */
    WRITE_IN_READ_ONLY_TRANSACTION(0, "a write inside a read-only transaction: refused with error 1792"),
    /** {@code BEGIN}/{@code START TRANSACTION [READ WRITE]}/{@code XA START}: the transaction may write. */
    BEGINS_READ_WRITE_TRANSACTION(1, "begins a transaction that may write"),
    /** The session is inside a read-write transaction (from the server status flags). */
    IN_READ_WRITE_TRANSACTION(1, "inside a read-write transaction"),
    /** Not a read: a write, DDL, CALL, a locking read, ...; the cause is the {@link StatementFlag}, if any. */
    NOT_A_READ(1, "not a read"),
    /** A session-state change: runs on the primary and the proxy replays it on every backend of the session. */
    SESSION_STATE_CHANGE(1, "session-state change, replayed on every backend of the session"),
    /** {@code autocommit} is off: every statement opens or continues a transaction, so the primary. */
    AUTOCOMMIT_OFF(1, "autocommit is off, so every statement is part of a transaction"),
    /** An earlier statement pinned the session to the primary; the cause says which kind. */
    SESSION_PINNED(1, "session pinned to the primary by an earlier statement"),
    /** A read whose answer only the session's primary connection has (user variables, LAST_INSERT_ID(), @@vars). */
    PRIMARY_ONLY_READ(1, "read that only the session's primary connection can answer"),
    /** Diagnostics of the previous statement (SHOW WARNINGS, FOUND_ROWS()): the server that ran it. */
    FOLLOWS_PREVIOUS_STATEMENT(1, "reads diagnostics of the previous statement, so the server that ran it"),
    /** The statement carries <code>/*#mode=READWRITE*&#47;</code>. */
    HINT_READWRITE(2, "hint mode=READWRITE"),
    /** {@code --master-preferred} is on. */
    MASTER_PREFERRED(3, "--master-preferred"),
    /** The {@code --read-master-percentage} draw picked the primary. */
    READ_MASTER_PERCENTAGE(4, "--read-master-percentage draw picked the primary"),
    /** The session setting {@code gantry_read_from_followers} is off. */
    FOLLOWER_READS_OFF(5, "gantry_read_from_followers is OFF"),
    /** No replica is up. */
    NO_REPLICA_UP(5, "no replica is up"),
    /** Replicas are up, but none satisfies the session's consistency requirements. */
    NO_REPLICA_QUALIFIES(5, "no replica satisfies the session's consistency requirements"),
    /**
     * {@code --follower-reads-avoid-waiting=false}: no replica is known to hold what the session needs, so the read
     * waits on one picked by weight until it has applied it, and goes to the primary if that takes too long.
     */
    READ_AFTER_WAIT(5, "no replica is known to hold what the session needs yet: waits on one picked by weight"),
    /** {@code START TRANSACTION READ ONLY} placed on a replica; the whole transaction will run there. */
    READ_ONLY_TRANSACTION_ON_REPLICA(6, "read-only transaction placed on a replica"),
    /** {@code --read-balance=session}: the session keeps the replica it already uses. */
    READ_ON_SESSION_REPLICA(6, "read on the session's replica"),
    /** A replica picked by weight (statement balance, or the session's first or replacement replica). */
    READ_ON_REPLICA(6, "read on a replica picked by weight"),
    /**
     * {@code --follower-reads-prefer=closest}: a replica picked by weight among those whose smoothed round trip is
     * within the tolerance of the closest that qualifies ({@link ReplicaPreference}).
     */
    READ_ON_CLOSEST_REPLICA(6, "read on a replica picked by weight among the closest by round trip"),
    /**
     * A read of a cached query by an account not checked lately: it runs on the highest-weight up server the
     * session's read guarantees allow, so that every account's right to the cached answer is judged by one server.
     * It does not become the session's replica.
     */
    CACHE_ACCOUNT_CHECK(7, "cache account check: on the highest-weight up server the session's guarantees allow");

    private final int rule;
    private final String description;

    RouteReason(int rule, String description) {
        this.rule = rule;
        this.description = description;
    }

    /**
     * The routing rule (1 to 6, as "How statements are routed" in docs/routing-and-guarantees.md numbers them, 6 being
     * the replica choice) of this reason; 0 is read-only transaction placement, 7 a placement of Gantry's own after
     * the rules.
     */
    public int rule() {
        return rule;
    }

    /** A short human sentence for logs. */
    public String description() {
        return description;
    }

    /** Whether this reason means a replica was (newly or again) chosen for reads of the session. */
    public boolean choosesReplica() {
        return rule == 6;
    }
}
