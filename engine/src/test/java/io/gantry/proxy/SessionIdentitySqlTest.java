package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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
            "SELECT 1|SELECT 1",
    })
    void connectionIdBecomesTheSessionId(String sql, String expected) {
        assertThat(SessionIdentitySql.withSessionId(sql, 42)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "KILL 7|false|7",
            "kill connection 7|false|7",
            "KILL QUERY 12;|true|12",
            "KILL HARD QUERY 3|true|3",
            "/* x */ KILL SOFT 9|false|9",
    })
    void killStatementsAreRecognised(String sql, boolean queryOnly, long id) {
        assertThat(SessionIdentitySql.parseKill(sql)).contains(new SessionIdentitySql.Kill(queryOnly, id));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"KILL USER bob", "KILL QUERY ID 5", "SELECT 1", "KILL", "KILL QUERY x", "killed 3"})
    void otherStatementsAreNotKills(String sql) {
        assertThat(SessionIdentitySql.parseKill(sql)).isEqualTo(Optional.empty());
    }
}
