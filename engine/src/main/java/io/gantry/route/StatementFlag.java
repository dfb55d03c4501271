package io.gantry.route;

/**
 * Why a statement cannot simply go to any server. Each flag has an {@link Effect}; the router applies the
 * strongest. A statement whose flags include one with {@link Effect#makesWrite()} is classified as
 * {@link StatementKind#WRITE} even if it starts with {@code SELECT}.
 *
 * <p>The declaration order is the order of preference when one flag is reported as the cause of a decision.
 */
public enum StatementFlag {
    /** {@code SELECT ... FOR UPDATE}, {@code FOR SHARE}, {@code LOCK IN SHARE MODE}: row locks belong on the primary. */
    LOCKING_READ(Effect.NOT_A_READ,
            "takes row locks (FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE)"),
    /** {@code SELECT ... INTO OUTFILE} / {@code INTO DUMPFILE}: writes a file on the server. */
    INTO_FILE(Effect.NOT_A_READ,
            "writes a file on the server (INTO OUTFILE, INTO DUMPFILE)"),
    /** {@code NEXTVAL(s)}, {@code NEXT VALUE FOR s}, {@code SETVAL(...)}: advances a sequence. */
    SEQUENCE(Effect.NOT_A_READ,
            "advances a sequence (NEXTVAL, SETVAL)"),
    /** {@code LOAD DATA} / {@code LOAD XML}. */
    LOAD_DATA(Effect.NOT_A_READ,
            "loads data (LOAD DATA, LOAD XML)"),
    /**
     * A read that may call a stored function: a name that is not a built-in function or keyword followed by
     * {@code (} ({@code f()}, {@code db.f()}, {@code `f`()}), anywhere in the statement, executable comments
     * included. A stored function may write, so the statement goes to the primary, as MaxScale does; the session
     * is not pinned. Only reads carry it: a write goes to the primary anyway. The list of built-ins is the
     * resource {@code builtin-functions.txt}.
     */
    STORED_FUNCTION(Effect.NOT_A_READ,
            "may call a stored function, which may write"),
    /**
     * {@code GET_LOCK()}, {@code RELEASE_LOCK()}, {@code RELEASE_ALL_LOCKS()}, {@code IS_FREE_LOCK()},
     * {@code IS_USED_LOCK()}: named locks live on one server, held by one connection.
     */
    USER_LOCK(Effect.PINS_SESSION,
            "uses a named lock (GET_LOCK() and the like)"),
    /** {@code LOCK TABLES}, {@code UNLOCK TABLES}, {@code LOCK INSTANCE}, {@code FLUSH TABLES ... WITH READ LOCK / FOR EXPORT}. */
    TABLE_LOCK(Effect.PINS_SESSION,
            "locks or unlocks tables"),
    /** {@code PREPARE name FROM ...}: a statement prepared by name exists on one connection only, for its EXECUTE. */
    NAMED_PREPARE(Effect.PINS_SESSION,
            "prepares a statement by name (PREPARE), which exists on one connection only"),
    /** {@code CREATE [OR REPLACE] TEMPORARY TABLE}, {@code DROP TEMPORARY TABLE}: the table exists on one connection only. */
    TEMPORARY_TABLE(Effect.PINS_SESSION,
            "creates or drops a temporary table, which exists on one connection only"),
    /** {@code SET @x = ...}, {@code SELECT ... INTO @x}, {@code @x := ...}, {@code GET DIAGNOSTICS @x = ...}. */
    SETS_USER_VARIABLES(Effect.PINS_SESSION,
            "sets a user variable"),
    /**
     * {@code LOAD DATA LOCAL INFILE}: the loaded rows are usually read back at once, and a large load reaches
     * replicas late; pinning keeps the bulk-load session on the primary.
     */
    LOAD_DATA_LOCAL(Effect.PINS_SESSION,
            "loads a file of the client (LOAD DATA LOCAL INFILE)"),
    /**
     * A multi-statement text that mixes a session-state change ({@code SET NAMES ...; SELECT ...}) with other
     * statements: it cannot be replayed on other backends, so the session stays on the primary.
     */
    MIXED_SESSION_STATE(Effect.PINS_SESSION,
            "makes session settings Gantry cannot replay elsewhere (mixed with other statements, or too many "
                    + "distinct ones)"),
    /** Reads a user variable ({@code @x}): a replica connection would not have it. */
    USES_USER_VARIABLES(Effect.PRIMARY_ONLY_READ,
            "reads a user variable"),
    /**
     * Reads this connection's history on the primary: {@code LAST_INSERT_ID()}, {@code CONNECTION_ID()},
     * {@code LASTVAL()}, {@code PREVIOUS VALUE FOR s}, {@code @@identity}, {@code @@last_insert_id}, {@code @@insert_id}, {@code @@last_gtid}.
     */
    SESSION_FUNCTION(Effect.PRIMARY_ONLY_READ,
            "reads the connection's own history (LAST_INSERT_ID(), CONNECTION_ID() and the like)"),
    /**
     * Reads the state of one server rather than data: system variables ({@code @@...}), {@code SHOW STATUS},
     * {@code SHOW VARIABLES}, {@code SHOW PROCESSLIST}, {@code SHOW MASTER/BINARY LOG/REPLICA STATUS},
     * {@code SHOW ENGINE}, {@code EXPLAIN FOR CONNECTION}, replication wait functions. The primary gives the
     * stable answer clients expect (for example {@code @@read_only}).
     */
    SERVER_STATE(Effect.PRIMARY_ONLY_READ,
            "reads one server's own state (@@variables, SHOW STATUS and the like)"),
    /**
     * Reads diagnostics of the session's previous statement: {@code SHOW WARNINGS}, {@code SHOW ERRORS},
     * {@code SHOW COUNT(*) WARNINGS}, {@code SHOW PROFILE(S)}, {@code FOUND_ROWS()}, {@code ROW_COUNT()},
     * {@code GET DIAGNOSTICS}, {@code @@warning_count}, {@code @@error_count}: only the connection that ran that
     * statement can answer.
     */
    PREVIOUS_STATEMENT(Effect.FOLLOWS_PREVIOUS_STATEMENT,
            "reads what the previous statement left (SHOW WARNINGS, FOUND_ROWS() and the like)"),
    /**
     * {@code SELECT SQL_CALC_FOUND_ROWS ...}: the total it counts is read by the next {@code FOUND_ROWS()} on the
     * same connection only, so with multiplexing the connection stays with the session until its next statement.
     */
    CALC_FOUND_ROWS(Effect.NONE,
            "counts rows for the next FOUND_ROWS() (SQL_CALC_FOUND_ROWS)"),
    /**
     * {@code SHOW WARNINGS}, {@code SHOW ERRORS}, {@code SHOW COUNT(*) ...}, {@code SHOW PROFILE(S)},
     * {@code GET DIAGNOSTICS}: they read the previous statement's diagnostics and leave them, and what
     * {@code ROW_COUNT()} and {@code FOUND_ROWS()} read, as they were.
     */
    DIAGNOSTICS(Effect.NONE,
            "reads the previous statement's diagnostics and leaves them as they were");

