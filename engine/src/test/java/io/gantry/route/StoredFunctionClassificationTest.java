package io.gantry.route;

import static io.gantry.route.StatementFlag.STORED_FUNCTION;
import static io.gantry.route.StatementKind.READ;
import static io.gantry.route.StatementKind.WRITE;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Statements that may call a stored function go to the primary; built-ins and look-alikes stay reads. */
class StoredFunctionClassificationTest {

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {
            "SELECT f()",
            "select f(1)",
            "SELECT F (1, 'a')",
            "SELECT app.f(1)",
            "SELECT `app`.`f`(1)",
            "SELECT `f`(1)",
            "SELECT app . f (1)",
            "SELECT \"f\"(1)",
            "SELECT 1 + f(2) AS x FROM t",
            "SELECT UPPER(f(1))",
            "SELECT CONCAT('a', LOWER(my_func(col))) FROM t",
            "SELECT * FROM t WHERE id = f(1)",
            "SELECT * FROM t WHERE id IN (SELECT f(id) FROM u)",
            "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = f(t.a))",
            "SELECT * FROM (SELECT f(1) AS a) dt",
            "SELECT a FROM t UNION SELECT f(1)",
            "(SELECT 1) UNION ALL (SELECT app.f(2))",
            "SELECT 1 INTERSECT SELECT f(1)",
            "SELECT a FROM t ORDER BY f(a)",
            "SELECT a FROM t GROUP BY a HAVING f(a) > 0",
            "SELECT COUNT(*) OVER (PARTITION BY f(a)) FROM t",
            "SELECT /*! f() */",
            "SELECT /*!50000 f() */ 1",
            "/*!50000 SELECT f() */",
            "/*!50001 SELECT app.f(1) */",
            "SELECT /*M!100100 f(1), */ 2",
            "/*M! SELECT f(1) */",
            "SELECT f(a) FROM t",
            "SELECT f(a, b)",
            "SELECT f(a) AS x",
            "WITH c AS (SELECT f(1) AS a) SELECT a FROM c",
            "WITH c (a) AS (SELECT 1) SELECT f(a) FROM c",
            "VALUES ROW(f(1))",
            "TABLE t UNION SELECT f(1)",
            "SELECT CASE WHEN a THEN f(1) ELSE 0 END FROM t",
            "SHOW TABLES WHERE f(Tables_in_app)",
            "SELECT sys.format_bytes(1024)",
            "SELECT status()",
            "SELECT f(",
            "SELECT f(a",
            "SELECT f(a.b)",
            "SELECT f(a); SELECT 1",
            "SELECT c (a) AS x",
            "SELECT 1; SELECT f(1)"})
    void aCallOfAnythingButABuiltInGoesToThePrimary(String sql) {
        StatementClass result = StatementClassifier.classify(sql);
        assertThat(result.flags()).as("flags of %s", sql).contains(STORED_FUNCTION);
        assertThat(result.kind()).as("kind of %s", sql).isEqualTo(WRITE);
        assertThat(result.pinFlag()).as("pins %s", sql).isEmpty();
        assertThat(result.writeCause()).as("cause for %s", sql).contains(STORED_FUNCTION);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {
            // aggregate and window functions
            "SELECT COUNT(*), count(DISTINCT a), SUM(a), AVG(a), MIN(a), MAX(a), GROUP_CONCAT(a ORDER BY a SEPARATOR ',') FROM t",
            "SELECT STD(a), STDDEV(a), STDDEV_POP(a), STDDEV_SAMP(a), VARIANCE(a), VAR_POP(a), VAR_SAMP(a), BIT_AND(a), BIT_OR(a), BIT_XOR(a) FROM t",
            "SELECT ROW_NUMBER() OVER w, RANK() OVER w, DENSE_RANK() OVER w, PERCENT_RANK() OVER w, CUME_DIST() OVER w, NTILE(4) OVER w FROM t WINDOW w AS (ORDER BY a)",
            "SELECT LAG(a, 1) OVER (PARTITION BY b ORDER BY c ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), LEAD(a) OVER (ORDER BY a), FIRST_VALUE(a) OVER (), LAST_VALUE(a) OVER (), NTH_VALUE(a, 2) OVER () FROM t",
            "SELECT MEDIAN(a) OVER (), PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY a) OVER (), PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY a) OVER () FROM t",
            "SELECT JSON_ARRAYAGG(a), JSON_OBJECTAGG(k, v) FROM t",
            // JSON
            "SELECT JSON_EXTRACT(j, '$.a'), JSON_UNQUOTE(JSON_EXTRACT(j, '$.b')), JSON_OBJECT('a', 1), JSON_ARRAY(1, 2), JSON_CONTAINS(j, '1'), JSON_SET(j, '$.a', 2), JSON_VALID(j), JSON_KEYS(j), JSON_LENGTH(j), JSON_TYPE(j), JSON_QUOTE('x'), JSON_MERGE_PATCH(j, j), JSON_SEARCH(j, 'one', 'x') FROM t",
            "SELECT JSON_VALUE(j, '$.a'), JSON_QUERY(j, '$.b'), JSON_EXISTS(j, '$.c'), JSON_DETAILED(j), JSON_COMPACT(j), JSON_OVERLAPS(j, j), JSON_SCHEMA_VALID('{}', j), JSON_ARRAY_INTERSECT(j, j), JSON_NORMALIZE(j), JSON_EQUALS(j, j) FROM t",
            "SELECT jt.* FROM t, JSON_TABLE(t.j, '$[*]' COLUMNS (id FOR ORDINALITY, a VARCHAR(10) PATH '$.a', b DECIMAL(10, 2) PATH '$.b' DEFAULT '0' ON EMPTY, NESTED PATH '$.c[*]' COLUMNS (c INT PATH '$'))) AS jt",
            // spatial
            "SELECT ST_AsText(ST_GeomFromText('POINT(1 1)')), ST_X(POINT(1, 2)), ST_Y(p), ST_Distance(p, q), ST_Contains(g, p), ST_Within(p, g), ST_Buffer(p, 1), ST_Area(g), ST_Centroid(g), ST_Envelope(g), ST_Union(g, h), ST_SRID(p), MBRContains(g, p) FROM t",
            "SELECT ST_Distance_Sphere(p, q), ST_GeomFromGeoJSON('{}'), ST_AsGeoJSON(p), ST_IsValid(g), ST_Length(l), ST_NumPoints(l), ST_PointN(l, 1), LINESTRING(p, q), POLYGON(l), MULTIPOINT(p, q) FROM t",
            // strings
            "SELECT CONCAT(a, b), CONCAT_WS(',', a, b), SUBSTRING(a, 1, 2), SUBSTRING(a FROM 1 FOR 2), SUBSTR(a, 1), LEFT(a, 1), RIGHT(a, 1), MID(a, 1, 2), LENGTH(a), CHAR_LENGTH(a), UPPER(a), LOWER(a), UCASE(a), LCASE(a) FROM t",
            "SELECT TRIM(a), TRIM(LEADING 'x' FROM a), LTRIM(a), RTRIM(a), LPAD(a, 5, '0'), RPAD(a, 5, '0'), REPLACE(a, 'x', 'y'), REPEAT(a, 2), REVERSE(a), INSERT(a, 1, 2, 'x'), LOCATE('x', a), INSTR(a, 'x'), POSITION('x' IN a), FIELD(a, 'x'), FIND_IN_SET('x', a), ELT(1, 'a') FROM t",
            "SELECT FORMAT(a, 2), HEX(a), UNHEX(a), ASCII(a), ORD(a), CHAR(65), CHAR(65 USING utf8mb4), SPACE(3), SOUNDEX(a), QUOTE(a), STRCMP(a, b), REGEXP_REPLACE(a, 'x', 'y'), REGEXP_SUBSTR(a, 'x'), REGEXP_INSTR(a, 'x'), MD5(a), SHA1(a), SHA2(a, 256), TO_BASE64(a), FROM_BASE64(a), COMPRESS(a), UNCOMPRESS(a), CRC32(a), WEIGHT_STRING(a), SFORMAT('{}', a), NATURAL_SORT_KEY(a) FROM t",
            "SELECT CONVERT(a, CHAR(10)), CONVERT(a USING utf8mb4), CAST(a AS CHAR(10) CHARACTER SET utf8mb4), CAST(a AS DECIMAL(10, 2)), CAST(a AS SIGNED), CAST(a AS UNSIGNED INTEGER), CAST(a AS DATETIME(6)), CAST(a AS TIME(3)), CAST(a AS BINARY(4)), CAST(a AS DOUBLE), CAST(a AS FLOAT), CAST(a AS JSON), CAST(a AS DATE) FROM t",
            // numbers
            "SELECT ABS(a), CEIL(a), CEILING(a), FLOOR(a), ROUND(a, 2), TRUNCATE(a, 1), MOD(a, 3), POW(a, 2), POWER(a, 2), SQRT(a), EXP(a), LN(a), LOG(a), LOG10(a), LOG2(a), SIN(a), COS(a), TAN(a), ATAN2(a, b), ATAN(a), PI(), RAND(), RAND(1), SIGN(a), DEGREES(a), RADIANS(a), CONV(a, 10, 16), BIN(a), OCT(a), CRC32C(a) FROM t",
            "SELECT GREATEST(a, b), LEAST(a, b), COALESCE(a, b), IFNULL(a, b), NULLIF(a, b), IF(a, b, c), ISNULL(a), INTERVAL(5, 1, 10), NVL(a, b), NVL2(a, b, c), DECODE_ORACLE(a, 1, 'x') FROM t",
            // date and time
            "SELECT NOW(), NOW(6), CURDATE(), CURTIME(), CURRENT_DATE(), CURRENT_TIME(), CURRENT_TIMESTAMP(), LOCALTIME(), LOCALTIMESTAMP(), SYSDATE(), UTC_DATE(), UTC_TIME(), UTC_TIMESTAMP(), UNIX_TIMESTAMP(), FROM_UNIXTIME(1)",
            "SELECT DATE(d), TIME(d), TIMESTAMP(d), YEAR(d), MONTH(d), DAY(d), HOUR(d), MINUTE(d), SECOND(d), MICROSECOND(d), QUARTER(d), WEEK(d), WEEKDAY(d), DAYOFWEEK(d), DAYOFMONTH(d), DAYOFYEAR(d), DAYNAME(d), MONTHNAME(d), WEEKOFYEAR(d), YEARWEEK(d), LAST_DAY(d) FROM t",
            "SELECT DATE_ADD(d, INTERVAL 1 DAY), DATE_SUB(d, INTERVAL 1 HOUR), ADDDATE(d, 1), SUBDATE(d, 1), ADDTIME(d, '1:00'), SUBTIME(d, '1:00'), DATEDIFF(d, e), TIMEDIFF(d, e), TIMESTAMPDIFF(SECOND, d, e), TIMESTAMPADD(MINUTE, 1, d), EXTRACT(YEAR_MONTH FROM d), DATE_FORMAT(d, '%Y'), TIME_FORMAT(d, '%H'), STR_TO_DATE('1', '%d'), GET_FORMAT(DATE, 'ISO'), MAKEDATE(2024, 1), MAKETIME(1, 2, 3), PERIOD_ADD(202401, 1), SEC_TO_TIME(1), TIME_TO_SEC(d), TO_DAYS(d), FROM_DAYS(1), TO_SECONDS(d), CONVERT_TZ(d, '+00:00', '+01:00'), ADD_MONTHS(d, 1) FROM t",
            // information and miscellaneous
            "SELECT DATABASE(), SCHEMA(), USER(), CURRENT_USER(), SESSION_USER(), SYSTEM_USER(), VERSION(), CHARSET(a), COLLATION(a), COERCIBILITY(a), CURRENT_ROLE(), UUID(), UUID_SHORT(), SYS_GUID(), BENCHMARK(1, 1), SLEEP(0), DEFAULT(a), VALUES(a), INET_ATON('1.2.3.4'), INET6_NTOA(x), IS_IPV4(a), NAME_CONST('a', 1), ROWNUM() FROM t",
            "SELECT AES_ENCRYPT(a, 'k'), AES_DECRYPT(a, 'k'), RANDOM_BYTES(8), KDF('k', 's'), COLUMN_GET(dyn, 'a' AS CHAR), COLUMN_JSON(dyn), BINLOG_GTID_POS('b', 4), EXTRACTVALUE(x, '/a'), UPDATEXML(x, '/a', '<b/>'), LOAD_FILE('/dev/null'), MAKE_SET(1, 'a'), EXPORT_SET(5, 'Y', 'N') FROM t",
            // MySQL-only built-ins
            "SELECT BIN_TO_UUID(b), UUID_TO_BIN(u), IS_UUID(u), ANY_VALUE(a), REGEXP_LIKE(a, 'x'), GROUPING(a), FORMAT_BYTES(1), PS_CURRENT_THREAD_ID(), STATEMENT_DIGEST('SELECT 1'), ICU_VERSION(), ROLES_GRAPHML(), GTID_SUBSET('', ''), ST_LATITUDE(p), ST_GEOHASH(p, 4) FROM t GROUP BY a WITH ROLLUP",
            // keywords followed by "(" that are no calls
            "SELECT * FROM t WHERE a IN (1, 2) AND b NOT IN (SELECT b FROM u) AND EXISTS (SELECT 1) AND NOT (a = 1) AND a = ANY (SELECT 1) AND a = SOME (SELECT 1) AND a > ALL (SELECT 1)",
            "SELECT * FROM t1 JOIN t2 USING (a) LEFT JOIN (t3 JOIN t4 ON (t3.a = t4.a)) ON (t1.a = t3.a) STRAIGHT_JOIN t5 NATURAL JOIN (SELECT 1 AS a) d",
            "SELECT * FROM t USE INDEX (i1) IGNORE INDEX FOR ORDER BY (i2) FORCE KEY FOR JOIN (PRIMARY) WHERE (a, b) = ROW(1, 2)",
            "SELECT * FROM t PARTITION (p0, p1) WHERE MATCH (a, b) AGAINST ('x' IN BOOLEAN MODE)",
            "SELECT * FROM (SELECT 1, 2) AS dt (a, b)",
            "SELECT * FROM (SELECT 1, 2) dt (a, b)",
            "SELECT * FROM (SELECT 1, 2) AS `dt` (`a`, `b`)",
            "WITH c (a, b) AS (SELECT 1, 2) SELECT a, b FROM c",
            "WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 5) SELECT n FROM c",
            "WITH c1 (a) AS (SELECT 1), c2 (b, `c`) AS (SELECT 2, 3) SELECT * FROM c1, c2",
            "SELECT * FROM t WHERE j MEMBER OF ('[1]') OR a LIKE 'x!%' ESCAPE '!'",
            "SELECT SQL_NO_CACHE (1)",
            "SELECT DISTINCT (a) FROM t",
            "SELECT a FROM t WHERE a BETWEEN (1) AND (2) OR a REGEXP ('x') OR a RLIKE ('y') OR a = (1) XOR b = (2) OR a DIV (2) = 1",
            "SELECT a FROM t LIMIT 1",
            "SELECT 'f(1)', \"app.g(2)\" -- h(3)\n",
            "SELECT /* f(1) */ 1 # g(2)",
            "SELECT t.a FROM t WHERE t.b = 1.5 AND t.c = (1)",
            "SELECT * FROM t FOR SYSTEM_TIME AS OF TIMESTAMP('2024-01-01')",
            "SELECT _utf8mb4'a' COLLATE utf8mb4_bin, x'41', b'1', N'x'",
            "SELECT CASE (a) WHEN (1) THEN (2) ELSE (3) END FROM t",
            "(SELECT 1) UNION (SELECT 2) EXCEPT (SELECT 3)",
            "SELECT a FROM t WHERE a = 1 LOCK IN SHARE MODE",
            "SELECT f",
            "SELECT c (a) AS (SELECT 1)"})
    void builtInsAndKeywordsFollowedByParenthesesStayReads(String sql) {
        StatementClass result = StatementClassifier.classify(sql);
        assertThat(result.flags()).as("flags of %s", sql).doesNotContain(STORED_FUNCTION);
        if (!sql.endsWith("SHARE MODE")) {
            assertThat(result.kind()).as("kind of %s", sql).isEqualTo(READ);
        }
    }

    @Test
    void everyListedNameCalledWithArgumentsStaysARead() {
        assertThat(BuiltinFunctions.names()).hasSizeGreaterThan(800);
        for (String name : BuiltinFunctions.names()) {
            for (String spelling : List.of(name, name.toLowerCase(java.util.Locale.ROOT), mixedCase(name))) {
                // LEFT(1) and the like are not valid SQL, but what matters is that no name is taken for a call
                String sql = "SELECT " + spelling + "(1) FROM t";
                assertThat(StatementClassifier.classify(sql).flags()).as(sql).doesNotContain(STORED_FUNCTION);
            }
        }
    }

    @Test
    void theListHasTheBuiltInsOfBothFlavoursAndNoCommonStoredFunctionName() {
        assertThat(BuiltinFunctions.names()).contains("COUNT", "CONCAT", "JSON_EXTRACT", "JSON_TABLE", "ST_ASTEXT",
                "ST_DISTANCE_SPHERE", "ROW_NUMBER", "NOW", "DATE_ADD", "CAST", "CONVERT", "IF", "IN", "EXISTS", "VALUES",
                "CHAR", "INTERVAL", "MATCH", "AGAINST", "ROW", "OVER", "USING", "INDEX", "PARTITION", "BIN_TO_UUID",
                "COLUMN_GET", "NEXTVAL", "LASTVAL", "GET_LOCK", "LAST_INSERT_ID", "DECIMAL", "VARCHAR");
        // non-reserved words MariaDB resolves as stored functions when followed by "(":
        assertThat(BuiltinFunctions.names()).doesNotContain("F", "STATUS", "ACCOUNT", "SOURCE", "FIRST",
                "LAST", "TYPE", "NEXT", "PREVIOUS", "PROCESS");
    }

    @Test
    void writesAreNotFlaggedBecauseTheyGoToThePrimaryAnyway() {
        for (String sql : List.of("INSERT INTO t (a, b) VALUES (f(1), 2)", "CREATE TABLE t (a INT, b DECIMAL(10, 2))",
                "DO f(1)", "UPDATE t SET a = f(1)", "SET @x = f(1)", "CALL p(1)",
                "CREATE FUNCTION f() RETURNS INT DETERMINISTIC BEGIN INSERT INTO t (a) VALUES (1); RETURN g(1); END")) {
            StatementClass result = StatementClassifier.classify(sql);
            assertThat(result.kind()).as(sql).isEqualTo(WRITE);
            assertThat(result.flags()).as(sql).doesNotContain(STORED_FUNCTION);
        }
    }

    @Test
    void aReadIntoAUserVariableKeepsBothReasons() {
        assertThat(StatementClassifier.classify("SELECT f(1) INTO @x").flags())
                .containsExactlyInAnyOrder(STORED_FUNCTION, StatementFlag.SETS_USER_VARIABLES);
    }

    @Test
    void sessionStateChangeThatCallsAFunctionStaysASessionStateChange() {
        // It runs on the primary either way; how settings reach the other backends is the session state's business.
        assertThat(StatementClassifier.classify("SET SESSION sql_mode = f()").kind())
                .isEqualTo(StatementKind.SESSION_STATE);
    }

    @Test
    void aReadThatCallsAStoredFunctionGoesToThePrimaryWithoutPinningTheSession() {
        ServerId primary = new ServerId("db1:3306");
        ServerId replica = new ServerId("db2:3306");
        Router router = new Router(new SplittableRandom(1));
        List<ReplicaCandidate> replicas = List.of(new ReplicaCandidate(replica, 50, true, true));
        RouteDecision call = router.route(StatementClassifier.classify("/*#mode=READONLY*/ SELECT app.f(1)"),
                SessionRouteState.INITIAL, RoutingConfig.DEFAULTS, primary, replicas);
        assertThat(call.server()).isEqualTo(primary);
        assertThat(call.reason()).isEqualTo(RouteReason.NOT_A_READ);
        assertThat(call.cause()).contains(STORED_FUNCTION);
        assertThat(call.pinsSession()).isEqualTo(Optional.empty());
        assertThat(call.describe()).contains("NOT_A_READ(STORED_FUNCTION)");

        SessionRouteState after = SessionRouteState.INITIAL.afterRouting(call);
        RouteDecision next = router.route(StatementClassifier.classify("SELECT CONCAT('a', 'b')"), after,
                RoutingConfig.DEFAULTS, primary, replicas);
        assertThat(next.server()).isEqualTo(replica);
    }

    private static String mixedCase(String name) {
        StringBuilder out = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            out.append(i % 2 == 0 ? Character.toLowerCase(c) : c);
        }
        return out.toString();
    }
}
