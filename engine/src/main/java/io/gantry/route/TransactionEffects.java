package io.gantry.route;

import java.util.List;
import java.util.regex.Pattern;

/**
 * What a statement inside a transaction does to it, as far as a lost connection is concerned: whether it certainly
 * leaves the transaction open (a query or a row change), or may end it (a {@code COMMIT}, a statement that commits
 * implicitly, such as DDL, {@code LOCK TABLES}, {@code SET autocommit = 1}, or a procedure that may do any of these).
 * A transaction replay runs again only a statement that leaves it open; one that may end it, lost on its way, has an
 * outcome nobody knows.
 */
public final class TransactionEffects {

    /** Statements that never commit: a text that leads with one of these (and holds only it) leaves the transaction open. */
    private static final List<String> LEAVE_OPEN = List.of("SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE", "WITH",
            "VALUES", "TABLE", "SHOW", "DESC", "EXPLAIN", "DO", "SAVEPOINT", "RELEASE");

    private static final Pattern PLAIN_COMMIT = Pattern.compile("(?i)\\s*COMMIT(\\s+WORK)?\\s*;?\\s*");
    private static final Pattern PLAIN_ROLLBACK = Pattern.compile("(?i)\\s*ROLLBACK(\\s+WORK)?\\s*;?\\s*");

    private TransactionEffects() {
    }

    /** Whether {@code sql} is a {@code COMMIT} and nothing else (no {@code AND CHAIN}, no {@code RELEASE}). */
    public static boolean isPlainCommit(String sql) {
        return PLAIN_COMMIT.matcher(sql).matches();
    }

    /** Whether {@code sql} is a {@code ROLLBACK} of the whole transaction and nothing else. */
    public static boolean isPlainRollback(String sql) {
        return PLAIN_ROLLBACK.matcher(sql).matches();
    }

    /** Whether {@code text} certainly leaves an open transaction open; false when it may end it (or is not known). */
    public static boolean leavesTransactionOpen(QueryText text) {
        if (text.statementClass().statementCount() != 1) {
            return false;
        }
        for (String word : LEAVE_OPEN) {
            if (text.leadsWith(word)) {
                return true;
            }
        }
        return false;
    }
}