    /** What a flag does to routing. */
    public enum Effect {
        /** The statement is not a read: primary. */
        NOT_A_READ,
        /** The statement is not a read, and the session stays on the primary for the rest of its life. */
        PINS_SESSION,
        /** A read, but only the session's primary connection gives the right answer: primary, no pinning. */
        PRIMARY_ONLY_READ,
        /** A read that must go to the server that ran the session's previous statement. */
        FOLLOWS_PREVIOUS_STATEMENT,
        /** Routed as usual: the flag says what the statement leaves on its connection. */
        NONE;

        /** Whether a flag with this effect turns a {@code SELECT} into a {@link StatementKind#WRITE}. */
        public boolean makesWrite() {
            return this == NOT_A_READ || this == PINS_SESSION;
        }
    }

    private final Effect effect;
    private final String description;

    StatementFlag(Effect effect, String description) {
        this.effect = effect;
        this.description = description;
    }

    /** What this flag does to routing. */
    public Effect effect() {
        return effect;
    }

    /**
     * What the statement does, in an operator's words, to follow "it" ({@code EXPLAIN GANTRY ROUTE}: "a write, 1
     * statement, no hint; it takes row locks (FOR UPDATE, ...)").
     */
    public String description() {
        return description;
    }

    int bit() {
        return 1 << ordinal();
    }
}
