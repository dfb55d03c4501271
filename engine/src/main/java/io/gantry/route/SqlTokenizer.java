package io.gantry.route;

import java.util.ArrayList;
import java.util.List;

/**
 * Gantry's one SQL lexer: it splits SQL text into tokens where the MySQL and MariaDB lexers do, so that the statement
 * classifier, the admin statement parser and the proxy's own inspections of a text cannot disagree with each other,
 * or with the server, about what is code, what is a literal and what is a comment.
 *
 * <ul>
 *   <li>Blanks are space, tab, newline, vertical tab, form feed and carriage return. Any other control character is a
 *       {@link Type#SYMBOL} (the server answers it with a syntax error).</li>
 *   <li>Comments: {@code #}, and {@code --} followed by a blank, a control character or the end of the text, each up
 *       to the end of the line ({@code 1--2} is arithmetic); {@code /* ... *&#47;} up to the first {@code *&#47;}.</li>
 *   <li>Executable comments {@code /*! ... *&#47;}, {@code /*!NNNNN ... *&#47;} and MariaDB's
 *       {@code /*M!NNNNNN ... *&#47;}: their content is code, after the version (5 digits, or 6 when a sixth
 *       follows; with fewer than 5, the digits are code). Whether a server runs one depends on the server: MariaDB
 *       skips {@code /*!} versions from 50700 to 99999 (MySQL 5.7 syntax) and versions newer than itself, MySQL
 *       skips versions newer than itself and every {@code /*M!}; a skipped comment ends at its first
 *       {@code *&#47;} after at most one nested comment. These <em>conditional</em> comments ({@code /*!} with a
 *       version from 50700 up, any {@code /*M!}) can also be read as skipped ({@link #readings}); a {@code /*!}
 *       version below 50700 runs on every server Gantry supports (MySQL 8.0 and later, MariaDB 10.11 and
 *       later).</li>
 *   <li>{@code '...'} and, without {@code ANSI_QUOTES}, {@code "..."} are {@link Type#STRING}s: doubled quotes, and
 *       backslash escapes unless {@code NO_BACKSLASH_ESCAPES}. {@code `...`} and, under {@code ANSI_QUOTES},
 *       {@code "..."} are {@link Type#QUOTED_IDENTIFIER}s, with doubled quotes only.</li>
 *   <li>A {@link Type#NUMBER} is digits with a fraction and an exponent if any: {@code 5}, {@code 5.}, {@code .5},
 *       {@code 1e5}, {@code 1.5E-3}; it ends where they end ({@code 5.5abc} is {@code 5.5} and {@code abc}). Digits
 *       glued to letters are a {@link Type#WORD}: {@code 1abc}, {@code 12e}, and the hexadecimal and binary literals
 *       {@code 0x1F}, {@code 0b101}. A name right after a word and a dot is a word even if it starts with a digit
 *       ({@code t.1e5} is {@code t}, {@code .}, {@code 1e5}).</li>
 *   <li>{@code @name} (dots allowed: {@code @a.b}), {@code @'name'}, {@code @`name`} are user variables;
 *       {@code @@name}, {@code @@session.name}, {@code @@`name`} system variables; {@code :=} an assignment.</li>
 *   <li>A string, quoted identifier, quoted variable name or comment that the text ends inside is
 *       {@link Type#UNTERMINATED}: the server answers such text with a syntax error.</li>
 * </ul>
 *
 * <p>Tokens point into the text (start and end offsets); nothing is copied until a caller asks for a token's text.
 * Reading a text token by token with {@link #next()} allocates nothing; {@link #tokenize} makes a list.
 */
public final class SqlTokenizer {

