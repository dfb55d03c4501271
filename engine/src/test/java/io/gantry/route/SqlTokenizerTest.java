package io.gantry.route;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.route.SqlTokenizer.Token;
import io.gantry.route.SqlTokenizer.Type;
import java.util.List;
import org.junit.jupiter.api.Test;

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

    @Test
    void unterminatedInputEndsAtTheText() {
        assertThat(texts("SELECT 'open", false)).containsExactly("SELECT", "'open");
        assertThat(texts("SELECT /* open", false)).containsExactly("SELECT");
        assertThat(SqlTokenizer.tokenize("", false)).isEmpty();
    }
}
