package io.gantry.route;

import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

/**
 * Classifies the SQL text of a COM_QUERY for routing: {@link StatementKind}, {@link StatementFlag}s and the
 * {@link ModeHint}.
 *
 * <p>One pass over the tokens of {@link SqlTokenizer}, which reads the text as the server does: no regular
 * expressions, no allocation per character or per token (a handful of objects per call). It understands
 * <ul>
 *   <li>several statements separated by {@code ;} (multi-statements): the strongest kind wins, flags are unioned;
 *       the body of a stored program ({@code CREATE PROCEDURE ... BEGIN ...; ...; END}, {@code BEGIN NOT ATOMIC})
 *       is one statement, as the server parses it;</li>
 *   <li>string literals, quoted identifiers and comments: a {@code ;} or a keyword inside them is ignored; where
 *       they end follows the session's {@link SqlMode} ({@code NO_BACKSLASH_ESCAPES}, {@code ANSI_QUOTES});</li>
 *   <li>executable comments {@code /*!40101 ... *&#47;}: their content counts as code. A conditional comment, one
 *       that some servers run and others skip ({@code /*!} with a version from 50700 up, MariaDB's
 *       {@code /*M!}), makes the text be classified twice, with the comments run and with them skipped, and the two
 *       readings count as the statements of one text: {@code SELECT 1 /*!99999 'x *&#47; ; DELETE FROM t} is a
 *       write, as MariaDB skips the comment and deletes;</li>
 *   <li>routing hints in comments, see {@link ModeHint}.</li>
 * </ul>
 *
 * <p>Choices worth knowing:
 * <ul>
 *   <li>{@code DO ...} is a {@link StatementKind#WRITE}: it exists only for its side effects (locks, variables,
 *       stored functions).</li>
 *   <li>{@code EXPLAIN}/{@code DESCRIBE} of a {@code SELECT}, {@code TABLE}, {@code VALUES} or of a table is a read;
 *       of {@code INSERT}/{@code UPDATE}/{@code DELETE}/{@code REPLACE} a write (it may be {@code EXPLAIN ANALYZE},
 *       which executes). MariaDB {@code ANALYZE SELECT} is a read, {@code ANALYZE TABLE} a write.</li>
 *   <li>A read that may call a stored function is flagged {@link StatementFlag#STORED_FUNCTION} (so it goes to the
 *       primary, the session not pinned): a name followed by {@code (} that is not in {@link BuiltinFunctions}, a
 *       qualified {@code db.f(} or a quoted {@code `f`(}, in any part of the statement (subqueries, {@code UNION}
 *       branches, executable comments). Not calls: a CTE or derived-table column list ({@code WITH c (a, b) AS (},
 *       {@code AS dt (a, b)}, {@code ) dt (a, b)}) and keywords such as {@code IN (}, {@code USING (},
 *       {@code OVER (}, which are in the list.</li>
 *   <li>{@code SET GLOBAL}/{@code PERSIST}, {@code SET PASSWORD}, {@code SET DEFAULT ROLE} are writes;
 *       {@code SET [SESSION|LOCAL] var}, {@code SET @@session.var}, {@code SET NAMES}, {@code SET CHARACTER SET},
 *       {@code SET TRANSACTION}, {@code SET ROLE} and {@code USE} are {@link StatementKind#SESSION_STATE};
 *       {@code SET @user_var} is a write that pins the session. MariaDB {@code SET STATEMENT ... FOR stmt} is
 *       classified as {@code stmt}.</li>
 *   <li>Double quotes are string delimiters unless the session's {@link SqlMode} says {@code ANSI_QUOTES}; only
 *       MariaDB reports that mode, so on MySQL an identifier {@code "a\"} is taken for the start of a string.</li>
 *   <li>The classifier never throws: {@code null}, empty, comment-only and unrecognised text is a
 *       {@link StatementKind#WRITE}, so it goes to the primary.</li>
 * </ul>
 */
public final class StatementClassifier {

    private StatementClassifier() {
    }

    /**
     * Classifies {@code sql} under the server's default {@link SqlMode}.
     *
     * @param sql the COM_QUERY text; {@code null} is treated as empty
     */
    public static StatementClass classify(CharSequence sql) {
        return classify(sql, SqlMode.DEFAULT);
    }

    /** Classifies {@code sql} with or without {@code NO_BACKSLASH_ESCAPES}, without {@code ANSI_QUOTES}. */
    public static StatementClass classify(CharSequence sql, boolean noBackslashEscapes) {
        return classify(sql, SqlMode.of(noBackslashEscapes));
    }

    /**
     * Classifies {@code sql}.
     *
     * @param sql the COM_QUERY text; {@code null} is treated as empty
     * @param mode the session's mode, from the status flags of the last OK packet: it decides where {@code 'a\'}
     *        and {@code "a\"} end
     */
    public static StatementClass classify(CharSequence sql, SqlMode mode) {
        if (sql == null) {
            return StatementClass.unparsable();
        }
        try {
            return new Scan(sql, mode).run();
        } catch (RuntimeException e) {
            // Safety net for the "never throws" contract (for example a CharSequence that fails): primary is safe.
            return StatementClass.unparsable();
        }
    }

