package io.gantry.proxy.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.route.QueryText;
import io.gantry.route.SqlMode;
import org.junit.jupiter.api.Test;

/** Which {@code SET TRANSACTION} statements Gantry holds for the next statement, and which it leaves to a server. */
class NextTransactionTest {

    @Test
    void anAccessModeIsHeldWithOrWithoutAnIsolationLevel() {
        assertThat(parse("SET TRANSACTION READ ONLY")).isEqualTo(new NextTransaction("SET TRANSACTION READ ONLY", true));
        assertThat(parse("set transaction read write;").readOnly()).isFalse();
        assertThat(parse("SET TRANSACTION ISOLATION LEVEL READ COMMITTED, READ ONLY").readOnly()).isTrue();
        assertThat(parse("SET TRANSACTION READ ONLY, ISOLATION LEVEL SERIALIZABLE").readOnly()).isTrue();
        assertThat(parse("SET /* c */ TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE").readOnly()).isFalse();
        assertThat(parse("SET TRANSACTION READ WRITE, READ ONLY").readOnly()).as("the last one counts").isTrue();
    }

    @Test
    void everythingElseGoesToAServerAsBefore() {
        assertThat(parse("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")).as("no access mode").isNull();
        assertThat(parse("SET SESSION TRANSACTION READ ONLY")).as("the session's: a setting").isNull();
        assertThat(parse("SET GLOBAL TRANSACTION READ ONLY")).isNull();
        assertThat(parse("SET TRANSACTION READ SIDEWAYS")).as("the server's syntax error").isNull();
        assertThat(parse("SET TRANSACTION READ ONLY READ WRITE")).isNull();
        assertThat(parse("SET TRANSACTION READ ONLY,")).isNull();
        assertThat(parse("SET TRANSACTION ISOLATION LEVEL READ, READ ONLY")).isNull();
        assertThat(parse("SET TRANSACTION READ ONLY; SELECT 1")).isNull();
        assertThat(parse("SET transaction_read_only = 1")).isNull();
        assertThat(parse("SELECT 'SET TRANSACTION READ ONLY'")).isNull();
    }

    private static NextTransaction parse(String sql) {
        return NextTransaction.parse(QueryText.of(sql, SqlMode.of(false)));
    }
}
