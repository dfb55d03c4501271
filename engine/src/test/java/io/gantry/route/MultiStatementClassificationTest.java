package io.gantry.route;

import static io.gantry.route.StatementFlag.LOCKING_READ;
import static io.gantry.route.StatementFlag.MIXED_SESSION_STATE;
import static io.gantry.route.StatementFlag.STORED_FUNCTION;
import static io.gantry.route.StatementKind.SESSION_STATE;
import static io.gantry.route.StatementKind.TRANSACTION_BEGIN;
import static io.gantry.route.StatementKind.TRANSACTION_END;
import static io.gantry.route.StatementKind.TRANSACTION_SAVEPOINT;
import static io.gantry.route.StatementKind.WRITE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.EnumSet;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** How the statements of one text add up to the text's class. */
class MultiStatementClassificationTest {

    private static final Optional<TransactionFlavor> NONE = Optional.empty();

    static Stream<Arguments> texts() {
        return Stream.of(
                arguments("START TRANSACTION READ ONLY; BEGIN", TRANSACTION_BEGIN,
                        Optional.of(TransactionFlavor.DEFAULT), EnumSet.noneOf(StatementFlag.class)),
                arguments("BEGIN; START TRANSACTION READ ONLY", TRANSACTION_BEGIN,
                        Optional.of(TransactionFlavor.DEFAULT), EnumSet.noneOf(StatementFlag.class)),
                arguments("XA START 'x'; START TRANSACTION READ ONLY", TRANSACTION_BEGIN,
                        Optional.of(TransactionFlavor.READ_WRITE), EnumSet.noneOf(StatementFlag.class)),
                arguments("SELECT 1; BEGIN", TRANSACTION_BEGIN, Optional.of(TransactionFlavor.DEFAULT),
                        EnumSet.noneOf(StatementFlag.class)),
                arguments("COMMIT; SAVEPOINT s", TRANSACTION_END, NONE, EnumSet.noneOf(StatementFlag.class)),
                arguments("SAVEPOINT s; SELECT 1", TRANSACTION_SAVEPOINT, NONE, EnumSet.noneOf(StatementFlag.class)),
                arguments("BEGIN; SELECT 1 FOR UPDATE", WRITE, NONE, EnumSet.of(LOCKING_READ)),
                arguments("SET NAMES utf8; USE db", SESSION_STATE, NONE, EnumSet.noneOf(StatementFlag.class)),
                arguments("USE db; SELECT 1", WRITE, NONE, EnumSet.of(MIXED_SESSION_STATE)),
                arguments("SET SESSION sql_mode = f(); SELECT 1", WRITE, NONE, EnumSet.of(MIXED_SESSION_STATE)),
                arguments("SELECT f(1); INSERT INTO t (a) VALUES (g(1))", WRITE, NONE, EnumSet.of(STORED_FUNCTION)));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("texts")
    void theStrongestStatementWinsAndFlagsAreUnioned(String sql, StatementKind kind,
            Optional<TransactionFlavor> flavor, EnumSet<StatementFlag> flags) {
        StatementClass result = StatementClassifier.classify(sql);
        assertThat(result.kind()).as(sql).isEqualTo(kind);
        assertThat(result.beginFlavor()).as(sql).isEqualTo(flavor);
        assertThat(result.flags()).as(sql).containsExactlyInAnyOrderElementsOf(flags);
        assertThat(result.statementCount()).as(sql).isEqualTo(2);
    }

    @Test
    void aSingleStatementWithoutFlagsOrHintIsTheSharedClass() {
        assertThat(StatementClassifier.classify("SELECT 1;")).isSameAs(StatementClass.plain(StatementKind.READ));
        assertThat(StatementClassifier.classify("SELECT 1; SELECT 2").statementCount()).isEqualTo(2);
    }
}