    /** {@link #classify(CharSequence, boolean)} without the safety net, so that tests see any exception. */
    static StatementClass classifyUnguarded(CharSequence sql, boolean noBackslashEscapes) {
        return new Scan(sql, SqlMode.of(noBackslashEscapes)).run();
    }

    /** The state of one classification: per-statement state machine and the text-wide result. */
    private static final class Scan {
        // what a token is to the state machine (see tokenClass)
        private static final int EOF = 0;
        private static final int WORD = 1;
        private static final int NUMBER = 2;
        private static final int STRING = 3;
        private static final int QUOTED_IDENT = 4;
        private static final int USER_VAR = 5;
        private static final int SYSTEM_VAR = 6;
        private static final int LPAREN = 7;
        private static final int RPAREN = 8;
        private static final int COMMA = 9;
        private static final int SEMI = 10;
        private static final int DOT = 11;
        private static final int ASSIGN = 12;
        private static final int ACCOUNT_HOST = 13;
        private static final int OTHER = 14;
        private static final int COMMENT = 15;

        private static final int P_START = 0;
        private static final int P_BODY = 1;
        private static final int P_WITH = 2;
        private static final int P_SHOW = 3;
        private static final int P_EXPLAIN = 4;
        private static final int P_ANALYZE = 5;
        private static final int P_BEGIN = 6;
        private static final int P_START_TXN = 7;
        private static final int P_ROLLBACK = 8;
        private static final int P_XA = 9;
        private static final int P_SET_ITEM = 10;
        private static final int P_SET_VALUE = 11;
        private static final int P_SET_STATEMENT = 12;
        private static final int P_CREATE = 13;

        private static final int CALL_NONE = 0;
        private static final int CALL_NAME = 1;
        private static final int CALL_ARGS = 2;
        private static final int CALL_CLOSED = 3;
        private static final int CALL_AS = 4;

        private static final StatementFlag[] FLAGS = StatementFlag.values();
        private static final int MAKES_WRITE = makesWriteMask();

        private final CharSequence sql;
        private final SqlMode mode;

        // the current token
        private int tokenStart;
        private int tokenEnd;

        // whole text
        private int textFlags;
        private boolean hintReadWrite;
        private boolean hintReadOnly;
        private int statementCount;
        private boolean sawSessionState;
        private boolean sawOther;
        private StatementKind strongest;
        private TransactionFlavor strongestFlavor;

        // current statement
        private StatementKind kind;
        private TransactionFlavor flavor;
        private int flags;
        private Keyword verb;
        private int verbIndex;
        private int phase;
        private int tokenIndex;
        private int depth;
        private int baseDepth;
        private int prevType;
        private Keyword prev1;
        private Keyword prev2;
        private Keyword pendingFunction;
        private boolean pendingUserVariable;
        private boolean pendingEnd;
        private boolean analyzeFlags;
        private boolean blockTracking;
        private int blockDepth;
        private boolean afterCteBody;
        private boolean intoList;
        private int formatSkip;
        private boolean sawReadOnly;
        private boolean sawReadWrite;
        private boolean setGlobal;
        private boolean setSessionItem;
        // a possible stored function call: a name, then "(" ... ")" (see trackCall)
        private int call;
        private int callDepth;
        private boolean callArgsPlain;
        private boolean callArgsEmpty;

        Scan(CharSequence sql, SqlMode mode) {
            this.sql = sql;
            this.mode = mode;
            resetStatement();
        }

        StatementClass run() {
            SqlTokenizer tokens = new SqlTokenizer(sql, mode, true);
            read(tokens);
            if (tokens.sawConditionalComment()) {
                // Some servers skip what others run: both readings count, as if the text held the statements of both.
                int statementsRun = statementCount;
                statementCount = 0;
                read(new SqlTokenizer(sql, mode, false));
                statementCount = Math.max(statementsRun, statementCount);
            }
            return result();
        }

        private void read(SqlTokenizer tokens) {
            for (SqlTokenizer.Type type = tokens.next(); type != null; type = tokens.next()) {
                tokenStart = tokens.start();
                tokenEnd = tokens.end();
                int token = tokenClass(type);
                if (token == COMMENT) {
                    comment(type == SqlTokenizer.Type.COMMENT);
                } else {
                    onToken(token);
                }
            }
            endStatement();
        }

