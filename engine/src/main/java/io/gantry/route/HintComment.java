package io.gantry.route;

/**
 * Reads the routing hint of one comment, {@code [#] mode = READWRITE|READONLY} at the start of its body (see
 * {@link ModeHint}). Comments never reach the statement machine: a hint may be in any comment of a text, so it is read
 * apart from the statements.
 */
final class HintComment {

    private HintComment() {
    }

    /**
     * The hint in the comment {@code sql[start, end)}, or {@link ModeHint#NONE}.
     *
     * @param closed whether the comment ends with its {@code *&#47;}; false when the text ends inside it
     */
    static ModeHint of(CharSequence sql, int start, int end, boolean closed) {
        return switch (sql.charAt(start)) {
            case '#' -> read(sql, start + 1, end, false);
            case '-' -> read(sql, start + 2, end, true);
            default -> read(sql, start + 2, closed ? end - 2 : end, true);
        };
    }

    private static ModeHint read(CharSequence sql, int from, int to, boolean needsHash) {
        int i = skipSpaces(sql, from, to);
        if (needsHash) {
            if (i >= to || sql.charAt(i) != '#') {
                return ModeHint.NONE;
            }
            i = skipSpaces(sql, i + 1, to);
        }
        if (!UpperCaseNames.startsWith("MODE", sql, i, to)) {
            return ModeHint.NONE;
        }
        i = skipSpaces(sql, i + 4, to);
        if (i >= to || sql.charAt(i) != '=') {
            return ModeHint.NONE;
        }
        i = skipSpaces(sql, i + 1, to);
        if (UpperCaseNames.startsWith("READWRITE", sql, i, to) && wordEnds(sql, i + 9, to)) {
            return ModeHint.READ_WRITE;
        }
        if (UpperCaseNames.startsWith("READONLY", sql, i, to) && wordEnds(sql, i + 8, to)) {
            return ModeHint.READ_ONLY;
        }
        return ModeHint.NONE;
    }

    private static boolean wordEnds(CharSequence sql, int i, int to) {
        return i >= to || !SqlTokenizer.isWordPart(sql.charAt(i));
    }

    private static int skipSpaces(CharSequence sql, int i, int to) {
        while (i < to && sql.charAt(i) <= ' ') {
            i++;
        }
        return i;
    }
}
