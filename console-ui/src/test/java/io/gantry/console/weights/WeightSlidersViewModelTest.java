package io.gantry.console.weights;

import static io.gantry.console.States.server;
import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Request;
import io.gantry.console.FakeEngine;
import io.gantry.console.ui.UiExecutor;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class WeightSlidersViewModelTest {

    @Test
    void releasingSendsTheStatementAndTheConfirmedWeightShows() {
        FakeEngine engine = FakeEngine.answering(request -> new Reply.Done(request.id(), 1,
                "weight of 127.0.0.1:33062 is now 70"));
        WeightSlidersViewModel model = new WeightSlidersViewModel(UiExecutor.direct(), engine);
        model.push(new Reply.ServerChanged(server(33062, "replica", "up", 50)));
        WeightItem item = model.item("127.0.0.1:33062").orElseThrow();

        item.draggingProperty().set(true);
        item.valueProperty().set(69.6);
        model.release(item);

        assertThat(engine.requests()).containsExactly(new Request.Sql("1",
                "ALTER GANTRY SET WEIGHT '127.0.0.1:33062' TO 70"));
        assertThat(item.engineWeightProperty().get()).isEqualTo(70);
        assertThat(item.valueProperty().get()).isEqualTo(70.0);
        assertThat(item.failedProperty().get()).isFalse();
        assertThat(item.messageProperty().get()).isEqualTo("weight of 127.0.0.1:33062 is now 70");
    }

    @Test
    void anEngineErrorIsShownAndTheSliderReturnsToTheEnginesWeight() {
        FakeEngine engine = FakeEngine.answering(request -> new Reply.Error(request.id(), "refused",
                "no server 127.0.0.1:33062 in the upstream or CDC list"));
        WeightSlidersViewModel model = new WeightSlidersViewModel(UiExecutor.direct(), engine);
        model.push(new Reply.ServerChanged(server(33062, "replica", "up", 50)));
        WeightItem item = model.item("127.0.0.1:33062").orElseThrow();

        item.valueProperty().set(20);
        model.release(item);

        assertThat(item.failedProperty().get()).isTrue();
        assertThat(item.messageProperty().get()).isEqualTo("not changed: refused: no server 127.0.0.1:33062 in the "
                + "upstream or CDC list");
        assertThat(item.valueProperty().get()).isEqualTo(50.0);
        assertThat(item.engineWeightProperty().get()).isEqualTo(50);
    }

    @Test
    void aBrokenConnectionIsAnErrorToo() {
        FakeEngine engine = new FakeEngine(request -> CompletableFuture.failedFuture(
                new IOException("not connected to the engine (/x/admin.sock)")));
        WeightSlidersViewModel model = new WeightSlidersViewModel(UiExecutor.direct(), engine);
        model.push(new Reply.ServerChanged(server(33062, "replica", "up", 50)));
        WeightItem item = model.item("127.0.0.1:33062").orElseThrow();
        item.valueProperty().set(90);
        model.release(item);
        assertThat(item.messageProperty().get()).isEqualTo("not changed: not connected to the engine (/x/admin.sock)");
        assertThat(item.valueProperty().get()).isEqualTo(50.0);
    }

    @Test
    void theEnginesWeightDoesNotMoveAHeldSliderAndReleasingTheSameValueSendsNothing() {
        FakeEngine engine = FakeEngine.answering(request -> new Reply.Done(request.id(), 1, "ok"));
        WeightSlidersViewModel model = new WeightSlidersViewModel(UiExecutor.direct(), engine);
        model.push(new Reply.ServerChanged(server(33062, "replica", "up", 50)));
        WeightItem item = model.item("127.0.0.1:33062").orElseThrow();
        item.draggingProperty().set(true);
        item.valueProperty().set(80);
        model.push(new Reply.ServerChanged(server(33062, "replica", "up", 40)));
        assertThat(item.valueProperty().get()).isEqualTo(80.0);
        assertThat(item.engineWeightProperty().get()).isEqualTo(40);

        item.valueProperty().set(40.2);
        model.release(item);
        assertThat(engine.requests()).isEmpty();

        model.push(new Reply.ServerChanged(server(33062, "replica", "up", 35)));
        assertThat(item.valueProperty().get()).isEqualTo(35.0);
    }
}
