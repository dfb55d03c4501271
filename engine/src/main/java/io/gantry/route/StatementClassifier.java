package io.gantry.route;

/**
 * Classifies the SQL text of a COM_QUERY for routing: {@link StatementKind}, {@link StatementFlag}s and the
 * {@link ModeHint}.
 *
 * <p>One pass over the tokens of {@link SqlTokenizer}, which reads the text as the server does: no regular
 * expressions, no allocation per character or per token (a handful of objects per call). {@link StatementScan} reads
 * the statements, {@link StatementPhases} classifies each, {@link TextVerdict} merges them. It understands
 * <ul>
 *   <li>several statements separated by {@code ;} (multi-statements): the strongest kind wins, flags are unioned;
 *       the body of a stored program ({@code CREATE PROCEDURE ... BEGIN ...; ...; END}, {@code BEGIN NOT ATOMIC})
 *       is one statement, as the server parses it;</li>
 *   <li>string literals, quoted identifiers and comments: a {@code ;} or a keyword inside them is ignored; where
 *       they end follows the session's {@link SqlMode} ({@code NO_BACKSLASH_ESCAPES}, {@code ANSI_QUOTES});</li>
 *   <li>executable comments {@code /*!40101 ... *&#47;}: their content counts as code. A conditional comment, one
 *       that some servers run and others skip ({@code /*!} with a version from 50700 up, MariaDB's
 *       {@code /*M!}), makes the text be classified twice, with the comments run and with them skipped, and the two
 *       readings count as the statements of one text: {@code SELECT 1 /*!99999 'x *&#47; ; DELETE FROM t} is a
 *       write, as MariaDB skips the comment and deletes;</li>
 *   <li>routing hints in comments, see {@link ModeHint}.</li>
 * </ul>
 *
 * <p>Choices worth knowing:
 * <ul>
 *   <li>{@code DO ...} is a {@link StatementKind#WRITE}: it exists only for its side effects (locks, variables,
 *       stored functions).</li>
 *   <li>{@code EXPLAIN}/{@code DESCRIBE} of a {@code SELECT}, {@code TABLE}, {@code VALUES} or of a table is a read;
 *       of {@code INSERT}/{@code UPDATE}/{@code DELETE}/{@code REPLACE} a write (it may be {@code EXPLAIN ANALYZE},
 *       which executes). MariaDB {@code ANALYZE SELECT} is a read, {@code ANALYZE TABLE} a write.</li>
 *   <li>A read that may call a stored function is flagged {@link StatementFlag#STORED_FUNCTION} (so it goes to the
 *       primary, the session not pinned): a name followed by {@code (} that is not in {@link BuiltinFunctions}, a
 *       qualified {@code db.f(} or a quoted {@code `f`(}, in any part of the statement (subqueries, {@code UNION}
 *       branches, executable comments). Not calls: a CTE or derived-table column list ({@code WITH c (a, b) AS (},
 *       {@code AS dt (a, b)}, {@code ) dt (a, b)}) and keywords such as {@code IN (}, {@code USING (},
 *       {@code OVER (}, which are in the list.</li>
 *   <li>{@code SET GLOBAL}/{@code PERSIST}, {@code SET PASSWORD}, {@code SET DEFAULT ROLE} are writes;
 *       {@code SET [SESSION|LOCAL] var}, {@code SET @@session.var}, {@code SET NAMES}, {@code SET CHARACTER SET},
 *       {@code SET TRANSACTION}, {@code SET ROLE} and {@code USE} are {@link StatementKind#SESSION_STATE};
 *       {@code SET @user_var} is a write that pins the session. MariaDB {@code SET STATEMENT ... FOR stmt} is
 *       classified as {@code stmt}.</li>
 *   <li>Double quotes are string delimiters unless the session's {@link SqlMode} says {@code ANSI_QUOTES}; only
 *       MariaDB reports that mode, so on MySQL an identifier {@code "a\"} is taken for the start of a string.</li>
 *   <li>The classifier never throws: {@code null}, empty, comment-only and unrecognised text is a
 *       {@link StatementKind#WRITE}, so it goes to the primary.</li>
 * </ul>
 */
public final class StatementClassifier {

    private StatementClassifier() {
    }

    /**
     * Classifies {@code sql} under the server's default {@link SqlMode}.
     *
     * @param sql the COM_QUERY text; {@code null} is treated as empty
     */
    public static StatementClass classify(CharSequence sql) {
        return classify(sql, SqlMode.DEFAULT);
    }

    /** Classifies {@code sql} with or without {@code NO_BACKSLASH_ESCAPES}, without {@code ANSI_QUOTES}. */
    public static StatementClass classify(CharSequence sql, boolean noBackslashEscapes) {
        return classify(sql, SqlMode.of(noBackslashEscapes));
    }

    /**
     * Classifies {@code sql}.
     *
     * @param sql the COM_QUERY text; {@code null} is treated as empty
     * @param mode the session's mode, from the status flags of the last OK packet: it decides where {@code 'a\'}
     *        and {@code "a\"} end
     */
    public static StatementClass classify(CharSequence sql, SqlMode mode) {
        if (sql == null) {
            return StatementClass.unparsable();
        }
        try {
            return TextVerdict.of(sql, mode);
        } catch (RuntimeException e) {
            // Safety net for the "never throws" contract (for example a CharSequence that fails): primary is safe.
            return StatementClass.unparsable();
        }
    }

    /** {@link #classify(CharSequence, boolean)} without the safety net, so that tests see any exception. */
    static StatementClass classifyUnguarded(CharSequence sql, boolean noBackslashEscapes) {
        return TextVerdict.of(sql, SqlMode.of(noBackslashEscapes));
    }
}
