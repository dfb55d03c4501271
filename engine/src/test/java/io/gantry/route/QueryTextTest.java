package io.gantry.route;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.route.QueryText.Word;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class QueryTextTest {

    private static Set<Word> mentioned(String sql) {
        QueryText text = QueryText.of(sql, SqlMode.DEFAULT);
        Set<Word> words = EnumSet.noneOf(Word.class);
        for (Word word : Word.values()) {
            if (text.mentions(word)) {
                words.add(word);
            }
        }
        return words;
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"gantry", "GANTRY", "GaNtRy", "select `gantry`", "xxgantryxx", "…gantry…"})
    void findsAWordInAnyAsciiCaseAnywhere(String sql) {
        assertThat(mentioned(sql)).containsExactly(Word.GANTRY);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"", "gantr", "antry", "SELECT 1", "gan try", "gantrý", "g\u0430ntry", "\u212Aill 5",
            "k\u0131ll 5"})
    void findsNoWordThatIsNotSpelledInAscii(String sql) {
        assertThat(mentioned(sql)).isEmpty();
    }

    @Test
    void findsEveryWordOfOneTextInOnePass() {
        assertThat(mentioned("SELECT CONNECTION_ID() /* kill */ FROM gantry.caches WHERE last = 'transaction'"))
                .containsExactlyInAnyOrder(Word.CONNECTION_ID, Word.KILL, Word.GANTRY, Word.CACHE, Word.LAST,
                        Word.TRANSACTION);
        assertThat(mentioned("PREPARE s FROM 'x'; EXECUTE IMMEDIATE 'y'; SHOW PROXIED QUERIES"))
                .containsExactlyInAnyOrder(Word.PREPARE, Word.IMMEDIATE, Word.PROXIED);
    }

    @Test
    void leadingWordIsReadAfterBlanksOnly() {
        assertThat(QueryText.of("  \n\tselect 1", SqlMode.DEFAULT).leadsWith("SELECT")).isTrue();
        assertThat(QueryText.of("/* c */ SELECT 1", SqlMode.DEFAULT).leadsWith("SELECT")).isFalse();
        assertThat(QueryText.of("SEL", SqlMode.DEFAULT).leadsWith("SELECT")).isFalse();
    }

    @Test
    void tokensAndClassAreMadeOnceAndShared() {
        QueryText text = QueryText.of("SELECT 1;;", SqlMode.DEFAULT);
        assertThat(text.tokens()).isSameAs(text.tokens());
        assertThat(text.statementTokens()).hasSize(2);
        assertThat(text.statementClass()).isSameAs(text.statementClass());
        assertThat(text.statementClass().kind()).isEqualTo(StatementKind.READ);
    }

    @Test
    void readingTheNextStatementForgetsEverythingOfThePreviousOne() {
        QueryText text = QueryText.of("SET TRANSACTION READ ONLY", SqlMode.DEFAULT);
        assertThat(text.statementClass().kind()).isEqualTo(StatementKind.SESSION_STATE);
        assertThat(text.tokens()).hasSize(4);
        assertThat(text.read("  select gantry_x", SqlMode.of(true))).isSameAs(text);
        assertThat(text.mentions(Word.TRANSACTION)).isFalse();
        assertThat(text.mentions(Word.GANTRY)).isTrue();
        assertThat(text.leadsWith("SELECT")).isTrue();
        assertThat(text.mode()).isEqualTo(SqlMode.of(true));
        assertThat(text.tokens()).hasSize(2);
        assertThat(text.statementClass().kind()).isEqualTo(StatementKind.READ);
    }

    @Test
    void tokensFollowTheSessionsMode() {
        String sql = "SELECT 'a\\' , 'b'";
        // Under NO_BACKSLASH_ESCAPES the first string ends at the backslash; otherwise it runs on to the next quote.
        assertThat(QueryText.of(sql, SqlMode.of(true)).tokens()).hasSize(4);
        assertThat(QueryText.of(sql, SqlMode.DEFAULT).tokens().get(1).end()).isEqualTo(sql.indexOf("'b'") + 1);
    }
}