    /** What a token is. */
    public enum Type {
        /** A bare word: keyword, identifier, or digits glued to letters ({@code 1abc}, {@code 0x1F}). */
        WORD,
        /** A number: digits with an optional fraction and exponent. */
        NUMBER,
        /** {@code '...'}, or {@code "..."} without {@code ANSI_QUOTES}. */
        STRING,
        /** {@code `...`}, or {@code "..."} under {@code ANSI_QUOTES}. */
        QUOTED_IDENTIFIER,
        /** {@code @name}, {@code @'name'}, {@code @`name`}. */
        USER_VARIABLE,
        /** {@code @@name}, {@code @@session.name}, {@code @@global.name}. */
        SYSTEM_VARIABLE,
        /** {@code :=}. */
        ASSIGN,
        /** Any other single character: {@code ( ) , ; . = + -} and the rest. */
        SYMBOL,
        /** A comment, or a conditional comment read as skipped: from {@link #next()} only, never in a list. */
        COMMENT,
        /** A string, quoted identifier, quoted variable name or comment that runs to the end of the text. */
        UNTERMINATED
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
         * The value of a {@link Type#STRING} token: quotes removed, doubled quotes and (with {@code backslashEscapes})
         * backslash escapes resolved as the server resolves them. {@code \%} and {@code \_} keep their backslash, as
         * the server keeps it, for {@code LIKE} patterns.
         */
        public String stringValue(CharSequence sql, boolean backslashEscapes) {
            return SqlLiterals.unquote(sql, start, end, backslashEscapes);
        }

        /** The name a {@link Type#WORD} or {@link Type#QUOTED_IDENTIFIER} token stands for: quotes removed. */
        public String identifier(CharSequence sql) {
            if (type != Type.QUOTED_IDENTIFIER) {
                return text(sql);
            }
            return stringValue(sql, false);
        }
    }

    private final CharSequence sql;
    private final int length;
    private final boolean backslashEscapes;
    private final boolean ansiQuotes;
    private final boolean runConditionalComments;
    private int pos;
    private boolean inExecutableComment;
    private boolean sawConditionalComment;
    /** Where the last word ended: a dot right there, glued to a name, makes that name a word (MySQL's IDENT_SEP). */
    private int lastWordEnd = -1;
    /** Where the name after such a dot starts. */
    private int nameStart = -1;
    private int start;

    /**
     * A reader of {@code sql} for {@link #next()}.
     *
     * @param runConditionalComments whether the content of conditional comments is code (as on a server that runs
     *        them) or the comments are skipped (as on one that does not): each is the truth for some server
     */
    SqlTokenizer(CharSequence sql, SqlMode mode, boolean runConditionalComments) {
        this.sql = sql;
        this.length = sql.length();
        this.backslashEscapes = !mode.noBackslashEscapes();
        this.ansiQuotes = mode.ansiQuotes();
        this.runConditionalComments = runConditionalComments;
    }

    /** Every token of {@code sql} but comments, conditional comments read as code, under the default mode. */
    public static List<Token> tokenize(CharSequence sql, boolean noBackslashEscapes) {
        return tokenize(sql, SqlMode.of(noBackslashEscapes));
    }

    /** Every token of {@code sql} but comments, conditional comments read as code. */
    public static List<Token> tokenize(CharSequence sql, SqlMode mode) {
        return new SqlTokenizer(sql, mode, true).tokens();
    }

    /**
     * The tokens of {@code sql} but comments as each server reads them: one list, or two when the text holds a
     * conditional comment (first with such comments run, then with them skipped).
     */
    public static List<List<Token>> readings(CharSequence sql, SqlMode mode) {
        SqlTokenizer run = new SqlTokenizer(sql, mode, true);
        List<Token> tokens = run.tokens();
        if (!run.sawConditionalComment()) {
            return List.of(tokens);
        }
        return List.of(tokens, new SqlTokenizer(sql, mode, false).tokens());
    }

    /**
     * Writes the <em>shape</em> of {@code sql}, as the query caches match statements: its tokens but comments, one
     * space apart, with every string and number literal written as {@code ?} and its text (quotes included) appended
     * to {@code literals}, each followed by {@code '\0'}; a {@code ?} placeholder stays {@code ?} and adds nothing to
     * {@code literals}. A list of values after {@code IN} is written as one {@code ?}, as the digests' shape does
     * ({@link #writeDigestShape}), so that a cache serves lists of every length: its values are all appended to
     * {@code literals}, and the number of values of each such list, in order, to {@code listLengths}, each followed
     * by {@code ','}. The shape, the literals and the lengths together name one text, blanks and comments aside
     * ({@code a IN (1, 2) AND b IN (3)} and {@code a IN (1) AND b IN (2, 3)} share shape and literals): a cache's
     * entries are told apart by all three. Allocates nothing but the builders' growth: it runs for every SELECT
     * while a cache is defined.
     *
     * @return false when the text has no single shape: a conditional comment (servers read it differently) or a
     *         token the text ends inside
     */
    public static boolean writeCacheShape(CharSequence sql, SqlMode mode, StringBuilder shape, StringBuilder literals,
                                          StringBuilder listLengths) {
        return writeShape(sql, mode, shape, literals, true, listLengths);
    }

