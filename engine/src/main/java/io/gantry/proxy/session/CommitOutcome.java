package io.gantry.proxy.session;

import io.gantry.topology.LoggedTransactions;
import io.gantry.gtid.MariaDbGtid;
import java.util.ArrayList;
import java.util.List;

/**
 * Whether a transaction whose commit went unanswered when its primary was lost reached the new primary, told from
 * what the new primary logged after the old primary's position from before the commit was sent
 * ({@link LoggedTransactions}). The transaction, had it committed, has a GTID after that position, from a server
 * other than the new primary (which was a replica then; unless the primary is the same and only the connection was
 * lost), and the statements it logged are the session's own statements, in order. Of those logged transactions: none whose statements are the session's means it did not
 * commit; exactly one means it did; anything that cannot be told (a transaction logged without its statements'
 * text, two that fit, statements Gantry kept not as text) leaves it unknown, never guessed.
 */
public sealed interface CommitOutcome {

    /** It committed on the old primary and reached the new one, as {@code gtid}. */
    record Committed(MariaDbGtid gtid) implements CommitOutcome {
    }

    /** The new primary has no transaction of it: it did not commit, or what committed was lost with the primary. */
    record NotCommitted() implements CommitOutcome {
    }

    /** It cannot be told ({@code why}, in an operator's words). */
    record Unknown(String why) implements CommitOutcome {
    }

    /**
     * Decides from {@code tail}, what the new primary logged after the old primary's position.
     *
     * @param own        each statement the session sent in the transaction, in order (the in-doubt one included), as
     *                   its binlog would log it; null when one of them cannot be told so (an execution whose values
     *                   were not kept)
     * @param sameServer whether the primary read is the one whose connection was lost (only the connection went):
     *                   then its own transactions are the candidates, not those it got by replication
     */
    static CommitOutcome decide(List<OwnStatement> own, LoggedTransactions.Tail tail, boolean sameServer) {
        List<LoggedTransactions.Logged> replicated = new ArrayList<>();
        for (LoggedTransactions.Logged logged : tail.transactions()) {
            if (sameServer || logged.gtid().server() != tail.serverId()) {
                replicated.add(logged);
            }
        }
        if (replicated.isEmpty()) {
            return new NotCommitted();
        }
        if (own == null) {
            return new Unknown(replicated.size() + " transactions were logged after the COMMIT was sent, and the "
                    + "transaction ran prepared statements whose values Gantry did not keep");
        }
        List<MariaDbGtid> fitting = new ArrayList<>();
        for (LoggedTransactions.Logged logged : replicated) {
            if (logged.unnamedRows() || logged.statements().isEmpty()) {
                return new Unknown("the primary logged transaction " + logged.gtid() + " without its statements' "
                        + "text (is binlog_annotate_row_events off?)");
            }
            if (logged.statements().stream().anyMatch(text -> text.indexOf('\uFFFD') >= 0)) {
                return new Unknown("the statements of transaction " + logged.gtid() + " could not be read as text");
            }
            OwnStatement.Match match = inOrderAmong(logged.statements(), own);
            if (match == OwnStatement.Match.CANNOT_TELL) {
                return new Unknown("whether transaction " + logged.gtid() + " ran this transaction's statements "
                        + "cannot be told from its logged text (a value written in a way Gantry does not compare)");
            }
            if (match == OwnStatement.Match.SAME) {
                fitting.add(logged.gtid());
            }
        }
        if (fitting.isEmpty()) {
            return new NotCommitted();
        }
        if (fitting.size() == 1) {
            return new Committed(fitting.get(0));
        }
        return new Unknown(fitting.size() + " transactions the primary logged (" + fitting + ") ran the same "
                + "statements as this one");
    }

    /**
     * Whether every statement of {@code logged} is one of {@code own}, in the same order: SAME when they are for
     * certain, DIFFERENT when they cannot be even where a comparison could not tell, CANNOT_TELL otherwise.
     */
    private static OwnStatement.Match inOrderAmong(List<String> logged, List<OwnStatement> own) {
        if (inOrder(logged, own, false)) {
            return OwnStatement.Match.SAME;
        }
        return inOrder(logged, own, true) ? OwnStatement.Match.CANNOT_TELL : OwnStatement.Match.DIFFERENT;
    }

    /** The greedy subsequence match, taking "cannot tell" as a match when {@code lenient}. */
    private static boolean inOrder(List<String> logged, List<OwnStatement> own, boolean lenient) {
        int next = 0;
        for (String text : logged) {
            while (next < own.size() && !fits(own.get(next).matches(text), lenient)) {
                next++;
            }
            if (next == own.size()) {
                return false;
            }
            next++;
        }
        return true;
    }

    private static boolean fits(OwnStatement.Match match, boolean lenient) {
        return match == OwnStatement.Match.SAME || (lenient && match == OwnStatement.Match.CANNOT_TELL);
    }
}
