package io.gantry.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.admin.protocol.Column;
import io.gantry.admin.protocol.Reply;
import io.gantry.authority.Event;
import io.gantry.authority.EventKind;
import io.gantry.authority.QueryResult;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How the socket turns the admin API's typed results into protocol messages. */
class AdminSocketTest {

    @Test
    void everyValueTypeHasItsColumnTypeOfTheSameName() {
        for (QueryResult.ValueType type : QueryResult.ValueType.values()) {
            assertThat(Column.Type.valueOf(type.name()).wireName()).isEqualTo(type.name().toLowerCase());
        }
    }

    @Test
    void rowsKeepTheirTypesDoneItsMessageAndAFailureItsKind() {
        AdminResult.Rows rows = new AdminResult.Rows(List.of(new AdminResult.Column("port",
                QueryResult.ValueType.INTEGER), new AdminResult.Column("at", QueryResult.ValueType.TIMESTAMP)),
                List.of(Arrays.asList(3306L, Instant.EPOCH)));
        assertThat(AdminSocket.reply("1", rows)).isEqualTo(new Reply.Rows("1", List.of(new Column("port",
                Column.Type.INTEGER), new Column("at", Column.Type.TIMESTAMP)), List.of(List.of(3306L,
                Instant.EPOCH))));
        assertThat(AdminSocket.reply("2", new AdminResult.Done(1, "weight of db1:3306 is now 70")))
                .isEqualTo(new Reply.Done("2", 1, "weight of db1:3306 is now 70"));
        assertThat(AdminSocket.reply("3", new AdminResult.Failed(AdminResult.Failure.REFUSED, "no server x:1")))
                .isEqualTo(new Reply.Error("3", "refused", "no server x:1"));
        assertThat(AdminSocket.reply("4", new AdminResult.Failed(AdminResult.Failure.INVALID_STATEMENT, "bad")))
                .isEqualTo(new Reply.Error("4", "invalid_statement", "bad"));
    }

    @Test
    void pushedTimelineEntriesHaveTheirPasswordsMasked() {
        Event event = new Event(0, Instant.EPOCH, null, EventKind.LIST_CHANGED,
                "tried mysql://app:secret@db1:3306/app");
        assertThat(AdminSocket.timelineEvent(event, 0).reason()).isEqualTo("tried mysql://app:***@db1:3306/app");
        assertThat(AdminSocket.timelineEvent(event, 0).kind()).isEqualTo("list_changed");
    }
}
