package io.gantry.route;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits SQL text into tokens the way the server reads it: quoted strings and identifiers are single tokens,
 * comments are skipped, and the contents of executable comments ({@code /*! ... *}{@code /},
 * {@code /*!50001 ... *}{@code /}, MariaDB's {@code /*M! ... *}{@code /}) are read as SQL, because the server runs
 * them. Backslash escapes inside strings follow the session's {@code NO_BACKSLASH_ESCAPES}.
 *
 * <p>Tokens point into the text (start and end offsets); nothing is copied until a caller asks for a token's text.
 */
public final class SqlTokenizer {

    /** What a token is. */
    public enum Type {
        /** A bare word: keyword, identifier, or a number glued to letters ({@code 1e5}, {@code 0x1F}). */
        WORD,
        /** A number: digits with an optional fraction and exponent. */
        NUMBER,
        /** {@code '...'} or {@code "..."}. */
        STRING,
        /** {@code `...`}. */
        QUOTED_IDENTIFIER,
        /** {@code @name}, {@code @'name'}, {@code @`name`}. */
        USER_VARIABLE,
        /** {@code @@name}, {@code @@session.name}, {@code @@global.name}. */
        SYSTEM_VARIABLE,
        /** {@code :=}. */
        ASSIGN,
        /** Any other single character: {@code ( ) , ; . = + -} and the rest. */
        SYMBOL
    }

    /** One token: its type and where it is in the text. */
    public record Token(Type type, int start, int end) {

        /** The token's text. */
        public String text(CharSequence sql) {
            return sql.subSequence(start, end).toString();
        }

        /** Whether the token is this symbol character. */
        public boolean isSymbol(CharSequence sql, char symbol) {
            return type == Type.SYMBOL && sql.charAt(start) == symbol;
        }

        /** Whether the token is this word, ignoring case. */
        public boolean isWord(CharSequence sql, String word) {
            if (type != Type.WORD || end - start != word.length()) {
                return false;
            }
            for (int i = 0; i < word.length(); i++) {
                if (Character.toUpperCase(sql.charAt(start + i)) != Character.toUpperCase(word.charAt(i))) {
                    return false;
                }
            }
            return true;
        }

        /**
         * The value of a {@link Type#STRING} token: quotes removed, doubled quotes and (with
         * {@code backslashEscapes}) backslash escapes resolved as the server resolves them.
         */
        public String stringValue(CharSequence sql, boolean backslashEscapes) {
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
    }

    private SqlTokenizer() {
    }

    /** Every token of {@code sql}; an unterminated string or comment runs to the end of the text. */
    public static List<Token> tokenize(CharSequence sql, boolean noBackslashEscapes) {
        List<Token> tokens = new ArrayList<>();
        int length = sql.length();
        int i = 0;
        boolean inExecutableComment = false;
        while (i < length) {
            char c = sql.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (c == '#' || (c == '-' && i + 1 < length && sql.charAt(i + 1) == '-'
                    && (i + 2 == length || Character.isWhitespace(sql.charAt(i + 2))))) {
                i = lineEnd(sql, i);
            } else if (c == '/' && i + 1 < length && sql.charAt(i + 1) == '*') {
                int executableStart = executableCommentBody(sql, i);
                if (executableStart >= 0) {
                    inExecutableComment = true;
                    i = executableStart;
                } else {
                    int end = indexOf(sql, "*/", i + 2);
                    i = end < 0 ? length : end + 2;
                }
            } else if (inExecutableComment && c == '*' && i + 1 < length && sql.charAt(i + 1) == '/') {
                inExecutableComment = false;
                i += 2;
            } else if (c == '\'' || c == '"') {
                int end = quotedEnd(sql, i, c, !noBackslashEscapes);
                tokens.add(new Token(Type.STRING, i, end));
                i = end;
            } else if (c == '`') {
                int end = quotedEnd(sql, i, c, false);
                tokens.add(new Token(Type.QUOTED_IDENTIFIER, i, end));
                i = end;
            } else if (c == '@') {
                int end = variableEnd(sql, i, !noBackslashEscapes);
                boolean system = i + 1 < length && sql.charAt(i + 1) == '@';
                tokens.add(new Token(system ? Type.SYSTEM_VARIABLE : Type.USER_VARIABLE, i, end));
                i = end;
            } else if (c == ':' && i + 1 < length && sql.charAt(i + 1) == '=') {
                tokens.add(new Token(Type.ASSIGN, i, i + 2));
                i += 2;
            } else if (Character.isDigit(c) || (c == '.' && i + 1 < length && Character.isDigit(sql.charAt(i + 1)))) {
                int end = numberEnd(sql, i);
                if (end < length && isWordPart(sql.charAt(end))) {
                    // 1abc and 0x1F are words to the server's lexer (an identifier or a hex literal)
                    end = wordEnd(sql, end);
                    tokens.add(new Token(Type.WORD, i, end));
                } else {
                    tokens.add(new Token(Type.NUMBER, i, end));
                }
                i = end;
            } else if (isWordPart(c)) {
                int end = wordEnd(sql, i);
                tokens.add(new Token(Type.WORD, i, end));
                i = end;
            } else {
                tokens.add(new Token(Type.SYMBOL, i, i + 1));
                i++;
            }
        }
        return tokens;
    }

    /** Where the SQL inside an executable comment starting at {@code start} begins, or -1 for a plain comment. */
    private static int executableCommentBody(CharSequence sql, int start) {
        int i = start + 2;
        int length = sql.length();
        if (i < length && sql.charAt(i) == 'M' && i + 1 < length && sql.charAt(i + 1) == '!') {
            i++;
        }
        if (i >= length || sql.charAt(i) != '!') {
            return -1;
        }
        i++;
        while (i < length && Character.isDigit(sql.charAt(i))) {
            i++; // the version the comment's contents need
        }
        return i;
    }

    private static int lineEnd(CharSequence sql, int from) {
        int end = indexOf(sql, "\n", from);
        return end < 0 ? sql.length() : end + 1;
    }

    private static int quotedEnd(CharSequence sql, int start, char quote, boolean backslashEscapes) {
        int i = start + 1;
        int length = sql.length();
        while (i < length) {
            char c = sql.charAt(i);
            if (c == '\\' && backslashEscapes) {
                i += 2;
            } else if (c == quote) {
                if (i + 1 < length && sql.charAt(i + 1) == quote) {
                    i += 2;
                } else {
                    return i + 1;
                }
            } else {
                i++;
            }
        }
        return length;
    }

    private static int variableEnd(CharSequence sql, int start, boolean backslashEscapes) {
        int i = start + 1;
        int length = sql.length();
        if (i < length && sql.charAt(i) == '@') {
            i++;
        }
        while (i < length) {
            char c = sql.charAt(i);
            if (c == '\'' || c == '"' || c == '`') {
                i = quotedEnd(sql, i, c, backslashEscapes && c != '`');
            } else if (isWordPart(c) || c == '.') {
                i++;
            } else {
                break;
            }
        }
        return i;
    }

    private static int numberEnd(CharSequence sql, int start) {
        int i = start;
        int length = sql.length();
        while (i < length && Character.isDigit(sql.charAt(i))) {
            i++;
        }
        if (i < length && sql.charAt(i) == '.') {
            i++;
            while (i < length && Character.isDigit(sql.charAt(i))) {
                i++;
            }
        }
        if (i + 1 < length && (sql.charAt(i) == 'e' || sql.charAt(i) == 'E')) {
            int j = i + 1;
            if (sql.charAt(j) == '+' || sql.charAt(j) == '-') {
                j++;
            }
            if (j < length && Character.isDigit(sql.charAt(j))) {
                i = j;
                while (i < length && Character.isDigit(sql.charAt(i))) {
                    i++;
                }
            }
        }
        return i;
    }

    private static int wordEnd(CharSequence sql, int start) {
        int i = start;
        while (i < sql.length() && isWordPart(sql.charAt(i))) {
            i++;
        }
        return i;
    }

    private static boolean isWordPart(char c) {
        return Character.isLetterOrDigit(c) || c == '_' || c == '$' || c >= 0x80;
    }

    private static int indexOf(CharSequence sql, String needle, int from) {
        int last = sql.length() - needle.length();
        for (int i = from; i <= last; i++) {
            boolean match = true;
            for (int j = 0; j < needle.length() && match; j++) {
                match = sql.charAt(i + j) == needle.charAt(j);
            }
            if (match) {
                return i;
            }
        }
        return -1;
    }
}
