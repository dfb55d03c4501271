package io.gantry.console.pools;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.admin.protocol.Column;
import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Request;
import io.gantry.console.FakeEngine;
import io.gantry.console.MovableClock;
import io.gantry.console.ui.UiExecutor;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PoolsViewModelTest {

    /** The engine's columns, with one it might add later in the middle: rows are read by name. */
    private static final List<String> NAMES = List.of("Server", "User", "Server_connections", "Cap", "Waiting",
            "Some_later_column", "Idle", "Created", "Reused", "Reuse_ratio", "Closed_idle", "Waited", "Wait_p99_ms");

    private static Reply rows(Request request, List<List<Object>> rows) {
        List<Column> columns = new ArrayList<>();
        for (String name : NAMES) {
            columns.add(new Column(name, Column.Type.TEXT));
        }
        return new Reply.Rows(request.id(), columns, rows);
    }

    @Test
    void thePoolsAreReadOnConnectByColumnName() {
        FakeEngine engine = FakeEngine.answering(request -> rows(request, List.of(List.of("db1:3306", "app", "12",
                "200", "0", "x", "3", "4", "12", "0.750", "1", "7", "12.3"))));
        PoolsViewModel model = new PoolsViewModel(UiExecutor.direct(), engine, Clock.systemUTC());
        model.connected(new Reply.Welcome(1, "test", "127.0.0.1:3307", "/data"));
        assertThat(model.pools()).containsExactly(new Pool("db1:3306", "app", "12", "200", "0", "3", "4", "12",
                "0.750", "1", "7", "12.3"));
        assertThat(model.messageProperty().get()).isEmpty();
        assertThat(engine.requests()).extracting(request -> ((Request.Sql) request).sql())
                .containsExactly("SHOW GANTRY POOLS");
    }

    @Test
    void serverChangesReadThemAgainAtMostOnceASecond() {
        FakeEngine engine = FakeEngine.answering(request -> rows(request, List.of()));
        MovableClock clock = new MovableClock(Instant.parse("2026-12-05T10:00:00Z"));
        PoolsViewModel model = new PoolsViewModel(UiExecutor.direct(), engine, clock);
        model.connected(new Reply.Welcome(1, "test", "127.0.0.1:3307", "/data"));
        assertThat(model.messageProperty().get()).isEqualTo("No pooled connection yet.");
        model.push(new Reply.ServerRemoved("db2:3306"));
        assertThat(engine.requests()).as("within a second of the last read").hasSize(1);
        clock.now = clock.now.plusMillis(PoolsViewModel.MIN_INTERVAL_MILLIS);
        model.push(new Reply.ServerRemoved("db2:3306"));
        assertThat(engine.requests()).hasSize(2);
    }

    @Test
    void aRefusalIsShown() {
        FakeEngine engine = FakeEngine.answering(request -> new Reply.Error(request.id(), "access-denied",
                "only admin users"));
        PoolsViewModel model = new PoolsViewModel(UiExecutor.direct(), engine, Clock.systemUTC());
        model.refresh();
        assertThat(model.pools()).isEmpty();
        assertThat(model.messageProperty().get()).isEqualTo("cannot read the pools: access-denied: only admin users");
    }
}
