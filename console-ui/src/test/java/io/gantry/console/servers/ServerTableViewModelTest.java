package io.gantry.console.servers;

import static io.gantry.console.States.server;
import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.admin.protocol.Reply;
import io.gantry.console.ui.UiExecutor;
import java.util.ArrayList;
import java.util.List;
import javafx.collections.ListChangeListener;
import org.junit.jupiter.api.Test;

class ServerTableViewModelTest {

    private final ServerTableViewModel model = new ServerTableViewModel(UiExecutor.direct());

    @Test
    void aPushOfANewServerAddsARowAndAChangeUpdatesItInPlace() {
        model.push(new Reply.ServerChanged(server(33061, "primary", "up", 50)));
        model.push(new Reply.ServerChanged(server(33062, "replica", "up", 50)));
        ServerRow replica = model.row("127.0.0.1:33062").orElseThrow();
        List<String> changes = new ArrayList<>();
        model.rows().addListener((ListChangeListener<ServerRow>) c -> {
            while (c.next()) {
                changes.add(c.wasUpdated() ? "updated" : c.wasAdded() ? "added" : c.wasRemoved() ? "removed" : "other");
            }
        });

        model.push(new Reply.ServerChanged(server(33062, "replica", "down", 70)));

        assertThat(model.rows()).hasSize(2);
        assertThat(model.row("127.0.0.1:33062")).containsSame(replica);
        assertThat(replica.healthProperty().get()).isEqualTo("down");
        assertThat(replica.weightProperty().get()).isEqualTo(70);
        assertThat(replica.downSinceProperty().get()).isNotNull();
        assertThat(replica.rttMsProperty().get()).isEqualTo(0.4);
        assertThat(replica.connectMsProperty().get()).isEqualTo(2.5);
        assertThat(changes).isNotEmpty().allMatch("updated"::equals);
    }

    @Test
    void aRemovedServerLosesItsRowAndANewConnectionStartsAfresh() {
        model.push(new Reply.ServerChanged(server(33061, "primary", "up", 50)));
        model.push(new Reply.ServerChanged(server(33062, "replica", "up", 50)));
        model.push(new Reply.ServerRemoved("127.0.0.1:33062"));
        assertThat(model.rows()).extracting(ServerRow::address).containsExactly("127.0.0.1:33061");

        model.connected(new Reply.Welcome(1, "0.1.0", "127.0.0.1:3307", "/data"));
        assertThat(model.rows()).isEmpty();
        model.push(new Reply.ServerChanged(server(33061, "primary", "up", 50)));
        assertThat(model.rows()).hasSize(1);
    }

    @Test
    void anUnchangedValueDoesNotFire() {
        model.push(new Reply.ServerChanged(server(33062, "replica", "up", 50)));
        ServerRow row = model.row("127.0.0.1:33062").orElseThrow();
        int[] fired = {0};
        row.healthProperty().addListener((o, was, now) -> fired[0]++);
        model.push(new Reply.ServerChanged(server(33062, "replica", "up", 50)));
        assertThat(fired[0]).isZero();
    }
}
