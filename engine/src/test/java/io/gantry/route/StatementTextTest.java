package io.gantry.route;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.route.SqlMode;
import io.gantry.route.SqlTokenizer;
import org.junit.jupiter.api.Test;

class StatementTextTest {

    @Test
    void theStatementEndsBeforeItsTrailingSemicolons() {
        assertThat(end("SELECT 1 ; ; -- done")).isEqualTo(2);
        assertThat(end("SELECT ';'")).isEqualTo(2);
        assertThat(end("SELECT 1; SELECT 2")).isEqualTo(5);
        assertThat(end(";;")).isZero();
        assertThat(end("")).isZero();
    }

    @Test
    void matchesAnUpperCaseWordInAnyAsciiCase() {
        assertThat(StatementText.startsWithIgnoringCase("  sHoW caches", 2, "SHOW")).isTrue();
        assertThat(StatementText.startsWithIgnoringCase("SHOW", 1, "SHOW")).isFalse();
        assertThat(StatementText.startsWithIgnoringCase("SHO", 0, "SHOW")).isFalse();
        assertThat(StatementText.startsWithIgnoringCase("\u017fHOW", 0, "SHOW")).isFalse();
    }

    private static int end(String sql) {
        return StatementText.end(sql, SqlTokenizer.tokenize(sql, SqlMode.DEFAULT));
    }
}
