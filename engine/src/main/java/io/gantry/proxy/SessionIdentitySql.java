package io.gantry.proxy;

import java.util.Optional;

/**
 * The two statements whose meaning depends on which connection runs them, made to mean the client's Gantry session
 * rather than whichever backend connection runs them: {@code CONNECTION_ID()} is replaced by the session id, and
 * {@code KILL [CONNECTION|QUERY] n} is recognised so that {@code n} can be taken as a Gantry session id.
 */
final class SessionIdentitySql {

    /** {@code KILL [HARD|SOFT] [CONNECTION|QUERY] n} (MariaDB's {@code KILL QUERY ID n} names a query, not a thread). */
    record Kill(boolean queryOnly, long sessionId) {
    }

    private SessionIdentitySql() {
    }

    /**
     * The text with every {@code CONNECTION_ID()} outside quotes and comments replaced by {@code sessionId}, or the
     * same string when there is none (the common case costs one case-insensitive scan).
     */
    static String withSessionId(String sql, long sessionId) {
        if (!containsIgnoreCase(sql, "connection_id")) {
            return sql;
        }
        StringBuilder out = null;
        int copiedUpTo = 0;
        int length = sql.length();
        int i = 0;
        while (i < length) {
            char c = sql.charAt(i);
            if (c == '\'' || c == '"' || c == '`') {
                i = skipQuoted(sql, i, c);
            } else if (c == '#' || (c == '-' && i + 2 < length && sql.charAt(i + 1) == '-'
                    && Character.isWhitespace(sql.charAt(i + 2)))) {
                int end = sql.indexOf('\n', i);
                i = end < 0 ? length : end + 1;
            } else if (c == '/' && i + 1 < length && sql.charAt(i + 1) == '*') {
                int end = sql.indexOf("*/", i + 2);
                i = end < 0 ? length : end + 2;
            } else if (isWordStart(c) && (i == 0 || !isWordPart(sql.charAt(i - 1)))) {
                int end = i;
                while (end < length && isWordPart(sql.charAt(end))) {
                    end++;
                }
                int callEnd = end == i + 13 && sql.regionMatches(true, i, "connection_id", 0, 13)
                        ? emptyCallEnd(sql, end) : -1;
                if (callEnd > 0) {
                    if (out == null) {
                        out = new StringBuilder(length + 8);
                    }
                    out.append(sql, copiedUpTo, i).append(sessionId);
                    copiedUpTo = callEnd;
                    i = callEnd;
                } else {
                    i = end;
                }
            } else {
                i++;
            }
        }
        if (out == null) {
            return sql;
        }
        return out.append(sql, copiedUpTo, length).toString();
    }

    /** A KILL of a connection or query by number, or empty for anything else (KILL USER, other statements). */
    static Optional<Kill> parseKill(String sql) {
        // Runs for every statement: only text that mentions KILL at all is looked at closely.
        if (!containsIgnoreCase(sql, "kill")) {
            return Optional.empty();
        }
        String[] words = sql.trim().replaceAll("/\\*.*?\\*/", " ").replaceAll(";\\s*$", "").trim()
                .split("\\s+");
        if (words.length < 2 || !words[0].equalsIgnoreCase("KILL")) {
            return Optional.empty();
        }
        int i = 1;
        if (words[i].equalsIgnoreCase("HARD") || words[i].equalsIgnoreCase("SOFT")) {
            i++;
        }
        boolean queryOnly = false;
        if (i < words.length && words[i].equalsIgnoreCase("QUERY")) {
            queryOnly = true;
            i++;
        } else if (i < words.length && words[i].equalsIgnoreCase("CONNECTION")) {
            i++;
        }
        if (i != words.length - 1) {
            return Optional.empty();
        }
        try {
            return Optional.of(new Kill(queryOnly, Long.parseLong(words[i])));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    private static int emptyCallEnd(String sql, int from) {
        int i = skipSpaces(sql, from);
        if (i >= sql.length() || sql.charAt(i) != '(') {
            return -1;
        }
        i = skipSpaces(sql, i + 1);
        return i < sql.length() && sql.charAt(i) == ')' ? i + 1 : -1;
    }

    private static int skipSpaces(String sql, int from) {
        int i = from;
        while (i < sql.length() && Character.isWhitespace(sql.charAt(i))) {
            i++;
        }
        return i;
    }

    private static int skipQuoted(String sql, int start, char quote) {
        int i = start + 1;
        while (i < sql.length()) {
            char c = sql.charAt(i);
            if (c == '\\' && quote != '`') {
                i += 2;
            } else if (c == quote) {
                if (i + 1 < sql.length() && sql.charAt(i + 1) == quote) {
                    i += 2;
                } else {
                    return i + 1;
                }
            } else {
                i++;
            }
        }
        return sql.length();
    }

    private static boolean isWordStart(char c) {
        return Character.isLetter(c) || c == '_';
    }

    private static boolean isWordPart(char c) {
        return Character.isLetterOrDigit(c) || c == '_' || c == '$';
    }

    /** Without copying the text: this check runs for every statement. */
    private static boolean containsIgnoreCase(String text, String lowerNeedle) {
        int last = text.length() - lowerNeedle.length();
        for (int i = 0; i <= last; i++) {
            if (text.regionMatches(true, i, lowerNeedle, 0, lowerNeedle.length())) {
                return true;
            }
        }
        return false;
    }
}
