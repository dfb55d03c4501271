package io.gantry.proxy.state;

import io.gantry.route.QueryText;
import io.gantry.route.SqlMode;
import io.gantry.route.SqlTokenizer.Token;
import io.gantry.route.SqlTokenizer;
import java.util.List;

/**
 * The characteristics a client gave its next transaction with {@code SET TRANSACTION ... READ ONLY|READ WRITE}
 * (no {@code SESSION} or {@code GLOBAL}), held by Gantry until the session's next statement and sent first to the
 * server that runs it. Sent to the primary at once, they would stay there when the transaction they are for runs on a
 * replica, and apply to a later transaction on the primary instead; held, they decide where that transaction runs.
 *
 * @param statement the client's statement, sent as it is before the next statement
 * @param readOnly  whether the next transaction is read-only
 */
public record NextTransaction(String statement, boolean readOnly) {

    /**
     * The held characteristics of {@code sql}, or null when it is not a {@code SET TRANSACTION} with an access mode
     * in the grammar below (then it goes to a server as any other setting does):
     * {@code SET TRANSACTION item [, item]} with items {@code ISOLATION LEVEL level}, {@code READ ONLY},
     * {@code READ WRITE}.
     */
    public static NextTransaction parse(QueryText text) {
        if (!text.mentions(QueryText.Word.TRANSACTION) || !text.leadsWith("SET")) {
            return null; // the common case, without tokenizing
        }
        String sql = text.sql();
        List<Token> tokens = text.tokens();
        int end = tokens.size();
        if (end > 0 && tokens.get(end - 1).isSymbol(sql, ';')) {
            end--;
        }
        if (end < 4 || !tokens.get(0).isWord(sql, "SET") || !tokens.get(1).isWord(sql, "TRANSACTION")) {
            return null;
        }
        Boolean readOnly = null;
        int i = 2;
        while (true) {
            if (word(sql, tokens, i, end, "ISOLATION") && word(sql, tokens, i + 1, end, "LEVEL")) {
                int level = isolationLevelLength(sql, tokens, i + 2, end);
                if (level == 0) {
                    return null;
                }
                i += 2 + level;
            } else if (word(sql, tokens, i, end, "READ")
                    && (word(sql, tokens, i + 1, end, "ONLY") || word(sql, tokens, i + 1, end, "WRITE"))) {
                readOnly = tokens.get(i + 1).isWord(sql, "ONLY");
                i += 2;
            } else {
                return null;
            }
            if (i == end) {
                return readOnly == null ? null : new NextTransaction(sql, readOnly);
            }
            if (!tokens.get(i).isSymbol(sql, ',')) {
                return null;
            }
            i++;
        }
    }

    /** How many words the isolation level at {@code i} takes, or 0 when there is none. */
    private static int isolationLevelLength(String sql, List<Token> tokens, int i, int end) {
        if (word(sql, tokens, i, end, "SERIALIZABLE")) {
            return 1;
        }
        if (word(sql, tokens, i, end, "REPEATABLE") && word(sql, tokens, i + 1, end, "READ")) {
            return 2;
        }
        if (word(sql, tokens, i, end, "READ")
                && (word(sql, tokens, i + 1, end, "COMMITTED") || word(sql, tokens, i + 1, end, "UNCOMMITTED"))) {
            return 2;
        }
        return 0;
    }

    private static boolean word(String sql, List<Token> tokens, int i, int end, String word) {
        return i < end && tokens.get(i).isWord(sql, word);
    }
}
