package io.gantry.route;

/**
 * The SQL words the classifier cares about, with an allocation-free case-insensitive lookup from a region of the
 * statement text (open addressing over a hash of the upper-cased ASCII characters).
 */
enum Keyword {
    SELECT, WITH, TABLE, VALUES, SHOW, DESCRIBE, DESC, EXPLAIN, HELP, ANALYZE,
    BEGIN, START, TRANSACTION, COMMIT, ROLLBACK, SAVEPOINT, RELEASE, XA, WORK, TO, NOT, END,
    SET, USE, LOCK, UNLOCK, FLUSH, CREATE, ALTER, DROP, TEMPORARY, LOAD, DATA, XML, LOCAL, DO, GET, DIAGNOSTICS,
    INSERT, UPDATE, DELETE, REPLACE, CALL,
    FULL, EXTENDED, PARTITIONS, FORMAT, GLOBAL, SESSION, WARNINGS, ERRORS, COUNT, PROFILE, PROFILES, STATUS,
    VARIABLES, PROCESSLIST, MASTER, BINARY, SLAVE, REPLICA, REPLICAS, BINLOG, RELAYLOG, ENGINE, OPEN, ALL, INNODB,
    MUTEX,
    READ, ONLY, WRITE,
    NAMES, CHARACTER, CHARSET, PERSIST, PERSIST_ONLY, PASSWORD, DEFAULT, ROLE, RESOURCE, STATEMENT,
    FOR, SHARE, IN, MODE, INTO, OUTFILE, DUMPFILE, NEXT, VALUE, PREVIOUS, EXPORT,
    VIEW, INDEX, DATABASE, SCHEMA, USER, SEQUENCE, SERVER, TABLESPACE, PROCEDURE, FUNCTION, TRIGGER, EVENT, PACKAGE,
    CASE, IF, LOOP, WHILE, REPEAT, AS, SQL_CALC_FOUND_ROWS, PREPARE,
    NEXTVAL(StatementFlag.SEQUENCE),
    SETVAL(StatementFlag.SEQUENCE),
    LASTVAL(StatementFlag.SESSION_FUNCTION),
    LAST_INSERT_ID(StatementFlag.SESSION_FUNCTION),
    CONNECTION_ID(StatementFlag.SESSION_FUNCTION),
    FOUND_ROWS(StatementFlag.PREVIOUS_STATEMENT),
    ROW_COUNT(StatementFlag.PREVIOUS_STATEMENT),
    GET_LOCK(StatementFlag.USER_LOCK),
    RELEASE_LOCK(StatementFlag.USER_LOCK),
    RELEASE_ALL_LOCKS(StatementFlag.USER_LOCK),
    IS_FREE_LOCK(StatementFlag.USER_LOCK),
    IS_USED_LOCK(StatementFlag.USER_LOCK),
    MASTER_POS_WAIT(StatementFlag.SERVER_STATE),
    SOURCE_POS_WAIT(StatementFlag.SERVER_STATE),
    MASTER_GTID_WAIT(StatementFlag.SERVER_STATE),
    WAIT_FOR_EXECUTED_GTID_SET(StatementFlag.SERVER_STATE),
    WAIT_UNTIL_SQL_THREAD_AFTER_GTIDS(StatementFlag.SERVER_STATE);

    private static final Keyword[] SLOTS;
    private static final int MASK;
    private static final int MAX_LENGTH;

    static {
        Keyword[] all = values();
        int size = Integer.highestOneBit(all.length * 4);
        Keyword[] slots = new Keyword[size];
        int max = 0;
        for (Keyword keyword : all) {
            String name = keyword.name();
            max = Math.max(max, name.length());
            int slot = UpperCaseNames.spread(UpperCaseNames.hash(name, 0, name.length())) & (size - 1);
            while (slots[slot] != null) {
                slot = (slot + 1) & (size - 1);
            }
            slots[slot] = keyword;
        }
        SLOTS = slots;
        MASK = size - 1;
        MAX_LENGTH = max;
    }

    /** The flag a call of this function sets ({@code NAME(}), or null when the word is not such a function. */
    final StatementFlag functionFlag;
    /** Whether {@code NAME(} is a built-in function or keyword, never a stored function ({@link BuiltinFunctions}). */
    final boolean builtin;

    Keyword() {
        this(null);
    }

    Keyword(StatementFlag functionFlag) {
        this.functionFlag = functionFlag;
        this.builtin = BuiltinFunctions.contains(name(), 0, name().length());
    }

    /** The keyword spelled by {@code text[start, end)} in any letter case, or null. Never allocates. */
    static Keyword lookup(CharSequence text, int start, int end) {
        int length = end - start;
        if (length < 2 || length > MAX_LENGTH) {
            return null;
        }
        int hash = UpperCaseNames.hash(text, start, end);
        if (hash == 0) {
            return null;
        }
        int slot = UpperCaseNames.spread(hash) & MASK;
        while (true) {
            Keyword candidate = SLOTS[slot];
            if (candidate == null) {
                return null;
            }
            if (candidate.matches(text, start, length)) {
                return candidate;
            }
            slot = (slot + 1) & MASK;
        }
    }

    private boolean matches(CharSequence text, int start, int length) {
        return UpperCaseNames.matches(name(), text, start, length);
    }
}
