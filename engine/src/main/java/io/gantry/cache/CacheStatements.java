package io.gantry.cache;

import io.gantry.route.QueryText;
import io.gantry.route.SqlMode;
import io.gantry.route.SqlTokenizer.Token;
import io.gantry.route.SqlTokenizer.Type;
import io.gantry.route.SqlTokenizer;
import io.gantry.route.StatementText;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Recognises the query-cache statements in a COM_QUERY text, with keywords in any case, any blanks and comments
 * between tokens and an optional trailing {@code ;}:
 * <ul>
 * <li>{@code CREATE [SHALLOW] CACHE [name] [POLICY TTL n SECONDS [REFRESH EVERY n SECONDS]] FROM <select>}: the
 *     name a word or a quoted name; n from 1 to {@value #MAX_SECONDS}</li>
 * <li>{@code DROP CACHE name}, {@code DROP ALL CACHES}</li>
 * <li>{@code SHOW CACHES}, {@code SHOW PROXIED QUERIES}</li>
 * <li>{@code EXPLAIN LAST STATEMENT}, which the session answers itself ({@link #isExplainLastStatement})</li>
 * </ul>
 * Text that starts like one of them ({@code CREATE [SHALLOW] CACHE}, {@code DROP CACHE}, {@code DROP ALL},
 * {@code SHOW CACHES}, {@code SHOW PROXIED}) but does not follow the grammar is {@link CacheStatement.Invalid}, with
 * what was expected and what was found. Everything else is not a cache statement and costs one allocation-free scan
 * ({@link #mayBeCacheStatement}).
 */
public final class CacheStatements {

    /** The longest TTL or refresh period, in seconds: a day. */
    public static final int MAX_SECONDS = 86_400;

    private static final String CREATE = "CREATE CACHE expects [name] [POLICY TTL n SECONDS [REFRESH EVERY n "
            + "SECONDS]] FROM <select>";

    private CacheStatements() {
    }

    /**
     * True when the text may be a cache statement: it starts with {@code CREATE}, {@code DROP} or {@code SHOW}
     * (after blanks) and holds {@code CACHE} or {@code PROXIED} in any case; false means {@link #parse} returns
     * empty.
     */
    public static boolean mayBeCacheStatement(QueryText text) {
        return (text.mentions(QueryText.Word.CACHE) || text.mentions(QueryText.Word.PROXIED))
                && (text.leadsWith("CREATE") || text.leadsWith("DROP") || text.leadsWith("SHOW"));
    }

    /** True for {@code EXPLAIN LAST STATEMENT}; a text that does not start with EXPLAIN is not read further. */
    public static boolean isExplainLastStatement(QueryText text) {
        if (!text.mentions(QueryText.Word.LAST) || !text.leadsWith("EXPLAIN")) {
            return false;
        }
        String sql = text.sql();
        List<Token> tokens = text.statementTokens();
        return tokens.size() == 3 && tokens.get(0).isWord(sql, "EXPLAIN") && tokens.get(1).isWord(sql, "LAST")
                && tokens.get(2).isWord(sql, "STATEMENT");
    }

    /**
     * Parses {@code sql} under the session's {@code mode}.
     *
     * @return the cache statement, {@link CacheStatement.Invalid} if malformed, or empty for a statement for the
     *         servers
     */
    public static Optional<CacheStatement> parse(String sql, SqlMode mode) {
        return sql == null ? Optional.empty() : parse(QueryText.of(sql, mode));
    }

    /** Parses a statement of the query path (see {@link #parse(String, SqlMode)}). */
    public static Optional<CacheStatement> parse(QueryText text) {
        if (!mayBeCacheStatement(text)) {
            return Optional.empty();
        }
        return Optional.ofNullable(new Parser(text.sql(), text.statementTokens()).statement());
    }

    private static final class Parser {

        private final String sql;
        private final List<Token> tokens;

        Parser(String sql, List<Token> tokens) {
            this.sql = sql;
            this.tokens = tokens;
        }

        CacheStatement statement() {
            if (isWord(0, "CREATE")) {
                int at = isWord(1, "SHALLOW") ? 2 : 1;
                return isWord(at, "CACHE") ? create(at + 1, at == 2) : null;
            }
            if (isWord(0, "DROP")) {
                if (isWord(1, "CACHE")) {
                    Token name = token(2);
                    if (name == null || !isName(name)) {
                        return invalid("DROP CACHE expects a cache name", 2);
                    }
                    return endsAt(3, new CacheStatement.Drop(name.identifier(sql)), "DROP CACHE name");
                }
                if (isWord(1, "ALL")) {
                    return isWord(2, "CACHES") ? endsAt(3, new CacheStatement.DropAll(), "DROP ALL CACHES")
                            : isWord(2, "PROXIED") || isWord(2, "CACHE") ? invalid("DROP ALL expects CACHES", 2)
                            : null;
                }
                return null;
            }
            if (isWord(0, "SHOW")) {
                if (isWord(1, "CACHES")) {
                    return endsAt(2, new CacheStatement.Show(), "SHOW CACHES");
                }
                if (isWord(1, "PROXIED")) {
                    return isWord(2, "QUERIES") ? endsAt(3, new CacheStatement.ShowProxied(), "SHOW PROXIED QUERIES")
                            : invalid("SHOW PROXIED expects QUERIES", 2);
                }
            }
            return null;
        }

        private CacheStatement create(int at, boolean shallow) {
            Optional<String> name = Optional.empty();
            Token first = token(at);
            if (first != null && isName(first) && !first.isWord(sql, "FROM") && !first.isWord(sql, "POLICY")) {
                name = Optional.of(first.identifier(sql));
                at++;
            }
            Optional<Duration> ttl = Optional.empty();
            Optional<Duration> refresh = Optional.empty();
            if (isWord(at, "POLICY")) {
                if (!isWord(at + 1, "TTL")) {
                    return invalid("CREATE CACHE ... POLICY expects TTL n SECONDS", at + 1);
                }
                long seconds = seconds(at + 2);
                if (seconds < 0 || !isWord(at + 3, "SECONDS")) {
                    return invalid("POLICY TTL expects n SECONDS, n from 1 to " + MAX_SECONDS, at + 2);
                }
                ttl = Optional.of(Duration.ofSeconds(seconds));
                at += 4;
                if (isWord(at, "REFRESH")) {
                    long every = isWord(at + 1, "EVERY") ? seconds(at + 2) : -1;
                    if (every < 0 || !isWord(at + 3, "SECONDS")) {
                        return invalid("REFRESH expects EVERY n SECONDS, n from 1 to " + MAX_SECONDS, at + 1);
                    }
                    if (every >= seconds) {
                        return new CacheStatement.Invalid("REFRESH EVERY " + every + " SECONDS must be shorter than "
                                + "the TTL of " + seconds + " seconds");
                    }
                    refresh = Optional.of(Duration.ofSeconds(every));
                    at += 4;
                }
            }
            if (!isWord(at, "FROM")) {
                return invalid(CREATE, at);
            }
            Token select = token(at + 1);
            if (select == null) {
                return invalid("CREATE CACHE ... FROM expects a SELECT", at + 1);
            }
            String query = sql.substring(select.start(), tokens.get(tokens.size() - 1).end());
            return new CacheStatement.Create(name, shallow, ttl, refresh, query);
        }

        /** The whole number of seconds at {@code at}, 1..{@value #MAX_SECONDS}, or -1. */
        private long seconds(int at) {
            Token t = token(at);
            if (t == null || t.type() != Type.NUMBER || t.end() - t.start() > 6) {
                return -1;
            }
            long value = 0;
            for (int i = t.start(); i < t.end(); i++) {
                char c = sql.charAt(i);
                if (c < '0' || c > '9') {
                    return -1;
                }
                value = value * 10 + (c - '0');
            }
            return value >= 1 && value <= MAX_SECONDS ? value : -1;
        }

        private CacheStatement endsAt(int at, CacheStatement statement, String syntax) {
            return at < tokens.size() ? invalid(syntax + " expects the end of the statement", at) : statement;
        }

        private CacheStatement.Invalid invalid(String expects, int at) {
            Token t = token(at);
            String found = t == null ? "the end of the statement" : "'" + shorten(sql.substring(t.start(),
                    tokens.get(tokens.size() - 1).end())) + "'";
            return new CacheStatement.Invalid(expects + ", got " + found);
        }

        private static String shorten(String text) {
            String oneLine = text.replaceAll("\\s+", " ");
            return oneLine.length() > 60 ? oneLine.substring(0, 60) + "..." : oneLine;
        }

        private Token token(int i) {
            return i < tokens.size() ? tokens.get(i) : null;
        }

        private boolean isWord(int i, String word) {
            Token t = token(i);
            return t != null && t.isWord(sql, word);
        }

        private static boolean isName(Token t) {
            return t.type() == Type.WORD || t.type() == Type.QUOTED_IDENTIFIER;
        }
    }
}
