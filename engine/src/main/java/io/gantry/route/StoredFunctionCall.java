package io.gantry.route;

/**
 * Whether a read may call a stored function ({@link StatementFlag#STORED_FUNCTION}), followed token by token: a name
 * that is not a built-in, then {@code (}, is a call unless what is inside the parentheses is a plain list of names
 * followed by {@code AS (}, a CTE's column list ({@code WITH c (a, b) AS (...)}). The states are an enum so that
 * {@link StatementScan} follows them in one field, without an object per classification.
 *
 * <p>Inside the parentheses anything but a name or a comma is a call, so a nested {@code (} never needs following:
 * the {@code )} that closes the list is the next one.
 */
enum StoredFunctionCall {
    /** No candidate pending. */
    NONE,
    /** A name that may be a stored function, if {@code (} follows. */
    NAME,
    /** Right after the {@code (}. */
    OPENED,
    /** Inside the parentheses, with only names and commas so far. */
    NAMES,
    /** After {@code name (a, b)}: a column list if {@code AS (} follows. */
    CLOSED,
    /** After {@code name (a, b) AS}. */
    AS,
    /** A call: the statement may call a stored function; nothing more to follow. */
    CALLED;

    /** The state after a token of class {@code type} ({@code kw} if a keyword); NONE when a new name may start. */
    StoredFunctionCall next(TokenClass type, Keyword kw) {
        return switch (this) {
            case NONE, CALLED -> this;
            case NAME -> type == TokenClass.LEFT_PAREN ? OPENED : NONE;
            case OPENED -> type == TokenClass.RIGHT_PAREN ? CALLED : inNameList(type) ? NAMES : CALLED;
            case NAMES -> type == TokenClass.RIGHT_PAREN ? CLOSED : inNameList(type) ? NAMES : CALLED;
            case CLOSED -> kw == Keyword.AS ? AS : CALLED;
            case AS -> type == TokenClass.LEFT_PAREN ? NONE : CALLED;
        };
    }

    /** Whether the statement, ending in this state, calls: it ended inside or right after the parentheses. */
    boolean callsAtEnd() {
        return this == OPENED || this == NAMES || this == CLOSED || this == AS || this == CALLED;
    }

    private static boolean inNameList(TokenClass type) {
        return type == TokenClass.WORD || type == TokenClass.QUOTED_IDENTIFIER || type == TokenClass.COMMA;
    }

    /**
     * Whether the token {@code sql[start, end)} of class {@code type} ({@code kw} if a keyword), after a token of
     * class {@code previous} ({@code previousKeyword} if a keyword), names a stored function if {@code (} follows.
     */
    static boolean mayName(TokenClass type, Keyword kw, CharSequence sql, int start, int end, TokenClass previous,
                           Keyword previousKeyword) {
        if (type == TokenClass.STRING) {
            // "f"(...) under an ANSI_QUOTES that the server did not report (MySQL); under the default sql_mode a
            // string followed by ( is a syntax error
            return sql.charAt(start) == '"' && previousKeyword != Keyword.AS && previous != TokenClass.RIGHT_PAREN;
        }
        if (type == TokenClass.QUOTED_IDENTIFIER) {
            // `f`(...), `db`.`f`(...); not a derived table's alias before its column list
            return previous == TokenClass.DOT
                    || (previousKeyword != Keyword.AS && previous != TokenClass.RIGHT_PAREN);
        }
        if (type != TokenClass.WORD) {
            return false;
        }
        if (previous == TokenClass.DOT) {
            // db.f(...): built-ins are never qualified
            return true;
        }
        char first = sql.charAt(start);
        if (first >= '0' && first <= '9') {
            return false;
        }
        if (previousKeyword == Keyword.AS || previous == TokenClass.RIGHT_PAREN) {
            // AS dt (a, b) and (SELECT ...) dt (a, b): a derived table's column list
            return false;
        }
        return kw != null ? !kw.builtin : !BuiltinFunctions.contains(sql, start, end);
    }
}
