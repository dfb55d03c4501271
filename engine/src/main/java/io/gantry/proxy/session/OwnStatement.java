package io.gantry.proxy.session;

import io.gantry.proxy.prepared.StmtExecutePayloads;
import io.gantry.route.SqlTokenizer;
import io.gantry.route.SqlTokenizer.Token;
import io.gantry.route.SqlTokenizer.Type;
import java.math.BigDecimal;
import java.math.BigInteger;
import io.netty.buffer.ByteBuf;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A statement a session sent, as a server's binlog would log it ({@code Annotate_rows}, or a query event), for telling
 * whether a logged transaction is the session's ({@link CommitOutcome}). A text is logged as it was sent. An execution
 * of a prepared statement is logged as MariaDB expands it: the prepared text with each {@code ?} replaced by its value
 * as a literal ({@code 42}, {@code -7}, {@code 'it\'s'}, {@code NULL}, {@code 0.0015}). Comparing says one of three
 * things, and says "cannot tell" rather than guess: a false "not this one" would run a committed transaction twice.
 */
public sealed interface OwnStatement {

    /** What a comparison with a logged statement found. */
    enum Match { SAME, DIFFERENT, CANNOT_TELL }

    /** Whether {@code logged} (a statement's text as the binlog read decodes it) is this statement. */
    Match matches(String logged);

    /**
     * A text Gantry keeps one char per byte (ISO-8859-1, the client's bytes) as the binlog read decodes those
     * bytes, so that the same bytes compare equal.
     */
    static String asLogged(String byteChars) {
        return new String(byteChars.getBytes(StandardCharsets.ISO_8859_1), Charset.defaultCharset());
    }

    /**
     * An execution as its binlog would log it, from its payload, or null when its values cannot be read.
     *
     * @param sentSql the prepared text as the server prepared it, one char per byte
     * @param types   the parameter types it was executed with ({@code 2 * paramCount} bytes), or null if unknown
     */
    static OwnStatement execution(ByteBuf payload, String sentSql, int paramCount, byte[] types,
                                  boolean noBackslashEscapes) {
        List<Object> values = StmtExecutePayloads.parameterValues(payload, paramCount, types);
        return values == null ? null : new Execution(asLogged(sentSql), values, noBackslashEscapes);
    }

    /** A text statement: the same bytes, decoded the same way. */
    record Text(String text) implements OwnStatement {

        /** A kept COM_QUERY payload (its command byte first) as the binlog read decodes its text. */
        public static Text ofComQuery(byte[] comQuery) {
            return new Text(new String(comQuery, 1, comQuery.length - 1, Charset.defaultCharset()));
        }

        @Override
        public Match matches(String logged) {
            return text.equals(logged) ? Match.SAME : Match.DIFFERENT;
        }
    }

    /**
     * An execution of a prepared statement.
     *
     * @param template           the prepared text, as the binlog read would decode its bytes
     * @param values             its parameter values ({@link StmtExecutePayloads#parameterValues})
     * @param noBackslashEscapes whether the session's {@code sql_mode} has {@code NO_BACKSLASH_ESCAPES}
     */
    record Execution(String template, List<Object> values, boolean noBackslashEscapes) implements OwnStatement {

        @Override
        public Match matches(String logged) {
            List<Token> expected = SqlTokenizer.tokenize(template, noBackslashEscapes);
            List<Token> got = SqlTokenizer.tokenize(logged, noBackslashEscapes);
            int g = 0;
            int parameter = 0;
            boolean unsure = false;
            for (Token token : expected) {
                if (token.isSymbol(template, '?')) {
                    if (parameter == values.size() || g == got.size()) {
                        return Match.DIFFERENT;
                    }
                    boolean negative = got.get(g).isSymbol(logged, '-') && g + 1 < got.size()
                            && got.get(g + 1).type() == Type.NUMBER;
                    Token literal = got.get(negative ? g + 1 : g);
                    g += negative ? 2 : 1;
                    Match value = literal(values.get(parameter++), literal.text(logged), literal.type(), negative);
                    if (value == Match.DIFFERENT) {
                        return Match.DIFFERENT;
                    }
                    unsure |= value == Match.CANNOT_TELL;
                } else {
                    if (g == got.size() || !token.text(template).equals(got.get(g).text(logged))) {
                        return Match.DIFFERENT;
                    }
                    g++;
                }
            }
            if (g != got.size() || parameter != values.size()) {
                return Match.DIFFERENT;
            }
            return unsure ? Match.CANNOT_TELL : Match.SAME;
        }

