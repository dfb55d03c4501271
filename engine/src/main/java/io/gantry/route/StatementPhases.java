package io.gantry.route;

/**
 * The per-verb phase machine of a statement: its verb (its first word) steers it through the verb's header
 * ({@code SHOW FULL}, {@code EXPLAIN FORMAT=JSON}, {@code SET GLOBAL}, {@code CREATE TEMPORARY}, the CTEs of a
 * {@code WITH}, {@code START TRANSACTION READ ONLY}, ...) into its body, and decides the statement's kind and
 * transaction flavour, and the flags that only some verbs' words set. {@link StatementScan} feeds it tokens; each
 * classified statement goes to {@link TextVerdict}. Sealed and abstract for the reason given on
 * {@link StatementScan}: one object per classification.
 */
abstract sealed class StatementPhases extends StatementScan permits TextVerdict {

    /** Where the current statement is: its verb moves it from START through the verb's header to BODY. */
    private enum Phase {
        START, BODY, WITH, SHOW, EXPLAIN, ANALYZE, BEGIN, START_TRANSACTION, ROLLBACK, XA,
        /** At the start of an assignment of a SET: after SET, or after a comma at the statement's depth. */
        SET_ITEM,
        /** In the value of a SET assignment. */
        SET_VALUE,
        /** In the variables of MariaDB's {@code SET STATEMENT ... FOR statement}. */
        SET_STATEMENT,
        /** In the header of a CREATE or ALTER, up to the kind of object. */
        CREATE
    }

    private StatementKind kind;
    private TransactionFlavor flavor;
    private Keyword verb;
    private int verbIndex;
    private Phase phase;
    private int baseDepth;
    private boolean afterCteBody;
    private int formatSkip;
    private boolean sawReadOnly;
    private boolean sawReadWrite;
    private boolean setGlobal;
    private boolean setSessionItem;

    StatementPhases(CharSequence sql) {
        super(sql);
        resetPhases();
    }

    /** Takes the class of one non-empty statement; {@code flags} are {@link StatementFlag#bit()}s. */
    abstract void statementClassified(StatementKind statementKind, TransactionFlavor statementFlavor, int flags);

    @Override
    final Keyword verb() {
        return verb;
    }

    @Override
    final void statementEnded(int statementFlags) {
        StatementKind k = kind;
        if (verb == Keyword.SET) {
            k = setSessionItem && !setGlobal ? StatementKind.SESSION_STATE : StatementKind.WRITE;
        }
        TransactionFlavor f = flavor;
        if (k == StatementKind.TRANSACTION_BEGIN && verb == Keyword.START) {
            f = sawReadWrite ? TransactionFlavor.READ_WRITE
                    : sawReadOnly ? TransactionFlavor.READ_ONLY : TransactionFlavor.DEFAULT;
        }
        statementClassified(k, f, statementFlags);
        resetPhases();
    }

    /** Whether the current phase consumed the token: {@link StatementScan} finds no flags in one. */
    @Override
    final boolean phaseStep(TokenClass type, Keyword kw) {
        return switch (phase) {
            case START -> start(type, kw);
            case BEGIN -> begin(kw);
            case START_TRANSACTION -> startTransaction(kw);
            case ROLLBACK -> rollback(kw);
            case XA -> xa(kw);
            case SET_ITEM -> setItem(type, kw);
            case SET_VALUE -> setValue(type);
            case SET_STATEMENT -> setStatement(kw);
            case CREATE -> createHeader(kw);
            // the body, and the headers of statements around a statement, watch the tokens without consuming them
            case BODY -> {
                body(kw);
                yield false;
            }
            case WITH -> {
                withHeader(type, kw);
                yield false;
            }
            case SHOW -> {
                show(kw);
                yield false;
            }
            case EXPLAIN -> {
                explain(type, kw);
                yield false;
            }
            case ANALYZE -> {
                analyze(type, kw);
                yield false;
            }
        };
    }

