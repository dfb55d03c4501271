package io.gantry.admin;

import io.gantry.admin.AdminStatement.Invalid;
import io.gantry.route.QueryText;
import io.gantry.route.SqlMode;
import io.gantry.route.SqlTokenizer.Token;
import io.gantry.route.SqlTokenizer.Type;
import io.gantry.route.SqlTokenizer;
import io.gantry.route.StatementText;
import java.util.List;

/**
 * The tokens of one admin statement's text, read by position, and the messages that say what the text holds where
 * a statement went wrong: what {@link AdminStatements}' grammar reads its text through.
 */
final class AdminTokens {

    private static final int MAX_SHOWN = 60;

    /** A string literal's value and the index of the token after it. */
    record Literal(String value, int next) {
    }

    final String sql;
    final SqlMode mode;
    final List<Token> tokens;
    /** Tokens from here on are trailing semicolons. */
    final int end;

    AdminTokens(QueryText text) {
        this.sql = text.sql();
        this.mode = text.mode();
        this.tokens = text.tokens();
        this.end = StatementText.end(sql, tokens);
    }

    /** A string literal (adjacent ones joined) at {@code at}, or null. */
    Literal literal(int at) {
        StringBuilder value = new StringBuilder();
        int next = at;
        for (Token t = token(next); t != null && t.type() == Type.STRING; t = token(++next)) {
            value.append(t.stringValue(sql, !mode.noBackslashEscapes()));
        }
        return next == at ? null : new Literal(value.toString(), next);
    }

    AdminStatement endsAt(int at, AdminStatement statement, String syntax) {
        return at < end ? invalid(syntax + " expects the end of the statement", at) : statement;
    }

    Invalid invalid(String expects, int at) {
        return new Invalid(expects + ", got " + found(at));
    }

    /** What the text holds at token {@code at}, for a message. */
    String found(int at) {
        Token t = token(at);
        if (t == null) {
            return "the end of the statement";
        }
        if (t.type() == Type.UNTERMINATED) {
            return unterminated(t) + " at " + shown(t.start());
        }
        return shown(t.start());
    }

    /** What the text ends inside of, for a message. */
    String unterminated(Token t) {
        return switch (sql.charAt(t.start())) {
            case '\'' -> "an unterminated string literal";
            case '"' -> mode.ansiQuotes() ? "an unterminated quoted identifier" : "an unterminated string literal";
            case '`' -> "an unterminated quoted identifier";
            case '@' -> "an unterminated quoted variable";
            default -> "an unterminated comment";
        };
    }

    /** The text from {@code start} to the end of the statement, quoted, on one line, cut if long. */
    String shown(int start) {
        int stop = end == 0 ? start : Math.max(start, tokens.get(end - 1).end());
        StringBuilder out = new StringBuilder(Math.min(stop - start, MAX_SHOWN) + 5).append('\'');
        boolean space = false;
        int shown = 0;
        for (int i = start; i < stop; i++) {
            char c = sql.charAt(i);
            if (Character.isWhitespace(c)) {
                space = true;
                continue;
            }
            if (space && shown > 0) {
                out.append(' ');
                shown++;
            }
            space = false;
            if (shown >= MAX_SHOWN) {
                return out.append("...'").toString();
            }
            out.append(c);
            shown++;
        }
        return out.append('\'').toString();
    }

    Token token(int i) {
        return i < end ? tokens.get(i) : null;
    }

    boolean isWord(int i, String keyword) {
        Token t = token(i);
        return t != null && t.isWord(sql, keyword);
    }

    /** An identifier, quoted or not, equal to {@code name} ignoring case. */
    boolean isIdentifier(int i, String name) {
        Token t = token(i);
        return t != null && (t.type() == Type.WORD || t.type() == Type.QUOTED_IDENTIFIER)
                && t.identifier(sql).equalsIgnoreCase(name);
    }

    boolean isSymbol(int i, char c) {
        Token t = token(i);
        return t != null && t.isSymbol(sql, c);
    }
}