        /** Whether the literal MariaDB wrote for a parameter is {@code value}. */
        private Match literal(Object value, String text, Type type, boolean negative) {
            if (value == null) {
                return type == Type.WORD && text.equalsIgnoreCase("NULL") && !negative ? Match.SAME : Match.DIFFERENT;
            }
            if (type == Type.WORD && text.equalsIgnoreCase("NULL")) {
                return Match.DIFFERENT;
            }
            if (value == StmtExecutePayloads.NOT_DECODED) {
                return Match.CANNOT_TELL;
            }
            if (value instanceof Long || value instanceof BigInteger) {
                if (type != Type.NUMBER || !text.chars().allMatch(Character::isDigit)) {
                    return Match.CANNOT_TELL;
                }
                BigInteger written = new BigInteger(negative ? "-" + text : text);
                return written.equals(value instanceof Long l ? BigInteger.valueOf(l) : value)
                        ? Match.SAME : Match.DIFFERENT;
            }
            if (value instanceof Double d) {
                if (type != Type.NUMBER) {
                    return Match.CANNOT_TELL;
                }
                double written = Double.parseDouble(negative ? "-" + text : text);
                if (written == d) {
                    return Match.SAME;
                }
                // The server may print fewer digits than the double holds: only a clear difference is one.
                return Math.abs(written - d) > 1e-6 * Math.max(Math.abs(written), Math.abs(d))
                        ? Match.DIFFERENT : Match.CANNOT_TELL;
            }
            byte[] bytes = (byte[]) value;
            String sent = new String(bytes, Charset.defaultCharset());
            if (type == Type.NUMBER) {
                // A decimal is sent as text and written as a number.
                try {
                    BigDecimal written = new BigDecimal(negative ? "-" + text : text);
                    return written.compareTo(new BigDecimal(sent.strip())) == 0 ? Match.SAME : Match.DIFFERENT;
                } catch (NumberFormatException e) {
                    return Match.CANNOT_TELL;
                }
            }
            if (type != Type.STRING || negative || sent.indexOf('\uFFFD') >= 0 || text.indexOf('\uFFFD') >= 0) {
                return Match.CANNOT_TELL;
            }
            String written = unquoted(text);
            if (written.equals(sent)) {
                return Match.SAME;
            }
            // Text the server may have converted to the connection's character set is not told apart.
            return ascii(written) && ascii(sent) ? Match.DIFFERENT : Match.CANNOT_TELL;
        }

        /** A string literal's value: quotes off, doubled quotes and (unless switched off) backslash escapes read. */
        private String unquoted(String literal) {
            char quote = literal.charAt(0);
            StringBuilder out = new StringBuilder(literal.length());
            for (int i = 1; i < literal.length() - 1; i++) {
                char c = literal.charAt(i);
                if (c == '\\' && !noBackslashEscapes && i + 1 < literal.length() - 1) {
                    char next = literal.charAt(++i);
                    out.append(switch (next) {
                        case '0' -> '\0';
                        case 'n' -> '\n';
                        case 'r' -> '\r';
                        case 't' -> '\t';
                        case 'b' -> '\b';
                        case 'Z' -> '\u001A';
                        default -> next;
                    });
                } else if (c == quote && i + 1 < literal.length() - 1 && literal.charAt(i + 1) == quote) {
                    out.append(c);
                    i++;
                } else {
                    out.append(c);
                }
            }
            return out.toString();
        }

        private static boolean ascii(String text) {
            return text.chars().allMatch(c -> c < 0x80);
        }
    }
}
