package io.gantry.route;

/**
 * Reads a text one token at a time, splits it into statements at the {@code ;} that ends one, and finds the flags
 * that do not depend on a statement's verb: user variables set or read, functions such as {@code LAST_INSERT_ID()},
 * system variables and words such as {@code FOR UPDATE} ({@link TokenFlags}), stored-function calls
 * ({@link StoredFunctionCall}), and the blocks of a compound statement, whose semicolons end no statement
 * ({@link CompoundBlocks}). Tokens come from {@link SqlTokenizer}, classed by {@link TokenClass}; comments go to
 * {@link HintComment}.
 *
 * <p>What a statement's verb makes of its tokens is {@link StatementPhases}, and the merge of a text's statements is
 * {@link TextVerdict}: they extend this class, in a sealed chain, rather than being its fields, so that a
 * classification is one object (and its tokenizer): it runs for every query.
 */
abstract sealed class StatementScan permits StatementPhases {

    private final CharSequence sql;

    // the current token
    private int tokenStart;
    private int tokenEnd;

    // the current statement
    private int flags;
    private int tokenIndex;
    private int depth;
    private TokenClass prevType;
    private Keyword prev1;
    private Keyword prev2;
    private Keyword pendingFunction;
    private boolean pendingUserVariable;
    private boolean intoList;
    private boolean analyzeFlags;
    private boolean blockTracking;
    private int blockDepth;
    private StoredFunctionCall call;

    StatementScan(CharSequence sql) {
        this.sql = sql;
        resetStatement();
    }

    /** The verb's step on the current token; true when it consumed the token, which then sets no flags here. */
    abstract boolean phaseStep(TokenClass type, Keyword kw);

    /** The current statement's verb, or null before it or when it is no keyword. */
    abstract Keyword verb();

    /** The current statement, not empty, ended: {@code statementFlags} are {@link StatementFlag#bit()}s. */
    abstract void statementEnded(int statementFlags);

    /** Takes the hint of a comment ({@link ModeHint#NONE} for most). */
    abstract void hintRead(ModeHint hint);

    /** Reads every token of {@code tokens}, the text read one way. */
    final void read(SqlTokenizer tokens) {
        for (SqlTokenizer.Type type = tokens.next(); type != null; type = tokens.next()) {
            tokenStart = tokens.start();
            tokenEnd = tokens.end();
            TokenClass token = TokenClass.of(type, sql, tokenStart, prevType, prev1);
            if (token == TokenClass.COMMENT) {
                hintRead(HintComment.of(sql, tokenStart, tokenEnd, type == SqlTokenizer.Type.COMMENT));
            } else {
                onToken(token);
            }
        }
        endStatement();
    }

    /** The depth of parentheses at the current token (before it, if it is one). */
    final int depth() {
        return depth;
    }

    /** How many tokens of the current statement came before the current one. */
    final int tokenIndex() {
        return tokenIndex;
    }

    /** The keyword before the current token, or null when it was none. */
    final Keyword previousKeyword() {
        return prev1;
    }

    final void addFlags(int bits) {
        flags |= bits;
    }

    final boolean hasFlag(StatementFlag flag) {
        return (flags & flag.bit()) != 0;
    }

    /** Whether the current token, a system variable, is {@code @@global.x} or {@code @@persist[_only].x}. */
    final boolean isGlobalVariable() {
        return TokenFlags.isGlobalVariable(sql, tokenStart, tokenEnd);
    }

    /**
     * The current statement defines a stored program: its body runs later, so its statements set no flags now, and
     * its BEGIN ... END block holds semicolons that do not end the statement.
     */
    final void readStoredProgram() {
        analyzeFlags = false;
        blockTracking = true;
    }

    /** The current statement is a compound statement whose BEGIN was the previous token (BEGIN NOT ATOMIC). */
    final void readCompoundStatement() {
        blockTracking = true;
        blockDepth = 1;
    }

