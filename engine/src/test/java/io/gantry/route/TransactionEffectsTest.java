package io.gantry.route;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Which statements, lost on their way, certainly left their transaction open. */
class TransactionEffectsTest {

    @ParameterizedTest
    @ValueSource(strings = {"SELECT 1", "  insert into t values (1)", "UPDATE t SET v = 1", "DELETE FROM t",
            "REPLACE INTO t VALUES (1)", "SAVEPOINT a", "SELECT * FROM t FOR UPDATE", "WITH x AS (SELECT 1) SELECT * FROM x"})
    void queriesAndRowChangesLeaveItOpen(String sql) {
        assertThat(TransactionEffects.leavesTransactionOpen(QueryText.of(sql, SqlMode.DEFAULT))).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"COMMIT", "ROLLBACK", "CREATE TABLE t2 (a INT)", "ALTER TABLE t ADD b INT",
            "SET autocommit = 1", "CALL p()", "LOCK TABLES t WRITE", "TRUNCATE t", "INSERT INTO t VALUES (1); COMMIT",
            "/* why */ COMMIT"})
    void anythingThatMayCommitDoesNot(String sql) {
        assertThat(TransactionEffects.leavesTransactionOpen(QueryText.of(sql, SqlMode.DEFAULT))).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"COMMIT", "commit work", " COMMIT ;", "COMMIT\n"})
    void aPlainCommitIsKnown(String sql) {
        assertThat(TransactionEffects.isPlainCommit(sql)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"COMMIT AND CHAIN", "COMMIT RELEASE", "/* why */ COMMIT", "COMMITTED", "ROLLBACK",
            "INSERT INTO t VALUES (1); COMMIT"})
    void anythingMoreIsNotAPlainCommit(String sql) {
        assertThat(TransactionEffects.isPlainCommit(sql)).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"ROLLBACK", "rollback work;"})
    void aPlainRollbackIsKnown(String sql) {
        assertThat(TransactionEffects.isPlainRollback(sql)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"ROLLBACK TO SAVEPOINT a", "ROLLBACK TO a", "ROLLBACK AND CHAIN", "COMMIT"})
    void aPartialRollbackIsNotAPlainRollback(String sql) {
        assertThat(TransactionEffects.isPlainRollback(sql)).isFalse();
    }
}
