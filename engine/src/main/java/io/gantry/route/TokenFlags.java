package io.gantry.route;

/**
 * The flags that one token sets wherever it appears in a statement, from the token and the words right before it:
 * {@code FOR UPDATE}, {@code INTO OUTFILE}, {@code NEXT VALUE FOR}, {@code @@global.x}, ... Kept apart from the
 * statement machine because they depend on no phase: the machine asks for them on every token it does not consume.
 */
final class TokenFlags {

    private TokenFlags() {
    }

    /** The flag bit that keyword {@code kw} sets after {@code previous} and {@code beforePrevious}, or 0. */
    static int ofKeyword(Keyword kw, Keyword previous, Keyword beforePrevious) {
        return switch (kw) {
            case FOR -> previous != Keyword.VALUE ? 0
                    : beforePrevious == Keyword.NEXT ? StatementFlag.SEQUENCE.bit()
                    : beforePrevious == Keyword.PREVIOUS ? StatementFlag.SESSION_FUNCTION.bit() : 0;
            case UPDATE, SHARE -> previous == Keyword.FOR ? StatementFlag.LOCKING_READ.bit() : 0;
            case MODE -> previous == Keyword.SHARE && beforePrevious == Keyword.IN
                    ? StatementFlag.LOCKING_READ.bit() : 0;
            case OUTFILE, DUMPFILE -> previous == Keyword.INTO ? StatementFlag.INTO_FILE.bit() : 0;
            // also inside BEGIN NOT ATOMIC ... END, where CREATE is not the statement's verb
            case TEMPORARY -> previous == Keyword.CREATE || previous == Keyword.REPLACE || previous == Keyword.DROP
                    ? StatementFlag.TEMPORARY_TABLE.bit() : 0;
            case SQL_CALC_FOUND_ROWS -> StatementFlag.CALC_FOUND_ROWS.bit();
            default -> 0;
        };
    }

    /** Whether the system variable {@code sql[start, end)} is {@code @@global.x}, {@code @@persist[_only].x}. */
    static boolean isGlobalVariable(CharSequence sql, int start, int end) {
        int name = start + 2;
        return UpperCaseNames.startsWith("GLOBAL.", sql, name, end)
                || UpperCaseNames.startsWith("PERSIST.", sql, name, end)
                || UpperCaseNames.startsWith("PERSIST_ONLY.", sql, name, end);
    }

    /** The flag bit that reading the system variable {@code sql[start, end)} sets, or 0. */
    static int ofSystemVariable(CharSequence sql, int start, int end) {
        if (isGlobalVariable(sql, start, end)) {
            return StatementFlag.SERVER_STATE.bit();
        }
        int name = start + 2;
        if (UpperCaseNames.startsWith("SESSION.", sql, name, end)) {
            name += "SESSION.".length();
        } else if (UpperCaseNames.startsWith("LOCAL.", sql, name, end)) {
            name += "LOCAL.".length();
        }
        int length = end - name;
        if (UpperCaseNames.matches("IDENTITY", sql, name, length)
                || UpperCaseNames.matches("LAST_INSERT_ID", sql, name, length)
                || UpperCaseNames.matches("INSERT_ID", sql, name, length)
                || UpperCaseNames.matches("LAST_GTID", sql, name, length)) {
            return StatementFlag.SESSION_FUNCTION.bit();
        }
        if (UpperCaseNames.matches("WARNING_COUNT", sql, name, length)
                || UpperCaseNames.matches("ERROR_COUNT", sql, name, length)) {
            return StatementFlag.PREVIOUS_STATEMENT.bit();
        }
        // Whether the session talks to a writable server: answer as the primary would, so that clients
        // probing for a primary (failover-aware drivers and pools) are not misled by a replica's answer.
        if (UpperCaseNames.matches("READ_ONLY", sql, name, length)
                || UpperCaseNames.matches("SUPER_READ_ONLY", sql, name, length)) {
            return StatementFlag.SERVER_STATE.bit();
        }
        // Any other session-scope variable (@@server_id, @@version, @@sql_mode, ...) is a plain read: the
        // session's settings are replayed on its replica connection, and operators expect
        // SELECT @@server_id to show where reads go.
        return 0;
    }
}
