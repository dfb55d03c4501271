package io.gantry.admin;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits SQL text into tokens the way the MySQL lexer does, for {@link AdminStatements}.
 *
 * <p>Whitespace and comments ({@code -- } up to the end of the line, {@code #} likewise,
 * {@code /* *&#47;}) are dropped. The content of executable comments ({@code /*!50700 ... *&#47;},
 * MariaDB's {@code /*M!100100 ... *&#47;}) is code, whatever the version. String literals in
 * single or double quotes come back unescaped (doubled quotes, and backslash escapes unless
 * {@code NO_BACKSLASH_ESCAPES}); backquoted identifiers likewise. Text the lexer cannot finish
 * (an unterminated string, quoted identifier or comment) ends the list with an
 * {@link Kind#ERROR} token; the lexer never throws.
 */
final class SqlLexer {

    /** What a token is. */
    enum Kind {
        /** An unquoted identifier or keyword; {@link Token#text()} as written. */
        WORD,
        /** A backquoted identifier; {@link Token#text()} without the quotes, unescaped. */
        QUOTED_IDENT,
        /** A string literal; {@link Token#text()} is its value. */
        STRING,
        /** A run of decimal digits, possibly with a fraction ({@code 5.5}). */
        NUMBER,
        /** A user variable {@code @name} or a system variable {@code @@name}. */
        VARIABLE,
        /** Any other single character: {@code . , ( ) ; = -} and so on. */
        SYMBOL,
        /** Text that cannot be finished; {@link Token#text()} says what, e.g. "an unterminated string literal". */
        ERROR
    }

    /**
     * One token.
     *
     * @param kind  what it is
     * @param start offset of its first character in the SQL text
     * @param end   offset after its last character
     * @param text  see {@link Kind}
     */
    record Token(Kind kind, int start, int end, String text) {

        /** True for an unquoted word equal to {@code keyword}, ignoring case. */
        boolean isWord(String keyword) {
            return kind == Kind.WORD && text.equalsIgnoreCase(keyword);
        }

        /** True for an identifier, quoted or not, equal to {@code name} ignoring case. */
        boolean isIdentifier(String name) {
            return (kind == Kind.WORD || kind == Kind.QUOTED_IDENT) && text.equalsIgnoreCase(name);
        }

        /** True for the one-character symbol {@code c}. */
        boolean isSymbol(char c) {
            return kind == Kind.SYMBOL && text.charAt(0) == c;
        }
    }

    private static final int MAX_VERSION_DIGITS = 6;

    private final String sql;
    private final int length;
    private final boolean backslashEscapes;
    private final List<Token> tokens = new ArrayList<>();
    private int pos;
    private boolean inExecutableComment;

    private SqlLexer(String sql, boolean backslashEscapes) {
        this.sql = sql;
        this.length = sql.length();
        this.backslashEscapes = backslashEscapes;
    }

    /**
     * The tokens of {@code sql}.
     *
     * @param backslashEscapes false when the session runs with {@code NO_BACKSLASH_ESCAPES}
     */
    static List<Token> tokenize(String sql, boolean backslashEscapes) {
        return new SqlLexer(sql, backslashEscapes).run();
    }

    private List<Token> run() {
        while (pos < length) {
            char c = sql.charAt(pos);
            if (c <= ' ') {
                pos++;
            } else if (c == '-' && startsLineComment()) {
                skipLine();
            } else if (c == '#') {
                skipLine();
            } else if (c == '/' && at(pos + 1, '*')) {
                if (!blockComment()) {
                    break;
                }
            } else if (c == '*' && inExecutableComment && at(pos + 1, '/')) {
                inExecutableComment = false;
                pos += 2;
            } else if (c == '\'' || c == '"') {
                if (!quoted(c, Kind.STRING, backslashEscapes, "an unterminated string literal")) {
                    break;
                }
            } else if (c == '`') {
                if (!quoted(c, Kind.QUOTED_IDENT, false, "an unterminated quoted identifier")) {
                    break;
                }
            } else if (c == '@') {
                if (!variable()) {
                    break;
                }
            } else if (isIdentChar(c)) {
                int start = pos;
                boolean digits = true;
                while (pos < length && isIdentChar(sql.charAt(pos))) {
                    digits &= sql.charAt(pos) >= '0' && sql.charAt(pos) <= '9';
                    pos++;
                }
                if (digits && at(pos, '.') && pos + 1 < length && Character.isDigit(sql.charAt(pos + 1))) {
                    // A decimal such as 5.5 is one number, so that it is never read as the integer 5.
                    pos++;
                    while (pos < length && isIdentChar(sql.charAt(pos))) {
                        pos++;
                    }
                }
                add(digits ? Kind.NUMBER : Kind.WORD, start, sql.substring(start, pos));
            } else {
                pos++;
                add(Kind.SYMBOL, pos - 1, String.valueOf(c));
            }
        }
        return tokens;
    }

    /** MySQL needs whitespace or a control character after {@code --}; {@code 1--1} is arithmetic. */
    private boolean startsLineComment() {
        return at(pos + 1, '-') && (pos + 2 >= length || sql.charAt(pos + 2) <= ' ');
    }

    private void skipLine() {
        while (pos < length && sql.charAt(pos) != '\n') {
            pos++;
        }
    }

    /** Skips a comment or opens an executable one; false (after adding an ERROR) if unterminated. */
    private boolean blockComment() {
        int p = pos + 2;
        if (at(p, '!')) {
            p++;
        } else if ((at(p, 'M') || at(p, 'm')) && at(p + 1, '!')) {
            p += 2;
        } else {
            int close = sql.indexOf("*/", p);
            if (close < 0) {
                add(Kind.ERROR, pos, "an unterminated comment");
                return false;
            }
            pos = close + 2;
            return true;
        }
        int digits = 0;
        while (p < length && digits < MAX_VERSION_DIGITS && sql.charAt(p) >= '0' && sql.charAt(p) <= '9') {
            p++;
            digits++;
        }
        inExecutableComment = true;
        pos = p;
        return true;
    }

    /** Reads a quoted string or identifier at {@code pos}; false (after adding an ERROR) if unterminated. */
    private boolean quoted(char quote, Kind kind, boolean escapes, String unterminated) {
        int start = pos;
        StringBuilder value = new StringBuilder();
        int p = pos + 1;
        while (p < length) {
            char c = sql.charAt(p);
            if (c == '\\' && escapes) {
                if (p + 1 >= length) {
                    break;
                }
                unescape(sql.charAt(p + 1), value);
                p += 2;
            } else if (c == quote) {
                if (at(p + 1, quote)) {
                    value.append(quote);
                    p += 2;
                } else {
                    pos = p + 1;
                    add(kind, start, value.toString());
                    return true;
                }
            } else {
                value.append(c);
                p++;
            }
        }
        add(Kind.ERROR, start, unterminated);
        return false;
    }

    /** MySQL's escape sequences; {@code \%} and {@code \_} keep their backslash (for LIKE patterns). */
    private static void unescape(char c, StringBuilder value) {
        switch (c) {
            case '0' -> value.append('\0');
            case 'b' -> value.append('\b');
            case 'n' -> value.append('\n');
            case 'r' -> value.append('\r');
            case 't' -> value.append('\t');
            case 'Z' -> value.append('\u001A');
            case '%', '_' -> value.append('\\').append(c);
            default -> value.append(c);
        }
    }

    /**
     * {@code @name}, {@code @'name'}, {@code @@name}, {@code @@session.name}: one token, so that a
     * dotted variable name is never read as a qualified table name.
     */
    private boolean variable() {
        int start = pos;
        pos++;
        if (at(pos, '@')) {
            pos++;
        }
        if (pos < length && (sql.charAt(pos) == '\'' || sql.charAt(pos) == '"' || sql.charAt(pos) == '`')) {
            char quote = sql.charAt(pos);
            int before = tokens.size();
            if (!quoted(quote, Kind.VARIABLE, quote != '`' && backslashEscapes, "an unterminated quoted variable")) {
                return false;
            }
            tokens.remove(before);
        } else {
            while (pos < length && (isIdentChar(sql.charAt(pos)) || sql.charAt(pos) == '.')) {
                pos++;
            }
        }
        add(Kind.VARIABLE, start, sql.substring(start, pos));
        return true;
    }

    private void add(Kind kind, int start, String text) {
        tokens.add(new Token(kind, start, kind == Kind.ERROR ? length : pos, text));
    }

    private boolean at(int i, char c) {
        return i < length && sql.charAt(i) == c;
    }

    private static boolean isIdentChar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$'
                || c >= 0x80;
    }
}
