package io.gantry.route;

/**
 * What a quoted literal stands for, as the server reads it: quotes removed, doubled quotes and backslash escapes
 * resolved. {@link SqlTokenizer} only finds where a literal ends; its value matters only to the statements that Gantry
 * reads itself (admin, cache and session statements), and is read here.
 */
final class SqlLiterals {

    private SqlLiterals() {
    }

    /**
     * The value of the quoted text {@code sql[start, end)}, quotes included: doubled quotes and (with
     * {@code backslashEscapes}) backslash escapes resolved. {@code \%} and {@code \_} keep their backslash, as the
     * server keeps it, for {@code LIKE} patterns.
     */
    static String unquote(CharSequence sql, int start, int end, boolean backslashEscapes) {
        char quote = sql.charAt(start);
        int last = end - 1;
        StringBuilder out = new StringBuilder(last - start);
        for (int i = start + 1; i < last; i++) {
            char c = sql.charAt(i);
            if (c == '\\' && backslashEscapes) {
                char escaped = sql.charAt(++i);
                switch (escaped) {
                    case 'n' -> out.append('\n');
                    case 't' -> out.append('\t');
                    case 'r' -> out.append('\r');
                    case 'b' -> out.append('\b');
                    case '0' -> out.append('\0');
                    case 'Z' -> out.append('\u001A');
                    case '%', '_' -> out.append('\\').append(escaped);
                    default -> out.append(escaped);
                }
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