        /**
         * What the current token is to the state machine: a comment (terminated or not) is COMMENT, other text the
         * server rejects (unterminated) is OTHER. Tested in the order of frequency: this runs for every token.
         */
        private int tokenClass(SqlTokenizer.Type type) {
            if (type == SqlTokenizer.Type.WORD) {
                return WORD;
            }
            if (type == SqlTokenizer.Type.SYMBOL) {
                return switch (sql.charAt(tokenStart)) {
                    case '(' -> LPAREN;
                    case ')' -> RPAREN;
                    case ',' -> COMMA;
                    case ';' -> SEMI;
                    case '.' -> DOT;
                    default -> OTHER;
                };
            }
            return switch (type) {
                case NUMBER -> NUMBER;
                case STRING -> STRING;
                case QUOTED_IDENTIFIER -> QUOTED_IDENT;
                case USER_VARIABLE -> isAccountHost() ? ACCOUNT_HOST : USER_VAR;
                case SYSTEM_VARIABLE -> SYSTEM_VAR;
                case ASSIGN -> ASSIGN;
                case COMMENT -> COMMENT;
                case UNTERMINATED -> sql.charAt(tokenStart) == '/' ? COMMENT : OTHER;
                default -> OTHER;
            };
        }

        /**
         * An {@code @...} glued to a preceding string, quoted identifier or non-keyword word is the host part of an
         * account ({@code 'user'@'host'}, {@code bob@localhost}), not a user variable. Glued: the character before
         * the {@code @} is the last of that token (a quote, or a letter of the word).
         */
        private boolean isAccountHost() {
            if (tokenStart == 0) {
                return false;
            }
            char before = sql.charAt(tokenStart - 1);
            return switch (prevType) {
                case STRING, QUOTED_IDENT -> before == '\'' || before == '"' || before == '`';
                case WORD -> prev1 == null && SqlTokenizer.isWordPart(before);
                default -> false;
            };
        }

        // ---------------------------------------------------------------- statement level

        private void onToken(int type) {
            Keyword kw = type == WORD && prevType != DOT ? Keyword.lookup(sql, tokenStart, tokenEnd) : null;
            if (pendingEnd) {
                resolveEnd(kw);
            }
            if (type == SEMI && blockDepth == 0) {
                endStatement();
                return;
            }
            if (pendingUserVariable) {
                // @x := ... assigns; any other @x reads
                flags |= type == ASSIGN
                        ? StatementFlag.SETS_USER_VARIABLES.bit() : StatementFlag.USES_USER_VARIABLES.bit();
                pendingUserVariable = false;
            }
            if (pendingFunction != null) {
                if (type == LPAREN) {
                    flags |= pendingFunction.functionFlag.bit();
                }
                pendingFunction = null;
            }
            if (analyzeFlags && (flags & StatementFlag.STORED_FUNCTION.bit()) == 0) {
                trackCall(type, kw);
            }
            boolean consumed = phaseStep(type, kw);
            if (!consumed && analyzeFlags) {
                generic(type, kw);
            }
            if (blockTracking) {
                block(kw);
            }
            if (type == LPAREN) {
                depth++;
            } else if (type == RPAREN && depth > 0) {
                depth--;
            }
            prev2 = prev1;
            prev1 = kw;
            prevType = type;
            tokenIndex++;
        }

        /** Returns true when the token is fully handled and needs no generic flag detection. */
        private boolean phaseStep(int type, Keyword kw) {
            switch (phase) {
                case P_START:
                    return start(type, kw);
                case P_WITH:
                    withHeader(type, kw);
                    return false;
                case P_SHOW:
                    show(kw);
                    return false;
                case P_EXPLAIN:
                    explain(type, kw);
                    return false;
                case P_ANALYZE:
                    analyze(type, kw);
                    return false;
                case P_BEGIN:
                    if (kw != Keyword.WORK) {
                        phase = P_BODY;
                        if (kw == Keyword.NOT) {
                            // BEGIN NOT ATOMIC ... END: a MariaDB compound statement, not a transaction.
                            kind = StatementKind.WRITE;
                            flavor = null;
                            blockTracking = true;
                            blockDepth = 1;
                        }
                    }
                    return true;
                case P_START_TXN:
                    phase = P_BODY;
                    if (kw == Keyword.TRANSACTION) {
                        kind = StatementKind.TRANSACTION_BEGIN;
                        flavor = TransactionFlavor.DEFAULT;
                    }
                    return true;
                case P_ROLLBACK:
                    if (kw != Keyword.WORK) {
                        phase = P_BODY;
                        if (kw == Keyword.TO) {
                            kind = StatementKind.TRANSACTION_SAVEPOINT;
                        }
                    }
                    return true;
                case P_XA:
                    xa(kw);
                    return true;
                case P_SET_ITEM:
                    return setItem(type, kw);
                case P_SET_VALUE:
                    if (type == COMMA && depth == baseDepth) {
                        phase = P_SET_ITEM;
                        return true;
                    }
                    return false;
                case P_SET_STATEMENT:
                    if (kw == Keyword.FOR && depth == baseDepth) {
                        phase = P_START;
                        return true;
                    }
                    return false;
                case P_CREATE:
                    return createHeader(kw);
                default:
                    body(kw);
                    return false;
            }
        }

