package io.gantry.proxy;

/**
 * A small SQL tokenizer for the statements whose meaning the proxy changes ({@link SessionIdentitySql}): words,
 * string literals, quoted identifiers and punctuation, with comments skipped. The content of executable comments
 * ({@code /*! ... *&#47;}, {@code /*!50000 ... *&#47;}, MariaDB's {@code /*M! ... *&#47;}) is code, because the
 * server runs it. One token at a time, no allocation.
 */
final class SqlTokenizer {

    static final int EOF = 0;
    static final int WORD = 1;
    static final int STRING = 2;
    static final int QUOTED_IDENT = 3;
    static final int SEMI = 4;
    static final int DOT = 5;
    static final int LPAREN = 6;
    static final int RPAREN = 7;
    static final int OTHER = 8;
    static final int VARIABLE = 9;

    private final String sql;
    private final boolean backslashEscapes;
    private int pos;
    private boolean inExecutableComment;
    private int start;
    private int end;

    /**
     * @param backslashEscapes whether a backslash escapes the next character in a string literal (off under
     *        {@code NO_BACKSLASH_ESCAPES})
     */
    SqlTokenizer(String sql, boolean backslashEscapes) {
        this.sql = sql;
        this.backslashEscapes = backslashEscapes;
    }

    /** The start of the last token. */
    int start() {
        return start;
    }

    /** The end (exclusive) of the last token. */
    int end() {
        return end;
    }

    /** Whether the last token spells {@code upper} in any letter case. */
    boolean is(String upper) {
        return end - start == upper.length() && sql.regionMatches(true, start, upper, 0, upper.length());
    }

    /** The next token's type; {@link #start()} and {@link #end()} locate it. */
    int next() {
        int length = sql.length();
        while (pos < length) {
            char c = sql.charAt(pos);
            if (c <= ' ') {
                pos++;
                continue;
            }
            if (c == '#' || (c == '-' && pos + 1 < length && sql.charAt(pos + 1) == '-'
                    && (pos + 2 >= length || sql.charAt(pos + 2) <= ' '))) {
                int newline = sql.indexOf('\n', pos);
                pos = newline < 0 ? length : newline + 1;
                continue;
            }
            if (c == '/' && pos + 1 < length && sql.charAt(pos + 1) == '*') {
                int p = pos + 2;
                if (p < length && sql.charAt(p) == '!') {
                    p++;
                } else if (p + 1 < length && (sql.charAt(p) == 'M' || sql.charAt(p) == 'm') && sql.charAt(p + 1) == '!') {
                    p += 2;
                } else {
                    int close = sql.indexOf("*/", p);
                    pos = close < 0 ? length : close + 2;
                    continue;
                }
                while (p < length && sql.charAt(p) >= '0' && sql.charAt(p) <= '9') {
                    p++;
                }
                inExecutableComment = true;
                pos = p;
                continue;
            }
            if (c == '*' && inExecutableComment && pos + 1 < length && sql.charAt(pos + 1) == '/') {
                inExecutableComment = false;
                pos += 2;
                continue;
            }
            start = pos;
            int type;
            switch (c) {
                case '\'', '"' -> {
                    pos = skipQuoted(pos, c, backslashEscapes);
                    type = STRING;
                }
                case '`' -> {
                    pos = skipQuoted(pos, c, false);
                    type = QUOTED_IDENT;
                }
                case '@' -> {
                    // @user_var, @'quoted', @@system.var: one token, so that @kill is no KILL
                    pos++;
                    if (pos < length && sql.charAt(pos) == '@') {
                        pos++;
                    }
                    if (pos < length && (sql.charAt(pos) == '\'' || sql.charAt(pos) == '"' || sql.charAt(pos) == '`')) {
                        pos = skipQuoted(pos, sql.charAt(pos), sql.charAt(pos) != '`' && backslashEscapes);
                    } else {
                        while (pos < length && (isWordChar(sql.charAt(pos)) || sql.charAt(pos) == '.')) {
                            pos++;
                        }
                    }
                    type = VARIABLE;
                }
                case ';' -> {
                    pos++;
                    type = SEMI;
                }
                case '.' -> {
                    pos++;
                    type = DOT;
                }
                case '(' -> {
                    pos++;
                    type = LPAREN;
                }
                case ')' -> {
                    pos++;
                    type = RPAREN;
                }
                default -> {
                    if (isWordChar(c)) {
                        pos++;
                        while (pos < length && isWordChar(sql.charAt(pos))) {
                            pos++;
                        }
                        type = WORD;
                    } else {
                        pos++;
                        type = OTHER;
                    }
                }
            }
            end = pos;
            return type;
        }
        start = length;
        end = length;
        return EOF;
    }

    /**
     * The value of the string literal {@code sql[start, end)} (quotes removed, doubled quotes and, if enabled,
     * backslash escapes resolved).
     */
    static String literalValue(String sql, int start, int end, boolean backslashEscapes) {
        char quote = sql.charAt(start);
        StringBuilder out = new StringBuilder(end - start);
        int last = end - 1 > start && sql.charAt(end - 1) == quote ? end - 1 : end;
        for (int i = start + 1; i < last; i++) {
            char c = sql.charAt(i);
            if (c == '\\' && backslashEscapes && i + 1 < last) {
                char escaped = sql.charAt(++i);
                out.append(switch (escaped) {
                    case 'n' -> '\n';
                    case 't' -> '\t';
                    case 'r' -> '\r';
                    case 'b' -> '\b';
                    case '0' -> '\0';
                    case 'Z' -> '\u001A';
                    default -> escaped;
                });
            } else if (c == quote && i + 1 < last && sql.charAt(i + 1) == quote) {
                out.append(quote);
                i++;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private int skipQuoted(int open, char quote, boolean escapes) {
        int length = sql.length();
        int p = open + 1;
        while (p < length) {
            char c = sql.charAt(p);
            if (c == '\\' && escapes) {
                p += 2;
            } else if (c == quote) {
                if (p + 1 < length && sql.charAt(p + 1) == quote) {
                    p += 2;
                } else {
                    return p + 1;
                }
            } else {
                p++;
            }
        }
        return length;
    }

    static boolean isWordChar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$'
                || c >= 0x80;
    }
}
