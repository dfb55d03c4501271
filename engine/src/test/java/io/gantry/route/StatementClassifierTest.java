package io.gantry.route;

import static io.gantry.route.StatementFlag.DIAGNOSTICS;
import static io.gantry.route.StatementFlag.INTO_FILE;
import static io.gantry.route.StatementFlag.LOAD_DATA;
import static io.gantry.route.StatementFlag.LOAD_DATA_LOCAL;
import static io.gantry.route.StatementFlag.LOCKING_READ;
import static io.gantry.route.StatementFlag.MIXED_SESSION_STATE;
import static io.gantry.route.StatementFlag.PREVIOUS_STATEMENT;
import static io.gantry.route.StatementFlag.SEQUENCE;
import static io.gantry.route.StatementFlag.SERVER_STATE;
import static io.gantry.route.StatementFlag.SESSION_FUNCTION;
import static io.gantry.route.StatementFlag.SETS_USER_VARIABLES;
import static io.gantry.route.StatementFlag.STORED_FUNCTION;
import static io.gantry.route.StatementFlag.TABLE_LOCK;
import static io.gantry.route.StatementFlag.TEMPORARY_TABLE;
import static io.gantry.route.StatementFlag.USER_LOCK;
import static io.gantry.route.StatementFlag.USES_USER_VARIABLES;
import static io.gantry.route.StatementKind.READ;
import static io.gantry.route.StatementKind.SESSION_STATE;
import static io.gantry.route.StatementKind.TRANSACTION_BEGIN;
import static io.gantry.route.StatementKind.TRANSACTION_END;
import static io.gantry.route.StatementKind.TRANSACTION_SAVEPOINT;
import static io.gantry.route.StatementKind.WRITE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

class StatementClassifierTest {

    private static Arguments c(String sql, StatementKind kind, StatementFlag... flags) {
        EnumSet<StatementFlag> set = EnumSet.noneOf(StatementFlag.class);
        set.addAll(List.of(flags));
        return arguments(sql, kind, set);
    }

    private static void assertClass(String sql, StatementKind kind, EnumSet<StatementFlag> flags) {
        StatementClass result = StatementClassifier.classify(sql);
        assertThat(result.kind()).as("kind of %s", sql).isEqualTo(kind);
        assertThat(result.flags()).as("flags of %s", sql).containsExactlyInAnyOrderElementsOf(flags);
    }

