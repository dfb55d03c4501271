package io.gantry.authority;

import java.util.Locale;
import java.util.Set;

/**
 * The first of two guards on admin SQL: one statement that starts with {@code SELECT}, {@code SHOW}, {@code WITH},
 * {@code VALUES} or {@code TABLE} (H2's and MySQL 8's short form of {@code SELECT * FROM}). It gives the operator a clear error early; the second guard, which cannot be talked around,
 * is that admin SQL runs as an H2 user with only {@code SELECT} rights on the {@code GANTRY} schema and no admin
 * rights (so no {@code CSVWRITE}, {@code FILE_READ} or DDL either).
 */
final class ReadOnlySql {

    static final Set<String> ALLOWED = Set.of("SELECT", "SHOW", "WITH", "VALUES", "TABLE");

    private ReadOnlySql() {
    }

    /**
     * Returns the statement without a trailing semicolon.
     *
     * @throws IllegalArgumentException when it is empty, does not start with an allowed keyword, or holds more than
     *                                  one statement
     */
    static String check(String sql) {
        if (sql == null) {
            throw new IllegalArgumentException("no SQL statement given");
        }
        int start = skipSpaceAndComments(sql, 0);
        while (start < sql.length() && sql.charAt(start) == '(') {
            start = skipSpaceAndComments(sql, start + 1);
        }
        int end = start;
        while (end < sql.length() && Character.isLetter(sql.charAt(end))) {
            end++;
        }
        String keyword = sql.substring(start, end).toUpperCase(Locale.ROOT);
        if (keyword.isEmpty()) {
            throw new IllegalArgumentException("an empty statement; only SELECT, SHOW, WITH, VALUES and "
                    + "TABLE statements may run here");
        }
        if (!ALLOWED.contains(keyword)) {
            throw new IllegalArgumentException("only read-only statements (SELECT, SHOW, WITH, VALUES, TABLE) "
                    + "may run here, not " + keyword);
        }
        int semicolon = statementEnd(sql, end);
        if (semicolon < sql.length() && skipSpaceAndComments(sql, semicolon + 1) < sql.length()) {
            throw new IllegalArgumentException("one statement at a time; found more after the ';'");
        }
        return sql.substring(0, semicolon);
    }

    /** Index of the first {@code ;} outside quotes and comments, or the length if there is none. */
    private static int statementEnd(String sql, int from) {
        int i = from;
        while (i < sql.length()) {
            char c = sql.charAt(i);
            if (c == '\'' || c == '"' || c == '`') {
                i = closingQuote(sql, i, c);
            } else if (startsComment(sql, i)) {
                i = skipComment(sql, i);
            } else if (c == ';') {
                return i;
            } else {
                i++;
            }
        }
        return sql.length();
    }

    /** Index after the quoted text that starts at {@code open}; a doubled quote stays inside. */
    private static int closingQuote(String sql, int open, char quote) {
        int i = open + 1;
        while (i < sql.length()) {
            if (sql.charAt(i) == quote) {
                if (i + 1 < sql.length() && sql.charAt(i + 1) == quote) {
                    i += 2;
                    continue;
                }
                return i + 1;
            }
            i++;
        }
        return sql.length();
    }

    private static int skipSpaceAndComments(String sql, int from) {
        int i = from;
        while (i < sql.length()) {
            if (Character.isWhitespace(sql.charAt(i))) {
                i++;
            } else if (startsComment(sql, i)) {
                i = skipComment(sql, i);
            } else {
                break;
            }
        }
        return i;
    }

    private static boolean startsComment(String sql, int i) {
        return sql.startsWith("--", i) || sql.startsWith("//", i) || sql.startsWith("/*", i);
    }

    private static int skipComment(String sql, int i) {
        if (sql.startsWith("/*", i)) {
            int close = sql.indexOf("*/", i + 2);
            return close < 0 ? sql.length() : close + 2;
        }
        int newline = sql.indexOf('\n', i);
        return newline < 0 ? sql.length() : newline + 1;
    }
}
