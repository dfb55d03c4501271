package io.gantry.proxy.state;

import io.gantry.route.SqlTokenizer.Token;
import io.gantry.route.SqlTokenizer.Type;
import io.gantry.route.SqlTokenizer;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Pattern;

/**
 * How a session-state text ({@code SET ...}, {@code USE db}) that ran on the primary is replayed on the session's
 * other backend connections. Settings are replayed as values, never as the expressions the client wrote: a
 * {@code SET sql_mode = (SELECT f())} must not run {@code f()} again on a replica, where it could write or fail.
 * A text whose values are all literals is replayed as it is; otherwise the resulting values are read back from
 * the primary connection that ran it and the replay assigns those.
 */
public sealed interface SettingReplay {

    /** Every value is a literal: the text itself is the replay. */
    record Verbatim() implements SettingReplay {
    }

    /**
     * Some value is an expression. {@link #query()} reads the resulting values back; {@link #replayText(List)}
     * makes the replay from them.
     *
     * @param items the assignments in order: literal ones as written, the others by variable name
     */
    record ReadBack(List<Item> items) implements SettingReplay {

        /** One assignment of the SET: kept as written, or to be assigned the value read back. */
        record Item(String text, String variable) {
            boolean readsBack() {
                return variable != null;
            }
        }

        public ReadBack {
            items = List.copyOf(items);
        }

        /** {@code SELECT @@session.a, @@session.b}: the values the expressions produced. */
        public String query() {
            StringBuilder query = new StringBuilder("SELECT ");
            String separator = "";
            for (Item item : items) {
                if (item.readsBack()) {
                    query.append(separator).append("@@session.").append(item.variable());
                    separator = ", ";
                }
            }
            return query.toString();
        }

        /** The replay: a single SET with literal values, from the values read back (as SQL literals, in order). */
        public String replayText(List<String> literals) {
            StringBuilder text = new StringBuilder("SET ");
            int next = 0;
            for (int i = 0; i < items.size(); i++) {
                Item item = items.get(i);
                if (i > 0) {
                    text.append(", ");
                }
                if (item.readsBack()) {
                    text.append("@@session.").append(item.variable()).append(" = ").append(literals.get(next++));
                } else {
                    text.append(item.text());
                }
            }
            return text.toString();
        }
    }

    /** Gantry cannot tell what the text assigned: the session stays on the primary instead of replaying it. */
    record NotReplayable(String why) implements SettingReplay {
    }