        private boolean start(int type, Keyword kw) {
            if (type == LPAREN) {
                return false;
            }
            verb = kw;
            verbIndex = tokenIndex;
            phase = P_BODY;
            kind = StatementKind.WRITE;
            if (kw == null) {
                return false;
            }
            switch (kw) {
                case SELECT, TABLE, VALUES, HELP -> kind = StatementKind.READ;
                case WITH -> enterWith();
                case SHOW -> {
                    kind = StatementKind.READ;
                    phase = P_SHOW;
                }
                case DESCRIBE, DESC, EXPLAIN -> phase = P_EXPLAIN;
                case ANALYZE -> phase = P_ANALYZE;
                case BEGIN -> {
                    kind = StatementKind.TRANSACTION_BEGIN;
                    flavor = TransactionFlavor.DEFAULT;
                    phase = P_BEGIN;
                }
                case START -> phase = P_START_TXN;
                case COMMIT -> kind = StatementKind.TRANSACTION_END;
                case ROLLBACK -> {
                    kind = StatementKind.TRANSACTION_END;
                    phase = P_ROLLBACK;
                }
                case SAVEPOINT, RELEASE -> kind = StatementKind.TRANSACTION_SAVEPOINT;
                case XA -> phase = P_XA;
                case SET -> {
                    phase = P_SET_ITEM;
                    baseDepth = depth;
                }
                case USE -> kind = StatementKind.SESSION_STATE;
                case LOCK, UNLOCK -> flags |= StatementFlag.TABLE_LOCK.bit();
                case CREATE, ALTER -> phase = P_CREATE;
                default -> {
                    // every other statement is a write
                }
            }
            return true;
        }

        private void enterWith() {
            kind = StatementKind.WRITE;
            phase = P_WITH;
            baseDepth = depth;
            afterCteBody = false;
        }

        /**
         * {@code WITH [RECURSIVE] name [(cols)] AS (query) [, ...] main}: the main statement is the first
         * {@code SELECT}/{@code TABLE}/{@code VALUES}/{@code UPDATE}/{@code DELETE}/... at the WITH's own paren depth,
         * or a {@code (} right after a CTE body (a parenthesized main query).
         */
        private void withHeader(int type, Keyword kw) {
            if (depth == baseDepth) {
                if (kw != null) {
                    switch (kw) {
                        case SELECT, TABLE, VALUES -> {
                            kind = StatementKind.READ;
                            phase = P_BODY;
                            verb = kw;
                            return;
                        }
                        case UPDATE, DELETE, INSERT, REPLACE -> {
                            kind = StatementKind.WRITE;
                            phase = P_BODY;
                            verb = kw;
                            return;
                        }
                        default -> {
                            // CTE name, RECURSIVE, AS
                        }
                    }
                }
                if (type == LPAREN && afterCteBody) {
                    kind = StatementKind.READ;
                    phase = P_BODY;
                    return;
                }
                afterCteBody = false;
            } else if (type == RPAREN && depth == baseDepth + 1) {
                afterCteBody = true;
            }
        }

        private void show(Keyword kw) {
            if (kw == Keyword.FULL || kw == Keyword.EXTENDED) {
                return;
            }
            phase = P_BODY;
            if (kw == null) {
                return;
            }
            switch (kw) {
                case WARNINGS, ERRORS, COUNT, PROFILE, PROFILES -> flags |= StatementFlag.PREVIOUS_STATEMENT.bit();
                case STATUS, VARIABLES, PROCESSLIST, MASTER, BINARY, SLAVE, REPLICA, REPLICAS, BINLOG, RELAYLOG,
                        ENGINE, OPEN, GLOBAL, SESSION, LOCAL, ALL, INNODB, MUTEX, EXPLAIN, ANALYZE ->
                        flags |= StatementFlag.SERVER_STATE.bit();
                default -> {
                    // catalog reads: SHOW TABLES, SHOW CREATE ..., SHOW COLUMNS, SHOW GRANTS, ...
                }
            }
        }

        private void explain(int type, Keyword kw) {
            if (formatSkip > 0) {
                formatSkip--;
                return;
            }
            if (kw == Keyword.EXTENDED || kw == Keyword.PARTITIONS || kw == Keyword.ANALYZE
                    || kw == Keyword.INTO || type == USER_VAR) {
                // modifiers, and MySQL 8.4's EXPLAIN FORMAT=JSON INTO @var (seen by the generic rules)
                return;
            }
            if (kw == Keyword.FORMAT) {
                formatSkip = 2;
                return;
            }
            phase = P_BODY;
            if (type == LPAREN) {
                kind = StatementKind.READ;
            } else if (kw == Keyword.SELECT || kw == Keyword.TABLE || kw == Keyword.VALUES) {
                kind = StatementKind.READ;
                verb = kw;
            } else if (kw == Keyword.WITH) {
                verb = kw;
                enterWith();
            } else if (kw == Keyword.FOR) {
                kind = StatementKind.READ;
                flags |= StatementFlag.SERVER_STATE.bit();
            } else if (kw == Keyword.INSERT || kw == Keyword.UPDATE || kw == Keyword.DELETE
                    || kw == Keyword.REPLACE) {
                kind = StatementKind.WRITE;
            } else if (type == WORD || type == QUOTED_IDENT) {
                kind = StatementKind.READ;
            } else {
                kind = StatementKind.WRITE;
            }
        }

