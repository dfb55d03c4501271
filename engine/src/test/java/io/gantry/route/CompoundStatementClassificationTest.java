package io.gantry.route;

import static io.gantry.route.StatementFlag.USER_LOCK;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The body of a stored program or compound statement is one statement, its semicolons included. */
class CompoundStatementClassificationTest {

    static Stream<Arguments> compoundTexts() {
        return Stream.of(
                arguments("CREATE PROCEDURE p() BEGIN SELECT 1; END", 1),
                arguments("CREATE PROCEDURE p() BEGIN WHILE i < 3 DO SET i = i + 1; END WHILE; END; SELECT 1", 2),
                arguments("CREATE PROCEDURE p() BEGIN REPEAT SET i = i + 1; UNTIL i > 3 END REPEAT; END; SELECT 1", 2),
                arguments("BEGIN NOT ATOMIC FOR r IN (SELECT 1) DO SELECT r; END FOR; END; SELECT 2", 2),
                arguments("CREATE PROCEDURE p() BEGIN IF a THEN SELECT 1; ELSEIF b THEN SELECT 2; END IF; END; SELECT 3", 2),
                arguments("CREATE PROCEDURE p() lbl: BEGIN SELECT 1; END lbl; SELECT 2", 2),
                arguments("CREATE PROCEDURE p() BEGIN BEGIN SELECT 1; END; END; SELECT 2", 2),
                arguments("CREATE PROCEDURE p() BEGIN CASE WHEN 1 THEN SELECT 1; END CASE; END; SELECT 2", 2),
                arguments("CREATE FUNCTION f() RETURNS INT BEGIN RETURN CASE WHEN 1 THEN 2 END; END; SELECT 1", 2),
                arguments("CREATE PROCEDURE p() BEGIN SELECT t.end FROM t; END; SELECT 1", 2),
                arguments("CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1; SELECT 1", 2),
                arguments("BEGIN NOT ATOMIC SELECT 1; END", 1));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("compoundTexts")
    void aSemicolonInsideABlockDoesNotEndTheStatement(String sql, int statements) {
        StatementClass result = StatementClassifier.classify(sql);
        assertThat(result.kind()).as(sql).isEqualTo(StatementKind.WRITE);
        assertThat(result.statementCount()).as(sql).isEqualTo(statements);
    }

    @Test
    void theBodyOfAStoredProgramSetsNoFlagsButACompoundStatementsBodyDoes() {
        assertThat(StatementClassifier.classify("CREATE PROCEDURE p() BEGIN SELECT GET_LOCK('a', 1); END").flags())
                .isEmpty();
        assertThat(StatementClassifier.classify("BEGIN NOT ATOMIC SELECT GET_LOCK('a', 1); END").flags())
                .containsExactly(USER_LOCK);
    }

    @Test
    void aPlainBeginStartsATransactionAndOpensNoBlock() {
        StatementClass result = StatementClassifier.classify("BEGIN; SELECT 1; COMMIT");
        assertThat(result.kind()).isEqualTo(StatementKind.TRANSACTION_BEGIN);
        assertThat(result.beginFlavor()).contains(TransactionFlavor.DEFAULT);
        assertThat(result.statementCount()).isEqualTo(3);
    }
}
