package io.gantry.admin;

import io.gantry.admin.AdminStatement.ChangeCdc;
import io.gantry.admin.AdminStatement.ChangeUpstream;
import io.gantry.admin.AdminStatement.FlushHosts;
import io.gantry.admin.AdminStatement.Invalid;
import io.gantry.admin.AdminStatement.SetWeight;
import io.gantry.admin.AdminStatement.ShowBlockedHosts;
import io.gantry.admin.AdminStatement.ShowStatus;
import io.gantry.admin.AdminStatement.ShowTables;
import io.gantry.admin.AdminStatement.StartReplication;
import io.gantry.admin.AdminStatement.StopReplication;
import io.gantry.admin.AdminStatement.TableQuery;
import io.gantry.admin.AdminStatement.WriteToGantryTables;
import io.gantry.digest.DigestOrder;
import io.gantry.route.QueryText;
import io.gantry.route.SqlMode;
import io.gantry.route.SqlTokenizer.Token;
import io.gantry.route.SqlTokenizer.Type;
import io.gantry.route.SqlTokenizer;
import io.gantry.route.StatementText;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;

/**
 * Recognises the statements Gantry answers itself in the text of a COM_QUERY.
 *
 * <p>Recognised, with keywords in any case, any whitespace and comments between tokens and an
 * optional trailing {@code ;}:
 * <ul>
 * <li>{@code SHOW GANTRY STATUS}, {@code SHOW GANTRY POOLS}, {@code SHOW GANTRY CLUSTER},
 *     {@code SHOW GANTRY BLOCKED HOSTS},
 *     {@code SHOW GANTRY QUERIES [ORDER BY total_time|count|p99|errors] [LIMIT n]}</li>
 * <li>{@code FLUSH GANTRY HOSTS}, {@code FLUSH GANTRY HOST 'address'}, {@code FLUSH GANTRY QUERIES}</li>
 * <li>{@code ALTER GANTRY CHANGE UPSTREAM TO '<list>'}, {@code ALTER GANTRY CHANGE CDC TO '<list>'}:
 *     the list a string literal in single or double quotes, unescaped as the server unescapes it
 *     (doubled quotes, and backslash escapes unless {@code NO_BACKSLASH_ESCAPES}; adjacent
 *     literals are joined)</li>
 * <li>{@code ALTER GANTRY SET WEIGHT 'host:port' TO n}, n from 1 to 100</li>
 * <li>{@code STOP GANTRY REPLICATION}, {@code START GANTRY REPLICATION}</li>
 * <li>{@code SHOW [FULL] TABLES {FROM | IN} gantry [LIKE 'pattern']}</li>
 * <li>a query ({@code SELECT}, {@code WITH ... SELECT}, {@code TABLE}, possibly in parentheses)
 *     that names a table of the {@code gantry} schema qualified with {@code gantry.}, quoted or
 *     not, in any case: {@code gantry.events}, {@code `GANTRY`.`events`}. A name counts when it is
 *     one of {@link #GANTRY_TABLES}, or any name right after {@code FROM}, {@code JOIN} or
 *     {@code TABLE} (so {@code SELECT * FROM gantry.nosuch} gets "table not found" from the
 *     Authority rather than "unknown database" from a server).</li>
 * </ul>
 *
 * <p>Text that starts with {@code ALTER GANTRY}, {@code SHOW GANTRY}, {@code STOP GANTRY},
 * {@code START GANTRY} or {@code FLUSH GANTRY} but does not follow the grammar is {@link Invalid}, with a message that
 * says what was expected and what was found. So is a query on the gantry tables that is followed
 * by another statement, or whose text cannot be lexed. Everything else is not an admin statement
 * ({@link Optional#empty()}) and goes to the servers, including text that mentions {@code gantry}
 * only inside a string literal, a comment, a longer name ({@code app.gantry_events}) or as a
 * table of another schema ({@code app.gantry.x}).
 *
 * <p>Statements without the letters {@code gantry} are rejected by a case-insensitive scan that
 * allocates nothing ({@link QueryText#mentions}); only the rest are split into tokens,
 * by {@link SqlTokenizer} (the classifier's tokenizer), with executable comments read as code
 * whatever their version.
 *
 * <p>A write that names a gantry table ({@code DELETE FROM gantry.events}, {@code UPDATE},
 * {@code INSERT}, {@code REPLACE}, {@code TRUNCATE}, {@code ALTER}, {@code DROP}) is
 * {@link WriteToGantryTables}: answered as read-only, never sent to a server.
 *
 * <p>Known limits: a column qualified with a table named {@code gantry} of the current database
 * ({@code SELECT gantry.events FROM gantry}) is taken for the gantry table {@code events}.
 */