    private boolean start(TokenClass type, Keyword kw) {
        if (type == TokenClass.LEFT_PAREN) {
            return false;
        }
        verb = kw;
        verbIndex = tokenIndex();
        phase = Phase.BODY;
        kind = StatementKind.WRITE;
        if (kw == null) {
            return false;
        }
        switch (kw) {
            case SELECT, TABLE, VALUES, HELP -> kind = StatementKind.READ;
            case WITH -> enterWith();
            case SHOW -> {
                kind = StatementKind.READ;
                phase = Phase.SHOW;
            }
            case DESCRIBE, DESC, EXPLAIN -> phase = Phase.EXPLAIN;
            case ANALYZE -> phase = Phase.ANALYZE;
            case BEGIN -> {
                kind = StatementKind.TRANSACTION_BEGIN;
                flavor = TransactionFlavor.DEFAULT;
                phase = Phase.BEGIN;
            }
            case START -> phase = Phase.START_TRANSACTION;
            case PREPARE -> addFlags(StatementFlag.NAMED_PREPARE.bit());
            case COMMIT -> kind = StatementKind.TRANSACTION_END;
            case ROLLBACK -> {
                kind = StatementKind.TRANSACTION_END;
                phase = Phase.ROLLBACK;
            }
            case SAVEPOINT, RELEASE -> kind = StatementKind.TRANSACTION_SAVEPOINT;
            case XA -> phase = Phase.XA;
            case SET -> {
                phase = Phase.SET_ITEM;
                baseDepth = depth();
            }
            case USE -> kind = StatementKind.SESSION_STATE;
            case LOCK, UNLOCK -> addFlags(StatementFlag.TABLE_LOCK.bit());
            case CREATE, ALTER -> phase = Phase.CREATE;
            default -> {
                // every other statement is a write
            }
        }
        return true;
    }

    private void enterWith() {
        kind = StatementKind.WRITE;
        phase = Phase.WITH;
        baseDepth = depth();
        afterCteBody = false;
    }

    /**
     * {@code WITH [RECURSIVE] name [(cols)] AS (query) [, ...] main}: the main statement is the first
     * {@code SELECT}/{@code TABLE}/{@code VALUES}/{@code UPDATE}/{@code DELETE}/... at the WITH's own paren depth,
     * or a {@code (} right after a CTE body (a parenthesized main query).
     */
    private void withHeader(TokenClass type, Keyword kw) {
        if (depth() == baseDepth) {
            if (kw != null) {
                switch (kw) {
                    case SELECT, TABLE, VALUES -> {
                        kind = StatementKind.READ;
                        phase = Phase.BODY;
                        verb = kw;
                        return;
                    }
                    case UPDATE, DELETE, INSERT, REPLACE -> {
                        kind = StatementKind.WRITE;
                        phase = Phase.BODY;
                        verb = kw;
                        return;
                    }
                    default -> {
                        // CTE name, RECURSIVE, AS
                    }
                }
            }
            if (type == TokenClass.LEFT_PAREN && afterCteBody) {
                kind = StatementKind.READ;
                phase = Phase.BODY;
                return;
            }
            afterCteBody = false;
        } else if (type == TokenClass.RIGHT_PAREN && depth() == baseDepth + 1) {
            afterCteBody = true;
        }
    }

    private void show(Keyword kw) {
        if (kw == Keyword.FULL || kw == Keyword.EXTENDED) {
            return;
        }
        phase = Phase.BODY;
        if (kw != null) {
            addFlags(VerbFlags.ofShown(kw));
        }
    }

    private void explain(TokenClass type, Keyword kw) {
        if (formatSkip > 0) {
            formatSkip--;
            return;
        }
        if (kw == Keyword.EXTENDED || kw == Keyword.PARTITIONS || kw == Keyword.ANALYZE
                || kw == Keyword.INTO || type == TokenClass.USER_VARIABLE) {
            // modifiers, and MySQL 8.4's EXPLAIN FORMAT=JSON INTO @var (seen by the generic rules)
            return;
        }
        if (kw == Keyword.FORMAT) {
            formatSkip = 2;
            return;
        }
        phase = Phase.BODY;
        if (type == TokenClass.LEFT_PAREN) {
            kind = StatementKind.READ;
        } else if (kw == Keyword.SELECT || kw == Keyword.TABLE || kw == Keyword.VALUES) {
            kind = StatementKind.READ;
            verb = kw;
        } else if (kw == Keyword.WITH) {
            verb = kw;
            enterWith();
        } else if (kw == Keyword.FOR) {
            kind = StatementKind.READ;
            addFlags(StatementFlag.SERVER_STATE.bit());
        } else if (kw == Keyword.INSERT || kw == Keyword.UPDATE || kw == Keyword.DELETE
                || kw == Keyword.REPLACE) {
            kind = StatementKind.WRITE;
        } else if (type == TokenClass.WORD || type == TokenClass.QUOTED_IDENTIFIER) {
            kind = StatementKind.READ;
        } else {
            kind = StatementKind.WRITE;
        }
    }

    private void analyze(TokenClass type, Keyword kw) {
        if (formatSkip > 0) {
            formatSkip--;
            return;
        }
        if (kw == Keyword.FORMAT) {
            formatSkip = 2;
            return;
        }
        phase = Phase.BODY;
        if (type == TokenClass.LEFT_PAREN || kw == Keyword.SELECT) {
            kind = StatementKind.READ;
        } else if (kw == Keyword.WITH) {
            verb = kw;
            enterWith();
        }
    }

