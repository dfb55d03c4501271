package io.gantry.proxy;

import java.util.Locale;

/**
 * One spelling for a statement however it was written down: a shape of Gantry's digests
 * ({@code SELECT SUM ( k ) FROM sbtest1 WHERE id BETWEEN ? AND ?}), a MariaDB {@code DIGEST_TEXT}
 * ({@code SELECT SUM ( `k` ) FROM `sbtest1` WHERE ID BETWEEN ? AND ?}) and a prepared statement's text as the server
 * keeps it ({@code SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?}) all become
 * {@code SELECT SUM ( K ) FROM SBTEST1 WHERE ID BETWEEN ? AND ?}, so that the two sides can be matched without
 * either side's normalizer judging the other. Written here on purpose, not taken from Gantry's tokenizer.
 *
 * <p>Tokens one space apart; words upper case (MariaDB upper-cases keywords and some names, {@code ID}); backquotes
 * dropped; every string and number literal and {@code ?} written {@code ?}; every other character a token of its
 * own; MariaDB's {@code DISTINCTROW} (how its digest spells {@code DISTINCT}) as {@code DISTINCT}; a parenthesised
 * list of values only, {@code ( ? , ? )}, and MariaDB's {@code (...)} as {@code ( ... )}.
 */
final class ComparableShape {

    private ComparableShape() {
    }

    static String of(String text) {
        StringBuilder out = new StringBuilder(text.length() + 16);
        int i = 0;
        int n = text.length();
        while (i < n) {
            char c = text.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (c == '\'' || c == '"') {
                i = skipQuoted(text, i, c);
                token(out, "?");
            } else if (c == '`') {
                int end = text.indexOf('`', i + 1);
                end = end < 0 ? n : end;
                token(out, text.substring(i + 1, end).toUpperCase(Locale.ROOT));
                i = end + 1;
            } else if (Character.isDigit(c)) {
                while (i < n && (Character.isLetterOrDigit(text.charAt(i)) || text.charAt(i) == '.')) {
                    i++;
                }
                token(out, "?");
            } else if (Character.isLetter(c) || c == '_' || c == '$') {
                int start = i;
                while (i < n && (Character.isLetterOrDigit(text.charAt(i)) || text.charAt(i) == '_'
                        || text.charAt(i) == '$')) {
                    i++;
                }
                String word = text.substring(start, i).toUpperCase(Locale.ROOT);
                token(out, word.equals("DISTINCTROW") ? "DISTINCT" : word);
            } else {
                token(out, String.valueOf(c));
                i++;
            }
        }
        return out.toString()
                .replaceAll("\\( \\. \\. \\. \\)", "( ... )")
                .replaceAll("\\( \\?( , \\?)* \\)", "( ... )");
    }

    private static int skipQuoted(String text, int at, char quote) {
        int i = at + 1;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == '\\') {
                i += 2;
            } else if (c == quote) {
                if (i + 1 < text.length() && text.charAt(i + 1) == quote) {
                    i += 2; // a doubled quote inside the string
                } else {
                    return i + 1;
                }
            } else {
                i++;
            }
        }
        return i;
    }

    private static void token(StringBuilder out, String token) {
        if (!out.isEmpty()) {
            out.append(' ');
        }
        out.append(token);
    }
}
