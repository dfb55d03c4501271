package io.gantry.route;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.wire.Fuzzing;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The statement classifier and the SQL tokenizer on SQL-like text up to 64 KB: fragments of real statements, quotes,
 * comments, executable comments and hints glued together at random, deep nesting of parentheses, unterminated
 * strings and comments, and arbitrary characters. Neither throws (the classifier is checked without its safety net),
 * both finish quickly, and tokens tile the text in order.
 */
class StatementClassifierFuzzTest {

    private static final String[] FRAGMENTS = {
        "SELECT ", "select ", "INSERT INTO t VALUES ", "UPDATE t SET a = ", "DELETE FROM t ", "WITH c (a) AS (", "SET ",
        "@@session.", "@@global.", "@v := ", "SET @a = ", "BEGIN", "START TRANSACTION READ ONLY", "COMMIT", "ROLLBACK",
        "XA START 'x'", "CALL p(", "DO ", "EXPLAIN ", "ANALYZE ", "SHOW ", "CREATE PROCEDURE p() BEGIN ", "END", "END IF",
        "BEGIN NOT ATOMIC ", "FOR UPDATE", "LOCK IN SHARE MODE", "GET_LOCK('a', 1)", "f(", "db.f(", "`q`(", "(", ")",
        "((((", "))))", ",", ";", ".", "'", "\"", "`", "\\", "'it''s'", "'a\\'b'", "/*", "*/", "/*!", "/*!50001 ", "/*M!",
        "/*#mode=READONLY*/", "/*#mode=READWRITE*/", "-- ", "#", "\n", " ", "\t", "SET STATEMENT x=1 FOR ", "TABLE t",
        "VALUES (1)", "UNION ", "FROM ", "WHERE ", "IN (", "OVER (", "USING (", "1e5", "0x1F", ".5", "é", "\u0000",
        "INTO @x", "INTO OUTFILE 'f'", "CREATE TEMPORARY TABLE t ", "SET NAMES utf8", "USE db", "SET PASSWORD = 'x'",
    };

    @Provide
    Arbitrary<String> sqlLike() {
        Arbitrary<String> fragment = Arbitraries.of(FRAGMENTS);
        Arbitrary<String> glued = fragment.list().ofMaxSize(80).map(parts -> String.join("", parts));
        Arbitrary<String> chars = Arbitraries.strings().withCharRange('\u0000', '\u00FF').ofMaxLength(200);
        Arbitrary<String> nested = Combinators.combine(Arbitraries.integers().between(1, 20_000), fragment, fragment)
                .as((depth, a, b) -> a + "(".repeat(depth) + b + ")".repeat(depth / 2));
        Arbitrary<String> big = Combinators.combine(fragment.list().ofMinSize(1).ofMaxSize(40), Arbitraries.integers()
                .between(1, 64 * 1024)).as((parts, size) -> {
                    String unit = String.join("", parts);
                    return unit.repeat(Math.max(1, size / Math.max(1, unit.length()))).substring(0,
                            Math.min(size, unit.length() * Math.max(1, size / Math.max(1, unit.length()))));
                });
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(6, glued),
                net.jqwik.api.Tuple.of(2, chars),
                net.jqwik.api.Tuple.of(1, nested),
                net.jqwik.api.Tuple.of(1, big)).withoutEdgeCases();
    }

    @Property
    void classifierNeverThrowsAndFinishesQuickly(@ForAll("sqlLike") String sql, @ForAll boolean noBackslashEscapes) {
        Fuzzing.Outcome<StatementClass> outcome = Fuzzing.run("classify " + abbreviated(sql),
                () -> StatementClassifier.classifyUnguarded(sql, noBackslashEscapes));
        if (outcome.failure() != null) {
            throw new AssertionError("classify escaped as " + outcome.failure() + " for " + abbreviated(sql),
                    outcome.failure());
        }
        assertThat(outcome.value()).isNotNull();
        assertThat(StatementClassifier.classify(sql, noBackslashEscapes)).isEqualTo(outcome.value());
        assertThat(outcome.nanos() / 1_000_000).as("ms to classify %d characters", sql.length())
                .isLessThan(2_000);
        assertThat(outcome.allocatedBytes()).as("bytes allocated classifying %d characters", sql.length())
                .isLessThan(Fuzzing.ALLOCATION_BASE + 16L * sql.length());
    }

    @Property
    void tokensTileTheTextInOrder(@ForAll("sqlLike") String sql, @ForAll boolean noBackslashEscapes) {
        Fuzzing.Outcome<List<SqlTokenizer.Token>> outcome = Fuzzing.run("tokenize " + abbreviated(sql),
                () -> SqlTokenizer.tokenize(sql, noBackslashEscapes));
        if (outcome.failure() != null) {
            throw new AssertionError("tokenize escaped as " + outcome.failure() + " for " + abbreviated(sql),
                    outcome.failure());
        }
        assertThat(outcome.nanos() / 1_000_000).as("ms to tokenize %d characters", sql.length()).isLessThan(2_000);
        int previousEnd = 0;
        for (SqlTokenizer.Token token : outcome.value()) {
            assertThat(token.start()).isGreaterThanOrEqualTo(previousEnd);
            assertThat(token.end()).isGreaterThan(token.start()).isLessThanOrEqualTo(sql.length());
            if (token.type() == SqlTokenizer.Type.STRING) {
                token.stringValue(sql, !noBackslashEscapes);
            }
            token.text(sql);
            previousEnd = token.end();
        }
    }

    private static String abbreviated(String sql) {
        String shown = sql.length() <= 200 ? sql : sql.substring(0, 200) + "... (" + sql.length() + " characters)";
        return "'" + shown.replace("\n", "\\n") + "'";
    }
}