public final class AdminStatements {

    /** The schema of Gantry's own tables, as clients write it. */
    public static final String SCHEMA = "gantry";
    /** The tables of the {@code gantry} schema, lower case. */
    public static final List<String> GANTRY_TABLES = List.of("upstream_servers", "events", "health_history",
            "queries");

    private static final String KEYWORD = "GANTRY";
    private static final int MAX_PORT = 65_535;

    private AdminStatements() {
    }

    /**
     * Parses {@code sql} under the server's default {@link SqlMode}.
     *
     * @param sql the COM_QUERY text; {@code null} is not an admin statement
     * @return the admin statement, {@link Invalid} if malformed, or empty for a statement for the servers
     */
    public static Optional<AdminStatement> parse(String sql) {
        return parse(sql, SqlMode.DEFAULT);
    }

    /** Parses {@code sql} with or without {@code NO_BACKSLASH_ESCAPES}, without {@code ANSI_QUOTES}. */
    public static Optional<AdminStatement> parse(String sql, boolean noBackslashEscapes) {
        return parse(sql, SqlMode.of(noBackslashEscapes));
    }

    /**
     * Parses {@code sql}.
     *
     * @param sql  the COM_QUERY text; {@code null} is not an admin statement
     * @param mode the session's mode: under {@code NO_BACKSLASH_ESCAPES} a backslash in a string
     *             literal is an ordinary character, under {@code ANSI_QUOTES} {@code "gantry"} is a name
     * @return the admin statement, {@link Invalid} if malformed, or empty for a statement for the servers
     */
    public static Optional<AdminStatement> parse(String sql, SqlMode mode) {
        return sql == null ? Optional.empty() : parse(QueryText.of(sql, mode));
    }

    /** Parses a statement of the query path: text that does not mention {@code gantry} is not read further. */
    public static Optional<AdminStatement> parse(QueryText text) {
        if (!text.mentions(QueryText.Word.GANTRY)) {
            return Optional.empty();
        }
        return Optional.ofNullable(new Parser(text).statement());
    }

    /** One parse over the tokens of one text. */
    private static final class Parser {

        private static final String ALTER_GANTRY = "ALTER GANTRY expects CHANGE UPSTREAM TO '<list>', "
                + "CHANGE CDC TO '<list>' or SET WEIGHT 'host:port' TO 1..100";
        private static final String ALTER_GANTRY_CHANGE = "ALTER GANTRY CHANGE expects UPSTREAM TO '<list>' "
                + "or CDC TO '<list>'";
        private static final String ALTER_GANTRY_SET = "ALTER GANTRY SET expects WEIGHT 'host:port' TO 1..100";
        private static final String SET_WEIGHT = "ALTER GANTRY SET WEIGHT expects 'host:port' TO 1..100";
        private static final String LIST = "TO '<url>[|weight],...'";

        private final AdminTokens text;
        private final String sql;
        private final List<Token> tokens;
        /** Tokens from here on are trailing semicolons. */
        private final int end;

        Parser(QueryText query) {
            this.text = new AdminTokens(query);
            this.sql = query.sql();
            this.tokens = text.tokens;
            this.end = text.end;
        }

        /** The statement, or null if this is not an admin statement. */
        AdminStatement statement() {
            Token first = text.token(0);
            if (first == null) {
                return null;
            }
            if (first.isSymbol(sql, '(')) {
                return tableQuery();
            }
            if (first.type() != Type.WORD) {
                return null;
            }
            return switch (first.text(sql).toUpperCase(Locale.ROOT)) {
                case "SHOW" -> {
                    if (text.isWord(1, KEYWORD)) {
                        yield showGantry();
                    }
                    yield text.isWord(1, "TABLES") || (text.isWord(1, "FULL") && text.isWord(2, "TABLES"))
                            ? showTables() : null;
                }
                case "ALTER" -> text.isWord(1, KEYWORD) ? alterGantry()
                        : referencesGantryTable() ? new WriteToGantryTables("ALTER") : null;
                case "STOP", "START" -> text.isWord(1, KEYWORD) ? replication(text.isWord(0, "STOP")) : null;
                case "FLUSH" -> text.isWord(1, KEYWORD) ? flushGantry() : null;
                case "SELECT", "WITH", "TABLE" -> tableQuery();
                case "INSERT", "UPDATE", "DELETE", "REPLACE", "TRUNCATE", "DROP" ->
                        referencesGantryTable() ? new WriteToGantryTables(first.text(sql).toUpperCase(Locale.ROOT))
                                : null;
                default -> null;
            };
        }

