package io.gantry.proxy.command;

import io.gantry.proxy.session.LogText;
import io.gantry.route.QueryText;
import io.gantry.route.SqlMode;
import io.gantry.route.SqlTokenizer.Token;
import io.gantry.route.SqlTokenizer.Type;
import io.gantry.route.SqlTokenizer;
import io.gantry.route.StatementText;
import io.gantry.wire.ErrPacket;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Gantry's own session settings in SQL, answered by Gantry and never sent to a server:
 * {@code SET [SESSION] gantry_x = value[, gantry_y = value]}, {@code SELECT @@gantry_x[, @@gantry_y]},
 * {@code SHOW GANTRY SESSION} and {@code EXPLAIN GANTRY ROUTE <statement>}. Anything else is not Gantry's ({@link NotOurs}); a statement that names a
 * {@code gantry_} variable in a way Gantry cannot answer is refused with the reason.
 */
final class GantrySessionSql {

    /** The settings, by their SQL name. */
    enum Setting {
        READ_FROM_FOLLOWERS("gantry_read_from_followers"),
        FOLLOWER_READ_STALENESS_MS("gantry_follower_read_staleness_ms"),
        READ_YOUR_WRITES("gantry_read_your_writes"),
        /** Whose writes the session's reads must find: its own, its account's, or its token's. */
        READ_YOUR_WRITES_SCOPE("gantry_read_your_writes_scope"),
        /** The token of a {@code token} scope, as an application names it per request. */
        CAUSAL_TOKEN("gantry_causal_token"),
        FOLLOWER_READS_PREFER("gantry_follower_reads_prefer"),
        /** Read-only: the GTIDs the session's writes produced, to carry to another session or instance. */
        LAST_WRITE_POSITION("gantry_last_write_position"),
        /** A position the session's reads must not be older than: one a write elsewhere produced. */
        READ_AFTER("gantry_read_after");

        private final String sqlName;

        Setting(String sqlName) {
            this.sqlName = sqlName;
        }

        String sqlName() {
            return sqlName;
        }

        static Setting named(String name) {
            for (Setting setting : values()) {
                if (setting.sqlName.equalsIgnoreCase(name)) {
                    return setting;
                }
            }
            return null;
        }
    }

    sealed interface Parsed {
    }

    /** Not a statement about Gantry's settings: it goes to a server as usual. */
    record NotOurs() implements Parsed {
    }

    /** {@code SET}: each value as written ({@code DEFAULT} as null). */
    record Set(List<Setting> settings, List<String> values) implements Parsed {
    }

    /** {@code SELECT @@gantry_...}: the settings, and each column's name as the server would label it. */
    record Select(List<Setting> settings, List<String> labels) implements Parsed {
    }

    /** {@code SHOW GANTRY SESSION}. */
    record Show() implements Parsed {
    }

    /** {@code EXPLAIN GANTRY ROUTE <statement>}: the statement's text, not run. */
    record ExplainRoute(String statement) implements Parsed {
    }

    record Refused(ErrPacket error) implements Parsed {
    }

    private static final Parsed NOT_OURS = new NotOurs();
    private static final String PREFIX = "gantry_";

    private GantrySessionSql() {
    }

    static Parsed parse(QueryText text) {
        if (!text.mentions(QueryText.Word.GANTRY)) {
            return NOT_OURS; // the common case, without tokenizing
        }
        String sql = text.sql();
        SqlMode mode = text.mode();
        List<Token> tokens = text.statementTokens();
        if (tokens.isEmpty()) {
            return NOT_OURS;
        }
        if (tokens.size() == 3 && tokens.get(0).isWord(sql, "SHOW") && tokens.get(1).isWord(sql, "GANTRY")
                && tokens.get(2).isWord(sql, "SESSION")) {
            return new Show();
        }
        if (tokens.size() >= 3 && tokens.get(0).isWord(sql, "EXPLAIN") && tokens.get(1).isWord(sql, "GANTRY")
                && tokens.get(2).isWord(sql, "ROUTE")) {
            String statement = sql.substring(tokens.get(2).end()).trim();
            if (statement.isEmpty()) {
                return new Refused(ErrPacket.of(1064, "42000", "EXPLAIN GANTRY ROUTE needs a statement: "
                        + "EXPLAIN GANTRY ROUTE SELECT ..."));
            }
            return new ExplainRoute(statement);
        }
        if (tokens.get(0).isWord(sql, "SET")) {
            return parseSet(sql, tokens, mode);
        }
        if (tokens.get(0).isWord(sql, "SELECT")) {
            return parseSelect(sql, tokens);
        }
        return NOT_OURS;
    }