    /**
     * Writes the shape of {@code sql} as the statement digests count it: as {@link #writeCacheShape}, a list of values
     * after {@code IN} written as one {@code ?} ({@code IN (1, 2, 3)} and {@code IN (?)} are {@code IN ( ? )}), so
     * that a statement whose lists vary in length has one shape, and no literal kept. Allocates nothing but the
     * builder's growth.
     *
     * @return false when the text has no single shape (see {@link #writeCacheShape})
     */
    public static boolean writeDigestShape(CharSequence sql, SqlMode mode, StringBuilder shape) {
        return writeShape(sql, mode, shape, null, true, null);
    }

    /**
     * Writes {@code sql} with its literals masked, for a log that must not keep values: as {@link #writeCacheShape}
     * (tokens but comments, one space apart, every string and number written as {@code ?}) without keeping the
     * literals. Unlike the digests' and the caches' shape, lists of values stay as long as they were.
     *
     * @return false when the text has no single shape (see {@link #writeCacheShape}): what was written may then hold
     *         a literal's text
     */
    public static boolean writeMasked(CharSequence sql, SqlMode mode, StringBuilder masked) {
        return writeShape(sql, mode, masked, null, false, null);
    }

    /**
     * @param literals    null to keep no literals
     * @param listLengths null to count no list's values; else each collapsed list's, with {@code collapseInLists}
     */
    private static boolean writeShape(CharSequence sql, SqlMode mode, StringBuilder shape, StringBuilder literals,
                                      boolean collapseInLists, StringBuilder listLengths) {
        SqlTokenizer reader = new SqlTokenizer(sql, mode, true);
        InList list = InList.OUTSIDE;
        int listValues = 0;
        for (Type type = reader.next(); type != null; type = reader.next()) {
            if (type == Type.COMMENT) {
                continue;
            }
            if (type == Type.UNTERMINATED) {
                return false;
            }
            boolean value = type == Type.STRING || type == Type.NUMBER
                    || (type == Type.SYMBOL && sql.charAt(reader.start) == '?');
            if (value && literals != null && type != Type.SYMBOL) {
                literals.append(sql, reader.start, reader.pos).append('\0');
            }
            if (collapseInLists) {
                InList before = list;
                list = list.next(type, sql, reader.start, reader.pos, value);
                if (listLengths != null) {
                    if (list == InList.IN_VALUES || list == InList.SKIPPED) {
                        listValues = list == InList.IN_VALUES ? 1 : listValues + 1;
                    } else if (before.inList() && list != InList.AFTER_COMMA) {
                        listLengths.append(listValues).append(',');
                    }
                }
                if (list == InList.AFTER_COMMA || list == InList.SKIPPED) {
                    continue; // a comma is held back until a value follows it, which is then left out
                }
                if (list == InList.ENDED_AFTER_COMMA) {
                    separate(shape).append(','); // the comma held back was not between two values
                    list = InList.OUTSIDE;
                }
            }
            if (value) {
                separate(shape).append('?');
            } else {
                separate(shape).append(sql, reader.start, reader.pos);
            }
        }
        if (listLengths != null && list.inList()) {
            listLengths.append(listValues).append(','); // the text ends inside the list
        }
        return !reader.sawConditionalComment;
    }

    /** Where a collapsing shape's writer is in an {@code IN (...)} list of values, token by token. */
    private enum InList {
        OUTSIDE, AFTER_IN, OPENED, IN_VALUES, AFTER_COMMA, SKIPPED, ENDED_AFTER_COMMA;

