package io.gantry.console.hosts;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.admin.protocol.Column;
import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Request;
import io.gantry.admin.protocol.TimelineEvent;
import io.gantry.console.FakeEngine;
import io.gantry.console.ui.UiExecutor;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BlockedHostsViewModelTest {

    private static final List<Column> COLUMNS = List.of(new Column("Host", Column.Type.TEXT),
            new Column("Reason", Column.Type.TEXT), new Column("Failures", Column.Type.TEXT),
            new Column("Blocked_since", Column.Type.TEXT), new Column("Seconds_left", Column.Type.TEXT));

    /** An engine with one blocked host until a FLUSH lifts it. */
    private static final class OneBlockedHost {
        boolean blocked = true;

        Reply answer(Request request) {
            String sql = ((Request.Sql) request).sql();
            if (sql.startsWith("FLUSH")) {
                boolean was = blocked;
                blocked = false;
                return new Reply.Done(request.id(), was ? 1 : 0, was ? "host 10.0.0.7 unblocked"
                        : "0 hosts unblocked; every failure so far is forgotten");
            }
            List<List<Object>> rows = new ArrayList<>();
            if (blocked) {
                rows.add(List.of("10.0.0.7", "10 failed handshakes in a row, the last one left unfinished", "10",
                        "2026-12-04T10:00:00Z", "41"));
            }
            return new Reply.Rows(request.id(), COLUMNS, rows);
        }
    }

    @Test
    void theListIsReadOnConnectAndWhenTheTimelineSaysAHostWasBlocked() {
        OneBlockedHost state = new OneBlockedHost();
        state.blocked = false;
        FakeEngine engine = FakeEngine.answering(state::answer);
        BlockedHostsViewModel model = new BlockedHostsViewModel(UiExecutor.direct(), engine);
        model.connected(new Reply.Welcome(1, "test", "127.0.0.1:3307", "/data"));
        assertThat(model.hosts()).isEmpty();

        state.blocked = true;
        model.push(new Reply.Event(new TimelineEvent(7, Instant.parse("2026-12-04T10:00:00Z"), "10.0.0.7",
                "weight_changed", "50 -> 60")));
        assertThat(model.hosts()).as("other events read nothing").isEmpty();
        model.push(new Reply.Event(new TimelineEvent(8, Instant.parse("2026-12-04T10:00:00Z"), "10.0.0.7",
                BlockedHostsViewModel.HOST_BLOCKED, "10 malformed or unfinished handshakes in a row")));
        assertThat(model.hosts()).containsExactly(new BlockedHost("10.0.0.7",
                "10 failed handshakes in a row, the last one left unfinished", "10", "2026-12-04T10:00:00Z", "41"));
        assertThat(engine.requests()).extracting(request -> ((Request.Sql) request).sql())
                .containsOnly("SHOW GANTRY BLOCKED HOSTS");
    }

    @Test
    void liftingABlockSendsTheFlushAndReadsTheListAgain() {
        OneBlockedHost state = new OneBlockedHost();
        FakeEngine engine = FakeEngine.answering(state::answer);
        BlockedHostsViewModel model = new BlockedHostsViewModel(UiExecutor.direct(), engine);
        model.refresh();
        model.unblock(model.hosts().get(0));

        assertThat(engine.requests()).extracting(request -> ((Request.Sql) request).sql()).containsExactly(
                "SHOW GANTRY BLOCKED HOSTS", "FLUSH GANTRY HOST '10.0.0.7'", "SHOW GANTRY BLOCKED HOSTS");
        assertThat(model.hosts()).isEmpty();
        assertThat(model.messageProperty().get()).isEqualTo("host 10.0.0.7 unblocked");
        assertThat(model.failedProperty().get()).isFalse();

        model.unblockAll();
        assertThat(((Request.Sql) engine.requests().get(3)).sql()).isEqualTo("FLUSH GANTRY HOSTS");
    }

    @Test
    void anEngineErrorIsShownInRed() {
        FakeEngine engine = FakeEngine.answering(request -> new Reply.Error(request.id(), "invalid_statement",
                "SHOW GANTRY expects STATUS, got 'BLOCKED HOSTS'"));
        BlockedHostsViewModel model = new BlockedHostsViewModel(UiExecutor.direct(), engine);
        model.refresh();
        assertThat(model.failedProperty().get()).isTrue();
        assertThat(model.messageProperty().get()).isEqualTo("cannot read the blocked hosts: invalid_statement: "
                + "SHOW GANTRY expects STATUS, got 'BLOCKED HOSTS'");
    }
}