        private void analyze(int type, Keyword kw) {
            if (formatSkip > 0) {
                formatSkip--;
                return;
            }
            if (kw == Keyword.FORMAT) {
                formatSkip = 2;
                return;
            }
            phase = P_BODY;
            if (type == LPAREN || kw == Keyword.SELECT) {
                kind = StatementKind.READ;
            } else if (kw == Keyword.WITH) {
                verb = kw;
                enterWith();
            }
        }

        private void xa(Keyword kw) {
            phase = P_BODY;
            if (kw == Keyword.START || kw == Keyword.BEGIN) {
                kind = StatementKind.TRANSACTION_BEGIN;
                flavor = TransactionFlavor.READ_WRITE;
            } else if (kw == Keyword.COMMIT || kw == Keyword.ROLLBACK) {
                kind = StatementKind.TRANSACTION_END;
            }
        }

        /** At the start of a {@code SET} assignment (after {@code SET} or a comma at the statement's depth). */
        private boolean setItem(int type, Keyword kw) {
            if (kw != null) {
                switch (kw) {
                    case SESSION, LOCAL -> {
                        return true;
                    }
                    case GLOBAL, PERSIST, PERSIST_ONLY -> {
                        // The latest scope modifier applies to the following assignments too.
                        setGlobal = true;
                        return true;
                    }
                    case NAMES, CHARACTER, CHARSET, TRANSACTION, ROLE -> {
                        setSessionItem = true;
                        phase = P_SET_VALUE;
                        return true;
                    }
                    case PASSWORD, DEFAULT, RESOURCE -> {
                        setGlobal = true;
                        phase = P_BODY;
                        return true;
                    }
                    case STATEMENT -> {
                        phase = P_SET_STATEMENT;
                        return true;
                    }
                    default -> {
                        // a variable whose name happens to be a keyword
                    }
                }
            }
            phase = P_SET_VALUE;
            switch (type) {
                case USER_VAR -> flags |= StatementFlag.SETS_USER_VARIABLES.bit();
                case SYSTEM_VAR -> {
                    if (systemVariableIsGlobal()) {
                        setGlobal = true;
                    } else {
                        setSessionItem = true;
                    }
                }
                case WORD, QUOTED_IDENT -> setSessionItem = true;
                default -> {
                    setGlobal = true;
                    phase = P_BODY;
                    return false;
                }
            }
            return true;
        }

        private boolean createHeader(Keyword kw) {
            if (kw == null) {
                return true;
            }
            switch (kw) {
                case TEMPORARY -> {
                    if (verb == Keyword.CREATE) {
                        flags |= StatementFlag.TEMPORARY_TABLE.bit();
                    }
                }
                case PROCEDURE, FUNCTION, TRIGGER, EVENT, PACKAGE -> {
                    // A stored program definition: its body runs later, so its statements set no flags now,
                    // and its BEGIN ... END block holds semicolons that do not end the statement.
                    analyzeFlags = false;
                    blockTracking = true;
                    phase = P_BODY;
                }
                case TABLE, VIEW, INDEX, DATABASE, SCHEMA, USER, ROLE, SEQUENCE, SERVER, TABLESPACE -> phase = P_BODY;
                default -> {
                    // OR REPLACE, DEFINER = ..., ALGORITHM = ..., UNIQUE, ...
                }
            }
            return true;
        }

        private void body(Keyword kw) {
            if (verb == null) {
                return;
            }
            int position = tokenIndex - verbIndex;
            switch (verb) {
                case START -> {
                    if (kind == StatementKind.TRANSACTION_BEGIN && prev1 == Keyword.READ) {
                        sawReadOnly |= kw == Keyword.ONLY;
                        sawReadWrite |= kw == Keyword.WRITE;
                    }
                }
                case DROP -> {
                    if (kw == Keyword.TEMPORARY && position == 1) {
                        flags |= StatementFlag.TEMPORARY_TABLE.bit();
                    }
                }
                case LOAD -> {
                    if (position == 1 && (kw == Keyword.DATA || kw == Keyword.XML)) {
                        flags |= StatementFlag.LOAD_DATA.bit();
                    } else if (kw == Keyword.LOCAL && position <= 3 && (flags & StatementFlag.LOAD_DATA.bit()) != 0) {
                        flags |= StatementFlag.LOAD_DATA_LOCAL.bit();
                    }
                }
                case FLUSH -> {
                    if ((kw == Keyword.LOCK && prev1 == Keyword.READ)
                            || (kw == Keyword.EXPORT && prev1 == Keyword.FOR)) {
                        flags |= StatementFlag.TABLE_LOCK.bit();
                    }
                }
                case GET -> {
                    if (kw == Keyword.DIAGNOSTICS && position <= 2) {
                        kind = StatementKind.READ;
                        flags |= StatementFlag.PREVIOUS_STATEMENT.bit();
                    }
                }
                default -> {
                    // nothing verb-specific
                }
            }
        }

