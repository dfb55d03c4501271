package io.gantry.route;

import io.gantry.route.SqlTokenizer.Token;
import java.util.List;

/**
 * What the statement parsers of the caches, the admin statements and the proxy's own SQL read off a statement's text
 * alike: where its tokens end before its trailing semicolons, and whether it holds an upper-case word, in any ASCII
 * case. Next to {@link SqlTokenizer}, whose tokens it reads.
 */
public final class StatementText {

    private StatementText() {
    }

    /** How many of {@code tokens} (of {@code sql}) are the statement's: the trailing semicolons left out. */
    public static int end(CharSequence sql, List<Token> tokens) {
        int end = tokens.size();
        while (end > 0 && tokens.get(end - 1).isSymbol(sql, ';')) {
            end--;
        }
        return end;
    }

    /**
     * Whether {@code sql} holds {@code upperCaseWord} anywhere, in any ASCII case: the cheap test before any
     * tokenizing ({@code GANTRY} for Gantry's own statements and settings). Allocates nothing.
     */
    public static boolean contains(CharSequence sql, String upperCaseWord) {
        int last = sql.length() - upperCaseWord.length();
        for (int i = 0; i <= last; i++) {
            if (startsWithIgnoringCase(sql, i, upperCaseWord)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether {@code sql} holds {@code upperCaseWord} at {@code at}, folding a..z to A..Z and nothing else. Allocates
     * nothing.
     */
    public static boolean startsWithIgnoringCase(CharSequence sql, int at, String upperCaseWord) {
        if (at + upperCaseWord.length() > sql.length()) {
            return false;
        }
        for (int j = 0; j < upperCaseWord.length(); j++) {
            char c = sql.charAt(at + j);
            if ((c >= 'a' && c <= 'z' ? (char) (c - ('a' - 'A')) : c) != upperCaseWord.charAt(j)) {
                return false;
            }
        }
        return true;
    }
}
