package io.gantry.cache;

import io.gantry.route.SqlMode;
import io.gantry.route.SqlTokenizer.Token;
import io.gantry.route.SqlTokenizer.Type;
import io.gantry.route.SqlTokenizer;
import io.gantry.route.StatementClass;
import io.gantry.route.StatementClassifier;
import io.gantry.route.StatementFlag;
import io.gantry.route.StatementKind;
import io.gantry.route.StatementText;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * A query as a cache matches it: its shape ({@link SqlTokenizer#writeCacheShape}: literals and {@code ?} alike as
 * {@code ?}, a list of values after {@code IN} as one {@code ?}), the tables it reads, and where its rows can be told
 * apart by one key column.
 *
 * <p>A query is cacheable when its answer depends on the tables' contents and the parameters alone. Refused, each
 * with its reason: anything but one {@code SELECT}; locking reads ({@code FOR UPDATE}, {@code FOR SHARE},
 * {@code LOCK IN SHARE MODE}); user variables; functions whose value changes from call to call or from session to
 * session ({@link #NON_DETERMINISTIC}); possible stored functions; system variables and other server state; the
 * system schemas, whose changes the change stream does not carry; and text that servers read differently
 * (version-conditional comments).
 *
 * @param text         the shape, e.g. {@code SELECT c FROM sbtest1 WHERE id = ?}
 * @param tables       the tables named after {@code FROM} and {@code JOIN}, unqualified ones in the default database
 * @param parameters   how many {@code ?} the shape has (a list after {@code IN} counting as one)
 * @param keyParameter the index of the parameter the query's only condition compares with {@link #keyColumn}
 *                     ({@code WHERE id = ?}), or -1
 * @param keyColumn    that column's name, or null
 */
public record QueryShape(String text, List<TableName> tables, int parameters, int keyParameter, String keyColumn) {

    /** Functions whose value is not a function of the tables and the arguments (called with parentheses). */
    static final Set<String> NON_DETERMINISTIC = Set.of("NOW", "SYSDATE", "CURDATE", "CURTIME", "UNIX_TIMESTAMP",
            "RAND", "UUID", "UUID_SHORT", "SYS_GUID", "RANDOM_BYTES", "CONNECTION_ID", "USER", "SESSION_USER",
            "SYSTEM_USER", "CURRENT_USER", "CURRENT_ROLE", "DATABASE", "SCHEMA", "LAST_INSERT_ID", "FOUND_ROWS",
            "ROW_COUNT", "SLEEP", "BENCHMARK", "GET_LOCK", "IS_FREE_LOCK", "IS_USED_LOCK", "RELEASE_LOCK",
            "NEXTVAL", "LASTVAL", "SETVAL", "MASTER_POS_WAIT", "MASTER_GTID_WAIT", "LOAD_FILE", "VERSION");
    /** The same, written without parentheses. */
    static final Set<String> NON_DETERMINISTIC_WORDS = Set.of("CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP",
            "LOCALTIME", "LOCALTIMESTAMP", "UTC_DATE", "UTC_TIME", "UTC_TIMESTAMP", "CURRENT_USER", "CURRENT_ROLE");
    private static final Set<String> SYSTEM_SCHEMAS = Set.of("information_schema", "mysql", "performance_schema",
            "sys");
    /** Words that end a table reference instead of naming its alias. */
    private static final Set<String> AFTER_TABLE = Set.of("WHERE", "JOIN", "INNER", "LEFT", "RIGHT", "CROSS",
            "NATURAL", "STRAIGHT_JOIN", "ON", "USING", "GROUP", "ORDER", "LIMIT", "HAVING", "WINDOW", "UNION",
            "EXCEPT", "INTERSECT", "FOR", "LOCK", "INTO", "PARTITION", "FORCE", "USE", "IGNORE", "PROCEDURE", "OFFSET",
            "FETCH", "RETURNING");

    public QueryShape {
        Objects.requireNonNull(text, "text");
        tables = List.copyOf(tables);
    }

    /**
     * Analyses a query for a cache.
     *
     * @param defaultDatabase the database of unqualified table names (Gantry's upstream database)
     * @throws CacheException when it cannot be cached, saying why
     */
    public static QueryShape of(String select, SqlMode mode, String defaultDatabase) {
        StringBuilder shape = new StringBuilder(select.length());
        if (!SqlTokenizer.writeCacheShape(select, mode, shape, new StringBuilder(), new StringBuilder())) {
            throw refused("it holds a version-conditional comment or ends inside a string, name or comment");
        }
        StatementClass statement = StatementClassifier.classify(select, mode);
        if (statement.statementCount() != 1) {
            throw refused("it is " + (statement.statementCount() == 0 ? "empty" : "several statements"));
        }
        if (!statement.flags().isEmpty()) {
            throw refused(reason(statement.flags().iterator().next()));
        }
        if (statement.kind() != StatementKind.READ) {
            throw refused("it is not a read");
        }
        List<Token> tokens = SqlTokenizer.tokenize(select, mode);
        int end = StatementText.end(select, tokens);
        if (end == 0 || !tokens.get(0).isWord(select, "SELECT")) {
            throw refused("only a SELECT can be cached");
        }
        List<TableName> tables = new ArrayList<>();
        for (int i = 0; i < end; i++) {
            Token token = tokens.get(i);
            if (token.type() == Type.SYSTEM_VARIABLE) {
                throw refused(reason(StatementFlag.SERVER_STATE));
            }
            if (token.type() != Type.WORD) {
                continue;
            }
            String word = token.text(select).toUpperCase(Locale.ROOT);
            boolean call = i + 1 < end && tokens.get(i + 1).isSymbol(select, '(');
            boolean qualified = i > 0 && tokens.get(i - 1).isSymbol(select, '.');
            if (!qualified && ((call && NON_DETERMINISTIC.contains(word)) || NON_DETERMINISTIC_WORDS.contains(word))) {
                throw refused("it calls " + word + (call ? "()" : "") + ", whose value changes from call to call "
                        + "or from session to session");
            }
            if (word.equals("SQL_CALC_FOUND_ROWS")) {
                throw refused("it counts rows for FOUND_ROWS(), which a cached answer would not");
            }
            if (word.equals("FROM") || word.endsWith("JOIN")) {
                readTables(select, tokens, i + 1, end, word.equals("FROM"), defaultDatabase, tables);
            }
        }
        if (tables.isEmpty()) {
            throw refused("it reads no table");
        }
        for (TableName table : tables) {
            if (SYSTEM_SCHEMAS.contains(table.database().toLowerCase(Locale.ROOT))) {
                throw refused("it reads " + table + ", a system table whose changes are not in the change stream");
            }
        }
        int parameters = 0;
        for (int i = 0; i < shape.length(); i++) {
            parameters += shape.charAt(i) == '?' ? 1 : 0;
        }
        int keyParameter = -1;
        String keyColumn = null;
        if (tables.size() == 1) {
            int[] key = keyCondition(select, tokens, end);
            if (key != null) {
                keyColumn = tokens.get(key[0]).identifier(select);
                keyParameter = parametersBefore(select, tokens, key[1]);
            }
        }
        return new QueryShape(shape.toString(), tables, parameters, keyParameter, keyColumn);
    }

    /** The same shape without its key condition: the key column is not a single-column integer primary key. */
    QueryShape withoutKey() {
        return new QueryShape(text, tables, parameters, -1, null);
    }

    private static CacheException refused(String reason) {
        return new CacheException("this query cannot be cached: " + reason);
    }

    private static String reason(StatementFlag flag) {
        return switch (flag) {
            case LOCKING_READ -> "it locks rows (FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE)";
            case INTO_FILE -> "it writes a file (INTO OUTFILE / DUMPFILE)";
            case SEQUENCE -> "it advances a sequence";
            case STORED_FUNCTION -> "it may call a stored function, whose result Gantry cannot know to be stable";
            case SETS_USER_VARIABLES, USES_USER_VARIABLES -> "it uses user variables, which belong to one connection";
            case SESSION_FUNCTION -> "it reads the connection's own history (LAST_INSERT_ID(), CONNECTION_ID(), ...)";
            case SERVER_STATE -> "it reads a server's state (system variables, SHOW ...)";
            case PREVIOUS_STATEMENT -> "it reads the diagnostics of the previous statement";
            case TEMPORARY_TABLE -> "it uses a temporary table, which exists on one connection only";
            default -> "it is not a plain read (" + flag.name().toLowerCase(Locale.ROOT) + ")";
        };
    }

    /** The tables of a {@code FROM} list (comma-separated) or of one {@code JOIN}, from {@code at}. */
    private static void readTables(String sql, List<Token> tokens, int at, int end, boolean list,
                                   String defaultDatabase, List<TableName> tables) {
        int i = at;
        while (i < end) {
            Token first = tokens.get(i);
            if (!isName(first)) {
                return; // a derived table "(SELECT ...)": its own FROM is read where it stands
            }
            String database = defaultDatabase;
            String table = first.identifier(sql);
            i++;
            if (i + 1 < end && tokens.get(i).isSymbol(sql, '.') && isName(tokens.get(i + 1))) {
                database = table;
                table = tokens.get(i + 1).identifier(sql);
                i += 2;
            }
            tables.add(new TableName(database, table));
            if (i < end && tokens.get(i).isWord(sql, "AS")) {
                i++;
            }
            if (i < end && isName(tokens.get(i)) && !(tokens.get(i).type() == Type.WORD
                    && AFTER_TABLE.contains(tokens.get(i).text(sql).toUpperCase(Locale.ROOT)))) {
                i++; // the alias
            }
            if (!list || i >= end || !tokens.get(i).isSymbol(sql, ',')) {
                return;
            }
            i++;
        }
    }

    private static boolean isName(Token token) {
        return token.type() == Type.WORD || token.type() == Type.QUOTED_IDENTIFIER;
    }

    /**
     * {@code WHERE [t.]column = <literal or ?>}, the query's only condition (followed by nothing, {@code ORDER BY}
     * or {@code LIMIT}): the indexes of the column's and of the value's tokens; null when the query has another form.
     */
    private static int[] keyCondition(String sql, List<Token> tokens, int end) {
        int where = -1;
        for (int i = 0; i < end; i++) {
            if (tokens.get(i).isSymbol(sql, '(')) {
                return null; // subqueries and function calls: not the simple form
            }
            if (tokens.get(i).isWord(sql, "WHERE")) {
                where = i;
                break;
            }
        }
        if (where < 0) {
            return null;
        }
        int column = where + 1;
        if (column + 2 < end && tokens.get(column + 1).isSymbol(sql, '.')) {
            column += 2;
        }
        int value = column + 2;
        if (value >= end || !isName(tokens.get(column)) || !tokens.get(column + 1).isSymbol(sql, '=')
                || !isParameter(sql, tokens.get(value))) {
            return null;
        }
        int after = value + 1;
        if (after < end && !tokens.get(after).isWord(sql, "ORDER") && !tokens.get(after).isWord(sql, "LIMIT")) {
            return null;
        }
        for (int i = after; i < end; i++) {
            if (tokens.get(i).isSymbol(sql, '(')) {
                return null;
            }
        }
        return new int[] {column, value};
    }

    private static boolean isParameter(String sql, Token token) {
        return token.type() == Type.STRING || token.type() == Type.NUMBER || token.isSymbol(sql, '?');
    }

    private static int parametersBefore(String sql, List<Token> tokens, int index) {
        int count = 0;
        for (int i = 0; i < index; i++) {
            count += isParameter(sql, tokens.get(i)) ? 1 : 0;
        }
        return count;
    }
}