        /** Flags any statement can carry, wherever the words appear. */
        private void generic(int type, Keyword kw) {
            if (type == USER_VAR) {
                // Targets: INTO @a, @b; GET DIAGNOSTICS @n = ...; SET @x inside a compound statement.
                boolean target = prev1 == Keyword.INTO || prev1 == Keyword.SET || verb == Keyword.GET
                        || (intoList && prevType == COMMA);
                intoList = target && (prev1 == Keyword.INTO || intoList);
                if (target) {
                    flags |= StatementFlag.SETS_USER_VARIABLES.bit();
                } else {
                    pendingUserVariable = true;
                }
                return;
            }
            if (type != COMMA) {
                intoList = false;
            }
            switch (type) {
                case SYSTEM_VAR -> flags |= systemVariableFlag();
                case WORD -> {
                    if (kw == null) {
                        return;
                    }
                    if (kw.functionFlag != null) {
                        pendingFunction = kw;
                    }
                    switch (kw) {
                        case FOR -> {
                            if (prev1 == Keyword.VALUE && prev2 == Keyword.NEXT) {
                                flags |= StatementFlag.SEQUENCE.bit();
                            } else if (prev1 == Keyword.VALUE && prev2 == Keyword.PREVIOUS) {
                                flags |= StatementFlag.SESSION_FUNCTION.bit();
                            }
                        }
                        case UPDATE, SHARE -> {
                            if (prev1 == Keyword.FOR) {
                                flags |= StatementFlag.LOCKING_READ.bit();
                            }
                        }
                        case MODE -> {
                            if (prev1 == Keyword.SHARE && prev2 == Keyword.IN) {
                                flags |= StatementFlag.LOCKING_READ.bit();
                            }
                        }
                        case OUTFILE, DUMPFILE -> {
                            if (prev1 == Keyword.INTO) {
                                flags |= StatementFlag.INTO_FILE.bit();
                            }
                        }
                        case TEMPORARY -> {
                            // also inside BEGIN NOT ATOMIC ... END, where CREATE is not the statement's verb
                            if (prev1 == Keyword.CREATE || prev1 == Keyword.REPLACE || prev1 == Keyword.DROP) {
                                flags |= StatementFlag.TEMPORARY_TABLE.bit();
                            }
                        }
                        default -> {
                            // no flag
                        }
                    }
                }
                default -> {
                    // punctuation, literals
                }
            }
        }

        /**
         * Follows a name that may be a stored function: {@code name (} is a call unless what is inside the parentheses
         * is a plain list of names followed by {@code AS (} (a CTE's column list: {@code WITH c (a, b) AS (...)}).
         * Runs before the token changes {@link #depth}.
         */
        private void trackCall(int type, Keyword kw) {
            switch (call) {
                case CALL_NAME -> {
                    call = CALL_NONE;
                    if (type == LPAREN) {
                        call = CALL_ARGS;
                        callDepth = depth;
                        callArgsPlain = true;
                        callArgsEmpty = true;
                        return;
                    }
                }
                case CALL_ARGS -> {
                    if (type == RPAREN && depth == callDepth + 1) {
                        if (callArgsPlain && !callArgsEmpty) {
                            call = CALL_CLOSED;
                        } else {
                            confirmCall();
                        }
                        return;
                    }
                    callArgsEmpty = false;
                    if (type == WORD || type == QUOTED_IDENT || type == COMMA) {
                        return;
                    }
                    // an expression: no column list looks like this
                    confirmCall();
                    return;
                }
                case CALL_CLOSED -> {
                    if (kw == Keyword.AS) {
                        call = CALL_AS;
                        return;
                    }
                    confirmCall();
                }
                case CALL_AS -> {
                    call = CALL_NONE;
                    if (type != LPAREN) {
                        confirmCall();
                    }
                    return;
                }
                default -> {
                    // no candidate pending
                }
            }
            if ((flags & StatementFlag.STORED_FUNCTION.bit()) == 0 && isCallCandidate(type, kw)) {
                call = CALL_NAME;
            }
        }

        /** Whether the current token ({@code kw} if a keyword), if {@code (} follows, may name a stored function. */
        private boolean isCallCandidate(int type, Keyword kw) {
            if (type == STRING) {
                // "f"(...) under an ANSI_QUOTES that the server did not report (MySQL); under the default sql_mode a
                // string followed by ( is a syntax error
                return sql.charAt(tokenStart) == '"' && prev1 != Keyword.AS && prevType != RPAREN;
            }
            if (type == QUOTED_IDENT) {
                // `f`(...), `db`.`f`(...); not a derived table's alias before its column list
                return prevType == DOT || (prev1 != Keyword.AS && prevType != RPAREN);
            }
            if (type != WORD) {
                return false;
            }
            if (prevType == DOT) {
                // db.f(...): built-ins are never qualified
                return true;
            }
            char first = sql.charAt(tokenStart);
            if (first >= '0' && first <= '9') {
                return false;
            }
            if (prev1 == Keyword.AS || prevType == RPAREN) {
                // AS dt (a, b) and (SELECT ...) dt (a, b): a derived table's column list
                return false;
            }
            return kw != null ? !kw.builtin : !BuiltinFunctions.contains(sql, tokenStart, tokenEnd);
        }

