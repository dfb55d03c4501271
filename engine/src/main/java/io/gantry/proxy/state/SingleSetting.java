package io.gantry.proxy.state;

import io.gantry.route.QueryText;
import io.gantry.route.SqlTokenizer.Token;
import io.gantry.route.SqlTokenizer.Type;
import java.util.List;
import java.util.Locale;

/**
 * A text that sets one session variable to a literal, {@code SET [SESSION|LOCAL] name = literal} (also
 * {@code @@[session.|local.]name}, {@code :=}, one trailing {@code ;}), read for the two settings Gantry answers
 * itself ({@code QueryCommand}): what MySQL Connector/J sends on every connect, {@code SET character_set_results =
 * NULL} and {@code SET autocommit=1}, and pools on every return of a connection ({@code setAutoCommit(true)}).
 * Neither can fail, and the second nearly always sets the value the session has already: a primary connection for
 * them would cost every login a wait for one.
 *
 * @param variable the variable's name, in lower case
 * @param value    the literal's text as written
 * @param type     the literal's token type
 */
public record SingleSetting(String variable, String value, Type type) {

    /** The longest text read: a setting of one variable, with room for blanks and a comment. */
    private static final int MAX_LENGTH = 96;

    /**
     * The setting {@code text} makes, or null when it is anything else than one assignment of a literal to a
     * session variable (several, an expression, a user variable, {@code GLOBAL}, a quoted name).
     */
    public static SingleSetting parse(QueryText text) {
        if (text.sql().length() > MAX_LENGTH || !text.leadsWith("SET")) {
            return null; // the common case, without tokenizing
        }
        String sql = text.sql();
        List<Token> tokens = text.tokens();
        int end = tokens.size();
        if (end > 0 && tokens.get(end - 1).isSymbol(sql, ';')) {
            end--;
        }
        if (end < 4 || !tokens.get(0).isWord(sql, "SET")) {
            return null;
        }
        int at = 1;
        Token name = tokens.get(at);
        if (name.isWord(sql, "SESSION") || name.isWord(sql, "LOCAL")) {
            name = tokens.get(++at);
        }
        String variable = variableName(sql, name, at == 1);
        if (variable == null || at + 3 != end) {
            return null;
        }
        Token assign = tokens.get(at + 1);
        Token value = tokens.get(at + 2);
        if (!assign.isSymbol(sql, '=') && assign.type() != Type.ASSIGN
                || value.type() != Type.NUMBER && value.type() != Type.WORD) {
            return null;
        }
        return new SingleSetting(variable, value.text(sql), value.type());
    }

    /** The session variable {@code name} names, or null; {@code @@} is taken only where no scope word came first. */
    private static String variableName(String sql, Token name, boolean systemVariableAllowed) {
        String text = name.text(sql).toLowerCase(Locale.ROOT);
        if (name.type() == Type.WORD) {
            return text.equals("global") || text.equals("names") || text.equals("character")
                    || text.equals("password") || text.equals("transaction") || text.equals("role")
                    || text.equals("statement") ? null : text;
        }
        if (name.type() != Type.SYSTEM_VARIABLE || !systemVariableAllowed) {
            return null;
        }
        for (String prefix : new String[] {"@@session.", "@@local.", "@@"}) {
            if (text.startsWith(prefix)) {
                String rest = text.substring(prefix.length());
                return rest.isEmpty() || rest.contains(".") || rest.startsWith("`") ? null : rest;
            }
        }
        return null;
    }

    /**
     * The value a setting of {@code autocommit} gives it ({@code 0|1|ON|OFF|TRUE|FALSE}), or null for another
     * variable or another value.
     */
    public Boolean autocommit() {
        if (!variable.equals("autocommit")) {
            return null;
        }
        String literal = value.toUpperCase(Locale.ROOT);
        if (literal.equals("1") && type == Type.NUMBER || literal.equals("ON") || literal.equals("TRUE")) {
            return Boolean.TRUE;
        }
        if (literal.equals("0") && type == Type.NUMBER || literal.equals("OFF") || literal.equals("FALSE")) {
            return Boolean.FALSE;
        }
        return null;
    }

    /** Whether it is {@code character_set_results = NULL}: results sent as stored, valid on every server. */
    public boolean resultsCharsetToNull() {
        return variable.equals("character_set_results") && type == Type.WORD && value.equalsIgnoreCase("NULL");
    }
}