    private void onToken(TokenClass type) {
        Keyword kw = type == TokenClass.WORD && prevType != TokenClass.DOT ? Keyword.lookup(sql, tokenStart, tokenEnd)
                : null;
        if (blockTracking) {
            blockDepth = CompoundBlocks.depthAt(blockDepth, prev1, kw);
        }
        if (type == TokenClass.SEMICOLON && blockDepth == 0) {
            endStatement();
            return;
        }
        if (pendingUserVariable) {
            // @x := ... assigns; any other @x reads
            flags |= type == TokenClass.ASSIGN
                    ? StatementFlag.SETS_USER_VARIABLES.bit() : StatementFlag.USES_USER_VARIABLES.bit();
            pendingUserVariable = false;
        }
        if (pendingFunction != null) {
            if (type == TokenClass.LEFT_PAREN) {
                flags |= pendingFunction.functionFlag.bit();
            }
            pendingFunction = null;
        }
        if (analyzeFlags && call != StoredFunctionCall.CALLED) {
            trackCall(type, kw);
        }
        boolean consumed = phaseStep(type, kw);
        if (!consumed && analyzeFlags) {
            generic(type, kw);
        }
        if (type == TokenClass.LEFT_PAREN) {
            depth++;
        } else if (type == TokenClass.RIGHT_PAREN && depth > 0) {
            depth--;
        }
        prev2 = prev1;
        prev1 = kw;
        prevType = type;
        tokenIndex++;
    }

    private void trackCall(TokenClass type, Keyword kw) {
        // NONE, the state at most tokens, is not stored again: storing an enum costs a GC write barrier each time
        if (call != StoredFunctionCall.NONE) {
            call = call.next(type, kw);
            if (call == StoredFunctionCall.CALLED) {
                flags |= StatementFlag.STORED_FUNCTION.bit();
                return;
            }
        }
        if (call == StoredFunctionCall.NONE
                && StoredFunctionCall.mayName(type, kw, sql, tokenStart, tokenEnd, prevType, prev1)) {
            call = StoredFunctionCall.NAME;
        }
    }

    /** Flags any statement can carry, wherever the words appear. */
    private void generic(TokenClass type, Keyword kw) {
        if (type == TokenClass.USER_VARIABLE) {
            // Targets: INTO @a, @b; GET DIAGNOSTICS @n = ...; SET @x inside a compound statement.
            boolean target = prev1 == Keyword.INTO || prev1 == Keyword.SET || verb() == Keyword.GET
                    || (intoList && prevType == TokenClass.COMMA);
            intoList = target && (prev1 == Keyword.INTO || intoList);
            if (target) {
                flags |= StatementFlag.SETS_USER_VARIABLES.bit();
            } else {
                pendingUserVariable = true;
            }
            return;
        }
        if (type != TokenClass.COMMA) {
            intoList = false;
        }
        if (type == TokenClass.SYSTEM_VARIABLE) {
            flags |= TokenFlags.ofSystemVariable(sql, tokenStart, tokenEnd);
        } else if (kw != null) {
            if (kw.functionFlag != null) {
                pendingFunction = kw;
            }
            flags |= TokenFlags.ofKeyword(kw, prev1, prev2);
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
        if (call.callsAtEnd()) {
            // the text ended inside or right after the parentheses: f(a) at the very end
            flags |= StatementFlag.STORED_FUNCTION.bit();
        }
        statementEnded(flags);
        resetStatement();
    }

    private void resetStatement() {
        flags = 0;
        tokenIndex = 0;
        depth = 0;
        prevType = TokenClass.NONE;
        prev1 = null;
        prev2 = null;
        pendingFunction = null;
        pendingUserVariable = false;
        intoList = false;
        analyzeFlags = true;
        blockTracking = false;
        blockDepth = 0;
        call = StoredFunctionCall.NONE;
    }
}
