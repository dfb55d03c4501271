package io.gantry.console.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.admin.protocol.Column;
import io.gantry.admin.protocol.Reply;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the console shows for an answer it did not expect: words, never a record's fields. */
class FailuresTest {

    @Test
    void anErrorIsItsKindAndMessage() {
        assertThat(Failures.message(new Reply.Error("1", "refused", "no such server"))).isEqualTo(
                "refused: no such server");
    }

    @Test
    void anotherAnswerIsSaidInWordsWithoutTheRecordsFields() {
        assertThat(Failures.message(new Reply.Done("1", 0, "weight of db2:3306 set to 10")))
                .isEqualTo("unexpected answer: weight of db2:3306 set to 10");
        assertThat(Failures.message(new Reply.Rows("1", List.of(new Column("a", Column.Type.TEXT)),
                List.of(List.of("x"), List.of("y"))))).isEqualTo("unexpected answer: 2 rows");
        assertThat(Failures.message(new Reply.Pong("1"))).isEqualTo("unexpected answer: pong")
                .doesNotContain("[");
    }
}
