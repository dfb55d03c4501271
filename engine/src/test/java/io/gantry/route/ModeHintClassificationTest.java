package io.gantry.route;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Where a routing hint is read, and where it is not. */
class ModeHintClassificationTest {

    static Stream<Arguments> hints() {
        return Stream.of(
                arguments("/*#mode=READWRITE*/ SELECT 1 /*#mode=READONLY*/", ModeHint.READ_WRITE),
                arguments("/*#mode=READONLY,x*/ SELECT 1", ModeHint.READ_ONLY),
                arguments("/*#mode=READ_ONLY*/ SELECT 1", ModeHint.NONE),
                arguments("/*#mode READONLY*/ SELECT 1", ModeHint.NONE),
                arguments("/*#mode=*/ SELECT 1", ModeHint.NONE),
                arguments("/*##mode=READONLY*/ SELECT 1", ModeHint.NONE),
                arguments("SELECT 1 # mode = readwrite", ModeHint.READ_WRITE),
                arguments("SELECT 1 --\t#mode=READONLY", ModeHint.READ_ONLY),
                arguments("SELECT 1 --#mode=READWRITE", ModeHint.READ_WRITE),
                arguments("SELECT '#mode=READWRITE'", ModeHint.NONE),
                arguments("/*!50000 SELECT 1 */ /*#mode=READONLY*/", ModeHint.READ_ONLY),
                arguments("SELECT 1 /*!99999 /*#mode=READWRITE*/ */", ModeHint.READ_WRITE),
                arguments("SELECT 1 /*!99999 #mode=READWRITE */", ModeHint.READ_WRITE));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("hints")
    void aHintIsTheStartOfACommentsBody(String sql, ModeHint hint) {
        assertThat(StatementClassifier.classify(sql).hint()).as(sql).isEqualTo(hint);
    }

    @Test
    void aHintWithoutAStatementIsAWriteWithTheHint() {
        StatementClass result = StatementClassifier.classify("-- #mode=READONLY");
        assertThat(result).isEqualTo(new StatementClass(StatementKind.WRITE, Optional.empty(), Set.of(),
                ModeHint.READ_ONLY, 0));
    }
}
