package io.gantry.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.route.QueryText;
import io.gantry.route.SqlMode;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class CacheStatementsTest {

    private static Optional<CacheStatement> parse(String sql) {
        return CacheStatements.parse(sql, SqlMode.DEFAULT);
    }

    @Test
    void parsesCreateCacheWithNamePolicyAndRefresh() {
        assertThat(parse("create cache point /* c */ POLICY TTL 30 SECONDS REFRESH EVERY 10 SECONDS "
                + "FROM SELECT c FROM sbtest1 WHERE id = ?;"))
                .contains(new CacheStatement.Create(Optional.of("point"), false, Optional.of(Duration.ofSeconds(30)),
                        Optional.of(Duration.ofSeconds(10)), "SELECT c FROM sbtest1 WHERE id = ?"));
    }

    @Test
    void parsesShallowUnnamedCache() {
        assertThat(parse("CREATE SHALLOW CACHE FROM SELECT * FROM t"))
                .contains(new CacheStatement.Create(Optional.empty(), true, Optional.empty(), Optional.empty(),
                        "SELECT * FROM t"));
    }

    @Test
    void parsesDropShowAndProxied() {
        assertThat(parse("DROP CACHE `point`")).contains(new CacheStatement.Drop("point"));
        assertThat(parse("drop all caches ;")).contains(new CacheStatement.DropAll());
        assertThat(parse("SHOW CACHES")).contains(new CacheStatement.Show());
        assertThat(parse("show proxied queries")).contains(new CacheStatement.ShowProxied());
    }

    @Test
    void malformedCacheStatementsSayWhatWasExpected() {
        assertThat(parse("CREATE CACHE x POLICY TTL 0 SECONDS FROM SELECT 1"))
                .hasValueSatisfying(s -> assertThat(((CacheStatement.Invalid) s).message())
                        .startsWith("POLICY TTL expects n SECONDS, n from 1 to 86400, got '0 SECONDS"));
        assertThat(parse("CREATE CACHE x POLICY TTL 5 SECONDS REFRESH EVERY 5 SECONDS FROM SELECT 1"))
                .hasValueSatisfying(s -> assertThat(((CacheStatement.Invalid) s).message())
                        .contains("must be shorter than the TTL"));
        assertThat(parse("CREATE CACHE x SELECT 1")).hasValueSatisfying(s ->
                assertThat(((CacheStatement.Invalid) s).message()).startsWith("CREATE CACHE expects"));
        assertThat(parse("SHOW CACHES NOW")).hasValueSatisfying(s ->
                assertThat(((CacheStatement.Invalid) s).message()).isEqualTo(
                        "SHOW CACHES expects the end of the statement, got 'NOW'"));
        assertThat(parse("DROP CACHE")).hasValueSatisfying(s ->
                assertThat(((CacheStatement.Invalid) s).message()).isEqualTo(
                        "DROP CACHE expects a cache name, got the end of the statement"));
    }

    @Test
    void ordinaryStatementsAreNotCacheStatements() {
        assertThat(parse("SELECT SQL_NO_CACHE * FROM t")).isEmpty();
        assertThat(parse("CREATE TABLE cache (id INT)")).isEmpty();
        assertThat(parse("DROP TABLE caches")).isEmpty();
        assertThat(parse("SHOW TABLES LIKE 'cache%'")).isEmpty();
        assertThat(CacheStatements.mayBeCacheStatement(QueryText.of("SELECT c FROM sbtest1 WHERE id = 1",
                SqlMode.DEFAULT))).isFalse();
    }

    @Test
    void recognisesExplainLastStatement() {
        assertThat(explainsLast("explain LAST statement;")).isTrue();
        assertThat(explainsLast("EXPLAIN SELECT 1")).isFalse();
        assertThat(explainsLast("SELECT 1")).isFalse();
        assertThat(explainsLast("EXPLAIN LAST")).isFalse();
    }

    private static boolean explainsLast(String sql) {
        return CacheStatements.isExplainLastStatement(QueryText.of(sql, SqlMode.DEFAULT));
    }
}