    static Stream<Arguments> plainReads() {
        return Stream.of(
                c("SELECT 1", READ),
                c("select * from t where id = 5", READ),
                c("SeLeCt a FROM t", READ),
                c("  \n\tSELECT 1  ", READ),
                c("(SELECT a FROM t) UNION (SELECT b FROM u)", READ),
                c("((SELECT 1))", READ),
                c("SELECT a FROM t UNION ALL SELECT b FROM u ORDER BY 1 LIMIT 3", READ),
                c("SELECT * FROM t WHERE a IN (SELECT b FROM u)", READ),
                c("SELECT REPLACE(name, 'a', 'b'), INSERT(name, 1, 2, 'x') FROM t", READ),
                c("SELECT found_rows, last_insert_id, get_lock FROM stats", READ),
                c("SELECT t.select, t.update FROM t", READ),
                c("SELECT * FROM t ORDER BY id DESC LIMIT 5", READ),
                c("SELECT * FROM t WINDOW w AS (PARTITION BY a)", READ),
                c("TABLE t", READ),
                c("VALUES ROW(1, 2), ROW(3, 4)", READ),
                c("HELP 'contents'", READ),
                c("SHOW TABLES", READ),
                c("SHOW FULL TABLES FROM db", READ),
                c("SHOW CREATE TABLE t", READ),
                c("SHOW COLUMNS FROM t", READ),
                c("SHOW INDEX FROM t", READ),
                c("SHOW DATABASES", READ),
                c("SHOW TABLE STATUS LIKE 't%'", READ),
                c("SHOW GRANTS FOR CURRENT_USER()", READ),
                c("SHOW ENGINES", READ),
                c("SHOW COLLATION", READ),
                c("DESCRIBE t", READ),
                c("DESC `order`", READ),
                c("DESCRIBE user", READ),
                c("EXPLAIN SELECT * FROM t", READ),
                c("EXPLAIN FORMAT=JSON SELECT * FROM t", READ),
                c("EXPLAIN FORMAT = TREE SELECT 1", READ),
                c("EXPLAIN ANALYZE SELECT * FROM t", READ),
                c("EXPLAIN EXTENDED SELECT 1", READ),
                c("EXPLAIN (SELECT 1)", READ),
                c("DESCRIBE SELECT 1", READ),
                c("EXPLAIN WITH a AS (SELECT 1) SELECT * FROM a", READ),
                c("ANALYZE SELECT * FROM t", READ),
                c("ANALYZE FORMAT=JSON SELECT * FROM t", READ),
                c("SELECT * FROM t WHERE note = 'FOR UPDATE'", READ),
                c("SELECT \"x; DELETE FROM t\"", READ),
                c("SELECT `for update` FROM t", READ),
                c("SELECT 1 -- ; DELETE FROM t", READ),
                c("SELECT 1 # ; DELETE FROM t", READ),
                c("SELECT 1 /* ; DELETE FROM t */", READ),
                c("SELECT 'it''s; DELETE'", READ),
                c("SELECT 'it\\'s; DELETE'", READ),
                c("SELECT `a``b;c` FROM t", READ),
                c("SELECT \"a\"\"b;c\"", READ),
                c("/* app=shop */ SELECT 1", READ),
                c("-- leading\nSELECT 1", READ),
                c("# leading\nSELECT 1", READ),
                c("SELECT /*+ MAX_EXECUTION_TIME(1000) */ a FROM t", READ),
                c("/*!SELECT*/ 1", READ),
                c("/*!50000 SELECT */ 1", READ),
                c("/*M!100100 SELECT 1 */", READ),
                c("SELECT 'a@b.c' AS mail", READ),
                c("SELECT 1 FROM t WHERE a = 'x' -- trailing", READ),
                c("SELECT 'unterminated; DELETE FROM t", READ),
                c("SELECT 1;", READ),
                c("SELECT 1;;", READ),
                c("SELECT 5 - -3", READ),
                c("SELECT ñame FROM tàble", READ),
                c("SELECT CASE WHEN a THEN 1 ELSE 2 END FROM t", READ),
                c("SELECT NOW(), UUID(), DATABASE(), USER()", READ));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("plainReads")
    void plainReadsAreReadsWithoutFlags(String sql, StatementKind kind, EnumSet<StatementFlag> flags) {
        assertClass(sql, kind, flags);
    }

    static Stream<Arguments> ctes() {
        return Stream.of(
                c("WITH a AS (SELECT 1) SELECT * FROM a", READ),
                c("with a as (select 1) select * from a", READ),
                c("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r", READ),
                c("WITH a AS (SELECT 1), b (x, y) AS (SELECT 2, 3) SELECT * FROM a, b", READ),
                c("WITH a AS (SELECT REPLACE(x, 'a', 'b') AS x FROM t) SELECT * FROM a", READ),
                c("WITH a AS (SELECT 1) (SELECT * FROM a)", READ),
                c("WITH a AS (SELECT 1) TABLE a", READ),
                c("(WITH a AS (SELECT 1) SELECT * FROM a)", READ),
                c("WITH a AS (SELECT id FROM t) UPDATE t JOIN a USING (id) SET t.x = 1", WRITE),
                c("WITH a AS (SELECT id FROM t) DELETE FROM t WHERE id IN (SELECT id FROM a)", WRITE),
                c("WITH a AS (SELECT id FROM t FOR UPDATE) SELECT * FROM a", WRITE, LOCKING_READ),
                c("WITH a AS (SELECT 1)", WRITE),
                c("WITH", WRITE),
                c("EXPLAIN ANALYZE WITH a AS (SELECT 1) UPDATE t SET x = 1", WRITE));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("ctes")
    void commonTableExpressionsTakeTheKindOfTheMainStatement(
            String sql, StatementKind kind, EnumSet<StatementFlag> flags) {
        assertClass(sql, kind, flags);
    }

    static Stream<Arguments> writes() {
        return Stream.of(
                c("INSERT INTO t VALUES (1)", WRITE),
                c("insert into t select * from u", WRITE),
                c("UPDATE t SET a = 1", WRITE),
                c("UPDATE t SET a := 1", WRITE),
                c("DELETE FROM t", WRITE),
                c("REPLACE INTO t VALUES (1)", WRITE),
                c("CREATE TABLE t (a INT)", WRITE),
                c("CREATE TABLE event (a INT)", WRITE),
                c("ALTER TABLE t ADD COLUMN b INT", WRITE),
                c("DROP TABLE t", WRITE),
                c("TRUNCATE TABLE t", WRITE),
                c("RENAME TABLE a TO b", WRITE),
                c("CALL p(1)", WRITE),
                c("DO SLEEP(1)", WRITE),
                c("GRANT SELECT ON db.* TO 'u'@'%'", WRITE),
                c("CREATE USER bob@localhost IDENTIFIED BY 'x'", WRITE),
                c("CREATE DEFINER=`root`@`localhost` VIEW v AS SELECT 1", WRITE),
                c("OPTIMIZE TABLE t", WRITE),
                c("ANALYZE TABLE t", WRITE),
                c("CHECKSUM TABLE t", WRITE),
                c("KILL 42", WRITE),
                c("HANDLER t OPEN", WRITE),
                c("PREPARE s FROM 'SELECT 1'", WRITE, StatementFlag.NAMED_PREPARE),
                c("EXECUTE s", WRITE),
                c("EXPLAIN UPDATE t SET a = 1", WRITE),
                c("EXPLAIN DELETE FROM t", WRITE),
                c("SET GLOBAL max_connections = 500", WRITE),
                c("SET @@global.max_connections = 500", WRITE),
                c("SET PERSIST max_connections = 500", WRITE),
                c("SET sql_mode = '', GLOBAL max_connections = 500", WRITE),
                c("SET PASSWORD FOR 'u'@'h' = 'x'", WRITE),
                c("SET DEFAULT ROLE ALL TO 'u'@'h'", WRITE),
                c("START REPLICA", WRITE),
                c("XA END 'x'", WRITE),
                c("XA PREPARE 'x'", WRITE),
                c("LOAD INDEX INTO CACHE t", WRITE),
                c("LOAD DATA INFILE '/tmp/x' INTO TABLE t", WRITE, LOAD_DATA),
                c("LOAD DATA LOCAL INFILE '/tmp/x' INTO TABLE t", WRITE, LOAD_DATA, LOAD_DATA_LOCAL),
                c("LOAD DATA LOW_PRIORITY LOCAL INFILE 'x' INTO TABLE t", WRITE, LOAD_DATA, LOAD_DATA_LOCAL),
                c("load xml local infile 'x' into table t", WRITE, LOAD_DATA, LOAD_DATA_LOCAL),
                c("SET STATEMENT max_statement_time = 1 FOR UPDATE t SET a = 1", WRITE),
                c("BEGIN NOT ATOMIC SELECT 1; SELECT 2; END", WRITE),
                c("SELECT 1 --; DELETE FROM t", WRITE));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("writes")
    void writesAreWrites(String sql, StatementKind kind, EnumSet<StatementFlag> flags) {
        assertClass(sql, kind, flags);
    }

    static Stream<Arguments> notPlainReads() {
        return Stream.of(
                c("SELECT * FROM t WHERE id = 1 FOR UPDATE", WRITE, LOCKING_READ),
                c("select * from t for update nowait", WRITE, LOCKING_READ),
                c("SELECT * FROM t FOR UPDATE SKIP LOCKED", WRITE, LOCKING_READ),
                c("SELECT * FROM t LOCK IN SHARE MODE", WRITE, LOCKING_READ),
                c("SELECT * FROM t FOR SHARE", WRITE, LOCKING_READ),
                c("SELECT * FROM t WHERE id = 1 /*!50000 FOR UPDATE */", WRITE, LOCKING_READ),
                c("SELECT * FROM t INTO OUTFILE '/tmp/t.csv'", WRITE, INTO_FILE),
                c("SELECT a INTO DUMPFILE '/tmp/a' FROM t", WRITE, INTO_FILE),
                c("SELECT GET_LOCK('job', 10)", WRITE, USER_LOCK),
                c("SELECT get_lock ('job', 10)", WRITE, USER_LOCK),
                c("SELECT RELEASE_LOCK('job')", WRITE, USER_LOCK),
                c("SELECT RELEASE_ALL_LOCKS()", WRITE, USER_LOCK),
                c("SELECT IS_USED_LOCK('job'), IS_FREE_LOCK('job')", WRITE, USER_LOCK),
                c("DO GET_LOCK('job', 0)", WRITE, USER_LOCK),
                // s.get_lock is the stored function get_lock of database s, not the built-in
                c("SELECT s.get_lock(1) FROM t AS s", WRITE, STORED_FUNCTION),
                c("SELECT NEXTVAL(s)", WRITE, SEQUENCE),
                c("SELECT NEXT VALUE FOR s", WRITE, SEQUENCE),
                c("SELECT SETVAL(s, 100)", WRITE, SEQUENCE),
                c("CREATE TEMPORARY TABLE tmp (a INT)", WRITE, TEMPORARY_TABLE),
                c("create temporary table tmp select * from t", WRITE, TEMPORARY_TABLE),
                c("CREATE OR REPLACE TEMPORARY TABLE tmp (a INT)", WRITE, TEMPORARY_TABLE),
                c("DROP TEMPORARY TABLE IF EXISTS tmp", WRITE, TEMPORARY_TABLE),
                c("LOCK TABLES t READ, u WRITE", WRITE, TABLE_LOCK),
                c("LOCK TABLE t WRITE", WRITE, TABLE_LOCK),
                c("UNLOCK TABLES", WRITE, TABLE_LOCK),
                c("LOCK INSTANCE FOR BACKUP", WRITE, TABLE_LOCK),
                c("FLUSH TABLES WITH READ LOCK", WRITE, TABLE_LOCK),
                c("FLUSH TABLES t FOR EXPORT", WRITE, TABLE_LOCK),
                c("FLUSH PRIVILEGES", WRITE),
                c("SET @x = 1", WRITE, SETS_USER_VARIABLES),
                c("SET @x := 1, @y = 2", WRITE, SETS_USER_VARIABLES),
                c("set @`odd name` = 1", WRITE, SETS_USER_VARIABLES),
                c("SELECT @x := MAX(id) FROM t", WRITE, SETS_USER_VARIABLES),
                c("SELECT a INTO @a FROM t LIMIT 1", WRITE, SETS_USER_VARIABLES),
                c("SELECT a, b FROM t LIMIT 1 INTO @a, @b", WRITE, SETS_USER_VARIABLES),
                c("SELECT a INTO@a FROM t", WRITE, SETS_USER_VARIABLES),
                c("SET @l = GET_LOCK('x', 1)", WRITE, SETS_USER_VARIABLES, USER_LOCK),
                c("EXPLAIN FORMAT=JSON INTO @plan SELECT * FROM t", WRITE, SETS_USER_VARIABLES),
                c("GET DIAGNOSTICS @n = NUMBER", WRITE, SETS_USER_VARIABLES, PREVIOUS_STATEMENT, DIAGNOSTICS),
                c("GET CURRENT DIAGNOSTICS CONDITION 1 @e = MESSAGE_TEXT", WRITE, SETS_USER_VARIABLES,
                        PREVIOUS_STATEMENT, DIAGNOSTICS),
                c("/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */", WRITE, SETS_USER_VARIABLES));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("notPlainReads")
    void lockingAndSideEffectReadsAreWritesWithTheirReason(
            String sql, StatementKind kind, EnumSet<StatementFlag> flags) {
        assertClass(sql, kind, flags);
    }

    static Stream<Arguments> readsThatNeedTheSession() {
        return Stream.of(
                c("SELECT @x", READ, USES_USER_VARIABLES),
                c("SELECT * FROM t WHERE a = @x", READ, USES_USER_VARIABLES),
                c("SELECT CONCAT('a',@b)", READ, USES_USER_VARIABLES),
                c("SELECT @x = 1", READ, USES_USER_VARIABLES),
                c("SELECT LAST_INSERT_ID()", READ, SESSION_FUNCTION),
                c("select last_insert_id()", READ, SESSION_FUNCTION),
                c("SELECT CONNECTION_ID()", READ, SESSION_FUNCTION),
                c("SELECT @@last_gtid", READ, SESSION_FUNCTION),
                c("SELECT @@session.LAST_GTID", READ, SESSION_FUNCTION),
                c("SELECT PREVIOUS VALUE FOR s", READ, SESSION_FUNCTION),
                c("SELECT LASTVAL(s)", READ, SESSION_FUNCTION),
                c("SELECT @@identity", READ, SESSION_FUNCTION),
                c("SELECT @@session.last_insert_id", READ, SESSION_FUNCTION),
                c("SELECT FOUND_ROWS()", READ, PREVIOUS_STATEMENT),
                c("SELECT ROW_COUNT()", READ, PREVIOUS_STATEMENT),
                c("SELECT SQL_CALC_FOUND_ROWS * FROM t LIMIT 10", READ, StatementFlag.CALC_FOUND_ROWS),
                c("SELECT @@warning_count, @@error_count", READ, PREVIOUS_STATEMENT),
                c("SHOW WARNINGS", READ, PREVIOUS_STATEMENT, StatementFlag.DIAGNOSTICS),
                c("SHOW ERRORS LIMIT 5", READ, PREVIOUS_STATEMENT, StatementFlag.DIAGNOSTICS),
                c("SHOW COUNT(*) WARNINGS", READ, PREVIOUS_STATEMENT, StatementFlag.DIAGNOSTICS),
                c("SHOW PROFILES", READ, PREVIOUS_STATEMENT, StatementFlag.DIAGNOSTICS),
                c("SELECT @@read_only", READ, SERVER_STATE),
                c("SELECT @@GLOBAL.super_read_only", READ, SERVER_STATE),
                c("SELECT @@global.gtid_executed", READ, SERVER_STATE),
                c("SELECT @@session.transaction_isolation", READ),
                c("SELECT @@server_id", READ),
                c("SELECT @@version, @@sql_mode, @@local.time_zone", READ),
                c("SHOW STATUS LIKE 'Threads%'", READ, SERVER_STATE),
                c("SHOW GLOBAL VARIABLES", READ, SERVER_STATE),
                c("SHOW SESSION STATUS", READ, SERVER_STATE),
                c("SHOW VARIABLES LIKE 'read_only'", READ, SERVER_STATE),
                c("SHOW FULL PROCESSLIST", READ, SERVER_STATE),
                c("SHOW MASTER STATUS", READ, SERVER_STATE),
                c("SHOW BINARY LOG STATUS", READ, SERVER_STATE),
                c("SHOW REPLICA STATUS", READ, SERVER_STATE),
                c("SHOW SLAVE STATUS", READ, SERVER_STATE),
                c("SHOW ALL SLAVES STATUS", READ, SERVER_STATE),
                c("SHOW ENGINE INNODB STATUS", READ, SERVER_STATE),
                c("SHOW OPEN TABLES", READ, SERVER_STATE),
                c("EXPLAIN FOR CONNECTION 12", READ, SERVER_STATE),
                c("SELECT MASTER_GTID_WAIT('0-1-5', 1)", READ, SERVER_STATE),
                c("SELECT WAIT_FOR_EXECUTED_GTID_SET('uuid:1-5', 1)", READ, SERVER_STATE));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("readsThatNeedTheSession")
    void readsThatDependOnTheConnectionAreFlagged(String sql, StatementKind kind, EnumSet<StatementFlag> flags) {
        assertClass(sql, kind, flags);
    }

    static Stream<Arguments> sessionState() {
        return Stream.of(
                c("SET NAMES utf8mb4", SESSION_STATE),
                c("SET NAMES 'utf8mb4' COLLATE 'utf8mb4_bin'", SESSION_STATE),
                c("SET CHARACTER SET utf8mb4", SESSION_STATE),
                c("SET CHARSET utf8mb4", SESSION_STATE),
                c("SET autocommit = 0", SESSION_STATE),
                c("set autocommit=1", SESSION_STATE),
                c("SET sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_DATE'", SESSION_STATE),
                c("SET SESSION sql_mode = ''", SESSION_STATE),
                c("SET LOCAL time_zone = '+00:00'", SESSION_STATE),
                c("SET @@session.time_zone = '+00:00'", SESSION_STATE),
                c("SET @@time_zone = '+00:00', @@sql_mode = (SELECT 'a')", SESSION_STATE),
                c("SET TRANSACTION ISOLATION LEVEL READ COMMITTED", SESSION_STATE),
                c("SET SESSION TRANSACTION READ ONLY", SESSION_STATE),
                c("SET ROLE ALL", SESSION_STATE),
                c("SET sql_mode = @old_mode", SESSION_STATE, USES_USER_VARIABLES),
                c("USE shop", SESSION_STATE),
                c("use `my db`", SESSION_STATE),
                c("/*!40101 SET NAMES utf8 */", SESSION_STATE),
                c("/*!40101 SET NAMES utf8 */;", SESSION_STATE),
                c("SET NAMES utf8mb4; SET autocommit = 1; USE shop", SESSION_STATE));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("sessionState")
    void sessionOnlyChangesAreSessionState(String sql, StatementKind kind, EnumSet<StatementFlag> flags) {
        assertClass(sql, kind, flags);
    }

    static Stream<Arguments> transactions() {
        return Stream.of(
                arguments("BEGIN", TRANSACTION_BEGIN, Optional.of(TransactionFlavor.DEFAULT)),
                arguments("begin work", TRANSACTION_BEGIN, Optional.of(TransactionFlavor.DEFAULT)),
                arguments("START TRANSACTION", TRANSACTION_BEGIN, Optional.of(TransactionFlavor.DEFAULT)),
                arguments("START TRANSACTION READ ONLY", TRANSACTION_BEGIN, Optional.of(TransactionFlavor.READ_ONLY)),
                arguments("start transaction read only", TRANSACTION_BEGIN, Optional.of(TransactionFlavor.READ_ONLY)),
                arguments("START TRANSACTION READ WRITE", TRANSACTION_BEGIN, Optional.of(TransactionFlavor.READ_WRITE)),
                arguments("START TRANSACTION WITH CONSISTENT SNAPSHOT", TRANSACTION_BEGIN,
                        Optional.of(TransactionFlavor.DEFAULT)),
                arguments("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY", TRANSACTION_BEGIN,
                        Optional.of(TransactionFlavor.READ_ONLY)),
                arguments("/* tx */ START /* x */ TRANSACTION -- c\n READ ONLY", TRANSACTION_BEGIN,
                        Optional.of(TransactionFlavor.READ_ONLY)),
                arguments("XA START 'xid'", TRANSACTION_BEGIN, Optional.of(TransactionFlavor.READ_WRITE)),
                arguments("XA BEGIN 'xid'", TRANSACTION_BEGIN, Optional.of(TransactionFlavor.READ_WRITE)),
                arguments("COMMIT", TRANSACTION_END, Optional.empty()),
                arguments("commit work", TRANSACTION_END, Optional.empty()),
                arguments("COMMIT AND CHAIN", TRANSACTION_END, Optional.empty()),
                arguments("ROLLBACK", TRANSACTION_END, Optional.empty()),
                arguments("ROLLBACK WORK", TRANSACTION_END, Optional.empty()),
                arguments("XA COMMIT 'xid'", TRANSACTION_END, Optional.empty()),
                arguments("XA ROLLBACK 'xid'", TRANSACTION_END, Optional.empty()),
                arguments("ROLLBACK TO SAVEPOINT sp1", TRANSACTION_SAVEPOINT, Optional.empty()),
                arguments("ROLLBACK WORK TO sp1", TRANSACTION_SAVEPOINT, Optional.empty()),
                arguments("SAVEPOINT sp1", TRANSACTION_SAVEPOINT, Optional.empty()),
                arguments("RELEASE SAVEPOINT sp1", TRANSACTION_SAVEPOINT, Optional.empty()),
                arguments("START TRANSACTION READ ONLY; SELECT 1; COMMIT", TRANSACTION_BEGIN,
                        Optional.of(TransactionFlavor.READ_ONLY)),
                arguments("SELECT 1; COMMIT", TRANSACTION_END, Optional.empty()),
                arguments("COMMIT; BEGIN", TRANSACTION_BEGIN, Optional.of(TransactionFlavor.DEFAULT)),
                arguments("START TRANSACTION READ ONLY; START TRANSACTION", TRANSACTION_BEGIN,
                        Optional.of(TransactionFlavor.DEFAULT)),
                arguments("BEGIN; INSERT INTO t VALUES (1); COMMIT", WRITE, Optional.empty()),
                arguments("START", WRITE, Optional.empty()));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("transactions")
    void transactionControlIsRecognisedWithItsFlavour(
            String sql, StatementKind kind, Optional<TransactionFlavor> flavor) {
        StatementClass result = StatementClassifier.classify(sql);
        assertThat(result.kind()).as("kind of %s", sql).isEqualTo(kind);
        assertThat(result.beginFlavor()).as("flavour of %s", sql).isEqualTo(flavor);
    }

    static Stream<Arguments> hints() {
        return Stream.of(
                arguments("/*#mode=READWRITE*/ SELECT 1", ModeHint.READ_WRITE),
                arguments("/*#mode=READONLY*/ SELECT 1", ModeHint.READ_ONLY),
                arguments("/* #mode = readonly */ SELECT 1", ModeHint.READ_ONLY),
                arguments("/*  #  MODE  =  ReadWrite  */SELECT 1", ModeHint.READ_WRITE),
                arguments("SELECT /*#mode=READONLY*/ 1", ModeHint.READ_ONLY),
                arguments("SELECT 1 /*#mode=READONLY*/", ModeHint.READ_ONLY),
                arguments("SELECT 1 -- #mode=READWRITE", ModeHint.READ_WRITE),
                arguments("#mode=READONLY\nSELECT 1", ModeHint.READ_ONLY),
                arguments("SELECT 1 /*#mode=READONLY*/ /*#mode=READWRITE*/", ModeHint.READ_WRITE),
                arguments("SELECT 1; /*#mode=READWRITE*/ SELECT 2", ModeHint.READ_WRITE),
                arguments("SELECT 1", ModeHint.NONE),
                arguments("/* mode=READONLY */ SELECT 1", ModeHint.NONE),
                arguments("/*#mode=FAST*/ SELECT 1", ModeHint.NONE),
                arguments("/*#mode=READONLYX*/ SELECT 1", ModeHint.NONE),
                arguments("/*#mode=READONLY", ModeHint.READ_ONLY),
                arguments("SELECT '/*#mode=READWRITE*/'", ModeHint.NONE),
                arguments("SELECT `/*#mode=READWRITE*/` FROM t", ModeHint.NONE));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("hints")
    void hintsAreFoundInAnyCommentButNotInLiterals(String sql, ModeHint hint) {
        assertThat(StatementClassifier.classify(sql).hint()).isEqualTo(hint);
    }

    static Stream<Arguments> multiStatements() {
        return Stream.of(
                arguments("SELECT 1; SELECT 2", READ, 2, EnumSet.noneOf(StatementFlag.class)),
                arguments("SELECT 1; INSERT INTO t VALUES (1)", WRITE, 2, EnumSet.noneOf(StatementFlag.class)),
                arguments("SELECT @a; SELECT GET_LOCK('x', 1)", WRITE, 2, EnumSet.of(USES_USER_VARIABLES, USER_LOCK)),
                arguments("SELECT 1;\n\n;  ; SELECT 2;", READ, 2, EnumSet.noneOf(StatementFlag.class)),
                arguments("SET NAMES utf8mb4; SELECT 1", WRITE, 2, EnumSet.of(MIXED_SESSION_STATE)),
                arguments("SET NAMES latin1; INSERT INTO t VALUES (1)", WRITE, 2, EnumSet.of(MIXED_SESSION_STATE)),
                arguments("INSERT INTO t VALUES (1); SET @x = LAST_INSERT_ID()", WRITE, 2,
                        EnumSet.of(SETS_USER_VARIABLES, SESSION_FUNCTION)),
                arguments("CREATE PROCEDURE p() BEGIN SELECT 1; SET @x = 1; END", WRITE, 1,
                        EnumSet.noneOf(StatementFlag.class)),
                arguments("CREATE DEFINER=`u`@`%` PROCEDURE p() BEGIN DECLARE c INT; CASE c WHEN 1 THEN SELECT 1; "
                        + "END CASE; IF c > 0 THEN SELECT CASE WHEN c THEN 1 END; END IF; END; "
                        + "CREATE TEMPORARY TABLE tmp (a INT)", WRITE, 2, EnumSet.of(TEMPORARY_TABLE)),
                arguments("CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW BEGIN IF NEW.a > 0 THEN "
                        + "SET NEW.b = 1; END IF; END", WRITE, 1, EnumSet.noneOf(StatementFlag.class)),
                arguments("CREATE PROCEDURE p() SELECT 1; SELECT 2", WRITE, 2, EnumSet.noneOf(StatementFlag.class)),
                arguments("CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO BEGIN lbl: LOOP LEAVE lbl; END LOOP lbl; "
                        + "END; SELECT 1", WRITE, 2, EnumSet.noneOf(StatementFlag.class)),
                arguments("BEGIN NOT ATOMIC CREATE TEMPORARY TABLE tmp (a INT); BEGIN SELECT 1; END; END; SELECT 2",
                        WRITE, 2, EnumSet.of(TEMPORARY_TABLE)),
                arguments("SET STATEMENT max_statement_time = 1 FOR SELECT * FROM t; SELECT 2", READ, 2,
                        EnumSet.noneOf(StatementFlag.class)));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("multiStatements")
    void multiStatementTextTakesTheStrongestKindAndUnionsFlags(
            String sql, StatementKind kind, int count, EnumSet<StatementFlag> flags) {
        StatementClass result = StatementClassifier.classify(sql);
        assertThat(result.kind()).as("kind").isEqualTo(kind);
        assertThat(result.statementCount()).as("statements").isEqualTo(count);
        assertThat(result.flags()).as("flags").containsExactlyInAnyOrderElementsOf(flags);
    }

    @ParameterizedTest
    @NullAndEmptySource
    @ValueSource(strings = {"   ", ";", ";;;", "/* only a comment */", "-- only a comment", "#", "!!!", "SELEC 1",
            "42", "'just a string'", "(((", ")))", "/*!", "/*M!", "/*", "'unterminated", "`unterminated",
            "\"unterminated", "@", "@@", ":=", "WITH", "DESCRIBE", "EXPLAIN", "\u0000\u0001",
            "SET", "SET 5", "SET (a)", "LOAD", "XA", "GET", "ROLLBACK TO", "END", "CASE", "/*#mode=READONLY*/"})
    void garbageNeverThrowsAndIsNeverARead(String sql) {
        StatementClass result = StatementClassifier.classify(sql);
        assertThat(result.kind()).isNotEqualTo(READ);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   ", ";", "/* only a comment */", "!!!", "SELEC 1", "@@", "/*#mode=READONLY*/"})
    void emptyOrUnknownTextIsAWrite(String sql) {
        assertThat(StatementClassifier.classify(sql).kind()).isEqualTo(WRITE);
    }

    @Test
    void nullIsAWriteWithNoStatements() {
        StatementClass result = StatementClassifier.classify(null);
        assertThat(result.kind()).isEqualTo(WRITE);
        assertThat(result.statementCount()).isZero();
    }

    @Test
    void backslashEndsAStringUnderNoBackslashEscapes() {
        String sql = "SELECT 'C:\\'; DELETE FROM t; -- '";
        assertThat(StatementClassifier.classify(sql).kind()).isEqualTo(READ);
        assertThat(StatementClassifier.classify(sql, true).kind()).isEqualTo(WRITE);
        assertThat(StatementClassifier.classify(sql, true).statementCount()).isEqualTo(2);
    }

    /**
     * A conditional comment ({@code /*!} from version 50700, {@code /*M!}) runs on some servers and is skipped on
     * others: MariaDB 11.4 skips {@code /*!99999} (too new) and {@code /*!50701} (MySQL 5.7 syntax) and runs the
     * DELETE of each text below. Every lexer read such comments as code only, so these writes were reads.
     */
    @ParameterizedTest
    @ValueSource(strings = {
        "SELECT 1 /*!99999 'x */ ; DELETE FROM t",
        "SELECT 1 /*!50701 'x */ ; DELETE FROM t",
        "SELECT 1; /*!99999 # */ DELETE FROM t",
        "SELECT 1; /*!99999 SELECT a FROM b.*/DELETE FROM t",
        "SELECT 1 /*!99999 /* nested */ 'y */ ; DELETE FROM t; -- '",
        "SELECT 1 /*M!100100 'x */ ; DELETE FROM t",
    })
    void aConditionalCommentCannotHideAWrite(String sql) {
        StatementClass result = StatementClassifier.classifyUnguarded(sql, false);
        assertThat(result.kind()).as(sql).isEqualTo(WRITE);
        assertThat(result.statementCount()).as(sql).isEqualTo(2);
    }

    /** Both readings of a conditional comment count, as if the text held the statements of both. */
    @Test
    void aConditionalCommentIsClassifiedRunAndSkipped() {
        assertClass("/*!50700 SELECT 1 */", READ, EnumSet.noneOf(StatementFlag.class));
        assertClass("SELECT * FROM t /*!99999 FOR UPDATE */", WRITE, EnumSet.of(LOCKING_READ));
        assertClass("/*M!100100 SET NAMES utf8 */", SESSION_STATE, EnumSet.noneOf(StatementFlag.class));
        assertThat(StatementClassifier.classify("START TRANSACTION /*!80000 READ ONLY */").beginFlavor())
                .as("MySQL 8 runs the comment, MariaDB skips it").contains(TransactionFlavor.DEFAULT);
        assertThat(StatementClassifier.classify("/*!40101 SET NAMES utf8 */; /*!99999 SELECT 1 */").statementCount())
                .isEqualTo(2);
    }

    /**
     * MariaDB's marker is {@code /*M!} only; the classifier also took {@code /*m!}, a plain comment to MariaDB
     * ({@code SELECT 1 /*m! 'x *&#47; ; DELETE FROM t} deletes).
     */
    @Test
    void aLowerCaseMariaDbMarkerIsAPlainComment() {
        assertThat(StatementClassifier.classify("/*m! DELETE FROM t */ SELECT 1").kind()).isEqualTo(READ);
        assertThat(StatementClassifier.classify("SELECT 1 /*m! 'x */ ; DELETE FROM t").kind()).isEqualTo(WRITE);
    }

    /**
     * Under {@code ANSI_QUOTES} a double-quoted identifier ends at its quote whatever precedes it: MariaDB runs the
     * DELETE below. Without the mode the text is one SELECT of a string.
     */
    @Test
    void doubleQuotesDelimitIdentifiersUnderAnsiQuotes() {
        String sql = "SELECT 1 AS \"x\\\"; DELETE FROM t; -- \"";
        assertThat(StatementClassifier.classify(sql, SqlMode.DEFAULT).kind()).isEqualTo(READ);
        StatementClass ansi = StatementClassifier.classify(sql, new SqlMode(false, true));
        assertThat(ansi.kind()).isEqualTo(WRITE);
        assertThat(ansi.statementCount()).isEqualTo(2);
        assertThat(StatementClassifier.classify("SELECT \"f\"(1)", new SqlMode(false, true)).flags())
                .containsExactly(STORED_FUNCTION);
    }

    @Test
    void accountNamesAreNotUserVariables() {
        assertThat(StatementClassifier.classify("GRANT SELECT ON *.* TO 'app'@'10.0.0.%'").flags()).isEmpty();
        assertThat(StatementClassifier.classify("CREATE USER app@localhost").flags()).isEmpty();
        assertThat(StatementClassifier.classify("DROP USER `app`@`%`").flags()).isEmpty();
    }

    /**
     * Found by StatementClassifierFuzzTest: a transaction start after a write in one text threw a NullPointerException
     * (comparing with the flavour a write does not have); the safety net then dropped every flag, so a temporary
     * table or a user variable set in the same text no longer pinned the session.
     */
    @Test
    void aTransactionStartAfterAWriteKeepsTheTextsFlags() {
        String sql = "CREATE TEMPORARY TABLE t (a INT); SET @a = 1; BEGIN";
        StatementClass result = StatementClassifier.classifyUnguarded(sql, false);
        assertThat(result.kind()).isEqualTo(WRITE);
        assertThat(result.flags()).contains(TEMPORARY_TABLE, SETS_USER_VARIABLES);
        assertThat(result.statementCount()).isEqualTo(3);
        assertThat(StatementClassifier.classify("INSERT INTO t VALUES (1); BEGIN; START TRANSACTION READ ONLY"))
                .isEqualTo(StatementClassifier.classifyUnguarded("INSERT INTO t VALUES (1); BEGIN; START TRANSACTION READ ONLY", false));
    }

    @Test
    void worksOnAnyCharSequence() {
        StringBuilder sql = new StringBuilder("SELECT * FROM t FOR UPDATE");
        assertThat(StatementClassifier.classify(sql).flags()).containsExactly(LOCKING_READ);
    }

    /**
     * Properties over random text that a broken lexer or state machine would violate: classification does not throw
     * (without the safety net that turns exceptions into "write"), does not depend on how wide the blanks are,
     * cannot turn a text that holds a complete write into a read, and ignores what is inside a comment.
     */
    @Test
    void randomInputKeepsTheClassifiersProperties() {
        SplittableRandom random = new SplittableRandom(20240601);
        String alphabet = "SELECT FOR UPDATE INSERT SET @@x @y := ; ' \" ` /* */ /*! /*M! -- # \n ( ) , . BEGIN END "
                + "CASE WITH AS READ ONLY START TRANSACTION \\ GET_LOCK( INTO OUTFILE 0123 é f( db.g( `h`( UNION "
                + "COUNT( IN ( c (a) AS ( ";
        for (int i = 0; i < 20_000; i++) {
            int length = random.nextInt(60);
            StringBuilder text = new StringBuilder(length);
            for (int j = 0; j < length; j++) {
                text.append(random.nextInt(4) != 0
                        ? alphabet.charAt(random.nextInt(alphabet.length()))
                        : (char) random.nextInt(0x3000));
            }
            String sql = text.toString();
            boolean noBackslashEscapes = random.nextBoolean();
            StatementClass result = StatementClassifier.classifyUnguarded(sql, noBackslashEscapes);

            String wider = sql.replace(" ", "  ").replace("\n", " \n\t");
            StatementClass widened = StatementClassifier.classifyUnguarded(wider, noBackslashEscapes);
            assertThat(widened).as("blanks widened: [%s] vs [%s]", sql, wider).isEqualTo(result);

            String afterWrite = "DELETE FROM t WHERE id = 1;" + sql;
            assertThat(StatementClassifier.classifyUnguarded(afterWrite, noBackslashEscapes).kind())
                    .as("[%s]", afterWrite).isEqualTo(WRITE);

            String commented = "SELECT a FROM t /* " + sql.replace("*/", "* /") + "*/";
            StatementClass inComment = StatementClassifier.classifyUnguarded(commented, noBackslashEscapes);
            assertThat(inComment.kind()).as("[%s]", commented).isEqualTo(READ);
            assertThat(inComment.flags()).as("[%s]", commented).isEmpty();
            assertThat(inComment.statementCount()).as("[%s]", commented).isEqualTo(1);
        }
    }

    @Test
    void largeTextIsClassifiedInOnePass() {
        StringBuilder sql = new StringBuilder("INSERT INTO t VALUES ");
        for (int i = 0; i < 100_000; i++) {
            sql.append(i == 0 ? "" : ",").append("(").append(i).append(", 'it''s; a \\' string', @v)");
        }
        sql.append("; SET @done = 1");
        StatementClass result = StatementClassifier.classify(sql);
        assertThat(result.kind()).isEqualTo(WRITE);
        assertThat(result.statementCount()).isEqualTo(2);
        assertThat(result.flags()).containsExactlyInAnyOrder(USES_USER_VARIABLES, SETS_USER_VARIABLES);
    }
}
