package io.gantry.route;

/**
 * Where the comments of SQL text end, and what the opening of an executable comment says: the part of
 * {@link SqlTokenizer}'s rules in which MySQL and MariaDB differ (which {@code /*!} and {@code /*M!} comments they
 * skip), kept apart from its token loop. Positions are offsets into the text; a comment's opening is its {@code /}.
 */
final class SqlComments {

    /** The lowest {@code /*!} version that a supported server may skip: MariaDB skips 50700 to 99999. */
    private static final int FIRST_CONDITIONAL_VERSION = 50_700;
    private static final int MAX_VERSION_DIGITS = 6;
    private static final int MIN_VERSION_DIGITS = 5;

    private SqlComments() {
    }

    /** Whether {@code --} before {@code sql[i]} starts a comment: a blank, a control character or the end follows. */
    static boolean startsDashComment(CharSequence sql, int i) {
        return i >= sql.length() || sql.charAt(i) <= ' ' || sql.charAt(i) == '\u007F';
    }

    /** The position of the newline that ends a line comment, or the end of the text. */
    static int lineEnd(CharSequence sql, int from) {
        int newline = indexOf(sql, "\n", from);
        return newline < 0 ? sql.length() : newline;
    }

    /** Where the plain comment opened at {@code open} ends, after its {@code *&#47;}, or -1 if the text ends first. */
    static int blockEnd(CharSequence sql, int open) {
        int close = indexOf(sql, "*/", open + 2);
        return close < 0 ? -1 : close + 2;
    }

    /**
     * Where the code of the comment opened at {@code open} starts if it is executable: after {@code /*!} or
     * {@code /*M!} and the version (5 digits, or 6 when a sixth follows; with fewer than 5, the digits are code).
     * -1 for a plain comment.
     */
    static int codeStart(CharSequence sql, int open) {
        int marker = markerEnd(sql, open);
        if (marker < 0) {
            return -1;
        }
        int digits = versionDigits(sql, marker);
        return digits >= MIN_VERSION_DIGITS ? marker + digits : marker;
    }

    /**
     * Whether the executable comment opened at {@code open} is conditional, run by some supported servers and skipped
     * by others: {@code /*!} with a version from 50700 up, any {@code /*M!}.
     */
    static boolean isConditional(CharSequence sql, int open) {
        int marker = markerEnd(sql, open);
        if (marker == open + 4) {
            return true; // MariaDB's /*M!, which MySQL always skips
        }
        int digits = versionDigits(sql, marker);
        return digits >= MIN_VERSION_DIGITS && version(sql, marker, marker + digits) >= FIRST_CONDITIONAL_VERSION;
    }

    /**
     * Where the executable comment opened at {@code open}, read as skipped, ends (after its {@code *&#47;}), or -1: a
     * server that skips it allows one nested comment in it.
     */
    static int skippedEnd(CharSequence sql, int open) {
        int length = sql.length();
        boolean nested = false;
        int i = markerEnd(sql, open);
        while (i + 1 < length) {
            char c = sql.charAt(i);
            char next = sql.charAt(i + 1);
            if (c == '/' && next == '*' && !nested) {
                nested = true;
                i += 2;
            } else if (c == '*' && next == '/') {
                if (!nested) {
                    return i + 2;
                }
                nested = false;
                i += 2;
            } else {
                i++;
            }
        }
        return -1;
    }

    /** Where the {@code /*!} or {@code /*M!} opened at {@code open} ends, or -1 for a plain comment. */
    private static int markerEnd(CharSequence sql, int open) {
        int marker = open + 2;
        if (at(sql, marker, 'M') && at(sql, marker + 1, '!')) {
            return marker + 2;
        }
        return at(sql, marker, '!') ? marker + 1 : -1;
    }

    /** How many of the digits at {@code from} are a version: at most {@value #MAX_VERSION_DIGITS}. */
    private static int versionDigits(CharSequence sql, int from) {
        int end = Math.min(sql.length(), from + MAX_VERSION_DIGITS);
        int i = from;
        while (i < end && SqlTokenizer.isDigit(sql.charAt(i))) {
            i++;
        }
        return i - from;
    }

    private static int version(CharSequence sql, int from, int to) {
        int version = 0;
        for (int i = from; i < to; i++) {
            version = version * 10 + (sql.charAt(i) - '0');
        }
        return version;
    }

    private static boolean at(CharSequence sql, int i, char c) {
        return i < sql.length() && sql.charAt(i) == c;
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
