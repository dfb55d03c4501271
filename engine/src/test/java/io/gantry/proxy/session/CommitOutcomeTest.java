package io.gantry.proxy.session;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.topology.LoggedTransactions.Logged;
import io.gantry.topology.LoggedTransactions.Tail;
import io.gantry.gtid.MariaDbGtid;
import java.util.List;
import org.junit.jupiter.api.Test;

class CommitOutcomeTest {

    private static final long NEW_PRIMARY = 2;
    private static final long OLD_PRIMARY = 1;
    private static final List<OwnStatement> OWN = texts("BEGIN", "INSERT INTO t VALUES (1)", "SELECT COUNT(*) FROM t",
            "UPDATE t SET n = n + 1 WHERE id = 7", "COMMIT");

    private static List<OwnStatement> texts(String... texts) {
        return java.util.Arrays.stream(texts).<OwnStatement>map(OwnStatement.Text::new).toList();
    }

    private static Logged logged(long server, long sequence, String... statements) {
        return new Logged(new MariaDbGtid(0, server, sequence), List.of(statements), false);
    }

    @Test
    void nothingLoggedAfterThePositionMeansItDidNotCommit() {
        assertThat(CommitOutcome.decide(OWN, new Tail(NEW_PRIMARY, List.of()), false))
                .isInstanceOf(CommitOutcome.NotCommitted.class);
    }

    @Test
    void theTransactionWithTheSessionsStatementsInOrderIsIt() {
        Tail tail = new Tail(NEW_PRIMARY, List.of(
                logged(OLD_PRIMARY, 11, "INSERT INTO t VALUES (2)"),
                logged(OLD_PRIMARY, 12, "INSERT INTO t VALUES (1)", "UPDATE t SET n = n + 1 WHERE id = 7")));
        assertThat(CommitOutcome.decide(OWN, tail, false))
                .isEqualTo(new CommitOutcome.Committed(new MariaDbGtid(0, OLD_PRIMARY, 12)));
    }

    @Test
    void aStatementThatChangedNoRowsIsNotLoggedAndStillFits() {
        Tail tail = new Tail(NEW_PRIMARY, List.of(logged(OLD_PRIMARY, 12, "UPDATE t SET n = n + 1 WHERE id = 7")));
        assertThat(CommitOutcome.decide(OWN, tail, false)).isInstanceOf(CommitOutcome.Committed.class);
    }

    @Test
    void otherSessionsTransactionsAndOnesInAnotherOrderAreNotIt() {
        Tail tail = new Tail(NEW_PRIMARY, List.of(
                logged(OLD_PRIMARY, 11, "INSERT INTO t VALUES (2)"),
                logged(OLD_PRIMARY, 12, "UPDATE t SET n = n + 1 WHERE id = 7", "INSERT INTO t VALUES (1)"),
                logged(OLD_PRIMARY, 13, "INSERT INTO t VALUES (1)", "DELETE FROM t")));
        assertThat(CommitOutcome.decide(OWN, tail, false)).isInstanceOf(CommitOutcome.NotCommitted.class);
    }

    @Test
    void theNewPrimarysOwnTransactionsAreNotCandidatesUnlessItIsTheSameServer() {
        Tail tail = new Tail(NEW_PRIMARY, List.of(logged(NEW_PRIMARY, 12, "INSERT INTO t VALUES (1)")));
        assertThat(CommitOutcome.decide(OWN, tail, false)).isInstanceOf(CommitOutcome.NotCommitted.class);
        assertThat(CommitOutcome.decide(OWN, tail, true)).isInstanceOf(CommitOutcome.Committed.class);
    }

    @Test
    void twoTransactionsThatFitLeaveItUnknown() {
        Tail tail = new Tail(NEW_PRIMARY, List.of(
                logged(OLD_PRIMARY, 11, "INSERT INTO t VALUES (1)"),
                logged(OLD_PRIMARY, 12, "INSERT INTO t VALUES (1)")));
        assertThat(CommitOutcome.decide(OWN, tail, false)).isInstanceOf(CommitOutcome.Unknown.class);
    }

    @Test
    void rowsLoggedWithoutTheirStatementLeaveItUnknown() {
        Tail tail = new Tail(NEW_PRIMARY, List.of(new Logged(new MariaDbGtid(0, OLD_PRIMARY, 12), List.of(), true)));
        assertThat(CommitOutcome.decide(OWN, tail, false)).isInstanceOf(CommitOutcome.Unknown.class);
    }

    @Test
    void statementsKeptNotAsTextLeaveItUnknownOnlyWhenSomethingWasLogged() {
        assertThat(CommitOutcome.decide(null, new Tail(NEW_PRIMARY, List.of()), false))
                .isInstanceOf(CommitOutcome.NotCommitted.class);
        Tail tail = new Tail(NEW_PRIMARY, List.of(logged(OLD_PRIMARY, 12, "INSERT INTO t VALUES (9)")));
        assertThat(CommitOutcome.decide(null, tail, false)).isInstanceOf(CommitOutcome.Unknown.class);
    }

    @Test
    void aTextThatCouldNotBeDecodedIsNeverTakenAsAMatch() {
        Tail tail = new Tail(NEW_PRIMARY, List.of(logged(OLD_PRIMARY, 12, "INSERT INTO t VALUES ('\uFFFD')")));
        assertThat(CommitOutcome.decide(texts("INSERT INTO t VALUES ('\uFFFD')", "COMMIT"), tail, false))
                .isInstanceOf(CommitOutcome.Unknown.class);
    }
}
