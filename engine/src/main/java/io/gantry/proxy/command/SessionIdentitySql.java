package io.gantry.proxy.command;

import io.gantry.proxy.execution.PreviousCounts;
import io.gantry.route.QueryText;
import io.gantry.route.SqlMode;
import io.gantry.route.SqlTokenizer.Token;
import io.gantry.route.SqlTokenizer.Type;
import io.gantry.route.SqlTokenizer;
import io.gantry.route.StatementClassifier;
import io.gantry.route.StatementText;
import io.gantry.wire.ErrPacket;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The statements whose meaning depends on which connection runs them, made to mean the client's Gantry session
 * rather than whichever backend connection runs them: {@code CONNECTION_ID()} is replaced by the session id,
 * {@code ROW_COUNT()} and {@code FOUND_ROWS()} by what the session's previous statement left when the connection that
 * ran it has gone to the pool, and {@code KILL [CONNECTION|QUERY] n} is recognised so that {@code n} can be taken as
 * a Gantry session id.
 *
 * <p>A Gantry session id is never sent to a server as a thread id: a text is either one plain {@code KILL} of a
 * number ({@link KillText.Single}, which the proxy carries out itself), or holds no {@code KILL} at all
 * ({@link KillText#NONE}), or it is refused with an error that says what to send instead ({@link KillText.Refused}):
 * a {@code KILL} among several statements or inside a compound statement or stored program, {@code KILL QUERY ID}
 * (MariaDB: a server's query id), {@code KILL USER}, a {@code KILL} of anything but a plain number, and a
 * {@code KILL} in the string literal of {@code PREPARE ... FROM} or {@code EXECUTE IMMEDIATE}, and a {@code KILL} that
 * only some servers see (a conditional comment, {@code /*!99999 ... *&#47;} or {@code /*M! ... *&#47;}, run by some
 * and skipped by others, changes the text). Comments are skipped, executable comments count as code, and strings,
 * quoted identifiers and the session's {@link SqlMode} are understood ({@link SqlTokenizer}), so
 * {@code SELECT 'kill 5'} is left alone.
 */
final class SessionIdentitySql {

    /**
     * {@code KILL [HARD|SOFT] [CONNECTION|QUERY] n}.
     *
     * @param modifier {@code ""}, {@code "HARD"} or {@code "SOFT"} (MariaDB), passed on to the servers
     */
    record Kill(boolean queryOnly, long sessionId, String modifier) {

        Kill(boolean queryOnly, long sessionId) {
            this(queryOnly, sessionId, "");
        }

        /** The KILL to run on a server for one of the session's backend threads. */
        String serverText(long threadId) {
            return "KILL " + (modifier.isEmpty() ? "" : modifier + " ") + (queryOnly ? "QUERY " : "") + threadId;
        }
    }

    /** What a text holds in the way of {@code KILL}. */
    sealed interface KillText {
        /** No KILL anywhere: forward the text. */
        KillText NONE = new None();

        /** The text holds no KILL. */
        record None() implements KillText {
        }

        /** The text is one plain KILL of a Gantry session id. */
        record Single(Kill kill) implements KillText {
        }

        /** A KILL the proxy does not translate: answer with this error and send nothing. */
        record Refused(ErrPacket error) implements KillText {
        }

        /**
         * A multi-statement text with plain KILLs among its statements: run in order, each KILL by Gantry, the
         * statements between them sent as they are ({@link MultiStatementRun}).
         */
        record Several(List<Part> parts) implements KillText {
        }
    }

    /** One step of a {@link KillText.Several}: a KILL, or the text of the statements up to the next one. */
    sealed interface Part {
        record KillPart(Kill kill) implements Part {
        }

        record SqlPart(String sql) implements Part {
        }
    }

    static final String SEND_ALONE = "send KILL [CONNECTION|QUERY] <session id> as a statement of its own";

    private SessionIdentitySql() {
    }

    /**
     * The text with every {@code CONNECTION_ID()} outside quotes and comments (executable comments are code) replaced
     * by {@code sessionId}, or the same string when there is none (the common case costs one case-insensitive scan).
     */
    static String withSessionId(QueryText text, long sessionId) {
        return withSessionValues(text, sessionId, OptionalLong.empty(), OptionalLong.empty());
    }

    /**
     * {@link #withSessionId}, and every {@code ROW_COUNT()} and {@code FOUND_ROWS()} of the text's first statement
     * replaced by the value given for it (when the connection that ran the session's previous statement has left the
     * session: {@link PreviousCounts}), as {@code IFNULL(value, ROW_COUNT())}: the value, typed as the function is.
     */
    static String withSessionValues(QueryText text, long sessionId, OptionalLong rowCount, OptionalLong foundRows) {
        String sql = text.sql();
        if (!text.mentions(QueryText.Word.CONNECTION_ID) && rowCount.isEmpty() && foundRows.isEmpty()) {
            return sql;
        }
        List<Token> tokens = text.tokens();
        if (!tokens.isEmpty() && tokens.get(tokens.size() - 1).type() == Type.UNTERMINATED) {
            return sql; // the server refuses it whatever it holds, and its error quotes the client's text
        }
        StringBuilder out = null;
        int copiedUpTo = 0;
        // The counts are the previous statement's only for the text's first statement: the next ones read their own.
        boolean firstStatement = true;
        for (int i = 0; i + 2 < tokens.size(); i++) {
            Token token = tokens.get(i);
            firstStatement &= !token.isSymbol(sql, ';');
            int source = token.type() == Type.WORD ? dynamicSqlSource(sql, tokens, i) : -1;
            if (source >= 0) {
                // The SQL of EXECUTE IMMEDIATE runs now, as the statement: the same values, written into its literal;
                // the SQL of PREPARE runs at an EXECUTE to come, when only its CONNECTION_ID() is known now.
                boolean runsNow = is(sql, token, "EXECUTE");
                SourceRewrite rewrite = dynamicSqlWithValues(text, source, sessionId,
                        runsNow && firstStatement ? rowCount : OptionalLong.empty(),
                        runsNow && firstStatement ? foundRows : OptionalLong.empty());
                if (rewrite != null) {
                    if (out == null) {
                        out = new StringBuilder(sql.length() + 8);
                    }
                    out.append(sql, copiedUpTo, rewrite.start()).append(rewrite.literal());
                    copiedUpTo = rewrite.end();
                    i = rewrite.lastToken();
                }
                continue;
            }
            if (token.type() != Type.WORD || i > 0 && tokens.get(i - 1).isSymbol(sql, '.')
                    || !tokens.get(i + 1).isSymbol(sql, '(') || !tokens.get(i + 2).isSymbol(sql, ')')) {
                continue;
            }
            OptionalLong value = token.isWord(sql, "CONNECTION_ID") ? OptionalLong.of(sessionId)
                    : !firstStatement ? OptionalLong.empty()
                    : token.isWord(sql, "ROW_COUNT") ? rowCount
                    : token.isWord(sql, "FOUND_ROWS") ? foundRows : OptionalLong.empty();
            if (value.isEmpty()) {
                continue;
            }
            if (out == null) {
                out = new StringBuilder(sql.length() + 8);
            }
            out.append(sql, copiedUpTo, token.start());
            if (token.isWord(sql, "CONNECTION_ID")) {
                out.append(value.getAsLong());
            } else {
                // IFNULL(n, ROW_COUNT()) is n with the function's own type (BIGINT) in any expression around it
                out.append("IFNULL(").append(value.getAsLong()).append(", ").append(sql, token.start(),
                        tokens.get(i + 2).end()).append(')');
            }
            copiedUpTo = tokens.get(i + 2).end();
            i += 2;
        }
        if (out == null) {
            return sql;
        }
        return out.append(sql, copiedUpTo, sql.length()).toString();
    }

    /**
     * {@code GET [CURRENT] DIAGNOSTICS @a = ROW_COUNT, @b = NUMBER}, the text's first statement, as
     * {@code SET @a = rowCount, @b = 0}, for a session whose previous statement ran on a connection that has left it
     * (the server of the connection that runs it would answer for the last statement run there). {@code NUMBER} is 0:
     * a connection whose statement left warnings or an error stays with its session until the next statement, so
     * one that left holds none of the session's. Null when the text is anything else: a {@code CONDITION} item, a
     * target that is not a user variable, or a row count not known.
     */
    static String diagnosticsAsSet(QueryText text, OptionalLong rowCount) {
        String sql = text.sql();
        List<Token> tokens = text.tokens();
        int i = 0;
        if (rowCount.isEmpty() || tokens.size() < 5 || !is(sql, tokens.get(i++), "GET")) {
            return null;
        }
        if (is(sql, tokens.get(i), "CURRENT")) {
            i++;
        }
        if (!is(sql, tokens.get(i++), "DIAGNOSTICS")) {
            return null;
        }
        StringBuilder set = new StringBuilder("SET ");
        while (true) {
            if (i + 2 >= tokens.size() || tokens.get(i).type() != Type.USER_VARIABLE
                    || !tokens.get(i + 1).isSymbol(sql, '=')) {
                return null;
            }
            Token item = tokens.get(i + 2);
            String value = is(sql, item, "ROW_COUNT") ? Long.toString(rowCount.getAsLong())
                    : is(sql, item, "NUMBER") ? "0" : null;
            if (value == null) {
                return null;
            }
            set.append(tokens.get(i).text(sql)).append(" = ").append(value);
            i += 3;
            if (i == tokens.size()) {
                return set.toString();
            }
            if (tokens.get(i).isSymbol(sql, ';')) {
                return set.append(sql, tokens.get(i).start(), sql.length()).toString();
            }
            if (!tokens.get(i).isSymbol(sql, ',')) {
                return null;
            }
            set.append(", ");
            i++;
        }
    }

    /** The string literals of a dynamic statement's SQL, from {@code start} to {@code end}, replaced by {@code literal}. */
    private record SourceRewrite(int start, int end, int lastToken, String literal) {
    }

    /**
     * The literal SQL of {@code PREPARE ... FROM} or {@code EXECUTE IMMEDIATE} whose tokens start at {@code source},
     * with {@link #withSessionValues} applied to it, as one literal of the session's quoting; null when it is not a
     * literal or nothing in it changes.
     */
    private static SourceRewrite dynamicSqlWithValues(QueryText text, int source, long sessionId,
                                                      OptionalLong rowCount, OptionalLong foundRows) {
        String sql = text.sql();
        List<Token> tokens = text.tokens();
        boolean escapes = !text.mode().noBackslashEscapes();
        String value = concatenatedLiterals(sql, tokens, source, escapes);
        if (value == null) {
            return null;
        }
        String rewritten = withSessionValues(QueryText.of(value, text.mode()), sessionId, rowCount, foundRows);
        if (rewritten.equals(value)) {
            return null;
        }
        int first = tokens.get(source).type() == Type.STRING ? source : source + 1;
        int last = first;
        while (last + 1 < tokens.size() && tokens.get(last + 1).type() == Type.STRING) {
            last++;
        }
        StringBuilder literal = new StringBuilder(rewritten.length() + 2).append('\'');
        for (int c = 0; c < rewritten.length(); c++) {
            char ch = rewritten.charAt(c);
            if (ch == '\'' || ch == '\\' && escapes) {
                literal.append(ch);
            }
            literal.append(ch);
        }
        return new SourceRewrite(tokens.get(first).start(), tokens.get(last).end(), last,
                literal.append('\'').toString());
    }

    /** A plain KILL of a number, or empty for anything else (see {@link #inspectKill}). */
    static Optional<Kill> parseKill(String sql) {
        return inspectKill(sql, SqlMode.DEFAULT) instanceof KillText.Single single
                ? Optional.of(single.kill()) : Optional.empty();
    }

    /**
     * What {@code sql} holds in the way of {@code KILL}.
     *
     * @param mode the session's mode ({@code NO_BACKSLASH_ESCAPES}, {@code ANSI_QUOTES})
     */
    static KillText inspectKill(String sql, SqlMode mode) {
        return inspectKill(QueryText.of(sql, mode));
    }

    /** {@link #inspectKill(String, SqlMode)} of a statement of the query path. */
    static KillText inspectKill(QueryText text) {
        // Runs for every statement: only text that mentions KILL at all is looked at closely.
        // ('KI' 'LL 5' is KILL 5 to the server: dynamic SQL is looked at whatever it spells.)
        if (!text.mentions(QueryText.Word.KILL) && !text.mentions(QueryText.Word.PREPARE)
                && !text.mentions(QueryText.Word.IMMEDIATE)) {
            return KillText.NONE;
        }
        return inspect(text.sql(), text.mode(), 0);
    }

    /** The text of a COM_STMT_PREPARE holds a KILL: the error to answer it with. */
    static Optional<ErrPacket> refusePrepared(String sql, SqlMode mode) {
        if (inspectKill(sql, mode) instanceof KillText.None) {
            return Optional.empty();
        }
        return Optional.of(ErrPacket.of(1295, "HY000", "This command is not supported in the prepared statement "
                + "protocol yet: Gantry runs KILL only as a plain query; " + SEND_ALONE));
    }

    /** Each server's reading of the text must hold the same KILL, or none. */
    private static KillText inspect(String sql, SqlMode mode, int nesting) {
        List<List<Token>> readings = SqlTokenizer.readings(sql, mode);
        KillText first = inspect(sql, readings.get(0), mode, nesting);
        for (List<Token> other : readings.subList(1, readings.size())) {
            KillText kill = inspect(sql, other, mode, nesting);
            if (!(kill instanceof KillText.None) && !kill.equals(first)) {
                return refused("KILL in a text that a conditional comment (/*!NNNNN or /*M!) makes read otherwise "
                        + "by some servers");
            }
        }
        return first;
    }

    private static KillText inspect(String sql, List<Token> tokens, SqlMode mode, int nesting) {
        int statements = 0;
        boolean inStatement = false;
        int firstKill = -1;
        int kills = 0;
        for (int i = 0; i < tokens.size(); i++) {
            Token token = tokens.get(i);
            if (token.isSymbol(sql, ';')) {
                inStatement = false;
                continue;
            }
            if (!inStatement) {
                statements++;
                inStatement = true;
            }
            boolean afterDot = i > 0 && tokens.get(i - 1).isSymbol(sql, '.');
            if (!afterDot && is(sql, token, "KILL")) {
                kills++;
                if (firstKill < 0) {
                    firstKill = i;
                }
            }
            if (nesting < 3 && token.type() == Type.WORD && !afterDot) {
                int source = dynamicSqlSource(sql, tokens, i);
                if (source > 0) {
                    String inner = concatenatedLiterals(sql, tokens, source, !mode.noBackslashEscapes());
                    if (inner != null && !(inspect(inner, mode, nesting + 1) instanceof KillText.None)) {
                        return refused("KILL in PREPARE ... FROM or EXECUTE IMMEDIATE");
                    }
                }
            }
        }
        if (kills == 0) {
            return KillText.NONE;
        }
        int begin = 0;
        while (tokens.get(begin).isSymbol(sql, ';')) {
            begin++;
        }
        if (statements == 1 && kills == 1 && firstKill == begin) {
            return single(sql, tokens, begin);
        }
        if (nesting == 0 && statements > 1 && StatementClassifier.classify(sql, mode).statementCount() == statements) {
            // Top-level statements only (a compound statement's inner semicolons would count one statement less).
            KillText several = several(sql, tokens, mode);
            if (several != null) {
                return several;
            }
        }
        return refused("KILL inside a compound statement or a stored program, or one that is not a statement of its "
                + "own");
    }

    /**
     * The statements of a multi-statement text as parts: each plain KILL alone, the statements between KILLs
     * together; null when a KILL is not one Gantry can carry out (the caller refuses the text).
     */
    private static KillText several(String sql, List<Token> tokens, SqlMode mode) {
        List<Part> parts = new ArrayList<>();
        int sqlFrom = -1;
        int sqlTo = -1;
        int i = 0;
        while (i < tokens.size()) {
            if (tokens.get(i).isSymbol(sql, ';')) {
                i++;
                continue;
            }
            int end = i;
            while (end < tokens.size() && !tokens.get(end).isSymbol(sql, ';')) {
                end++;
            }
            int from = tokens.get(i).start();
            int to = tokens.get(end - 1).end();
            if (is(sql, tokens.get(i), "KILL")) {
                if (!(inspect(sql.substring(from, to), mode, 1) instanceof KillText.Single single)) {
                    return null;
                }
                if (sqlFrom >= 0) {
                    parts.add(new Part.SqlPart(sql.substring(sqlFrom, sqlTo)));
                    sqlFrom = -1;
                }
                parts.add(new Part.KillPart(single.kill()));
            } else {
                if (sqlFrom < 0) {
                    sqlFrom = from;
                }
                sqlTo = to;
            }
            i = end;
        }
        if (sqlFrom >= 0) {
            parts.add(new Part.SqlPart(sql.substring(sqlFrom, sqlTo)));
        }
        return new KillText.Several(List.copyOf(parts));
    }

    /** {@code tokens} is one statement whose token {@code begin} is KILL. */
    private static KillText single(String sql, List<Token> tokens, int begin) {
        int i = begin + 1;
        int end = StatementText.end(sql, tokens);
        String modifier = "";
        if (i < end && (is(sql, tokens.get(i), "HARD") || is(sql, tokens.get(i), "SOFT"))) {
            modifier = is(sql, tokens.get(i), "HARD") ? "HARD" : "SOFT";
            i++;
        }
        boolean queryOnly = false;
        if (i < end && is(sql, tokens.get(i), "QUERY")) {
            queryOnly = true;
            i++;
            if (i < end && is(sql, tokens.get(i), "ID")) {
                return refused("KILL QUERY ID (a server's query id); use KILL QUERY <session id>");
            }
        } else if (i < end && is(sql, tokens.get(i), "CONNECTION")) {
            i++;
        } else if (i < end && is(sql, tokens.get(i), "USER")) {
            return refused("KILL USER; kill each session with KILL <session id>");
        }
        if (i == end - 1 && tokens.get(i).type() == Type.NUMBER && isDigits(sql, tokens.get(i))) {
            Token number = tokens.get(i);
            try {
                return new KillText.Single(new Kill(queryOnly, Long.parseLong(sql.substring(number.start(),
                        number.end())), modifier));
            } catch (NumberFormatException e) {
                return new KillText.Refused(ErrPacket.of(1094, "HY000",
                        "Unknown thread id: " + sql.substring(number.start(), number.end())));
            }
        }
        return refused("KILL of anything but a session id written as a plain number");
    }

    /**
     * Where the SQL text of {@code PREPARE name FROM <source>} or {@code EXECUTE IMMEDIATE <source>} starts when
     * token {@code i} begins one, else -1.
     */
    private static int dynamicSqlSource(String sql, List<Token> tokens, int i) {
        Token token = tokens.get(i);
        if (is(sql, token, "PREPARE") && i + 2 < tokens.size() && is(sql, tokens.get(i + 2), "FROM")) {
            return i + 3;
        }
        if (is(sql, token, "EXECUTE") && i + 1 < tokens.size() && is(sql, tokens.get(i + 1), "IMMEDIATE")) {
            return i + 2;
        }
        return -1;
    }

    /**
     * The value of the string literals from token {@code from} on (adjacent literals are concatenated, as the server
     * does; a character set introducer such as {@code _utf8mb4} may precede them), or null when the source is not a
     * literal (a variable or an expression: its value is only known at run time).
     */
    private static String concatenatedLiterals(String sql, List<Token> tokens, int from, boolean escapes) {
        int i = from;
        if (i < tokens.size() && tokens.get(i).type() == Type.WORD && sql.charAt(tokens.get(i).start()) == '_') {
            i++;
        }
        StringBuilder value = null;
        while (i < tokens.size() && tokens.get(i).type() == Type.STRING) {
            Token literal = tokens.get(i);
            if (value == null) {
                value = new StringBuilder();
            }
            value.append(literal.stringValue(sql, escapes));
            i++;
        }
        return value == null ? null : value.toString();
    }

    private static KillText.Refused refused(String what) {
        return new KillText.Refused(ErrPacket.of(1235, "42000",
                "This version of Gantry doesn't yet support '" + what + "': " + SEND_ALONE));
    }

    private static boolean is(String sql, Token token, String upper) {
        return token.isWord(sql, upper);
    }

    private static boolean isDigits(String sql, Token token) {
        for (int i = token.start(); i < token.end(); i++) {
            char c = sql.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }
}