    private boolean begin(Keyword kw) {
        if (kw != Keyword.WORK) {
            phase = Phase.BODY;
            if (kw == Keyword.NOT) {
                // BEGIN NOT ATOMIC ... END: a MariaDB compound statement, not a transaction.
                kind = StatementKind.WRITE;
                flavor = null;
                readCompoundStatement();
            }
        }
        return true;
    }

    private boolean startTransaction(Keyword kw) {
        phase = Phase.BODY;
        if (kw == Keyword.TRANSACTION) {
            kind = StatementKind.TRANSACTION_BEGIN;
            flavor = TransactionFlavor.DEFAULT;
        }
        return true;
    }

    private boolean rollback(Keyword kw) {
        if (kw != Keyword.WORK) {
            phase = Phase.BODY;
            if (kw == Keyword.TO) {
                kind = StatementKind.TRANSACTION_SAVEPOINT;
            }
        }
        return true;
    }

    private boolean xa(Keyword kw) {
        phase = Phase.BODY;
        if (kw == Keyword.START || kw == Keyword.BEGIN) {
            kind = StatementKind.TRANSACTION_BEGIN;
            flavor = TransactionFlavor.READ_WRITE;
        } else if (kw == Keyword.COMMIT || kw == Keyword.ROLLBACK) {
            kind = StatementKind.TRANSACTION_END;
        }
        return true;
    }

    private boolean setItem(TokenClass type, Keyword kw) {
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
                    phase = Phase.SET_VALUE;
                    return true;
                }
                case PASSWORD, DEFAULT, RESOURCE -> {
                    setGlobal = true;
                    phase = Phase.BODY;
                    return true;
                }
                case STATEMENT -> {
                    phase = Phase.SET_STATEMENT;
                    return true;
                }
                default -> {
                    // a variable whose name happens to be a keyword
                }
            }
        }
        phase = Phase.SET_VALUE;
        switch (type) {
            case USER_VARIABLE -> addFlags(StatementFlag.SETS_USER_VARIABLES.bit());
            case SYSTEM_VARIABLE -> {
                if (isGlobalVariable()) {
                    setGlobal = true;
                } else {
                    setSessionItem = true;
                }
            }
            case WORD, QUOTED_IDENTIFIER -> setSessionItem = true;
            default -> {
                setGlobal = true;
                phase = Phase.BODY;
                return false;
            }
        }
        return true;
    }

    /** In the value of an assignment: a comma at the statement's depth starts the next one. */
    private boolean setValue(TokenClass type) {
        if (type == TokenClass.COMMA && depth() == baseDepth) {
            phase = Phase.SET_ITEM;
            return true;
        }
        return false;
    }

    /** {@code SET STATEMENT var = value, ... FOR statement}: the statement after FOR is what runs. */
    private boolean setStatement(Keyword kw) {
        if (kw == Keyword.FOR && depth() == baseDepth) {
            phase = Phase.START;
            return true;
        }
        return false;
    }

    private boolean createHeader(Keyword kw) {
        if (kw == null) {
            return true;
        }
        switch (kw) {
            case TEMPORARY -> {
                if (verb == Keyword.CREATE) {
                    addFlags(StatementFlag.TEMPORARY_TABLE.bit());
                }
            }
            case PROCEDURE, FUNCTION, TRIGGER, EVENT, PACKAGE -> {
                readStoredProgram();
                phase = Phase.BODY;
            }
            case TABLE, VIEW, INDEX, DATABASE, SCHEMA, USER, ROLE, SEQUENCE, SERVER, TABLESPACE -> phase = Phase.BODY;
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
        switch (verb) {
            case START -> {
                if (kind == StatementKind.TRANSACTION_BEGIN && previousKeyword() == Keyword.READ) {
                    sawReadOnly |= kw == Keyword.ONLY;
                    sawReadWrite |= kw == Keyword.WRITE;
                }
            }
            case GET -> {
                if (kw == Keyword.DIAGNOSTICS && tokenIndex() - verbIndex <= 2) {
                    kind = StatementKind.READ;
                    addFlags(StatementFlag.PREVIOUS_STATEMENT.bit() | StatementFlag.DIAGNOSTICS.bit());
                }
            }
            case DROP, LOAD, FLUSH -> addFlags(VerbFlags.ofBodyWord(verb, kw, tokenIndex() - verbIndex,
                    previousKeyword(), hasFlag(StatementFlag.LOAD_DATA)));
            default -> {
                // nothing verb-specific
            }
        }
    }

    private void resetPhases() {
        kind = StatementKind.WRITE;
        flavor = null;
        verb = null;
        verbIndex = 0;
        phase = Phase.START;
        baseDepth = 0;
        afterCteBody = false;
        formatSkip = 0;
        sawReadOnly = false;
        sawReadWrite = false;
        setGlobal = false;
        setSessionItem = false;
    }
}
