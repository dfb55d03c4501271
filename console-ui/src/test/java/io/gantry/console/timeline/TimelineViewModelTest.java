package io.gantry.console.timeline;

import static io.gantry.console.States.server;
import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Request;
import io.gantry.admin.protocol.TimelineEvent;
import io.gantry.console.FakeEngine;
import io.gantry.console.MovableClock;
import io.gantry.console.ui.UiExecutor;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

class TimelineViewModelTest {

    private static final Instant NOW = Instant.parse("2026-12-02T03:00:00Z");
    private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

    private static TimelineEvent event(long id, String at, String server, String kind) {
        return new TimelineEvent(id, Instant.parse(at), server, kind, kind + " of " + server + ": because");
    }

    @Test
    void storedAndPushedEntriesMergeInTimeOrderWithoutDuplicates() {
        TimelineEvent down = event(0, "2026-12-02T02:59:00Z", "127.0.0.1:33063", "down");
        FakeEngine engine = FakeEngine.answering(request -> new Reply.Events(request.id(), List.of(
                event(7, "2026-12-02T02:50:00Z", null, "startup"),
                event(9, "2026-12-02T02:59:00Z", "127.0.0.1:33063", "down"))));
        TimelineViewModel model = new TimelineViewModel(UiExecutor.direct(), engine, CLOCK);
        model.push(new Reply.Event(down));
        model.push(new Reply.Event(event(0, "2026-12-02T02:59:30Z", "127.0.0.1:33061", "cdc_moved")));

        model.connected(new Reply.Welcome(1, "0.1.0", "127.0.0.1:3307", "/data"));

        assertThat(engine.requests()).singleElement().isInstanceOf(Request.Events.class);
        assertThat(model.events()).extracting(TimelineEvent::kind).containsExactly("startup", "down", "cdc_moved");
        assertThat(model.lanes()).containsExactly("Gantry", "127.0.0.1:33063", "change stream");
    }

    @Test
    void everyServerHasALaneInPortOrderAndTheChangeStreamItsOwn() {
        TimelineViewModel model = new TimelineViewModel(UiExecutor.direct(), FakeEngine.answering(r -> null), CLOCK);
        model.push(new Reply.ServerChanged(server(33063, "replica", "up", 50)));
        model.push(new Reply.ServerChanged(server(33061, "primary", "up", 50)));
        model.push(new Reply.ServerChanged(server(9, "replica", "up", 50)));
        assertThat(model.lanes()).containsExactly("Gantry", "127.0.0.1:9", "127.0.0.1:33061", "127.0.0.1:33063",
                "change stream");
        assertThat(TimelineViewModel.laneOf(event(0, "2026-12-02T02:59:00Z", "127.0.0.1:33061", "cdc_started")))
                .isEqualTo("change stream");
        assertThat(TimelineViewModel.laneOf(event(0, "2026-12-02T02:59:00Z", "10.1.1.1", "host_blocked")))
                .isEqualTo("Gantry");
        assertThat(TimelineViewModel.laneOf(event(0, "2026-12-02T02:59:00Z", "127.0.0.1:33061", "weight_changed")))
                .isEqualTo("127.0.0.1:33061");
    }

    @Test
    void selectingAnEntryShowsItsWholeReason() {
        TimelineViewModel model = new TimelineViewModel(UiExecutor.direct(), FakeEngine.answering(r -> null), CLOCK);
        TimelineEvent down = new TimelineEvent(0, NOW, "127.0.0.1:33063", "down",
                "health check failed: Communications link failure (Connection refused)");
        model.selectedProperty().set(down);
        assertThat(model.detailProperty().get()).contains("127.0.0.1:33063  down")
                .endsWith("\nhealth check failed: Communications link failure (Connection refused)");
    }

    @Test
    void inAClusterAnEntryNamesItsInstanceAndTheSameEventOfTwoInstancesIsTwoEntries() {
        TimelineViewModel model = new TimelineViewModel(UiExecutor.direct(), FakeEngine.answering(r -> null), CLOCK);
        TimelineEvent onA = new TimelineEvent(0, NOW, "127.0.0.1:33063", "down", "refused", "gantry-a");
        TimelineEvent onB = new TimelineEvent(5, NOW, "127.0.0.1:33063", "down", "refused", "gantry-b");
        model.push(new Reply.Event(onA));
        model.push(new Reply.Event(onB));
        assertThat(model.events()).extracting(TimelineEvent::instance).containsExactly("gantry-a", "gantry-b");
        model.selectedProperty().set(onB);
        assertThat(model.detailProperty().get()).contains("127.0.0.1:33063  down  on instance gantry-b\nrefused");
    }

    @Test
    void selectingAMarkOfSeveralEntriesShowsThemAll() {
        TimelineViewModel model = new TimelineViewModel(UiExecutor.direct(), FakeEngine.answering(r -> null), CLOCK);
        TimelineEvent upstream = event(1, "2026-12-02T02:59:00Z", null, "list_changed");
        TimelineEvent cdc = event(2, "2026-12-02T02:59:00.004Z", null, "list_changed");

        model.select(List.of(upstream, cdc));

        assertThat(model.selectedProperty().get()).isEqualTo(cdc);
        assertThat(model.detailProperty().get()).startsWith("2 entries, oldest first:\n")
                .contains(TimelineViewModel.describe(upstream) + "\n" + TimelineViewModel.describe(cdc));
    }

    @Test
    void zoomKeepsFollowingAndPanningBackStopsItUntilLiveAgain() {
        MovableClock moving = new MovableClock(NOW);
        TimelineViewModel model = new TimelineViewModel(UiExecutor.direct(), FakeEngine.answering(r -> null), moving);
        assertThat(model.followLiveProperty().get()).isTrue();
        model.zoomIn();
        assertThat(model.windowLengthProperty().get()).isEqualTo(Duration.ofMinutes(5));
        moving.now = NOW.plusSeconds(30);
        model.tick();
        assertThat(model.windowEndProperty().get()).isEqualTo(moving.now);

        model.pan(-0.5);
        assertThat(model.followLiveProperty().get()).isFalse();
        assertThat(model.windowEndProperty().get()).isEqualTo(moving.now.minus(Duration.ofSeconds(150)));
        moving.now = NOW.plusSeconds(60);
        model.tick();
        assertThat(model.windowEndProperty().get()).isEqualTo(NOW.plusSeconds(30).minusSeconds(150));

        for (int i = 0; i < 20; i++) {
            model.zoomIn();
        }
        assertThat(model.windowLengthProperty().get()).isEqualTo(Duration.ofSeconds(10));
        model.followLiveProperty().set(true);
        assertThat(model.windowEndProperty().get()).isEqualTo(moving.now);
        model.pan(0.5);
        assertThat(model.followLiveProperty().get()).isTrue();
    }
}
