package io.gantry.route;

/**
 * What a token is to the classifier's statement machine ({@link StatementScan}): a {@link SqlTokenizer.Type} refined
 * where the machine needs more than the tokenizer gives every reader of SQL, namely which symbol a symbol is, and
 * whether an {@code @name} is a user variable or the host of an account.
 */
enum TokenClass {
    /** No token yet in the current statement. */
    NONE,
    WORD,
    NUMBER,
    STRING,
    QUOTED_IDENTIFIER,
    USER_VARIABLE,
    SYSTEM_VARIABLE,
    LEFT_PAREN,
    RIGHT_PAREN,
    COMMA,
    SEMICOLON,
    DOT,
    ASSIGN,
    /** The {@code @host} of an account: {@code 'user'@'host'}, {@code bob@localhost}. */
    ACCOUNT_HOST,
    /** Any other symbol, and a string or quoted name that the text ends inside. */
    OTHER,
    /** A comment, terminated or not: it never reaches the statement machine. */
    COMMENT;

    /**
     * The class of the token at {@code start} of type {@code type}, after a token of class {@code previous} (with
     * {@code previousKeyword} if it was a keyword). Tested in the order of frequency: this runs for every token.
     */
    static TokenClass of(SqlTokenizer.Type type, CharSequence sql, int start, TokenClass previous,
                         Keyword previousKeyword) {
        if (type == SqlTokenizer.Type.WORD) {
            return WORD;
        }
        if (type == SqlTokenizer.Type.SYMBOL) {
            return switch (sql.charAt(start)) {
                case '(' -> LEFT_PAREN;
                case ')' -> RIGHT_PAREN;
                case ',' -> COMMA;
                case ';' -> SEMICOLON;
                case '.' -> DOT;
                default -> OTHER;
            };
        }
        return switch (type) {
            case NUMBER -> NUMBER;
            case STRING -> STRING;
            case QUOTED_IDENTIFIER -> QUOTED_IDENTIFIER;
            case USER_VARIABLE -> isAccountHost(sql, start, previous, previousKeyword) ? ACCOUNT_HOST : USER_VARIABLE;
            case SYSTEM_VARIABLE -> SYSTEM_VARIABLE;
            case ASSIGN -> ASSIGN;
            case COMMENT -> COMMENT;
            case UNTERMINATED -> sql.charAt(start) == '/' ? COMMENT : OTHER;
            default -> OTHER;
        };
    }

    /**
     * An {@code @...} glued to a preceding string, quoted identifier or non-keyword word is the host part of an
     * account ({@code 'user'@'host'}, {@code bob@localhost}), not a user variable. Glued: the character before the
     * {@code @} is the last of that token (a quote, or a letter of the word).
     */
    private static boolean isAccountHost(CharSequence sql, int start, TokenClass previous, Keyword previousKeyword) {
        if (start == 0) {
            return false;
        }
        char before = sql.charAt(start - 1);
        return switch (previous) {
            case STRING, QUOTED_IDENTIFIER -> before == '\'' || before == '"' || before == '`';
            case WORD -> previousKeyword == null && SqlTokenizer.isWordPart(before);
            default -> false;
        };
    }
}