        private void confirmCall() {
            call = CALL_NONE;
            flags |= StatementFlag.STORED_FUNCTION.bit();
        }

        /** BEGIN and CASE open a block, END closes one unless it is END IF/LOOP/WHILE/REPEAT/FOR. */
        private void block(Keyword kw) {
            if (kw == Keyword.BEGIN || (kw == Keyword.CASE && prev1 != Keyword.END)) {
                blockDepth++;
            } else if (kw == Keyword.END) {
                pendingEnd = true;
            }
        }

        private void resolveEnd(Keyword next) {
            pendingEnd = false;
            if (next == Keyword.IF || next == Keyword.LOOP || next == Keyword.WHILE || next == Keyword.REPEAT
                    || next == Keyword.FOR) {
                return;
            }
            if (blockDepth > 0) {
                blockDepth--;
            }
        }

        private void endStatement() {
            if (tokenIndex == 0) {
                resetStatement();
                return;
            }
            if (pendingUserVariable) {
                flags |= StatementFlag.USES_USER_VARIABLES.bit();
            }
            if (call >= CALL_ARGS) {
                // the text ended inside or right after the parentheses: f(a) at the very end
                confirmCall();
            }
            StatementKind k = kind;
            if (verb == Keyword.SET) {
                k = setSessionItem && !setGlobal ? StatementKind.SESSION_STATE : StatementKind.WRITE;
            }
            if (k != StatementKind.READ) {
                // A write goes to the primary anyway, and its "name (" is often no call (INSERT INTO t (a, b),
                // CREATE TABLE t (...)). A session-state change runs on the primary and is replayed as it is.
                flags &= ~StatementFlag.STORED_FUNCTION.bit();
            }
            TransactionFlavor f = flavor;
            if (k == StatementKind.TRANSACTION_BEGIN && verb == Keyword.START) {
                f = sawReadWrite ? TransactionFlavor.READ_WRITE
                        : sawReadOnly ? TransactionFlavor.READ_ONLY : TransactionFlavor.DEFAULT;
            }
            if ((k == StatementKind.READ || k == StatementKind.SESSION_STATE) && (flags & MAKES_WRITE) != 0) {
                k = StatementKind.WRITE;
            }
            statementCount++;
            textFlags |= flags;
            if (k == StatementKind.SESSION_STATE) {
                sawSessionState = true;
            } else {
                sawOther = true;
                if (strongest == null || k.compareTo(strongest) > 0) {
                    strongest = k;
                    strongestFlavor = f;
                } else if (k == StatementKind.TRANSACTION_BEGIN && strongest == StatementKind.TRANSACTION_BEGIN
                        && f.compareTo(strongestFlavor) > 0) {
                    // Only between two transaction starts: after a stronger kind (a write) there is no flavour.
                    strongestFlavor = f;
                }
            }
            resetStatement();
        }

        private void resetStatement() {
            kind = StatementKind.WRITE;
            flavor = null;
            flags = 0;
            verb = null;
            verbIndex = 0;
            phase = P_START;
            tokenIndex = 0;
            depth = 0;
            baseDepth = 0;
            prevType = EOF;
            prev1 = null;
            prev2 = null;
            pendingFunction = null;
            pendingUserVariable = false;
            pendingEnd = false;
            analyzeFlags = true;
            blockTracking = false;
            blockDepth = 0;
            afterCteBody = false;
            intoList = false;
            formatSkip = 0;
            sawReadOnly = false;
            sawReadWrite = false;
            setGlobal = false;
            setSessionItem = false;
            call = CALL_NONE;
            callDepth = 0;
            callArgsPlain = false;
            callArgsEmpty = false;
        }

        private StatementClass result() {
            StatementKind k;
            Optional<TransactionFlavor> f = Optional.empty();
            if (statementCount == 0) {
                k = StatementKind.WRITE;
            } else if (sawSessionState && sawOther) {
                k = StatementKind.WRITE;
                textFlags |= StatementFlag.MIXED_SESSION_STATE.bit();
            } else if (sawSessionState) {
                k = StatementKind.SESSION_STATE;
            } else {
                k = strongest;
                if (k == StatementKind.TRANSACTION_BEGIN) {
                    f = Optional.of(strongestFlavor);
                }
            }
            ModeHint hint = hintReadWrite ? ModeHint.READ_WRITE : hintReadOnly ? ModeHint.READ_ONLY : ModeHint.NONE;
            if (textFlags == 0 && hint == ModeHint.NONE && statementCount == 1 && f.isEmpty()) {
                return StatementClass.plain(k); // the usual statement, answered without a new object
            }
            Set<StatementFlag> set = Set.of();
            if (textFlags != 0) {
                EnumSet<StatementFlag> found = EnumSet.noneOf(StatementFlag.class);
                for (StatementFlag flag : FLAGS) {
                    if ((textFlags & flag.bit()) != 0) {
                        found.add(flag);
                    }
                }
                set = found;
            }
            return new StatementClass(k, f, set, hint, statementCount);
        }

