package io.gantry.gtid;

/**
 * A cursor over the text of a GTID or a GTID set, and the one place that words a parse error: every message starts
 * with {@code bad <what> '<the whole input>': }, quotes the offending part and gives its offset (0-based, in
 * characters). Control characters in quotes are escaped ({@code \n}) so that the message stays on one log line.
 */
final class GtidText {

    private final String input;
    private final String what;
    private int pos;

    GtidText(String input, String what) {
        this.input = input;
        this.what = what;
    }

    int position() {
        return pos;
    }

    boolean atEnd() {
        return pos >= input.length();
    }

    char peek() {
        return input.charAt(pos);
    }

    void advance() {
        pos++;
    }

    /** Consumes {@code c} if it is next. */
    boolean consume(char c) {
        if (pos < input.length() && input.charAt(pos) == c) {
            pos++;
            return true;
        }
        return false;
    }

    /** Skips blanks, tabs and line ends: MySQL prints {@code ",\n"} between the UUIDs of a set. */
    void skipWhitespace() {
        while (pos < input.length() && isWhitespace(input.charAt(pos))) {
            pos++;
        }
    }

    /** Reads up to (not including) whitespace, the end or any character of {@code stops}; may be empty. */
    String token(String stops) {
        int start = pos;
        while (pos < input.length()) {
            char c = input.charAt(pos);
            if (isWhitespace(c) || stops.indexOf(c) >= 0) {
                break;
            }
            pos++;
        }
        return input.substring(start, pos);
    }

    /** What is found at the cursor, for an "expected X, found Y" message. */
    String found() {
        return atEnd() ? "the end" : "'" + escape(String.valueOf(peek())) + "'";
    }

    IllegalArgumentException error(String detail, int at) {
        return new IllegalArgumentException(
                "bad " + what + " '" + escape(input) + "': " + detail + " (at offset " + at + ")");
    }

    /**
     * Parses a run of ASCII decimal digits.
     *
     * @return the value, or -1 if {@code token} has a character that is not an ASCII digit, or -2 if it exceeds
     *         {@code max}
     */
    static long digits(String token, long max) {
        if (token.isEmpty()) {
            return -1;
        }
        long value = 0;
        boolean overflow = false;
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            int d = c - '0';
            if (!overflow && value > (Long.MAX_VALUE - d) / 10) {
                overflow = true;
            }
            if (!overflow) {
                value = value * 10 + d;
            }
        }
        return overflow || value > max ? -2 : value;
    }

    static boolean isWhitespace(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
    }

    static String escape(String text) {
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            String replacement = switch (c) {
                case '\n' -> "\\n";
                case '\r' -> "\\r";
                case '\t' -> "\\t";
                default -> Character.isISOControl(c) ? String.format("\\u%04x", (int) c) : null;
            };
            if (replacement != null && out == null) {
                out = new StringBuilder(text.length() + 8).append(text, 0, i);
            }
            if (out != null) {
                if (replacement != null) {
                    out.append(replacement);
                } else {
                    out.append(c);
                }
            }
        }
        return out == null ? text : out.toString();
    }

    /** Abbreviates a value for an error message about mixing flavours, where the sets may be large. */
    static String abbreviate(Object value) {
        String text = escape(String.valueOf(value));
        return text.length() <= 120 ? "'" + text + "'" : "'" + text.substring(0, 117) + "...'";
    }

    /** The error for an operation between values of different flavours, naming both. */
    static IllegalArgumentException mixedFlavours(String operation, GtidSet self, Object other) {
        String otherKind;
        Flavour otherFlavour;
        if (other instanceof Gtid gtid) {
            otherKind = "GTID";
            otherFlavour = gtid.flavour();
        } else {
            otherKind = "GTID set";
            otherFlavour = ((GtidSet) other).flavour();
        }
        return new IllegalArgumentException(operation + ": cannot mix a " + self.flavour().displayName()
                + " GTID set with a " + otherFlavour.displayName() + " " + otherKind + " (" + abbreviate(self)
                + " and " + abbreviate(other) + ")");
    }
}