        // ---- admin statements ------------------------------------------------------------------

        private AdminStatement showGantry() {
            if (text.isWord(2, "BLOCKED")) {
                return text.isWord(3, "HOSTS") ? text.endsAt(4, new ShowBlockedHosts(), "SHOW GANTRY BLOCKED HOSTS")
                        : text.invalid("SHOW GANTRY BLOCKED expects HOSTS", 3);
            }
            if (text.isWord(2, "POOLS")) {
                return text.endsAt(3, new AdminStatement.ShowPools(), "SHOW GANTRY POOLS");
            }
            if (text.isWord(2, "CLUSTER")) {
                return text.endsAt(3, new AdminStatement.ShowCluster(), "SHOW GANTRY CLUSTER");
            }
            if (text.isWord(2, "QUERIES")) {
                return showQueries();
            }
            if (!text.isWord(2, "STATUS")) {
                return text.invalid("SHOW GANTRY expects STATUS, POOLS, CLUSTER, QUERIES or BLOCKED HOSTS", 2);
            }
            return text.endsAt(3, new ShowStatus(), "SHOW GANTRY STATUS");
        }

        /** {@code SHOW GANTRY QUERIES [ORDER BY total_time|count|p99|errors] [LIMIT n]}. */
        private AdminStatement showQueries() {
            String syntax = "SHOW GANTRY QUERIES [ORDER BY total_time|count|p99|errors] [LIMIT n]";
            int at = 3;
            DigestOrder order = DigestOrder.TOTAL_TIME;
            if (text.isWord(at, "ORDER")) {
                if (!text.isWord(at + 1, "BY")) {
                    return text.invalid("SHOW GANTRY QUERIES ORDER expects BY", at + 1);
                }
                Token by = text.token(at + 2);
                order = by == null || by.type() != Type.WORD ? null : switch (by.text(sql).toUpperCase(Locale.ROOT)) {
                    case "TOTAL_TIME" -> DigestOrder.TOTAL_TIME;
                    case "COUNT" -> DigestOrder.COUNT;
                    case "P99" -> DigestOrder.P99;
                    case "ERRORS" -> DigestOrder.ERRORS;
                    default -> null;
                };
                if (order == null) {
                    return text.invalid("SHOW GANTRY QUERIES ORDER BY expects total_time, count, p99 or errors",
                            at + 2);
                }
                at += 3;
            }
            int limit = AdminStatement.ShowQueries.NO_LIMIT;
            if (text.isWord(at, "LIMIT")) {
                limit = count(text.token(at + 1));
                if (limit < 0) {
                    return text.invalid("SHOW GANTRY QUERIES LIMIT expects a number of rows", at + 1);
                }
                at += 2;
            }
            return text.endsAt(at, new AdminStatement.ShowQueries(order, limit), syntax);
        }

        /** A row count written as digits, or -1. */
        private int count(Token token) {
            if (token == null || token.type() != Type.NUMBER) {
                return -1;
            }
            long count = 0;
            for (int i = token.start(); i < token.end(); i++) {
                char c = sql.charAt(i);
                if (c < '0' || c > '9') {
                    return -1;
                }
                count = Math.min(Integer.MAX_VALUE, count * 10 + (c - '0'));
            }
            return (int) count;
        }

