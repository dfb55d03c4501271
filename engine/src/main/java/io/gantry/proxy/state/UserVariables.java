package io.gantry.proxy.state;

import io.gantry.route.SqlTokenizer.Token;
import io.gantry.route.SqlTokenizer.Type;
import io.gantry.wire.ColumnDefinition.FieldType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * User variables carried by value, so that a session that sets them is not pinned to the connection that holds
 * them: after a statement that sets any ({@code SET @a = ...}, {@code SELECT ... INTO @a}, {@code @a := ...}), the
 * values of the variables its text names are read back on the same connection ({@link #captureQuery}), and each is
 * replayed on the session's other connections as {@code SET @a = <literal>} of the same type: an integer, a decimal
 * and a double stay one, and a string keeps its bytes, character set and collation ({@link #replays}).
 *
 * <p>Not carried (the connection then stays with its session, as before): more than {@link #MAX_VARIABLES}
 * variables in one text, values longer than {@link #MAX_VALUE_BYTES} bytes in all, and variables set where the text
 * does not name them (inside a stored procedure, or by a prepared {@code EXECUTE}).
 */
public final class UserVariables {

    /** Variables named by one text beyond which they are not carried. */
    public static final int MAX_VARIABLES = 32;
    /** Bytes of string values read back for one text beyond which they are not carried. */
    public static final int MAX_VALUE_BYTES = 64 * 1024;

    private static final Set<FieldType> INTEGERS = Set.of(FieldType.TINY, FieldType.SHORT, FieldType.INT24,
            FieldType.LONG, FieldType.LONGLONG, FieldType.YEAR);
    private static final Set<FieldType> DECIMALS = Set.of(FieldType.DECIMAL, FieldType.NEWDECIMAL);
    private static final Set<FieldType> REALS = Set.of(FieldType.FLOAT, FieldType.DOUBLE);

    /**
     * A user variable as a text names it.
     *
     * @param key what tells it from others (names are case-insensitive): the name, unquoted, in lower case
     * @param sql how to write it in SQL whatever the session's mode: {@code @`name`}
     */
    public record Name(String key, String sql) {
    }

    /**
     * A variable's value as read back by {@link #captureQuery}.
     *
     * @param text the value in text form (null for NULL)
     * @param type the column type of the value: what kind of value the variable holds
     * @param charset its character set ({@code binary} for numbers and binary strings)
     * @param collation its collation
     * @param hex its bytes, in hex
     */
    public record Captured(String text, FieldType type, String charset, String collation, String hex) {
    }

    /** How many columns {@link #captureQuery} reads per variable. */
    public static final int COLUMNS_PER_VARIABLE = 4;

    private UserVariables() {
    }

    /** The user variables the text names, each once, in order of first mention. */
    public static List<Name> named(String sql, List<Token> tokens) {
        Map<String, Name> names = new LinkedHashMap<>();
        for (Token token : tokens) {
            if (token.type() == Type.USER_VARIABLE) {
                String name = unquoted(token.text(sql).substring(1));
                String key = name.toLowerCase(Locale.ROOT);
                names.putIfAbsent(key, new Name(key, "@`" + name.replace("`", "``") + "`"));
            }
        }
        return List.copyOf(names.values());
    }

    /** {@code SELECT @a, CHARSET(@a), COLLATION(@a), HEX(@a), @b, ...}: every value with what its replay needs. */
    public static String captureQuery(List<Name> names) {
        StringBuilder query = new StringBuilder("SELECT ");
        for (int i = 0; i < names.size(); i++) {
            String variable = names.get(i).sql();
            query.append(i == 0 ? "" : ", ").append(variable).append(", CHARSET(").append(variable)
                    .append("), COLLATION(").append(variable).append("), HEX(").append(variable).append(')');
        }
        return query.toString();
    }

    /**
     * The replay of each variable, {@code SET @a = <literal>}, by its key; empty when the values cannot be carried
     * (too long in all, or of a kind a literal cannot give back).
     */
    public static Optional<Map<String, String>> replays(List<Name> names, List<Captured> values) {
        if (names.size() > MAX_VARIABLES || values.size() != names.size()) {
            return Optional.empty();
        }
        Map<String, String> replays = new LinkedHashMap<>();
        long bytes = 0;
        for (int i = 0; i < names.size(); i++) {
            Captured value = values.get(i);
            bytes += value.hex() == null ? 0 : value.hex().length() / 2;
            Optional<String> literal = literal(value);
            if (bytes > MAX_VALUE_BYTES || literal.isEmpty()) {
                return Optional.empty();
            }
            replays.put(names.get(i).key(), "SET " + names.get(i).sql() + " = " + literal.get());
        }
        return Optional.of(replays);
    }

    /** A literal of the value's own type: NULL, an integer, a decimal, a double, or a string with its collation. */
    static Optional<String> literal(Captured value) {
        if (value.text() == null) {
            return Optional.of("NULL");
        }
        FieldType type = value.type();
        if (INTEGERS.contains(type) || DECIMALS.contains(type)) {
            return isNumber(value.text()) ? Optional.of(value.text()) : Optional.empty();
        }
        if (REALS.contains(type)) {
            String text = value.text();
            return isNumber(text) ? Optional.of(text.toLowerCase(Locale.ROOT).contains("e") ? text : text + "E0")
                    : Optional.empty();
        }
        if (value.hex() == null || value.charset() == null || value.collation() == null
                || !isName(value.charset()) || !isName(value.collation())) {
            return Optional.empty();
        }
        String bytes = "X'" + value.hex() + "'";
        return Optional.of(value.charset().equals("binary") ? "_binary " + bytes
                : "_" + value.charset() + " " + bytes + " COLLATE " + value.collation());
    }

    private static boolean isNumber(String text) {
        return text.matches("-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?");
    }

    private static boolean isName(String text) {
        return text.matches("[A-Za-z0-9_]+");
    }

    /** The name of {@code @name}, {@code @`name`}, {@code @'name'} or {@code @"name"} without its quotes. */
    private static String unquoted(String name) {
        if (name.length() >= 2) {
            char quote = name.charAt(0);
            if ((quote == '`' || quote == '\'' || quote == '"') && name.charAt(name.length() - 1) == quote) {
                return name.substring(1, name.length() - 1).replace(String.valueOf(quote) + quote,
                        String.valueOf(quote));
            }
        }
        return name;
    }
}