        // ---------------------------------------------------------------- system variables

        /** {@code @@global.x}, {@code @@persist.x}, {@code @@persist_only.x} (the current token is a SYSTEM_VAR). */
        private boolean systemVariableIsGlobal() {
            int start = tokenStart + 2;
            return startsWithIgnoreCase(start, "GLOBAL.") || startsWithIgnoreCase(start, "PERSIST.")
                    || startsWithIgnoreCase(start, "PERSIST_ONLY.");
        }

        private int systemVariableFlag() {
            int start = tokenStart + 2;
            if (systemVariableIsGlobal()) {
                return StatementFlag.SERVER_STATE.bit();
            }
            if (startsWithIgnoreCase(start, "SESSION.")) {
                start += "SESSION.".length();
            } else if (startsWithIgnoreCase(start, "LOCAL.")) {
                start += "LOCAL.".length();
            }
            if (equalsIgnoreCase(start, tokenEnd, "IDENTITY") || equalsIgnoreCase(start, tokenEnd, "LAST_INSERT_ID")
                    || equalsIgnoreCase(start, tokenEnd, "INSERT_ID") || equalsIgnoreCase(start, tokenEnd, "LAST_GTID")) {
                return StatementFlag.SESSION_FUNCTION.bit();
            }
            if (equalsIgnoreCase(start, tokenEnd, "WARNING_COUNT")
                    || equalsIgnoreCase(start, tokenEnd, "ERROR_COUNT")) {
                return StatementFlag.PREVIOUS_STATEMENT.bit();
            }
            // Whether the session talks to a writable server: answer as the primary would, so that clients
            // probing for a primary (failover-aware drivers and pools) are not misled by a replica's answer.
            if (equalsIgnoreCase(start, tokenEnd, "READ_ONLY") || equalsIgnoreCase(start, tokenEnd, "SUPER_READ_ONLY")) {
                return StatementFlag.SERVER_STATE.bit();
            }
            // Any other session-scope variable (@@server_id, @@version, @@sql_mode, ...) is a plain read: the
            // session's settings are replayed on its replica connection, and operators expect
            // SELECT @@server_id to show where reads go.
            return 0;
        }

        // ---------------------------------------------------------------- comments

        /** Looks for a routing hint in the current comment ({@code closed} unless the text ends inside it). */
        private void comment(boolean closed) {
            switch (sql.charAt(tokenStart)) {
                case '#' -> checkHint(tokenStart + 1, tokenEnd, false);
                case '-' -> checkHint(tokenStart + 2, tokenEnd, true);
                default -> checkHint(tokenStart + 2, closed ? tokenEnd - 2 : tokenEnd, true);
            }
        }

        /** Recognises {@code [#] mode = READWRITE|READONLY} at the start of a comment body. */
        private void checkHint(int from, int to, boolean needsHash) {
            int i = skipSpaces(from, to);
            if (needsHash) {
                if (i >= to || sql.charAt(i) != '#') {
                    return;
                }
                i = skipSpaces(i + 1, to);
            }
            if (!regionMatchesIgnoreCase(i, to, "MODE")) {
                return;
            }
            i = skipSpaces(i + 4, to);
            if (i >= to || sql.charAt(i) != '=') {
                return;
            }
            i = skipSpaces(i + 1, to);
            if (regionMatchesIgnoreCase(i, to, "READWRITE") && wordEnds(i + 9, to)) {
                hintReadWrite = true;
            } else if (regionMatchesIgnoreCase(i, to, "READONLY") && wordEnds(i + 8, to)) {
                hintReadOnly = true;
            }
        }

        private boolean wordEnds(int i, int to) {
            return i >= to || !SqlTokenizer.isWordPart(sql.charAt(i));
        }

        private int skipSpaces(int i, int to) {
            while (i < to && sql.charAt(i) <= ' ') {
                i++;
            }
            return i;
        }

        private boolean regionMatchesIgnoreCase(int start, int end, String upper) {
            if (end - start < upper.length()) {
                return false;
            }
            for (int i = 0; i < upper.length(); i++) {
                char c = sql.charAt(start + i);
                if (c >= 'a' && c <= 'z') {
                    c = (char) (c - ('a' - 'A'));
                }
                if (c != upper.charAt(i)) {
                    return false;
                }
            }
            return true;
        }

        private boolean startsWithIgnoreCase(int start, String upper) {
            return regionMatchesIgnoreCase(start, tokenEnd, upper);
        }

        private boolean equalsIgnoreCase(int start, int end, String upper) {
            return end - start == upper.length() && regionMatchesIgnoreCase(start, end, upper);
        }

        private static int makesWriteMask() {
            int mask = 0;
            for (StatementFlag flag : FLAGS) {
                if (flag.effect().makesWrite()) {
                    mask |= flag.bit();
                }
            }
            return mask;
        }
    }
}