        /** {@code FLUSH GANTRY HOSTS}, {@code FLUSH GANTRY HOST 'addr'} or {@code FLUSH GANTRY QUERIES}. */
        private AdminStatement flushGantry() {
            String expects = "FLUSH GANTRY expects HOSTS, HOST 'address' or QUERIES";
            if (text.isWord(2, "HOSTS")) {
                return text.endsAt(3, new FlushHosts(Optional.empty()), "FLUSH GANTRY HOSTS");
            }
            if (text.isWord(2, "QUERIES")) {
                return text.endsAt(3, new AdminStatement.FlushQueries(), "FLUSH GANTRY QUERIES");
            }
            if (!text.isWord(2, "HOST")) {
                return text.invalid(expects, 2);
            }
            AdminTokens.Literal host = text.literal(3);
            if (host == null || host.value().isBlank()) {
                return text.invalid(expects, 3);
            }
            return text.endsAt(host.next(), new FlushHosts(Optional.of(host.value().strip())),
                    "FLUSH GANTRY HOST 'address'");
        }

        private AdminStatement alterGantry() {
            if (text.isWord(2, "CHANGE")) {
                if (text.isWord(3, "UPSTREAM")) {
                    return changeList(4, "ALTER GANTRY CHANGE UPSTREAM", ChangeUpstream::new);
                }
                if (text.isWord(3, "CDC")) {
                    return changeList(4, "ALTER GANTRY CHANGE CDC", ChangeCdc::new);
                }
                return text.invalid(ALTER_GANTRY_CHANGE, 3);
            }
            if (text.isWord(2, "SET")) {
                return text.isWord(3, "WEIGHT") ? setWeight(4) : text.invalid(ALTER_GANTRY_SET, 3);
            }
            return text.invalid(ALTER_GANTRY, 2);
        }

        private AdminStatement changeList(int at, String head, Function<String, AdminStatement> statement) {
            String expects = head + " expects " + LIST;
            if (!text.isWord(at, "TO")) {
                return text.invalid(expects, at);
            }
            AdminTokens.Literal list = text.literal(at + 1);
            if (list == null) {
                return text.invalid(expects, at + 1);
            }
            if (list.value().isBlank()) {
                return new Invalid(expects + ", got an empty list");
            }
            return text.endsAt(list.next(), statement.apply(list.value()), head + " " + LIST);
        }

        private AdminStatement setWeight(int at) {
            AdminTokens.Literal hostPort = text.literal(at);
            if (hostPort == null || !isHostPort(hostPort.value())) {
                return text.invalid(SET_WEIGHT, at);
            }
            int to = hostPort.next();
            if (!text.isWord(to, "TO")) {
                return text.invalid(SET_WEIGHT, to);
            }
            int weight = weight(text.token(to + 1));
            if (weight < 0) {
                return text.invalid(SET_WEIGHT, to);
            }
            return text.endsAt(to + 2, new SetWeight(hostPort.value(), weight),
                    "ALTER GANTRY SET WEIGHT 'host:port' TO 1..100");
        }

        private AdminStatement replication(boolean stop) {
            String head = stop ? "STOP GANTRY" : "START GANTRY";
            if (!text.isWord(2, "REPLICATION")) {
                return text.invalid(head + " expects REPLICATION", 2);
            }
            return text.endsAt(3, stop ? new StopReplication() : new StartReplication(), head + " REPLICATION");
        }

        /** {@code SHOW [FULL] TABLES {FROM | IN} gantry [LIKE 'pattern']}; null for another schema. */
        private AdminStatement showTables() {
            boolean full = text.isWord(1, "FULL");
            int at = full ? 3 : 2;
            if (!(text.isWord(at, "FROM") || text.isWord(at, "IN"))) {
                return null;
            }
            if (!text.isIdentifier(at + 1, SCHEMA)) {
                return null;
            }
            at += 2;
            String pattern = "%";
            if (text.isWord(at, "LIKE")) {
                AdminTokens.Literal like = text.literal(at + 1);
                if (like == null) {
                    return text.invalid("SHOW TABLES FROM gantry LIKE expects a 'pattern'", at + 1);
                }
                pattern = like.value();
                at = like.next();
            }
            if (at < end) {
                return text.invalid("SHOW TABLES FROM gantry expects LIKE 'pattern' or the end of the statement", at);
            }
            return new ShowTables(full, pattern);
        }

        // ---- queries on the gantry tables -------------------------------------------------------

