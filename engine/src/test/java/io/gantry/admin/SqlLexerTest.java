package io.gantry.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.admin.SqlLexer.Kind;
import io.gantry.admin.SqlLexer.Token;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SqlLexerTest {

    /**
     * Each case: the SQL (with {@code ~} standing for a newline) and its tokens as
     * {@code KIND:text} separated by spaces.
     */
    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', quoteCharacter = '^', value = {
        "SELECT a.b, 12 FROM t        | WORD:SELECT WORD:a SYMBOL:. WORD:b SYMBOL:, NUMBER:12 WORD:FROM WORD:t",
        "`gantry`.`ev``ents`          | QUOTED_IDENT:gantry SYMBOL:. QUOTED_IDENT:ev`ents",
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
        "@v @@global.x @'q'.r         | VARIABLE:@v VARIABLE:@@global.x VARIABLE:@'q' SYMBOL:. WORD:r",
        "5.5 5. 1e5 0x1F              | NUMBER:5.5 NUMBER:5 SYMBOL:. WORD:1e5 WORD:0x1F",
        "café $x _y                   | WORD:café WORD:$x WORD:_y",
        "'open                        | ERROR:an unterminated string literal",
        "x 'a\\'                      | WORD:x ERROR:an unterminated string literal",
        "`open                        | ERROR:an unterminated quoted identifier",
        "x /* open                    | WORD:x ERROR:an unterminated comment",
        "@'open                       | ERROR:an unterminated quoted variable",
    })
    void tokenizes(String sql, String expected) {
        assertThat(render(SqlLexer.tokenize(sql.replace('~', '\n'), true))).isEqualTo(expected);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', quoteCharacter = '^', value = {
        "'a\\'     | STRING:a\\",
        "'a\\''b'  | STRING:a\\'b",
        "\"\\\"    | STRING:\\",
    })
    void backslashIsOrdinaryWithoutEscapes(String sql, String expected) {
        assertThat(render(SqlLexer.tokenize(sql, false))).isEqualTo(expected);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', value = {
        "ab  'cd' -- x | 0-2 4-8",
        "/*c*/x        | 5-6",
    })
    void tokensKnowWhereTheyAre(String sql, String expected) {
        List<Token> tokens = SqlLexer.tokenize(sql, true);
        assertThat(tokens.stream().map(t -> t.start() + "-" + t.end()).collect(Collectors.joining(" ")))
                .isEqualTo(expected);
        assertThat(tokens).allSatisfy(t -> assertThat(t.kind()).isNotEqualTo(Kind.ERROR));
    }

    private static String render(List<Token> tokens) {
        return tokens.stream().map(t -> t.kind() + ":" + t.text()).collect(Collectors.joining(" "));
    }
}
