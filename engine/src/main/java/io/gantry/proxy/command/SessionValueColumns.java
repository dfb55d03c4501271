package io.gantry.proxy.command;

import io.gantry.route.SqlTokenizer.Token;
import io.gantry.route.SqlTokenizer.Type;
import io.gantry.route.SqlTokenizer;
import io.gantry.wire.Buffers;
import io.gantry.wire.ColumnDefinition;
import io.gantry.wire.ResponseFraming;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code CONNECTION_ID()} is answered with the Gantry session id, and {@code ROW_COUNT()} and {@code FOUND_ROWS()}
 * at times with the session's own counts, by writing the value into the statement text (see
 * {@link SessionIdentitySql#withSessionValues}). This puts back in the result's column definitions what a direct
 * connection shows: the column named as the client wrote the select item, and a bare {@code CONNECTION_ID()} typed as
 * the server types it (MariaDB: {@code INT UNSIGNED} of 10 digits; MySQL: {@code BIGINT UNSIGNED} of 21) rather than
 * as a number literal. The counts need no type:
 * they are written in as {@code IFNULL(value, ROW_COUNT())}, which the server types as the function
 * ({@code BIGINT}, 21).
 *
 * <p>Only the first result set of the text is touched, and types only for items before any {@code *}, whose
 * column position is then known. A {@code CONNECTION_ID()} inside a larger expression keeps the type the expression
 * has with a literal. A statement prepared on the server gets the same: the column definitions of its
 * COM_STMT_PREPARE_OK and of each execution's answer; there the binary rows carry the literal as wide as the server
 * typed it, so it is retyped only when that is as wide as the function's type (MariaDB types a literal of under 10
 * digits {@code INT}, as its {@code CONNECTION_ID()}; MySQL types every integer literal {@code BIGINT}).
 */
final class SessionValueColumns {

    /** A function whose value Gantry writes into the text. */
    private enum Call {
        CONNECTION_ID, ROW_COUNT, FOUND_ROWS;

        /** The function a word names, or null. */
        static Call named(String sql, Token word) {
            for (Call call : values()) {
                if (word.isWord(sql, call.name())) {
                    return call;
                }
            }
            return null;
        }
    }

    private static final Set<String> LIST_ENDS = Set.of("FROM", "INTO", "WHERE", "GROUP", "HAVING", "ORDER",
            "LIMIT", "UNION", "EXCEPT", "INTERSECT", "WINDOW", "FOR", "LOCK", "PROCEDURE");
    /** Words that join or qualify operands, so that a name next to one is not an alias. */
    private static final Set<String> OPERATOR_WORDS = Set.of("AND", "OR", "XOR", "NOT", "IS", "DIV", "MOD", "LIKE",
            "REGEXP", "RLIKE", "IN", "BETWEEN", "BINARY", "COLLATE", "ESCAPE", "INTERVAL", "CASE", "WHEN", "THEN",
            "ELSE", "NULL", "TRUE", "FALSE", "UNKNOWN", "SOUNDS", "DISTINCT", "AS");
    private static final Set<String> SELECT_MODIFIERS = Set.of("ALL", "DISTINCT", "DISTINCTROW", "HIGH_PRIORITY",
            "STRAIGHT_JOIN", "SQL_SMALL_RESULT", "SQL_BIG_RESULT", "SQL_BUFFER_RESULT", "SQL_CACHE", "SQL_NO_CACHE",
            "SQL_CALC_FOUND_ROWS");

    /**
     * The names the client's text gives the columns of items with a value written in: by position where it is known
     * (two items may read the same once written in: {@code ROW_COUNT(), FOUND_ROWS()} as {@code 1, 1}), else by the
     * name the server makes from the rewritten item.
     */
    private final Map<Integer, String> namesByPosition;
    private final Map<String, String> names;
    /** The positions of the select items that are a bare {@code CONNECTION_ID()}. */
    private final Set<Integer> bareConnectionIds;
    /** The type the server gives {@code CONNECTION_ID()}, and its column length. */
    private final int connectionIdType;
    private final int connectionIdLength;
    private int resultSets;
    private int column;

