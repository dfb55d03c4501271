package io.gantry.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.route.SqlMode;
import io.gantry.route.SqlTokenizer;
import java.util.List;
import org.junit.jupiter.api.Test;

class QueryShapeTest {

    private static QueryShape shape(String sql) {
        return QueryShape.of(sql, SqlMode.DEFAULT, "app");
    }

    @Test
    void literalsAndPlaceholdersHaveOneShape() {
        StringBuilder text = new StringBuilder();
        StringBuilder literals = new StringBuilder();
        assertThat(SqlTokenizer.writeCacheShape("SELECT c  FROM sbtest1 /* x */ WHERE id=42 AND k = 'a''b'",
                SqlMode.DEFAULT, text, literals, new StringBuilder())).isTrue();
        assertThat(text.toString()).isEqualTo("SELECT c FROM sbtest1 WHERE id = ? AND k = ?");
        assertThat(literals.toString()).isEqualTo("42\0'a''b'\0");
        assertThat(shape("SELECT c FROM sbtest1 WHERE id = ? AND k = ?").text()).isEqualTo(text.toString());
    }

    @Test
    void aListOfValuesAfterInHasOneShapeWhateverItsLength() {
        assertThat(shape("SELECT c FROM sbtest1 WHERE id IN (1, 2, 3)").text())
                .isEqualTo(shape("SELECT c FROM sbtest1 WHERE id IN (?)").text())
                .isEqualTo("SELECT c FROM sbtest1 WHERE id IN ( ? )");
    }

    @Test
    void conditionalCommentsHaveNoShape() {
        assertThat(SqlTokenizer.writeCacheShape("SELECT /*!80000 1, */ 2 FROM t", SqlMode.DEFAULT,
                new StringBuilder(), new StringBuilder(), new StringBuilder())).isFalse();
    }

    @Test
    void findsTablesWithAliasesJoinsAndQualifiedNames() {
        assertThat(shape("SELECT * FROM a x, other.b AS y JOIN `c` ON x.id = c.id WHERE x.id IN (SELECT id FROM d)")
                .tables()).containsExactly(new TableName("app", "a"), new TableName("other", "b"),
                new TableName("app", "c"), new TableName("app", "d"));
    }

    @Test
    void findsTheKeyConditionOfAPointSelect() {
        QueryShape point = shape("SELECT c, pad FROM sbtest1 WHERE sbtest1.id = 7 LIMIT 1");
        assertThat(point.keyColumn()).isEqualTo("id");
        assertThat(point.keyParameter()).isEqualTo(0);
        assertThat(point.parameters()).isEqualTo(2);
        assertThat(shape("SELECT 'x', c FROM t WHERE id = ?").keyParameter()).isEqualTo(1);
        assertThat(shape("SELECT c FROM t WHERE id = ? AND k = 1").keyColumn()).isNull();
        assertThat(shape("SELECT c FROM t, u WHERE id = ?").keyColumn()).isNull();
    }

    @Test
    void refusesWhatCannotBeCachedWithTheReason() {
        for (List<String> refused : List.of(
                List.of("SELECT * FROM t FOR UPDATE", "locks rows"),
                List.of("SELECT * FROM t LOCK IN SHARE MODE", "locks rows"),
                List.of("SELECT NOW(), c FROM t", "NOW()"),
                List.of("SELECT c FROM t WHERE d < CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP"),
                List.of("SELECT RAND() FROM t", "RAND()"),
                List.of("SELECT @x FROM t", "user variables"),
                List.of("SELECT c INTO @x FROM t", "user variables"),
                List.of("SELECT myfunc(c) FROM t", "stored function"),
                List.of("SELECT @@version", "server's state"),
                List.of("UPDATE t SET c = 1", "not a read"),
                List.of("SELECT 1; SELECT 2", "several statements"),
                List.of("SELECT 1", "reads no table"),
                List.of("SELECT * FROM mysql.user", "system table"),
                List.of("SHOW TABLES", "only a SELECT"))) {
            assertThatThrownBy(() -> shape(refused.get(0))).as(refused.get(0))
                    .isInstanceOf(CacheException.class)
                    .hasMessageStartingWith("this query cannot be cached: ")
                    .hasMessageContaining(refused.get(1));
        }
    }

    @Test
    void aColumnNamedLikeAFunctionIsNoCall() {
        assertThat(shape("SELECT user, t.now FROM t").tables()).containsExactly(new TableName("app", "t"));
    }
}
