package io.gantry.route;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.route.SqlTokenizer.Token;
import io.gantry.route.SqlTokenizer.Type;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SqlTokenizerTest {

    private static List<String> texts(String sql, boolean noBackslashEscapes) {
        return SqlTokenizer.tokenize(sql, noBackslashEscapes).stream().map(t -> t.text(sql)).toList();
    }

    private static List<Type> types(String sql) {
        return SqlTokenizer.tokenize(sql, false).stream().map(Token::type).toList();
    }

    @Test
    void commentsAreSkippedAndExecutableCommentsAreCode() {
        assertThat(texts("SELECT /* no */ 1 -- no\n, 2 # no\n", false)).containsExactly("SELECT", "1", ",", "2");
        assertThat(texts("SELECT /*!50001 f() */, /*M! g() */ 1", false))
                .containsExactly("SELECT", "f", "(", ")", ",", "g", "(", ")", "1");
        assertThat(texts("SELECT 1--2", false)).as("-- needs a blank after it").containsExactly("SELECT", "1", "-",
                "-", "2");
    }

    @Test
    void stringsFollowNoBackslashEscapes() {
        String sql = "SELECT 'a\\' b', 'c'";
        assertThat(texts(sql, false)).containsExactly("SELECT", "'a\\' b'", ",", "'c'");
        assertThat(texts(sql, true)).containsExactly("SELECT", "'a\\'", "b", "', '", "c", "'");
        Token literal = SqlTokenizer.tokenize("'it''s\\n'", false).get(0);
        assertThat(literal.stringValue("'it''s\\n'", true)).isEqualTo("it's\n");
    }

    @Test
    void tokensHaveTheirTypes() {
        assertThat(types("SET @x := @@session.sql_mode, `q`.a = 1.5e3 + 0x1F"))
                .containsExactly(Type.WORD, Type.USER_VARIABLE, Type.ASSIGN, Type.SYSTEM_VARIABLE, Type.SYMBOL,
                        Type.QUOTED_IDENTIFIER, Type.SYMBOL, Type.WORD, Type.SYMBOL, Type.NUMBER, Type.SYMBOL,
                        Type.WORD);
    }

    /**
     * The admin parser's lexer reported an unterminated comment and this tokenizer dropped it; the server rejects
     * the text (syntax error), so the list shows it, as it shows an unterminated string.
     */
    @Test
    void unterminatedInputEndsAtTheText() {
        assertThat(texts("SELECT 'open", false)).containsExactly("SELECT", "'open");
        assertThat(texts("SELECT /* open", false)).containsExactly("SELECT", "/* open");
        assertThat(SqlTokenizer.tokenize("SELECT /* open", false).get(1).type()).isEqualTo(Type.UNTERMINATED);
        assertThat(SqlTokenizer.tokenize("", false)).isEmpty();
    }

    /**
     * Each case: the SQL (with {@code ~} standing for a newline) and its tokens as {@code TYPE:value}, the value of a
     * string or quoted identifier without its quotes. These were the admin parser's lexer's cases; it read
     * {@code 1e5} as a word and {@code 5.} as {@code 5} and {@code .}, and the other lexers read both as one number,
     * as the server does ({@code SELECT 5.} answers 5, {@code SELECT 1e5} 100000).
     */
    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', quoteCharacter = '^', value = {
        "SELECT a.b, 12 FROM t        | WORD:SELECT WORD:a SYMBOL:. WORD:b SYMBOL:, NUMBER:12 WORD:FROM WORD:t",
        "`gantry`.`ev``ents`          | QUOTED_IDENTIFIER:gantry SYMBOL:. QUOTED_IDENTIFIER:ev`ents",
        "'it''s' \"a\"\"b\"           | STRING:it's STRING:a\"b",
        "'a\\'b' 'c\\\\d'             | STRING:a'b STRING:c\\d",
        "x -- comment~y               | WORD:x WORD:y",
        "x --~y                       | WORD:x WORD:y",
        "x --y                        | WORD:x SYMBOL:- SYMBOL:- WORD:y",
        "x # comment 'quote~y         | WORD:x WORD:y",
        "x /* c 'q */ y               | WORD:x WORD:y",
        "x /*+ hint */ y              | WORD:x WORD:y",
        "x /*!50700 y */ z            | WORD:x WORD:y WORD:z",
        "x /*!y*/ z                   | WORD:x WORD:y WORD:z",
        "x /*M!100100 y */ z          | WORD:x WORD:y WORD:z",
        "a*/b                         | WORD:a SYMBOL:* SYMBOL:/ WORD:b",
        "@v @@global.x @'q'.r         | USER_VARIABLE:@v SYSTEM_VARIABLE:@@global.x USER_VARIABLE:@'q' SYMBOL:. WORD:r",
        "5.5 5. .5 1e5 1.5E-3 0x1F    | NUMBER:5.5 NUMBER:5. NUMBER:.5 NUMBER:1e5 NUMBER:1.5E-3 WORD:0x1F",
        "café $x _y                   | WORD:café WORD:$x WORD:_y",
        "'open                        | UNTERMINATED:'open",
        "x 'a\\'                      | WORD:x UNTERMINATED:'a\\'",
        "`open                        | UNTERMINATED:`open",
        "x /* open                    | WORD:x UNTERMINATED:/* open",
        "@'open                       | UNTERMINATED:@'open",
    })
    void tokenizes(String sql, String expected) {
        assertThat(render(sql.replace('~', '\n'), SqlMode.DEFAULT)).isEqualTo(expected);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', quoteCharacter = '^', value = {
        "'a\\'     | STRING:a\\",
        "'a\\''b'  | STRING:a\\'b",
        "\"\\\"    | STRING:\\",
    })
    void backslashIsOrdinaryUnderNoBackslashEscapes(String sql, String expected) {
        assertThat(render(sql, SqlMode.of(true))).isEqualTo(expected);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', value = {
        "ab  'cd' -- x | 0-2 4-8",
        "/*c*/x        | 5-6",
    })
    void tokensKnowWhereTheyAre(String sql, String expected) {
        assertThat(SqlTokenizer.tokenize(sql, false).stream().map(t -> t.start() + "-" + t.end())
                .collect(Collectors.joining(" "))).isEqualTo(expected);
    }

    /**
     * A number ends where the server's does: after its fraction and exponent. The old tokenizer glued what follows
     * ({@code 5.5abc} one word); the server reads {@code SELECT 5.5abc} as 5.5 named abc and {@code SELECT t.1e5}
     * as the column {@code 1e5} of {@code t}.
     */
    @Test
    void numbersEndWhereTheServersNumbersEnd() {
        assertThat(render("5.5abc 1e5x 12e 0b101 1abc", SqlMode.DEFAULT))
                .isEqualTo("NUMBER:5.5 WORD:abc NUMBER:1e5 WORD:x WORD:12e WORD:0b101 WORD:1abc");
        assertThat(render("t.1e5 t.5a t .5 `t`.5", SqlMode.DEFAULT)).isEqualTo(
                "WORD:t SYMBOL:. WORD:1e5 WORD:t SYMBOL:. WORD:5a WORD:t NUMBER:.5 QUOTED_IDENTIFIER:t NUMBER:.5");
    }

    /**
     * Blanks are the server's six (space, tab, newline, vertical tab, form feed, carriage return): the classifier's
     * lexer took every control character for a blank and this tokenizer took Java's whitespace ({@code \u001C},
     * {@code \u3000}); to MariaDB {@code SELECT\u00011} is a syntax error and {@code 1\u3000AS} one name.
     */
    @Test
    void blanksAreTheServersBlanks() {
        assertThat(texts("SELECT\u000B1\f\r", false)).containsExactly("SELECT", "1");
        assertThat(types("SELECT\u00011\u001C")).containsExactly(Type.WORD, Type.SYMBOL, Type.NUMBER, Type.SYMBOL);
        assertThat(texts("SELECT 1\u3000AS x", false)).containsExactly("SELECT", "1\u3000AS", "x");
    }

    /**
     * {@code --} starts a comment before a blank or a control character ({@code \u0001}, {@code \u007F}), as the
     * server's lexer and the classifier's had it; this tokenizer wanted Java whitespace.
     */
    @Test
    void aDashCommentNeedsABlankOrAControlCharacterAfterIt() {
        assertThat(texts("SELECT 1 --\u0001, 2\n, 3", false)).containsExactly("SELECT", "1", ",", "3");
        assertThat(texts("SELECT 1 --\u007F, 2\n, 3", false)).containsExactly("SELECT", "1", ",", "3");
        assertThat(texts("SELECT 1 --\u00A0, 2", false)).containsExactly("SELECT", "1", "-", "-", "\u00A0", ",",
                "2");
    }

    /**
     * Only {@code /*M!} is MariaDB's executable comment: the classifier's and the admin parser's lexers also took
     * {@code /*m!}, which MariaDB treats as a plain comment ({@code SELECT 1 /*m! , 2 *&#47;} answers one column).
     */
    @Test
    void aLowerCaseMariaDbMarkerIsAPlainComment() {
        assertThat(texts("SELECT 1 /*m! , 2 */", false)).containsExactly("SELECT", "1");
        assertThat(texts("SELECT 1 /*M! , 2 */", false)).containsExactly("SELECT", "1", ",", "2");
    }

    /**
     * A version is 5 digits, or 6 when a sixth follows; with fewer, the digits are code (MariaDB answers
     * {@code SELECT 1 /*!1234 , 2 *&#47;} with a syntax error near {@code 1234}). The other lexers skipped any digits.
     */
    @Test
    void versionDigitsAreFiveOrSix() {
        assertThat(texts("SELECT /*!1234 x */", false)).containsExactly("SELECT", "1234", "x");
        assertThat(texts("SELECT /*!40101 x */", false)).containsExactly("SELECT", "x");
        assertThat(texts("SELECT /*!1001001 x */", false)).containsExactly("SELECT", "1", "x");
    }

    /**
     * A conditional comment (a version from 50700 up, or {@code /*M!}) is run by some servers and skipped by others;
     * skipped, it ends at its first {@code *&#47;} after at most one nested comment. Read as code,
     * {@code 'x *&#47; ; DELETE FROM t} is one unterminated string; MariaDB skips the comment and deletes.
     */
    @Test
    void conditionalCommentsCanBeReadAsSkipped() {
        String sql = "SELECT 1 /*!99999 'x */ ; DELETE FROM t";
        assertThat(read(sql, true)).isEqualTo("WORD:SELECT NUMBER:1 UNTERMINATED:'x */ ; DELETE FROM t");
        assertThat(read(sql, false)).isEqualTo("WORD:SELECT NUMBER:1 COMMENT:/*!99999 'x */ SYMBOL:; WORD:DELETE "
                + "WORD:FROM WORD:t");
        assertThat(read("/*!99999 /* inner */ x */ y", false)).isEqualTo("COMMENT:/*!99999 /* inner */ x */ WORD:y");
        assertThat(read("/*!99999 /* inner", false)).isEqualTo("UNTERMINATED:/*!99999 /* inner");
        assertThat(read("/*M! x */ y", false)).isEqualTo("COMMENT:/*M! x */ WORD:y");
        assertThat(read("/*!50699 x */ y", false)).as("runs on every supported server").isEqualTo("WORD:x WORD:y");
        assertThat(read("/*! x */ y", false)).isEqualTo("WORD:x WORD:y");
    }

    @Test
    void onlyConditionalCommentsAreNoticed() {
        for (String sql : List.of("/*!50700 x */", "/*!100100 x */", "/*M! x */", "/*M!100100 x */", "a /*!99999")) {
            assertThat(sawConditional(sql)).as(sql).isTrue();
        }
        for (String sql : List.of("/*!50699 x */", "/*! x */", "/*!1234 x */", "/*m! x */", "/* !50700 */",
                "'/*!50700'")) {
            assertThat(sawConditional(sql)).as(sql).isFalse();
        }
    }

    /**
     * Under {@code ANSI_QUOTES} (MariaDB reports it in the status flags) {@code "..."} is an identifier, where a
     * backslash is an ordinary character: MariaDB runs the DELETE of {@code SELECT 1 AS "x\"; DELETE FROM t; -- "}.
     */
    @Test
    void doubleQuotesDelimitIdentifiersUnderAnsiQuotes() {
        String sql = "SELECT 1 AS \"x\\\"; DELETE FROM t; -- \"";
        assertThat(render(sql, SqlMode.DEFAULT)).isEqualTo("WORD:SELECT NUMBER:1 WORD:AS STRING:x\"; DELETE FROM t; -- ");
        assertThat(render(sql, new SqlMode(false, true))).isEqualTo(
                "WORD:SELECT NUMBER:1 WORD:AS QUOTED_IDENTIFIER:x\\ SYMBOL:; WORD:DELETE WORD:FROM WORD:t SYMBOL:;");
        assertThat(render("@\"a\\\" 1", new SqlMode(false, true))).isEqualTo("USER_VARIABLE:@\"a\\\" NUMBER:1");
    }

    /**
     * {@code \%} and {@code \_} keep their backslash, as the server keeps it (MariaDB: {@code SELECT 'a\%b'} is
     * {@code a\%b}); the admin parser's lexer had it so and this tokenizer dropped the backslash.
     */
    @Test
    void percentAndUnderscoreEscapesKeepTheirBackslash() {
        String sql = "'a\\%b\\_c\\qd\\Ze'";
        assertThat(SqlTokenizer.tokenize(sql, false).get(0).stringValue(sql, true)).isEqualTo("a\\%b\\_cqd\u001Ae");
    }

    /** {@code @'q'.r} is the variable {@code @'q'} and then {@code .r}, as the server reads it (a syntax error). */
    @Test
    void variablesEndWhereTheServerEndsThem() {
        assertThat(render("@a.b @`x y` @@`version` @@session.`sql_mode` @'q'.r", SqlMode.DEFAULT)).isEqualTo(
                "USER_VARIABLE:@a.b USER_VARIABLE:@`x y` SYSTEM_VARIABLE:@@`version` "
                        + "SYSTEM_VARIABLE:@@session.`sql_mode` USER_VARIABLE:@'q' SYMBOL:. WORD:r");
    }

    private static String render(String sql, SqlMode mode) {
        return SqlTokenizer.tokenize(sql, mode).stream().map(t -> t.type() + ":" + value(sql, t, mode))
                .collect(Collectors.joining(" "));
    }

    private static String value(String sql, Token token, SqlMode mode) {
        return switch (token.type()) {
            case STRING -> token.stringValue(sql, !mode.noBackslashEscapes());
            case QUOTED_IDENTIFIER -> token.identifier(sql);
            default -> token.text(sql);
        };
    }

    /** Every token, comments included, with conditional comments run or skipped. */
    private static String read(String sql, boolean runConditionalComments) {
        SqlTokenizer lexer = new SqlTokenizer(sql, SqlMode.DEFAULT, runConditionalComments);
        StringBuilder out = new StringBuilder();
        for (Type type = lexer.next(); type != null; type = lexer.next()) {
            out.append(out.length() == 0 ? "" : " ").append(type).append(':')
                    .append(sql, lexer.start(), lexer.end());
        }
        return out.toString();
    }

    private static boolean sawConditional(String sql) {
        SqlTokenizer lexer = new SqlTokenizer(sql, SqlMode.DEFAULT, true);
        while (lexer.next() != null) {
            // read to the end
        }
        return lexer.sawConditionalComment();
    }

    private static String digestShape(String sql) {
        StringBuilder shape = new StringBuilder();
        return SqlTokenizer.writeDigestShape(sql, SqlMode.DEFAULT, shape) ? shape.toString() : null;
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "SELECT * FROM t WHERE id IN (1, 2, 3)                | SELECT * FROM t WHERE id IN ( ? )",
        "select * from t where id in ('a')  /* c */           | select * from t where id in ( ? )",
        "SELECT * FROM t WHERE id IN (?, ?, ?) AND k = 'x'    | SELECT * FROM t WHERE id IN ( ? ) AND k = ?",
        "SELECT * FROM t WHERE id NOT IN (1,2) OR id IN (3)   | SELECT * FROM t WHERE id NOT IN ( ? ) OR id IN ( ? )",
        "SELECT * FROM t WHERE id IN (1, a, 2)                | SELECT * FROM t WHERE id IN ( ? , a , ? )",
        "SELECT * FROM t WHERE id IN (SELECT id FROM u)       | SELECT * FROM t WHERE id IN ( SELECT id FROM u )",
        "SELECT f(1, 2), 'x' -- note                          | SELECT f ( ? , ? ) , ?",
        "INSERT INTO t VALUES (1, 'a')                        | INSERT INTO t VALUES ( ? , ? )",
    })
    void digestShapesCollapseInListsAndKeepEverythingElseAsTheCacheShapeDoes(String sql, String shape) {
        assertThat(digestShape(sql.strip())).isEqualTo(shape.strip());
    }

    /** The cache's shape, its literals (separated by '|') and its lists' lengths, joined by " / ". */
    private static String cacheShape(String sql) {
        StringBuilder shape = new StringBuilder();
        StringBuilder literals = new StringBuilder();
        StringBuilder lengths = new StringBuilder();
        return SqlTokenizer.writeCacheShape(sql, SqlMode.DEFAULT, shape, literals, lengths)
                ? shape + " / " + literals.toString().replace('\0', '|') + " / " + lengths : null;
    }

    @ParameterizedTest
    @CsvSource(delimiter = '#', value = {
        "SELECT * FROM t WHERE id IN (1, 2, 3) # SELECT * FROM t WHERE id IN ( ? ) / 1|2|3| / 3,",
        "SELECT * FROM t WHERE id IN (?, ?) AND k = 'x' # SELECT * FROM t WHERE id IN ( ? ) AND k = ? / 'x'| / 2,",
        "SELECT * FROM t WHERE a IN (1, 2) OR b IN (3) # SELECT * FROM t WHERE a IN ( ? ) OR b IN ( ? ) / 1|2|3| / 2,1,",
        "SELECT * FROM t WHERE a IN (1) OR b IN (2, 3) # SELECT * FROM t WHERE a IN ( ? ) OR b IN ( ? ) / 1|2|3| / 1,2,",
        "SELECT * FROM t WHERE id IN (1, a, 2) # SELECT * FROM t WHERE id IN ( ? , a , ? ) / 1|2| / 1,",
        "SELECT * FROM t WHERE id IN (SELECT 1) # SELECT * FROM t WHERE id IN ( SELECT ? ) / 1| / ",
        "SELECT * FROM t WHERE id = 7 # SELECT * FROM t WHERE id = ? / 7| / ",
        "SELECT * FROM t WHERE id IN (1, 2 # SELECT * FROM t WHERE id IN ( ? / 1|2| / 2,",
    })
    void cacheShapesCollapseInListsAndCountTheirValues(String sql, String expected) {
        assertThat(cacheShape(sql.strip()).strip()).isEqualTo(expected.strip());
    }

    @Test
    void aDigestShapeIsRefusedWhereTheCacheShapeIs() {
        assertThat(digestShape("SELECT 'unterminated")).isNull();
        assertThat(digestShape("SELECT /*!80000 1 */ 2")).isNull();
    }
}
