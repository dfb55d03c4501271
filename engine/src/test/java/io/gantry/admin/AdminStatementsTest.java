package io.gantry.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.gantry.admin.AdminStatement.ChangeCdc;
import io.gantry.admin.AdminStatement.ChangeUpstream;
import io.gantry.admin.AdminStatement.FlushHosts;
import io.gantry.admin.AdminStatement.Invalid;
import io.gantry.admin.AdminStatement.SetWeight;
import io.gantry.admin.AdminStatement.ShowBlockedHosts;
import io.gantry.admin.AdminStatement.ShowStatus;
import io.gantry.admin.AdminStatement.ShowTables;
import io.gantry.admin.AdminStatement.StartReplication;
import io.gantry.admin.AdminStatement.StopReplication;
import io.gantry.admin.AdminStatement.TableQuery;
import io.gantry.admin.AdminStatement.WriteToGantryTables;
import io.gantry.route.SqlMode;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class AdminStatementsTest {

    private static final String URLS = "mysql://app:pw@db1:3306/shop|60,mysql://app:pw@db2:3306/shop";

    // ---- admin statements --------------------------------------------------------------------

    static Stream<Arguments> adminStatements() {
        return Stream.of(
                arguments("SHOW GANTRY STATUS", new ShowStatus()),
                arguments("show gantry status", new ShowStatus()),
                arguments("  Show\tGantry\r\n  Status  ;  ", new ShowStatus()),
                arguments("SHOW GANTRY STATUS;;", new ShowStatus()),
                arguments("/* console */ SHOW /*x*/ GANTRY -- why\n STATUS # done", new ShowStatus()),
                arguments("SHOW#c\nGANTRY/**/STATUS", new ShowStatus()),
                arguments("/*!SHOW GANTRY STATUS*/", new ShowStatus()),
                arguments("/*!50700 SHOW GANTRY */ STATUS", new ShowStatus()),
                arguments("/*M!100100 SHOW GANTRY STATUS */;", new ShowStatus()),
                arguments("/*+ hint */ show GANTRY status", new ShowStatus()),
                arguments("SHOW GANTRY BLOCKED HOSTS", new ShowBlockedHosts()),
                arguments("show gantry blocked hosts;", new ShowBlockedHosts()),
                arguments("SHOW GANTRY POOLS", new AdminStatement.ShowPools()),
                arguments("show gantry pools ;", new AdminStatement.ShowPools()),
                arguments("FLUSH GANTRY HOSTS", new FlushHosts(Optional.empty())),
                arguments("flush gantry host '10.0.0.7';", new FlushHosts(Optional.of("10.0.0.7"))),
                arguments("FLUSH GANTRY HOST \"::1\"", new FlushHosts(Optional.of("::1"))),

                arguments("ALTER GANTRY CHANGE UPSTREAM TO '" + URLS + "'", new ChangeUpstream(URLS)),
                arguments("alter gantry change upstream to \"" + URLS + "\";", new ChangeUpstream(URLS)),
                arguments("ALTER GANTRY CHANGE CDC TO '" + URLS + "'", new ChangeCdc(URLS)),
                arguments("ALTER GANTRY CHANGE CDC TO 'mysql://u:p@h:1/d'\n", new ChangeCdc("mysql://u:p@h:1/d")),
                arguments("ALTER GANTRY CHANGE UPSTREAM TO 'mysql://u:it''s@h/d'", new ChangeUpstream("mysql://u:it's@h/d")),
                arguments("ALTER GANTRY CHANGE UPSTREAM TO 'mysql://u:it\\'s@h/d'", new ChangeUpstream("mysql://u:it's@h/d")),
                arguments("ALTER GANTRY CHANGE UPSTREAM TO \"mysql://u:say\"\"hi\"\"@h/d\"",
                        new ChangeUpstream("mysql://u:say\"hi\"@h/d")),
                arguments("ALTER GANTRY CHANGE UPSTREAM TO 'mysql://u:a\\\\b@h/d'", new ChangeUpstream("mysql://u:a\\b@h/d")),
                arguments("ALTER GANTRY CHANGE UPSTREAM TO 'mysql://u:p@h/d' -- a comment with 'quotes'",
                        new ChangeUpstream("mysql://u:p@h/d")),
                arguments("ALTER GANTRY CHANGE UPSTREAM TO 'mysql://a@h1/d,' 'mysql://a@h2/d'",
                        new ChangeUpstream("mysql://a@h1/d,mysql://a@h2/d")),
                arguments("ALTER GANTRY CHANGE UPSTREAM TO ' mysql://a@h1/d '", new ChangeUpstream(" mysql://a@h1/d ")),

                arguments("ALTER GANTRY SET WEIGHT 'db2:3306' TO 80", new SetWeight("db2:3306", 80)),
                arguments("alter gantry set weight \"db2:3306\" to 1;", new SetWeight("db2:3306", 1)),
                arguments("ALTER GANTRY SET WEIGHT 'db2.example.com:3307' TO 100", new SetWeight("db2.example.com:3307", 100)),
                arguments("ALTER GANTRY SET WEIGHT '10.0.0.7:65535' TO 007", new SetWeight("10.0.0.7:65535", 7)),
                arguments("ALTER GANTRY SET WEIGHT '[::1]:3306' TO 5", new SetWeight("[::1]:3306", 5)),
                arguments("ALTER/**/GANTRY/**/SET/**/WEIGHT/**/'h:1'/**/TO/**/50", new SetWeight("h:1", 50)),

                arguments("STOP GANTRY REPLICATION", new StopReplication()),
                arguments("stop gantry replication;", new StopReplication()),
                arguments("START GANTRY REPLICATION", new StartReplication()),
                arguments("Start  Gantry\nReplication -- resume", new StartReplication()),

                arguments("SHOW TABLES FROM gantry", new ShowTables(false, "%")),
                arguments("show tables in GANTRY;", new ShowTables(false, "%")),
                arguments("SHOW TABLES FROM `gantry`", new ShowTables(false, "%")),
                arguments("SHOW FULL TABLES FROM gantry", new ShowTables(true, "%")),
                arguments("SHOW TABLES FROM gantry LIKE 'health\\_%'", new ShowTables(false, "health\\_%")));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("adminStatements")
    void recognisesAdminStatements(String sql, AdminStatement expected) {
        assertThat(AdminStatements.parse(sql)).contains(expected);
    }

    // ---- queries on the gantry tables --------------------------------------------------------

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {
        "SELECT * FROM gantry.upstream_servers",
        "select * from gantry.events",
        "SELECT * FROM gantry.health_history;",
        "SELECT host, port FROM GANTRY.UPSTREAM_SERVERS WHERE health = 'down'",
        "SELECT * FROM `gantry`.`events`",
        "SELECT * FROM `GANTRY`.events",
        "SELECT * FROM gantry.`health_history`",
        "SELECT * FROM gantry . events",
        "SELECT * FROM gantry/**/./**/events",
        "SELECT * FROM gantry.nosuch",
        "SELECT * FROM app.orders JOIN gantry.something s ON 1 = 1",
        "TABLE gantry.events",
        "/* dashboard */ SELECT * FROM gantry.events -- newest first\nORDER BY at DESC",
        "# a comment\nselect count(*) from gantry.events",
        "(SELECT * FROM gantry.events)",
        "((SELECT host FROM gantry.upstream_servers) UNION (SELECT 'x'))",
        "SELECT * FROM (SELECT * FROM gantry.events) e",
        "SELECT (SELECT count(*) FROM gantry.events) AS n",
        "SELECT gantry.events.kind FROM gantry.events",
        "SELECT * FROM app.t WHERE id IN (SELECT server_id FROM gantry.health_history)",
        "WITH recent AS (SELECT * FROM gantry.events WHERE at > now() - INTERVAL 1 HOUR) SELECT * FROM recent",
        "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r, gantry.events",
        "WITH a AS (SELECT 1), b AS (SELECT 2) (SELECT * FROM gantry.events)",
        "SELECT 'it''s', \"x\\\"y\" FROM gantry.events",
        "SELECT /*!40001 SQL_NO_CACHE */ * FROM gantry.events",
        "SELECT * FROM /*!gantry.events*/",
        "SELECT @x := 1 FROM gantry.events",
        "SELECT * FROM gantry.events FOR UPDATE",
        "select\n*\nfrom\ngantry\n.\nevents\n;\n",
    })
    void recognisesQueriesOnTheGantryTables(String sql) {
        assertThat(AdminStatements.parse(sql)).contains(new TableQuery(sql));
    }

    // ---- statements for the servers ----------------------------------------------------------

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {
        "",
        "   ",
        "-- only a comment",
        ";",
        "SELECT 1",
        "select 'gantry.events'",
        "select \"gantry.events\"",
        "select * from app.gantry_events",
        "select * from gantry_events",
        "select * from app.gantry",
        "select * from gantry",
        "select gantry.id from gantry",
        "select * from app.gantry.events",
        "select * from `gantry.events`",
        "select * from `gantry`",
        "select * from gantryx.events",
        "select * from xgantry.events",
        "select @gantry.events",
        "select @@gantry.events",
        "select @'gantry'.events",
        "select * from t -- gantry.events",
        "select * from t # gantry.events",
        "select * from t /* gantry.events */",
        "select * from t where note = 'see gantry.events'",
        "SHOW STATUS LIKE 'gantry%'",
        "SHOW TABLES",
        "SHOW TABLES FROM app",
        "SHOW TABLES FROM gantry_db",
        "SHOW DATABASES LIKE 'gantry'",
        "SHOW GANTRYSTATUS",
        "ALTER TABLE gantry ADD COLUMN x INT",
        "ALTER TABLE app.t COMMENT 'ALTER GANTRY SET WEIGHT'",
        "ALTER `gantry` SET x",
        "STOP SLAVE /* gantry */",
        "START TRANSACTION -- gantry",
        "INSERT INTO app.t VALUES ('gantry.events')",
        "DELETE FROM app.gantry_events",
        "WITH x AS (SELECT * FROM gantry.events) DELETE FROM app.t",
        "WITH x AS (SELECT * FROM gantry.events) UPDATE app.t SET a = 1",
        "CREATE TABLE gantry_log (id INT)",
        "DO 'gantry'",
        "CALL gantry.events()",
        "SELECT * FROM t WHERE a = 'unterminated gantry.events",
        "/* ALTER GANTRY SET WEIGHT 'h:1' TO 0 */ SELECT 1",
        "-- SHOW GANTRY STATUS\nSELECT 1",
        "SELECT 1 -- SHOW GANTRY",
        "SET @gantry = 1",
        "USE gantry",
        "SELECT gantry.f(1)",
    })
    void leavesOrdinaryStatementsToTheServers(String sql) {
        assertThat(AdminStatements.parse(sql)).isEmpty();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "INSERT INTO gantry.events VALUES (1)|INSERT",
        "DELETE FROM gantry.events|DELETE",
        "delete from `gantry`.`events` where id < 10;|DELETE",
        "UPDATE gantry.upstream_servers SET weight = 1|UPDATE",
        "REPLACE INTO gantry.health_history VALUES (1)|REPLACE",
        "TRUNCATE TABLE gantry.health_history|TRUNCATE",
        "DROP TABLE gantry.events|DROP",
        "ALTER TABLE gantry.events ADD COLUMN x INT|ALTER",
    })
    void writesToTheGantryTablesAreAnsweredAsReadOnly(String sql, String verb) {
        assertThat(AdminStatements.parse(sql)).contains(new WriteToGantryTables(verb));
    }

    @Test
    void nullIsNotAnAdminStatement() {
        assertThat(AdminStatements.parse((String) null)).isEmpty();
    }

    // ---- malformed admin statements ----------------------------------------------------------

    static Stream<Arguments> invalidStatements() {
        String list = "TO '<url>[|weight],...'";
        String weight = "ALTER GANTRY SET WEIGHT expects 'host:port' TO 1..100, got ";
        return Stream.of(
                arguments("ALTER GANTRY SET WEIGHT 'db1:3306' TO 0", weight + "'TO 0'"),
                arguments("ALTER GANTRY SET WEIGHT 'db1:3306' TO 101", weight + "'TO 101'"),
                arguments("ALTER GANTRY SET WEIGHT 'db1:3306' TO 1000000000000", weight + "'TO 1000000000000'"),
                arguments("ALTER GANTRY SET WEIGHT 'db1:3306' TO -5", weight + "'TO -5'"),
                arguments("ALTER GANTRY SET WEIGHT 'db1:3306' TO 5.5", weight + "'TO 5.5'"),
                arguments("ALTER GANTRY SET WEIGHT 'db1:3306' TO 0x10", weight + "'TO 0x10'"),
                arguments("ALTER GANTRY SET WEIGHT 'db1:3306' TO '50'", weight + "'TO '50''"),
                arguments("ALTER GANTRY SET WEIGHT 'db1:3306' TO", weight + "'TO'"),
                arguments("ALTER GANTRY SET WEIGHT 'db1:3306' TO;", weight + "'TO'"),
                arguments("ALTER GANTRY SET WEIGHT 'db1:3306' = 50", weight + "'= 50'"),
                arguments("ALTER GANTRY SET WEIGHT 'db1:3306'", weight + "the end of the statement"),
                arguments("ALTER GANTRY SET WEIGHT db1:3306 TO 5", weight + "'db1:3306 TO 5'"),
                arguments("ALTER GANTRY SET WEIGHT 'db1' TO 5", weight + "''db1' TO 5'"),
                arguments("ALTER GANTRY SET WEIGHT 'db1:' TO 5", weight + "''db1:' TO 5'"),
                arguments("ALTER GANTRY SET WEIGHT ':3306' TO 5", weight + "'':3306' TO 5'"),
                arguments("ALTER GANTRY SET WEIGHT 'db1:0' TO 5", weight + "''db1:0' TO 5'"),
                arguments("ALTER GANTRY SET WEIGHT 'db1:65536' TO 5", weight + "''db1:65536' TO 5'"),
                arguments("ALTER GANTRY SET WEIGHT 'db1:33o6' TO 5", weight + "''db1:33o6' TO 5'"),
                arguments("ALTER GANTRY SET WEIGHT 'db 1:3306' TO 5", weight + "''db 1:3306' TO 5'"),
                arguments("ALTER GANTRY SET WEIGHT '::1:3306' TO 5", weight + "''::1:3306' TO 5'"),
                arguments("ALTER GANTRY SET WEIGHT",
                        weight + "the end of the statement"),
                arguments("ALTER GANTRY SET WEIGHT 'db1:3306' TO 5 NOW",
                        "ALTER GANTRY SET WEIGHT 'host:port' TO 1..100 expects the end of the statement, got 'NOW'"),
                arguments("ALTER GANTRY SET WEIGHTS 'db1:3306' TO 5",
                        "ALTER GANTRY SET expects WEIGHT 'host:port' TO 1..100, got 'WEIGHTS 'db1:3306' TO 5'"),
                arguments("ALTER GANTRY SET",
                        "ALTER GANTRY SET expects WEIGHT 'host:port' TO 1..100, got the end of the statement"),

                arguments("ALTER GANTRY CHANGE UPSTREAM TO ''",
                        "ALTER GANTRY CHANGE UPSTREAM expects " + list + ", got an empty list"),
                arguments("ALTER GANTRY CHANGE CDC TO '  '",
                        "ALTER GANTRY CHANGE CDC expects " + list + ", got an empty list"),
                arguments("ALTER GANTRY CHANGE UPSTREAM TO mysql://u@h/d",
                        "ALTER GANTRY CHANGE UPSTREAM expects " + list + ", got 'mysql://u@h/d'"),
                arguments("ALTER GANTRY CHANGE UPSTREAM 'mysql://u@h/d'",
                        "ALTER GANTRY CHANGE UPSTREAM expects " + list + ", got ''mysql://u@h/d''"),
                arguments("ALTER GANTRY CHANGE UPSTREAM TO",
                        "ALTER GANTRY CHANGE UPSTREAM expects " + list + ", got the end of the statement"),
                arguments("ALTER GANTRY CHANGE UPSTREAM TO 'mysql://u@h/d",
                        "ALTER GANTRY CHANGE UPSTREAM expects " + list
                                + ", got an unterminated string literal at ''mysql://u@h/d'"),
                arguments("ALTER GANTRY CHANGE UPSTREAM TO 'mysql://u@h/d' /* unclosed",
                        "ALTER GANTRY CHANGE UPSTREAM " + list
                                + " expects the end of the statement, got an unterminated comment at '/* unclosed'"),
                arguments("ALTER GANTRY CHANGE CDC TO 'mysql://u@h/d', 'mysql://u@h2/d'",
                        "ALTER GANTRY CHANGE CDC " + list + " expects the end of the statement, got ', 'mysql://u@h2/d''"),
                arguments("ALTER GANTRY CHANGE UPSTREAM TO 'mysql://u@h/d'; SELECT 1",
                        "ALTER GANTRY CHANGE UPSTREAM " + list + " expects the end of the statement, got '; SELECT 1'"),
                arguments("ALTER GANTRY CHANGE REPLICAS TO 'x'",
                        "ALTER GANTRY CHANGE expects UPSTREAM TO '<list>' or CDC TO '<list>', got 'REPLICAS TO 'x''"),
                arguments("ALTER GANTRY CHANGE",
                        "ALTER GANTRY CHANGE expects UPSTREAM TO '<list>' or CDC TO '<list>', got the end of the statement"),

                arguments("ALTER GANTRY", "ALTER GANTRY expects CHANGE UPSTREAM TO '<list>', CHANGE CDC TO '<list>' "
                        + "or SET WEIGHT 'host:port' TO 1..100, got the end of the statement"),
                arguments("alter gantry drop server 'db1:3306';", "ALTER GANTRY expects CHANGE UPSTREAM TO '<list>', "
                        + "CHANGE CDC TO '<list>' or SET WEIGHT 'host:port' TO 1..100, got 'drop server 'db1:3306''"),

                arguments("SHOW GANTRY", "SHOW GANTRY expects STATUS, POOLS, CLUSTER, QUERIES or BLOCKED HOSTS, got the end of the statement"),
                arguments("SHOW GANTRY STATS", "SHOW GANTRY expects STATUS, POOLS, CLUSTER, QUERIES or BLOCKED HOSTS, got 'STATS'"),
                arguments("SHOW GANTRY BLOCKED", "SHOW GANTRY BLOCKED expects HOSTS, got the end of the statement"),
                arguments("FLUSH GANTRY", "FLUSH GANTRY expects HOSTS, HOST 'address' or QUERIES, got the end of the "
                        + "statement"),
                arguments("FLUSH GANTRY HOST 10.0.0.7", "FLUSH GANTRY expects HOSTS, HOST 'address' or QUERIES, got "
                        + "'10.0.0.7'"),
                arguments("FLUSH GANTRY HOST ''", "FLUSH GANTRY expects HOSTS, HOST 'address' or QUERIES, got ''''"),
                arguments("FLUSH GANTRY HOSTS '10.0.0.7'",
                        "FLUSH GANTRY HOSTS expects the end of the statement, got ''10.0.0.7''"),
                arguments("show gantry status like 'x%'",
                        "SHOW GANTRY STATUS expects the end of the statement, got 'like 'x%''"),
                arguments("SHOW GANTRY STATUS; SHOW GANTRY STATUS",
                        "SHOW GANTRY STATUS expects the end of the statement, got '; SHOW GANTRY STATUS'"),
                arguments("SHOW GANTRY STATUS\n\n  AND\tMORE  \n",
                        "SHOW GANTRY STATUS expects the end of the statement, got 'AND MORE'"),

                arguments("STOP GANTRY", "STOP GANTRY expects REPLICATION, got the end of the statement"),
                arguments("STOP GANTRY SLAVE", "STOP GANTRY expects REPLICATION, got 'SLAVE'"),
                arguments("START GANTRY REPLICATION NOW",
                        "START GANTRY REPLICATION expects the end of the statement, got 'NOW'"),
                arguments("start gantry 'replication'", "START GANTRY expects REPLICATION, got ''replication''"),

                arguments("SHOW TABLES FROM gantry WHERE 1",
                        "SHOW TABLES FROM gantry expects LIKE 'pattern' or the end of the statement, got 'WHERE 1'"),
                arguments("SHOW TABLES FROM gantry LIKE events",
                        "SHOW TABLES FROM gantry LIKE expects a 'pattern', got 'events'"),

                arguments("SELECT * FROM gantry.events; SELECT 1",
                        "a query on the gantry tables must be a single statement, not followed by another one, "
                                + "got '; SELECT 1'"),
                arguments("SELECT 1; SELECT * FROM gantry.events",
                        "a query on the gantry tables must be a single statement, not followed by another one, "
                                + "got '; SELECT * FROM gantry.events'"),
                arguments("SELECT * FROM gantry.events WHERE kind = 'failover",
                        "a query on the gantry tables has an unterminated string literal at ''failover'"),
                arguments("SELECT * FROM gantry.events /* unclosed",
                        "a query on the gantry tables has an unterminated comment at '/* unclosed'"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("invalidStatements")
    void malformedAdminStatementsAreInvalidWithAMessage(String sql, String message) {
        assertThat(AdminStatements.parse(sql)).contains(new Invalid(message));
    }

    @Test
    void longTextIsCutInMessages() {
        String sql = "ALTER GANTRY CHANGE UPSTREAM 'mysql://u@h/d" + "x".repeat(200) + "'";
        Invalid invalid = (Invalid) AdminStatements.parse(sql).orElseThrow();
        assertThat(invalid.message())
                .startsWith("ALTER GANTRY CHANGE UPSTREAM expects TO '<url>[|weight],...', got ''mysql://u@h/dxxx")
                .endsWith("...'")
                .hasSizeLessThan(140);
    }

    // ---- escapes and options -----------------------------------------------------------------

    @Test
    void backslashIsOrdinaryUnderNoBackslashEscapes() {
        String sql = "ALTER GANTRY CHANGE UPSTREAM TO 'mysql://u:a\\c@h/d'";
        assertThat(AdminStatements.parse(sql, true)).contains(new ChangeUpstream("mysql://u:a\\c@h/d"));
        assertThat(AdminStatements.parse(sql, false)).contains(new ChangeUpstream("mysql://u:ac@h/d"));
        String ends = "ALTER GANTRY CHANGE UPSTREAM TO 'mysql://u@h/d\\'";
        assertThat(AdminStatements.parse(ends, true)).contains(new ChangeUpstream("mysql://u@h/d\\"));
        assertThat(AdminStatements.parse(ends, false)).get().isInstanceOf(Invalid.class);
    }

    /** Under {@code ANSI_QUOTES} (MariaDB reports it) {@code "gantry"} is the schema's name, not a string. */
    @Test
    void doubleQuotedNamesUnderAnsiQuotes() {
        String sql = "SELECT * FROM \"gantry\".\"events\"";
        assertThat(AdminStatements.parse(sql, SqlMode.DEFAULT)).isEmpty();
        assertThat(AdminStatements.parse(sql, new SqlMode(false, true))).contains(new TableQuery(sql));
        assertThat(AdminStatements.parse("ALTER GANTRY CHANGE UPSTREAM TO \"mysql://u@h/d\"", new SqlMode(false, true)))
                .contains(new Invalid("ALTER GANTRY CHANGE UPSTREAM expects TO '<url>[|weight],...', got "
                        + "'\"mysql://u@h/d\"'"));
    }

    /**
     * {@code /*m!} is a plain comment to MariaDB (only {@code /*M!} is its executable comment): the admin parser's
     * own lexer read it as code, so Gantry answered a text the server takes for an empty one.
     */
    @Test
    void aLowerCaseMariaDbMarkerIsAPlainComment() {
        assertThat(AdminStatements.parse("/*m! SHOW GANTRY STATUS */")).isEmpty();
        assertThat(AdminStatements.parse("/*M! SHOW GANTRY STATUS */")).contains(new ShowStatus());
    }

    @Test
    void mysqlEscapeSequencesAreDecoded() {
        assertThat(AdminStatements.parse("ALTER GANTRY CHANGE CDC TO 'a\\0b\\nc\\td\\Ze\\%f\\_g\\qh\\\"i'"))
                .contains(new ChangeCdc("a\0b\nc\td\u001Ae\\%f\\_gqh\"i"));
    }

    @Test
    void aColumnOfATableNamedGantryIsTakenForAGantryTable() {
        // The documented limit: without name resolution, gantry.events is the gantry table events.
        String sql = "SELECT gantry.events FROM gantry";
        assertThat(AdminStatements.parse(sql)).contains(new TableQuery(sql));
    }

    // ---- records -----------------------------------------------------------------------------

    @Test
    void recordsCheckTheirInvariants() {
        assertThatThrownBy(() -> new SetWeight("h:1", 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("weight must be 1..100, was 0");
        assertThatThrownBy(() -> new SetWeight("h:1", 101)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ChangeUpstream(" ")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ChangeCdc("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new TableQuery(null)).isInstanceOf(NullPointerException.class);
        assertThat(Invalid.ERROR_CODE).isEqualTo(1064);
        assertThat(Invalid.SQL_STATE).isEqualTo("42000");
    }
}