        private AdminStatement tableQuery() {
            int at = 0;
            while (text.isSymbol(at, '(')) {
                at++;
            }
            if (!(text.isWord(at, "SELECT") || text.isWord(at, "TABLE")
                    || (text.isWord(at, "WITH") && withSelects(at + 1)))) {
                return null;
            }
            if (!referencesGantryTable()) {
                return null;
            }
            Token last = tokens.get(tokens.size() - 1);
            if (last.type() == Type.UNTERMINATED) {
                return new Invalid("a query on the gantry tables has " + text.unterminated(last) + " at "
                        + text.shown(last.start()));
            }
            for (int i = 0; i < end; i++) {
                if (text.isSymbol(i, ';')) {
                    return text.invalid("a query on the gantry tables must be a single statement, not followed by "
                            + "another one", i);
                }
            }
            return new TableQuery(sql);
        }

        /**
         * After {@code WITH}: true if the statement the common table expressions belong to is a
         * query. The first keyword outside parentheses that starts a statement decides; a
         * parenthesis right after a closed CTE body opens a parenthesised query.
         */
        private boolean withSelects(int from) {
            int depth = 0;
            boolean afterClose = false;
            for (int i = from; i < end; i++) {
                Token t = tokens.get(i);
                if (t.isSymbol(sql, '(')) {
                    if (depth == 0 && afterClose) {
                        return true;
                    }
                    depth++;
                } else if (t.isSymbol(sql, ')')) {
                    depth--;
                } else if (depth == 0 && t.type() == Type.WORD) {
                    switch (t.text(sql).toUpperCase(Locale.ROOT)) {
                        case "SELECT", "TABLE", "VALUES" -> {
                            return true;
                        }
                        case "UPDATE", "DELETE", "INSERT", "REPLACE" -> {
                            return false;
                        }
                        default -> {
                        }
                    }
                }
                afterClose = depth == 0 && t.isSymbol(sql, ')');
            }
            return false;
        }

        private boolean referencesGantryTable() {
            for (int i = 0; i + 2 < end; i++) {
                if (isGantryTableAt(i)) {
                    return true;
                }
            }
            return false;
        }

        /** {@code gantry . name} at {@code i}, not itself qualified ({@code app.gantry.x} is a column). */
        private boolean isGantryTableAt(int i) {
            if (!text.isIdentifier(i, SCHEMA) || !text.isSymbol(i + 1, '.') || (i > 0 && text.isSymbol(i - 1, '.'))) {
                return false;
            }
            Token table = tokens.get(i + 2);
            if (table.type() != Type.WORD && table.type() != Type.QUOTED_IDENTIFIER) {
                return false;
            }
            if (GANTRY_TABLES.contains(table.identifier(sql).toLowerCase(Locale.ROOT))) {
                return true;
            }
            return i > 0 && (text.isWord(i - 1, "FROM") || text.isWord(i - 1, "JOIN") || text.isWord(i - 1, "TABLE"));
        }

        // ---- helpers ------------------------------------------------------------------------------

        /** The weight 1..100 in {@code token}, or -1. */
        private int weight(Token token) {
            if (token == null || token.type() != Type.NUMBER) {
                return -1;
            }
            int weight = 0;
            for (int i = token.start(); i < token.end(); i++) {
                char c = sql.charAt(i);
                if (c < '0' || c > '9' || weight > SetWeight.MAX_WEIGHT) {
                    return -1;
                }
                weight = weight * 10 + (c - '0');
            }
            return weight >= SetWeight.MIN_WEIGHT && weight <= SetWeight.MAX_WEIGHT ? weight : -1;
        }


        /** {@code host:port} with a port of 1..65535; an IPv6 host in brackets. */
        private static boolean isHostPort(String value) {
            int colon = value.lastIndexOf(':');
            if (colon <= 0 || colon == value.length() - 1 || value.length() - colon - 1 > 5) {
                return false;
            }
            String host = value.substring(0, colon);
            for (int i = 0; i < host.length(); i++) {
                if (Character.isWhitespace(host.charAt(i))) {
                    return false;
                }
            }
            if (host.indexOf(':') >= 0 && !(host.startsWith("[") && host.endsWith("]") && host.length() > 2)) {
                return false;
            }
            int port = 0;
            for (int i = colon + 1; i < value.length(); i++) {
                char c = value.charAt(i);
                if (c < '0' || c > '9') {
                    return false;
                }
                port = port * 10 + (c - '0');
            }
            return port >= 1 && port <= MAX_PORT;
        }
    }
}
