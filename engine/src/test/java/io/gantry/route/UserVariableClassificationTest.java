package io.gantry.route;

import static io.gantry.route.StatementFlag.SETS_USER_VARIABLES;
import static io.gantry.route.StatementFlag.USES_USER_VARIABLES;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.EnumSet;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Which {@code @name} sets a user variable, which reads one, and which is the host of an account. */
class UserVariableClassificationTest {

    static Stream<Arguments> texts() {
        return Stream.of(
                arguments("SELECT a, b FROM t INTO @a, @b", EnumSet.of(SETS_USER_VARIABLES)),
                arguments("SELECT @a, @b", EnumSet.of(USES_USER_VARIABLES)),
                arguments("SELECT a INTO @a FROM t WHERE b = @b", EnumSet.of(SETS_USER_VARIABLES, USES_USER_VARIABLES)),
                arguments("SELECT @a := 1, @b", EnumSet.of(SETS_USER_VARIABLES, USES_USER_VARIABLES)),
                arguments("SELECT (@a)", EnumSet.of(USES_USER_VARIABLES)),
                arguments("SELECT 1 FROM t WHERE b=@v", EnumSet.of(USES_USER_VARIABLES)),
                arguments("SELECT 'a' @b", EnumSet.of(USES_USER_VARIABLES)),
                arguments("SELECT @b", EnumSet.of(USES_USER_VARIABLES)),
                arguments("CREATE USER 'app'@'%'", EnumSet.noneOf(StatementFlag.class)),
                arguments("GRANT ALL ON *.* TO \"app\"@\"%\"", EnumSet.noneOf(StatementFlag.class)),
                arguments("RENAME USER `a`@`%` TO b@localhost", EnumSet.noneOf(StatementFlag.class)));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("texts")
    void anAtNameIsATargetAReadOrAHost(String sql, EnumSet<StatementFlag> flags) {
        assertThat(StatementClassifier.classify(sql).flags()).as(sql).containsExactlyInAnyOrderElementsOf(flags);
    }
}
