package io.gantry.proxy.command;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.route.QueryText;
import io.gantry.route.SqlMode;
import io.gantry.wire.ErrPacket;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class SessionIdentitySqlTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "SELECT CONNECTION_ID()|SELECT 42",
            "select connection_id ( ) as id|select 42 as id",
            "SELECT 'CONNECTION_ID()', CONNECTION_ID()|SELECT 'CONNECTION_ID()', 42",
            "SELECT `connection_id()` FROM t|SELECT `connection_id()` FROM t",
            "SELECT 1 /* CONNECTION_ID() */, CONNECTION_ID()|SELECT 1 /* CONNECTION_ID() */, 42",
            "SELECT my_connection_id()|SELECT my_connection_id()",
            "SELECT CONNECTION_ID(1)|SELECT CONNECTION_ID(1)",
            "SELECT /*! CONNECTION_ID() */|SELECT /*! 42 */",
            "SELECT t.connection_id() FROM t|SELECT t.connection_id() FROM t",
            "SELECT 1|SELECT 1",
    })
    void connectionIdBecomesTheSessionId(String sql, String expected) {
        assertThat(SessionIdentitySql.withSessionId(QueryText.of(sql, SqlMode.DEFAULT), 42)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "SELECT ROW_COUNT()|SELECT IFNULL(3, ROW_COUNT())",
            "select found_rows ( ) fr, row_count()|select IFNULL(12, found_rows ( )) fr, IFNULL(3, row_count())",
            "SELECT ROW_COUNT(), CONNECTION_ID()|SELECT IFNULL(3, ROW_COUNT()), 42",
            "SELECT 'ROW_COUNT()', `found_rows()` FROM t|SELECT 'ROW_COUNT()', `found_rows()` FROM t",
            "SELECT t.row_count() FROM t|SELECT t.row_count() FROM t",
            "SELECT /* FOUND_ROWS() */ 1|SELECT /* FOUND_ROWS() */ 1",
            "SELECT ROW_COUNT(); INSERT INTO t VALUES (1); SELECT ROW_COUNT(), CONNECTION_ID()"
                    + "|SELECT IFNULL(3, ROW_COUNT()); INSERT INTO t VALUES (1); SELECT ROW_COUNT(), 42",
    })
        void theCountsBecomeTheSessionsValuesWhenGiven(String sql, String expected) {
        assertThat(SessionIdentitySql.withSessionValues(QueryText.of(sql, SqlMode.DEFAULT), 42, OptionalLong.of(3),
                OptionalLong.of(12))).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "GET DIAGNOSTICS @r = ROW_COUNT|SET @r = 3",
            "get current diagnostics @n=number, @`r 2` = row_count|SET @n = 0, @`r 2` = 3",
            "GET /* why */ DIAGNOSTICS @r = ROW_COUNT; SELECT @r, ROW_COUNT()|SET @r = 3; SELECT @r, ROW_COUNT()",
    })
    void getDiagnosticsOfTheStatementItemsIsAnsweredWithTheSessionsValues(String sql, String expected) {
        assertThat(SessionIdentitySql.diagnosticsAsSet(QueryText.of(sql, SqlMode.DEFAULT), OptionalLong.of(3)))
                .isEqualTo(expected);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "GET DIAGNOSTICS CONDITION 1 @m = MESSAGE_TEXT",  // the conditions are the server's to answer
            "GET STACKED DIAGNOSTICS @r = ROW_COUNT",          // only inside a handler: the server's error
            "GET DIAGNOSTICS r = ROW_COUNT",                   // a local variable: only inside a stored program
            "GET DIAGNOSTICS @r = ROW_COUNT @n = NUMBER",
            "GET DIAGNOSTICS @r = ROW_COUNT,",
            "GET DIAGNOSTICS @r",
            "SELECT ROW_COUNT()",
    })
    void anyOtherTextIsLeftToTheServer(String sql) {
        assertThat(SessionIdentitySql.diagnosticsAsSet(QueryText.of(sql, SqlMode.DEFAULT), OptionalLong.of(3)))
                .isNull();
    }

    @Test
    void getDiagnosticsIsLeftToTheServerWhenTheRowCountIsNotKnown() {
        assertThat(SessionIdentitySql.diagnosticsAsSet(QueryText.of("GET DIAGNOSTICS @n = NUMBER", SqlMode.DEFAULT),
                OptionalLong.empty())).isNull();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
            "EXECUTE IMMEDIATE 'SELECT ROW_COUNT()'|EXECUTE IMMEDIATE 'SELECT IFNULL(3, ROW_COUNT())'",
            "execute immediate \"SELECT FOUND_ROWS(), 'a''b'\"|execute immediate 'SELECT IFNULL(12, FOUND_ROWS()), ''a''''b'''",
            "EXECUTE IMMEDIATE _latin1 'SELECT ' 'CONNECTION_ID(), ?' USING 1|EXECUTE IMMEDIATE _latin1 'SELECT 42, ?' USING 1",
            "EXECUTE IMMEDIATE 'SELECT \\'x\\', ROW_COUNT()'|EXECUTE IMMEDIATE 'SELECT ''x'', IFNULL(3, ROW_COUNT())'",
            "EXECUTE IMMEDIATE 'SELECT ''\\\\\\\\'', ROW_COUNT()'|EXECUTE IMMEDIATE 'SELECT ''\\\\\\\\'', IFNULL(3, ROW_COUNT())'",
            "PREPARE s FROM 'SELECT ROW_COUNT(), CONNECTION_ID()'|PREPARE s FROM 'SELECT ROW_COUNT(), 42'",
            "SELECT 1; EXECUTE IMMEDIATE 'SELECT ROW_COUNT()'|SELECT 1; EXECUTE IMMEDIATE 'SELECT ROW_COUNT()'",
            "EXECUTE IMMEDIATE @q|EXECUTE IMMEDIATE @q",
            // unterminated (the literal ends at ''a\'' and a quote is left open): the server's error quotes it as sent
            "EXECUTE IMMEDIATE 'SELECT ''a\\'', ROW_COUNT()'|EXECUTE IMMEDIATE 'SELECT ''a\\'', ROW_COUNT()'",
            "SELECT ROW_COUNT(), CONNECTION_ID(), 'open|SELECT ROW_COUNT(), CONNECTION_ID(), 'open",
            "EXECUTE IMMEDIATE CONCAT('SELECT ', 'ROW_COUNT()')|EXECUTE IMMEDIATE CONCAT('SELECT ', 'ROW_COUNT()')",
    })
    void theSqlOfExecuteImmediateIsGivenTheValuesInItsLiteral(String sql, String expected) {
        assertThat(SessionIdentitySql.withSessionValues(QueryText.of(sql, SqlMode.DEFAULT), 42, OptionalLong.of(3),
                OptionalLong.of(12))).isEqualTo(expected);
    }

    @Test
    void underNoBackslashEscapesABackslashInTheRewrittenLiteralStaysOne() {
        QueryText text = QueryText.of("EXECUTE IMMEDIATE 'SELECT ''\\'', ROW_COUNT()'", SqlMode.of(true));
        assertThat(SessionIdentitySql.withSessionValues(text, 42, OptionalLong.of(3), OptionalLong.empty()))
                .isEqualTo("EXECUTE IMMEDIATE 'SELECT ''\\'', IFNULL(3, ROW_COUNT())'");
    }

    @Test
    void aNegativeCountIsWrittenInAsItIsAndAnUnknownOneIsLeftToTheServer() {
        QueryText text = QueryText.of("SELECT 10-ROW_COUNT(), FOUND_ROWS()", SqlMode.DEFAULT);
        assertThat(SessionIdentitySql.withSessionValues(text, 42, OptionalLong.of(-1), OptionalLong.empty()))
                .isEqualTo("SELECT 10-IFNULL(-1, ROW_COUNT()), FOUND_ROWS()");
        assertThat(SessionIdentitySql.withSessionId(text, 42)).isEqualTo(text.sql());
    }

    @Test
    void connectionIdIsReadUnderTheSessionsMode() {
        // Under NO_BACKSLASH_ESCAPES the string ends at the backslash: the call after it is one.
        String sql = "SELECT 'a\\', CONNECTION_ID(), 'b'";
        assertThat(SessionIdentitySql.withSessionId(QueryText.of(sql, SqlMode.of(true)), 42))
                .isEqualTo("SELECT 'a\\', 42, 'b'");
        assertThat(SessionIdentitySql.withSessionId(QueryText.of(sql, SqlMode.DEFAULT), 42)).isEqualTo(sql);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "KILL 7|false|7|",
            "kill connection 7|false|7|",
            "KILL QUERY 12;|true|12|",
            "KILL HARD QUERY 3|true|3|HARD",
            "/* x */ KILL SOFT 9|false|9|SOFT",
            "/*! KILL 7 */|false|7|",
            "/*!50000 kill query 7 */;|true|7|",
            "/*M!100100 KILL CONNECTION 7 */|false|7|",
            "-- why@KILL /* which */ 7 # there|false|7|",
            ";KILL 7;;|false|7|",
    })
    void plainKillsAreRecognisedWhateverTheCommentsAndCase(String sql, boolean queryOnly, long id, String modifier) {
        String text = sql.replace('@', '\n');
        SessionIdentitySql.Kill kill = new SessionIdentitySql.Kill(queryOnly, id, modifier == null ? "" : modifier);
        assertThat(SessionIdentitySql.inspectKill(text, SqlMode.DEFAULT)).isEqualTo(new SessionIdentitySql.KillText.Single(kill));
        assertThat(SessionIdentitySql.parseKill(text)).contains(kill);
    }

    @ParameterizedTest
    @ValueSource(strings = {"SELECT 1", "killed 3", "SELECT 'kill 5'", "SELECT \"KILL 5\"", "SELECT `kill` FROM t",
            "SELECT t.kill FROM t", "SELECT 1 /* KILL 5 */", "SELECT 1 -- KILL 5", "SELECT 1 # KILL 5",
            "SELECT 'it\\'s; KILL 5'", "PREPARE s FROM 'SELECT 1'", "EXECUTE IMMEDIATE 'SELECT ''kill 5'''",
            "SELECT skill FROM t", "SELECT kill_count FROM t", "PREPARE s FROM @kill"})
    void textsWithoutAKillStatementAreLeftAlone(String sql) {
        assertThat(SessionIdentitySql.inspectKill(sql, SqlMode.DEFAULT)).isEqualTo(SessionIdentitySql.KillText.NONE);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "KILL 601 + 1; SELECT 1", "SELECT 1; KILL USER bob",
            "BEGIN NOT ATOMIC KILL 601; END", "CREATE PROCEDURE p() KILL 601", "SELECT 1 FROM t WHERE a = 1 KILL 5",
            "KILL QUERY ID 601", "kill hard query id 601", "KILL USER bob", "KILL USER 'bob'@'%'", "KILL",
            "KILL QUERY x", "KILL 5 + 1", "KILL (5)", "KILL CONNECTION_ID()", "KILL @id", "KILL 0x5", "KILL 5.0",
            "PREPARE s FROM 'KILL 5'", "prepare s from \"kill query 5\"", "PREPARE s FROM 'KI' 'LL 5'",
            "PREPARE s FROM _utf8mb4'KILL 5'", "EXECUTE IMMEDIATE 'KILL 5'", "execute immediate '/*! kill 5 */'",
            "EXECUTE IMMEDIATE 'EXECUTE IMMEDIATE ''KILL 5'''", "SELECT 1; EXECUTE IMMEDIATE 'KILL 5'",
            "KILL 5 /* unclosed"})
    void killsThatAreNotTranslatedAreRefusedWithAClearError(String sql) {
        SessionIdentitySql.KillText result = SessionIdentitySql.inspectKill(sql, SqlMode.DEFAULT);
        assertThat(result).isInstanceOf(SessionIdentitySql.KillText.Refused.class);
        ErrPacket error = ((SessionIdentitySql.KillText.Refused) result).error();
        assertThat(error.errorCode()).isEqualTo(1235);
        assertThat(error.sqlState()).isEqualTo("42000");
        assertThat(error.message()).contains("Gantry").contains("KILL").contains("statement of its own");
        assertThat(SessionIdentitySql.parseKill(sql)).isEqualTo(Optional.empty());
    }

    @Test
    void plainKillsAmongTheStatementsOfAMultiStatementTextAreEachAPart() {
        SessionIdentitySql.Kill kill601 = new SessionIdentitySql.Kill(false, 601);
        assertThat(SessionIdentitySql.inspectKill("KILL 601; SELECT 1", SqlMode.DEFAULT)).isEqualTo(several(
                new SessionIdentitySql.Part.KillPart(kill601), new SessionIdentitySql.Part.SqlPart("SELECT 1")));
        assertThat(SessionIdentitySql.inspectKill("kill 601;select 1", SqlMode.DEFAULT)).isEqualTo(several(
                new SessionIdentitySql.Part.KillPart(kill601), new SessionIdentitySql.Part.SqlPart("select 1")));
        assertThat(SessionIdentitySql.inspectKill("SELECT 1; SELECT 2;KILL QUERY 7 ; SELECT 'a;b'", SqlMode.DEFAULT))
                .isEqualTo(several(new SessionIdentitySql.Part.SqlPart("SELECT 1; SELECT 2"),
                        new SessionIdentitySql.Part.KillPart(new SessionIdentitySql.Kill(true, 7)),
                        new SessionIdentitySql.Part.SqlPart("SELECT 'a;b'")));
        assertThat(SessionIdentitySql.inspectKill("KILL 5; KILL 6;", SqlMode.DEFAULT)).isEqualTo(several(
                new SessionIdentitySql.Part.KillPart(new SessionIdentitySql.Kill(false, 5)),
                new SessionIdentitySql.Part.KillPart(new SessionIdentitySql.Kill(false, 6))));
        assertThat(SessionIdentitySql.inspectKill("SELECT 1; /*! KILL 601 */", SqlMode.DEFAULT))
                .isInstanceOf(SessionIdentitySql.KillText.Several.class);
    }

    private static SessionIdentitySql.KillText several(SessionIdentitySql.Part... parts) {
        return new SessionIdentitySql.KillText.Several(List.of(parts));
    }

    @Test
    void aKillOfAnIdTooLargeForAnySessionIsAnUnknownThread() {
        SessionIdentitySql.KillText result = SessionIdentitySql.inspectKill("KILL 99999999999999999999", SqlMode.DEFAULT);
        assertThat(((SessionIdentitySql.KillText.Refused) result).error().errorCode()).isEqualTo(1094);
    }

    @Test
    void noBackslashEscapesDecidesWhereAStringEnds() {
        // With backslash escapes the string runs to the end; without, it ends at the backslash and a KILL follows.
        String sql = "SELECT 'C:\\'; KILL 5; -- '";
        assertThat(SessionIdentitySql.inspectKill(sql, SqlMode.DEFAULT)).isEqualTo(SessionIdentitySql.KillText.NONE);
        assertThat(SessionIdentitySql.inspectKill(sql, SqlMode.of(true)))
                .as("the KILL is Gantry's, never the server's").isInstanceOf(SessionIdentitySql.KillText.Several.class);
        String prepared = "PREPARE s FROM 'C:\\' 'KILL 5'";
        assertThat(SessionIdentitySql.inspectKill(prepared, SqlMode.of(true)))
                .isInstanceOf(SessionIdentitySql.KillText.Refused.class);
    }

    /**
     * MariaDB skips {@code /*!99999 ... *&#47;} and runs the KILL after it, which the tokenizer reading the comment as
     * code saw inside a string: the KILL reached the server with a Gantry session id taken for a thread id.
     */
    @ParameterizedTest
    @ValueSource(strings = {"SELECT 1 /*!99999 'x */ ; KILL 5", "/*!99999 # */ KILL 5", "/*M! KILL 5 */ KILL 6"})
    void aKillThatSomeServersReadOtherwiseIsRefused(String sql) {
        assertThat(SessionIdentitySql.inspectKill(sql, SqlMode.DEFAULT))
                .isInstanceOf(SessionIdentitySql.KillText.Refused.class);
        assertThat(SessionIdentitySql.inspectKill("/*!99999 KILL 5 */ KILL 5", SqlMode.DEFAULT))
                .isInstanceOf(SessionIdentitySql.KillText.Refused.class);
    }

    /** Under {@code ANSI_QUOTES} {@code "x\"} is a name, and the KILL after it a statement of its own. */
    @Test
    void ansiQuotesDecideWhereADoubleQuotedNameEnds() {
        String sql = "SELECT 1 AS \"x\\\"; KILL 5; -- \"";
        assertThat(SessionIdentitySql.inspectKill(sql, SqlMode.DEFAULT)).isEqualTo(SessionIdentitySql.KillText.NONE);
        assertThat(SessionIdentitySql.inspectKill(sql, SqlMode.of(false, true)))
                .as("the KILL is Gantry's, never the server's").isInstanceOf(SessionIdentitySql.KillText.Several.class);
    }

    @Test
    void theServerGetsTheKillOfItsOwnThreadWithTheSameModifiers() {
        assertThat(new SessionIdentitySql.Kill(false, 7).serverText(601)).isEqualTo("KILL 601");
        assertThat(new SessionIdentitySql.Kill(true, 7, "SOFT").serverText(601)).isEqualTo("KILL SOFT QUERY 601");
    }

    @Test
    void aPreparedKillIsRefusedAndOtherPreparedStatementsAreNot() {
        assertThat(SessionIdentitySql.refusePrepared("KILL ?", SqlMode.DEFAULT)).get()
                .extracting(ErrPacket::errorCode).isEqualTo(1295);
        assertThat(SessionIdentitySql.refusePrepared("KILL QUERY 5", SqlMode.DEFAULT)).isPresent();
        assertThat(SessionIdentitySql.refusePrepared("SELECT 'kill' FROM t WHERE a = ?", SqlMode.DEFAULT)).isEmpty();
    }
}