        InList next(Type type, CharSequence sql, int start, int end, boolean value) {
            boolean comma = type == Type.SYMBOL && sql.charAt(start) == ',';
            return switch (this) {
                case OUTSIDE, ENDED_AFTER_COMMA -> type == Type.WORD && end - start == 2
                        && Character.toUpperCase(sql.charAt(start)) == 'I'
                        && Character.toUpperCase(sql.charAt(start + 1)) == 'N' ? AFTER_IN : OUTSIDE;
                case AFTER_IN -> type == Type.SYMBOL && sql.charAt(start) == '(' ? OPENED : OUTSIDE;
                case OPENED -> value ? IN_VALUES : OUTSIDE;
                case IN_VALUES, SKIPPED -> comma ? AFTER_COMMA : OUTSIDE;
                case AFTER_COMMA -> value ? SKIPPED : ENDED_AFTER_COMMA;
            };
        }

        /** Whether a list of values has begun and not ended. */
        boolean inList() {
            return this == IN_VALUES || this == SKIPPED || this == AFTER_COMMA;
        }
    }

    private static StringBuilder separate(StringBuilder shape) {
        return shape.isEmpty() ? shape : shape.append(' ');
    }

    private List<Token> tokens() {
        List<Token> tokens = new ArrayList<>();
        for (Type type = next(); type != null; type = next()) {
            if (type != Type.COMMENT) {
                tokens.add(new Token(type, start, pos));
            }
        }
        return tokens;
    }

    /** The next token, comments included, or null at the end of the text; then {@link #start()}, {@link #end()}. */
    Type next() {
        while (pos < length) {
            char c = sql.charAt(pos);
            if (isBlank(c)) {
                pos++;
            } else {
                Type type = read(c);
                if (type != null) {
                    return type;
                }
            }
        }
        return null;
    }

    /** Where the token {@link #next()} returned starts. */
    int start() {
        return start;
    }

    /** Where the token {@link #next()} returned ends (exclusive). */
    int end() {
        return pos;
    }

    /** Whether the text read so far holds a conditional comment, so that some servers read it otherwise. */
    boolean sawConditionalComment() {
        return sawConditionalComment;
    }

    /** Reads the token at {@code pos}; null after stepping into or out of an executable comment. */
    private Type read(char c) {
        start = pos;
        switch (c) {
            case '(', ')', ',', ';', '=':
                return symbol(); // the commonest symbols, before the tests for numbers and words below
            case '#':
                return comment(SqlComments.lineEnd(sql, pos + 1));
            case '-':
                return at(pos + 1, '-') && SqlComments.startsDashComment(sql, pos + 2)
                        ? comment(SqlComments.lineEnd(sql, pos + 2)) : symbol();
            case '/':
                return at(pos + 1, '*') ? blockComment() : symbol();
            case '*':
                if (inExecutableComment && at(pos + 1, '/')) {
                    inExecutableComment = false;
                    pos += 2;
                    return null;
                }
                return symbol();
            case '\'':
                return quoted(Type.STRING);
            case '"':
                return quoted(ansiQuotes ? Type.QUOTED_IDENTIFIER : Type.STRING);
            case '`':
                return quoted(Type.QUOTED_IDENTIFIER);
            case '@':
                return variable();
            case ':':
                return at(pos + 1, '=') ? token(Type.ASSIGN, pos + 2) : symbol();
            case '.':
                if (lastWordEnd == pos && pos + 1 < length && isWordPart(sql.charAt(pos + 1))) {
                    nameStart = pos + 1;
                    return symbol();
                }
                if (pos + 1 < length && isDigit(sql.charAt(pos + 1))) {
                    return token(Type.NUMBER, fractionEnd(pos));
                }
                return symbol();
            default:
                if (isDigit(c) && pos != nameStart) {
                    return number();
                }
                return isWordPart(c) ? word(wordEnd(pos)) : symbol();
        }
    }

    /** A comment, an executable comment's opening (null), or a conditional comment read as skipped. */
    private Type blockComment() {
        int code = SqlComments.codeStart(sql, pos);
        if (code < 0) {
            return commentOrUnterminated(SqlComments.blockEnd(sql, pos));
        }
        boolean conditional = SqlComments.isConditional(sql, pos);
        sawConditionalComment |= conditional;
        if (conditional && !runConditionalComments) {
            return commentOrUnterminated(SqlComments.skippedEnd(sql, pos));
        }
        inExecutableComment = true;
        pos = code;
        return null;
    }

    private Type commentOrUnterminated(int commentEnd) {
        return commentEnd < 0 ? token(Type.UNTERMINATED, length) : comment(commentEnd);
    }