    private SessionValueColumns(Map<Integer, String> namesByPosition, Map<String, String> names,
                                Set<Integer> bareConnectionIds, boolean mariaDb) {
        this.namesByPosition = namesByPosition;
        this.names = names;
        this.bareConnectionIds = bareConnectionIds;
        this.connectionIdType = (mariaDb ? ColumnDefinition.FieldType.LONG : ColumnDefinition.FieldType.LONGLONG).code();
        this.connectionIdLength = mariaDb ? 10 : 21;
    }

    /**
     * What to put back for a text whose calls were replaced by their values.
     *
     * @param mariaDb whether the servers are MariaDB's (else MySQL's), which type {@code CONNECTION_ID()} apart
     */
    static SessionValueColumns of(String original, String rewritten, boolean noBackslashEscapes, boolean mariaDb) {
        List<List<Token>> originalItems = selectItems(original, noBackslashEscapes);
        List<List<Token>> rewrittenItems = selectItems(rewritten, noBackslashEscapes);
        Map<Integer, String> namesByPosition = new HashMap<>();
        Map<String, String> names = new HashMap<>();
        Set<Integer> bareConnectionIds = new HashSet<>();
        if (originalItems.size() == rewrittenItems.size()) {
            boolean positionsKnown = true;
            for (int i = 0; i < originalItems.size(); i++) {
                List<Token> item = originalItems.get(i);
                if (item.size() == 1 && item.get(0).isSymbol(original, '*') || endsWithStar(original, item)) {
                    positionsKnown = false;
                }
                if (!callsAny(original, item)) {
                    continue;
                }
                if (!hasAlias(original, item)) {
                    if (positionsKnown) {
                        namesByPosition.put(i, text(original, item));
                    } else {
                        names.put(text(rewritten, rewrittenItems.get(i)), text(original, item));
                    }
                }
                if (positionsKnown && bareCall(original, item) == Call.CONNECTION_ID) {
                    bareConnectionIds.add(i);
                }
            }
        }
        return new SessionValueColumns(namesByPosition, names, bareConnectionIds, mariaDb);
    }

    /**
     * Rewrites one response packet if it is a column definition of the first result set that needs it; returns
     * the packet's payload to send (the same buffer when nothing changed). The column definitions of a
     * COM_STMT_PREPARE_OK ({@code prepareOk} starts them) are the first result set's too.
     *
     * @param binary whether the rows are binary (a prepared statement's), whose values are as wide as their type
     */
    ByteBuf rewrite(ByteBuf payload, ResponseFraming.PacketKind kind, boolean binary, ByteBufAllocator alloc) {
        if (kind == ResponseFraming.PacketKind.COLUMN_COUNT || kind == ResponseFraming.PacketKind.STMT_PREPARE_OK) {
            resultSets++;
            column = 0;
            return payload;
        }
        if (kind != ResponseFraming.PacketKind.COLUMN_DEFINITION || resultSets != 1) {
            return payload;
        }
        int position = column++;
        int end = payload.writerIndex();
        // fixed fields from the end: charset(2) length(4) type(1) flags(2) decimals(1) filler(2)
        int type = payload.getUnsignedByte(end - 6);
        // A binary row carries the literal as wide as the server typed it (on MariaDB a literal of 10 digits is a
        // BIGINT, whose 8 bytes an INT column would misread): there only a literal of the function's width is retyped.
        if (bareConnectionIds.contains(position) && (!binary || type == connectionIdType)) {
            // as the server types CONNECTION_ID(): unsigned, of its type and length
            payload.setIntLE(end - 10, connectionIdLength);
            payload.setByte(end - 6, connectionIdType);
            payload.setShortLE(end - 5, payload.getUnsignedShortLE(end - 5) | ColumnDefinition.UNSIGNED_FLAG);
        }
        return renamed(payload, position, alloc);
    }

    private ByteBuf renamed(ByteBuf payload, int position, ByteBufAllocator alloc) {
        if (names.isEmpty() && !namesByPosition.containsKey(position)) {
            return payload;
        }
        ByteBuf view = payload.duplicate();
        for (int i = 0; i < 4; i++) {
            Buffers.readLenEncSlice(view, "column definition"); // catalog, schema, table, org_table
        }
        int nameStart = view.readerIndex();
        String name = Buffers.readLenEncString(view, "column definition name");
        String original = namesByPosition.getOrDefault(position, names.get(name));
        if (original == null) {
            return payload;
        }
        byte[] bytes = original.getBytes(StandardCharsets.UTF_8);
        ByteBuf out = alloc.buffer(payload.readableBytes() + bytes.length);
        out.writeBytes(payload, payload.readerIndex(), nameStart - payload.readerIndex());
        Buffers.writeLenEncInt(out, bytes.length);
        out.writeBytes(bytes);
        out.writeBytes(view, view.readerIndex(), view.readableBytes());
        payload.release();
        return out;
    }