    /** Variable names Gantry writes back into a replay unquoted. */
    Pattern PLAIN_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_$]*");

    /** How to replay {@code sql}, which the classifier found to be session state only. */
    static SettingReplay of(String sql, boolean noBackslashEscapes) {
        List<Token> tokens = SqlTokenizer.tokenize(sql, noBackslashEscapes);
        List<List<Token>> statements = split(tokens, sql, ';', false);
        List<ReadBack.Item> items = new ArrayList<>();
        boolean needsReadBack = false;
        boolean onlySets = true;
        for (List<Token> statement : statements) {
            if (statement.isEmpty()) {
                continue;
            }
            if (!statement.get(0).isWord(sql, "SET")) {
                onlySets = false;
                continue;
            }
            List<Token> body = statement.subList(1, statement.size());
            for (List<Token> assignment : split(body, sql, ',', true)) {
                if (takesTheRest(sql, assignment)) {
                    // SET TRANSACTION ISOLATION LEVEL ..., READ ONLY and SET ROLE a, b: commas of their own
                    int from = body.indexOf(assignment.get(0));
                    items.add(new ReadBack.Item(text(sql, body.subList(from, body.size())), null));
                    break;
                }
                ReadBack.Item item = item(sql, assignment);
                if (item == null) {
                    return new NotReplayable("cannot tell what '" + text(sql, assignment) + "' assigns");
                }
                needsReadBack |= item.readsBack();
                items.add(item);
            }
        }
        if (!needsReadBack) {
            return new Verbatim();
        }
        if (!onlySets) {
            return new NotReplayable("a setting made from an expression together with other statements");
        }
        return new ReadBack(items);
    }

    /**
     * What a text assigns when it replaces whatever an earlier text assigned the same way, so that the session's
     * state log keeps only the latest: {@code "@@name"} for a single {@code SET} of one session variable (in any of
     * its spellings: {@code SET x = 1}, {@code SET SESSION x = 1}, {@code SET @@session.x = 1}), {@code "character
     * set"} for {@code SET NAMES} and {@code SET CHARACTER SET} (each sets the same three variables); null for
     * anything else (several assignments or statements, {@code SET TRANSACTION}, {@code USE}), which is kept as it
     * is.
     */
    static String replacesKey(String sql, boolean noBackslashEscapes) {
        List<List<Token>> statements = new ArrayList<>();
        for (List<Token> statement : split(SqlTokenizer.tokenize(sql, noBackslashEscapes), sql, ';', false)) {
            if (!statement.isEmpty()) {
                statements.add(statement);
            }
        }
        if (statements.size() != 1 || !statements.get(0).get(0).isWord(sql, "SET")) {
            return null;
        }
        List<Token> body = statements.get(0).subList(1, statements.get(0).size());
        List<List<Token>> assignments = split(body, sql, ',', true);
        if (assignments.size() != 1 || takesTheRest(sql, body)) {
            return null;
        }
        int i = targetIndex(sql, body);
        if (i + 1 >= body.size()) {
            return null;
        }
        Token target = body.get(i);
        if (target.isWord(sql, "NAMES") || target.isWord(sql, "CHARSET")
                || (target.isWord(sql, "CHARACTER") && body.get(i + 1).isWord(sql, "SET"))) {
            return "character set";
        }
        String variable = isKeywordForm(sql, target) ? null : variableName(sql, target);
        if (variable == null || !assigns(sql, body.get(i + 1))) {
            return null;
        }
        return "@@" + variable.toLowerCase(java.util.Locale.ROOT);
    }

    /** A SQL literal for a value read back, from its column's text and type. */
    static String literal(String value, boolean numeric, boolean noBackslashEscapes) {
        if (value == null) {
            return "NULL";
        }
        if (numeric) {
            return value;
        }
        if (value.indexOf('\\') >= 0 && !noBackslashEscapes) {
            // A hex literal means the same whatever NO_BACKSLASH_ESCAPES is on the connection it is replayed on.
            // (value holds one char per byte, as read back)
            return "X'" + HexFormat.of().formatHex(value.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1))
                    + "'";
        }
        return "'" + value.replace("'", "''") + "'";
    }

    private static ReadBack.Item item(String sql, List<Token> tokens) {
        if (tokens.isEmpty()) {
            return null;
        }
        int i = targetIndex(sql, tokens);
        if (i == tokens.size()) {
            return null;
        }
        Token target = tokens.get(i);
        String written = text(sql, tokens);
        if (target.type() == Type.WORD && isKeywordForm(sql, target)) {
            // SET NAMES x, SET CHARACTER SET x, SET TRANSACTION ..., SET ROLE r: keywords and names only
            return new ReadBack.Item(written, null);
        }
        String variable = variableName(sql, target);
        if (variable == null || i + 1 >= tokens.size()) {
            return null;
        }
        if (!assigns(sql, tokens.get(i + 1))) {
            return null;
        }
        List<Token> value = tokens.subList(i + 2, tokens.size());
        return isLiteral(sql, value) ? new ReadBack.Item(written, null) : new ReadBack.Item(written, variable);
    }

    /** Where an assignment's target is: past its {@code SESSION}/{@code LOCAL} words (the size when none is). */
    private static int targetIndex(String sql, List<Token> assignment) {
        int i = 0;
        while (i < assignment.size()
                && (assignment.get(i).isWord(sql, "SESSION") || assignment.get(i).isWord(sql, "LOCAL"))) {
            i++;
        }
        return i;
    }

    /** {@code =} or {@code :=}. */
    private static boolean assigns(String sql, Token operator) {
        return operator.isSymbol(sql, '=') || operator.type() == Type.ASSIGN;
    }

    private static boolean takesTheRest(String sql, List<Token> assignment) {
        int i = targetIndex(sql, assignment);
        return i < assignment.size()
                && (assignment.get(i).isWord(sql, "TRANSACTION") || assignment.get(i).isWord(sql, "ROLE"));
    }

    private static boolean isKeywordForm(String sql, Token word) {
        for (String keyword : new String[] {"NAMES", "CHARACTER", "CHARSET", "TRANSACTION", "ROLE"}) {
            if (word.isWord(sql, keyword)) {
                return true;
            }
        }
        return false;
    }

    /** The session variable an assignment target names, or null for anything else (user variables, globals). */
    private static String variableName(String sql, Token target) {
        String name;
        switch (target.type()) {
            case WORD -> name = target.text(sql);
            case QUOTED_IDENTIFIER -> name = target.text(sql).substring(1, target.end() - target.start() - 1);
            case SYSTEM_VARIABLE -> {
                name = target.text(sql).substring(2);
                String lower = name.toLowerCase(java.util.Locale.ROOT);
                if (lower.startsWith("session.")) {
                    name = name.substring("session.".length());
                } else if (lower.startsWith("local.")) {
                    name = name.substring("local.".length());
                } else if (lower.contains(".")) {
                    return null; // @@global.x and friends are not session state
                }
            }
            default -> {
                return null;
            }
        }
        return PLAIN_NAME.matcher(name).matches() ? name : null;
    }

    /** One number, string or bare word ({@code ON}, {@code DEFAULT}), with an optional sign: no expression. */
    private static boolean isLiteral(String sql, List<Token> value) {
        int i = 0;
        if (value.size() == 2 && (value.get(0).isSymbol(sql, '-') || value.get(0).isSymbol(sql, '+'))) {
            i = 1;
        }
        if (value.size() != i + 1) {
            return false;
        }
        Type type = value.get(i).type();
        return type == Type.NUMBER || (i == 0 && (type == Type.STRING || type == Type.WORD));
    }

    /** Splits at {@code separator} symbols outside parentheses. */
    private static List<List<Token>> split(List<Token> tokens, String sql, char separator, boolean keepEmpty) {
        List<List<Token>> parts = new ArrayList<>();
        int depth = 0;
        int from = 0;
        for (int i = 0; i < tokens.size(); i++) {
            Token token = tokens.get(i);
            if (token.isSymbol(sql, '(')) {
                depth++;
            } else if (token.isSymbol(sql, ')')) {
                depth = Math.max(0, depth - 1);
            } else if (depth == 0 && token.isSymbol(sql, separator)) {
                parts.add(tokens.subList(from, i));
                from = i + 1;
            }
        }
        if (from < tokens.size() || keepEmpty) {
            parts.add(tokens.subList(from, tokens.size()));
        }
        return parts;
    }

    private static String text(String sql, List<Token> tokens) {
        return tokens.isEmpty() ? "" : sql.substring(tokens.get(0).start(), tokens.get(tokens.size() - 1).end());
    }
}