    /** Digits, then a fraction and an exponent, or digits glued to letters: a word. */
    private Type number() {
        int digits = digitsEnd(pos);
        if (at(digits, '.')) {
            return token(Type.NUMBER, fractionEnd(digits));
        }
        int exponent = exponentEnd(digits);
        if (exponent > digits) {
            return token(Type.NUMBER, exponent);
        }
        if (digits < length && isWordPart(sql.charAt(digits))) {
            return word(wordEnd(digits));
        }
        return token(Type.NUMBER, digits);
    }

    /** The end of the fraction and exponent after the dot at {@code dot}. */
    private int fractionEnd(int dot) {
        return exponentEnd(digitsEnd(dot + 1));
    }

    /** The end of an exponent ({@code e5}, {@code E+5}, {@code e-5}) at {@code i}, or {@code i} if there is none. */
    private int exponentEnd(int i) {
        if (i < length && (sql.charAt(i) | 0x20) == 'e') {
            int j = i + 1;
            if (j < length && (sql.charAt(j) == '+' || sql.charAt(j) == '-')) {
                j++;
            }
            if (j < length && isDigit(sql.charAt(j))) {
                return digitsEnd(j);
            }
        }
        return i;
    }

    private Type quoted(Type type) {
        int close = quotedEnd(pos);
        return close < 0 ? token(Type.UNTERMINATED, length) : token(type, close);
    }

    /** {@code @name}, {@code @'name'}, {@code @@name}, {@code @@session.name}, {@code @@`name`}. */
    private Type variable() {
        int i = pos + 1;
        if (at(i, '@')) {
            i++;
            while (i < length) {
                char c = sql.charAt(i);
                if (c == '`') {
                    i = quotedEnd(i);
                    if (i < 0) {
                        return token(Type.UNTERMINATED, length);
                    }
                } else if (isWordPart(c) || c == '.') {
                    i++;
                } else {
                    break;
                }
            }
            return token(Type.SYSTEM_VARIABLE, i);
        }
        if (i < length && (sql.charAt(i) == '\'' || sql.charAt(i) == '"' || sql.charAt(i) == '`')) {
            int close = quotedEnd(i);
            return close < 0 ? token(Type.UNTERMINATED, length) : token(Type.USER_VARIABLE, close);
        }
        while (i < length && (isWordPart(sql.charAt(i)) || sql.charAt(i) == '.')) {
            i++;
        }
        return token(Type.USER_VARIABLE, i);
    }

    /** Where the quoted text opened at {@code open} ends (after its closing quote), or -1 if the text ends first. */
    private int quotedEnd(int open) {
        char quote = sql.charAt(open);
        boolean escapes = backslashEscapes && (quote == '\'' || (quote == '"' && !ansiQuotes));
        int i = open + 1;
        while (i < length) {
            char c = sql.charAt(i);
            if (c == '\\' && escapes) {
                i += 2;
            } else if (c != quote) {
                i++;
            } else if (at(i + 1, quote)) {
                i += 2;
            } else {
                return i + 1;
            }
        }
        return -1;
    }

    private Type comment(int commentEnd) {
        return token(Type.COMMENT, commentEnd);
    }

    private Type word(int wordEnd) {
        lastWordEnd = wordEnd;
        return token(Type.WORD, wordEnd);
    }

    private Type symbol() {
        return token(Type.SYMBOL, pos + 1);
    }

    private Type token(Type type, int tokenEnd) {
        pos = tokenEnd;
        return type;
    }

    private int digitsEnd(int from) {
        int i = from;
        while (i < length && isDigit(sql.charAt(i))) {
            i++;
        }
        return i;
    }

    private int wordEnd(int from) {
        int i = from;
        while (i < length && isWordPart(sql.charAt(i))) {
            i++;
        }
        return i;
    }

    private boolean at(int i, char c) {
        return i < length && sql.charAt(i) == c;
    }

    private static boolean isBlank(char c) {
        return c <= ' ' && (c == ' ' || (c >= '\t' && c <= '\r'));
    }

    static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    /** A character of an unquoted name: ASCII letters and digits, {@code _}, {@code $} and anything beyond ASCII. */
    static boolean isWordPart(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || isDigit(c) || c == '_' || c == '$' || c >= 0x80;
    }
}