    /** The items of the text's first top-level select list, each as its tokens. */
    private static List<List<Token>> selectItems(String sql, boolean noBackslashEscapes) {
        List<Token> tokens = SqlTokenizer.tokenize(sql, noBackslashEscapes);
        int i = 0;
        while (i < tokens.size() && tokens.get(i).isSymbol(sql, '(')) {
            i++;
        }
        if (i >= tokens.size() || !tokens.get(i).isWord(sql, "SELECT")) {
            return List.of();
        }
        i++;
        while (i < tokens.size() && tokens.get(i).type() == Type.WORD
                && SELECT_MODIFIERS.contains(tokens.get(i).text(sql).toUpperCase(java.util.Locale.ROOT))) {
            i++;
        }
        List<List<Token>> items = new ArrayList<>();
        int depth = 0;
        int from = i;
        for (; i < tokens.size(); i++) {
            Token token = tokens.get(i);
            if (token.isSymbol(sql, '(')) {
                depth++;
            } else if (token.isSymbol(sql, ')')) {
                if (depth == 0) {
                    break;
                }
                depth--;
            } else if (depth == 0 && (token.isSymbol(sql, ';') || (token.type() == Type.WORD
                    && LIST_ENDS.contains(token.text(sql).toUpperCase(java.util.Locale.ROOT))))) {
                break;
            } else if (depth == 0 && token.isSymbol(sql, ',')) {
                items.add(tokens.subList(from, i));
                from = i + 1;
            }
        }
        if (from < i) {
            items.add(tokens.subList(from, i));
        }
        return items;
    }

    private static boolean callsAny(String sql, List<Token> item) {
        for (int i = 0; i + 1 < item.size(); i++) {
            if (item.get(i + 1).isSymbol(sql, '(') && Call.named(sql, item.get(i)) != null) {
                return true;
            }
        }
        return false;
    }

    /** The function the item is a bare call of ({@code f()}, {@code f() AS x}), or null. */
    private static Call bareCall(String sql, List<Token> item) {
        boolean bare = item.size() >= 3 && item.get(1).isSymbol(sql, '(') && item.get(2).isSymbol(sql, ')')
                && (item.size() == 3 || hasAlias(sql, item) && item.size() <= 5);
        return bare ? Call.named(sql, item.get(0)) : null;
    }

    /**
     * {@code expr AS name}, or {@code expr name}: a name right after the end of an operand (a closing parenthesis, a
     * literal, a name), neither of which is an operator word ({@code x IS NULL}, {@code NOT b}).
     */
    private static boolean hasAlias(String sql, List<Token> item) {
        if (item.size() < 2) {
            return false;
        }
        Token last = item.get(item.size() - 1);
        Token before = item.get(item.size() - 2);
        boolean name = last.type() == Type.QUOTED_IDENTIFIER || last.type() == Type.STRING
                || last.type() == Type.WORD && !isOperatorWord(sql, last);
        if (!name) {
            return false;
        }
        return before.isWord(sql, "AS") || before.isSymbol(sql, ')') || before.type() == Type.NUMBER
                || before.type() == Type.STRING || before.type() == Type.QUOTED_IDENTIFIER
                || before.type() == Type.WORD && !isOperatorWord(sql, before);
    }

    private static boolean isOperatorWord(String sql, Token word) {
        return OPERATOR_WORDS.contains(word.text(sql).toUpperCase(java.util.Locale.ROOT));
    }

    private static boolean endsWithStar(String sql, List<Token> item) {
        return item.size() >= 2 && item.get(item.size() - 1).isSymbol(sql, '*')
                && item.get(item.size() - 2).isSymbol(sql, '.');
    }

    private static String text(String sql, List<Token> item) {
        return item.isEmpty() ? "" : sql.substring(item.get(0).start(), item.get(item.size() - 1).end());
    }
}