    private static Parsed parseSet(String sql, List<Token> tokens, SqlMode mode) {
        List<Setting> settings = new ArrayList<>();
        List<String> values = new ArrayList<>();
        int i = 1;
        boolean anyOther = false;
        while (i < tokens.size()) {
            boolean global = false;
            if (tokens.get(i).isWord(sql, "SESSION") || tokens.get(i).isWord(sql, "LOCAL")) {
                i++;
            } else if (tokens.get(i).isWord(sql, "GLOBAL") || tokens.get(i).isWord(sql, "PERSIST")) {
                global = true;
                i++;
            }
            if (i >= tokens.size()) {
                return NOT_OURS;
            }
            String name = variableName(sql, tokens.get(i));
            if (name != null && name.toLowerCase(Locale.ROOT).startsWith("global.")) {
                global = true;
            }
            String bare = name == null ? null : name.replaceFirst("(?i)^(session|local|global)\\.", "");
            int end = endOfAssignment(sql, tokens, i);
            if (bare == null || !bare.toLowerCase(Locale.ROOT).startsWith(PREFIX)) {
                anyOther = true;
                i = Math.max(end, i) + 2; // past the comma
                continue;
            }
            Setting setting = Setting.named(bare);
            if (setting == null) {
                return unknown(bare);
            }
            if (global) {
                return new Refused(ErrPacket.of(1228, "HY000", "Variable '" + setting.sqlName() + "' is a SESSION "
                        + "variable of Gantry; its default for every session is set with a flag of gantry run"));
            }
            if (i + 2 > end || !(tokens.get(i + 1).isSymbol(sql, '=') || tokens.get(i + 1).type() == Type.ASSIGN)) {
                return new Refused(ErrPacket.of(1064, "42000", "Gantry: expected " + setting.sqlName()
                        + " = value in '" + LogText.abbreviate(sql) + "'"));
            }
            if (end != i + 2) {
                return new Refused(ErrPacket.of(1231, "42000", "Variable '" + setting.sqlName()
                        + "' can't be set to an expression; give a plain value"));
            }
            Token value = tokens.get(i + 2);
            settings.add(setting);
            values.add(value.isWord(sql, "DEFAULT") ? null
                    : value.type() == Type.STRING ? value.stringValue(sql, !mode.noBackslashEscapes()) : value.text(sql));
            i = end + 2; // past the comma
        }
        if (settings.isEmpty()) {
            return NOT_OURS;
        }
        if (anyOther) {
            return new Refused(ErrPacket.of(1064, "42000", "Gantry's session settings (gantry_...) are set by "
                    + "Gantry and never reach a server; set them in a SET statement of their own"));
        }
        return new Set(settings, values);
    }

    /**
     * The index of the last token of the assignment starting at {@code i}: before the next top-level comma, or the
     * last token of the text.
     */
    private static int endOfAssignment(String sql, List<Token> tokens, int i) {
        int depth = 0;
        for (int j = i; j < tokens.size(); j++) {
            Token token = tokens.get(j);
            if (token.isSymbol(sql, '(')) {
                depth++;
            } else if (token.isSymbol(sql, ')')) {
                depth--;
            } else if (depth == 0 && token.isSymbol(sql, ',')) {
                return j - 1;
            }
        }
        return tokens.size() - 1;
    }

    private static Parsed parseSelect(String sql, List<Token> tokens) {
        List<Setting> settings = new ArrayList<>();
        List<String> labels = new ArrayList<>();
        boolean mentions = false;
        boolean plain = true;
        int i = 1;
        while (i < tokens.size()) {
            Token token = tokens.get(i);
            String name = token.type() == Type.SYSTEM_VARIABLE ? variableName(sql, token) : null;
            String bare = name == null ? null : name.replaceFirst("(?i)^(session|local)\\.", "");
            if (bare != null && bare.toLowerCase(Locale.ROOT).startsWith(PREFIX)) {
                mentions = true;
                Setting setting = Setting.named(bare);
                if (setting == null) {
                    return unknown(bare);
                }
                boolean last = i == tokens.size() - 1;
                if (!last && !tokens.get(i + 1).isSymbol(sql, ',')) {
                    plain = false;
                }
                settings.add(setting);
                labels.add(token.text(sql));
                i += 2;
            } else {
                plain = false;
                i++;
            }
        }
        if (!mentions) {
            return NOT_OURS;
        }
        if (!plain) {
            return new Refused(ErrPacket.of(1064, "42000", "Gantry answers its session settings only as "
                    + "SELECT @@gantry_x[, @@gantry_y ...], alone: they never reach a server"));
        }
        return new Select(settings, labels);
    }

    /** The name of a variable as assigned or read: {@code @@x}, {@code @@session.x}, or a bare word. */
    private static String variableName(String sql, Token token) {
        if (token.type() == Type.SYSTEM_VARIABLE) {
            return token.text(sql).substring(2);
        }
        if (token.type() == Type.WORD) {
            return token.text(sql);
        }
        return null;
    }

    private static Parsed unknown(String name) {
        return new Refused(ErrPacket.of(1193, "HY000", "Unknown system variable '" + name + "' (Gantry's session "
                + "settings are gantry_read_from_followers, gantry_follower_read_staleness_ms, "
                + "gantry_read_your_writes, gantry_follower_reads_prefer, gantry_read_after and the read-only "
                + "gantry_last_write_position)"));
    }
}
