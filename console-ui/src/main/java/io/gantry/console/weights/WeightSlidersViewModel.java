package io.gantry.console.weights;

import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.ServerState;
import io.gantry.console.engine.AdminCalls;
import io.gantry.console.engine.EngineConnection;
import io.gantry.console.engine.Failures;
import io.gantry.console.servers.ServerItems;
import io.gantry.console.timeline.TimelineViewModel;
import java.util.Optional;
import java.util.concurrent.Executor;
import javafx.collections.FXCollections;
import javafx.collections.ObservableList;

/**
 * A weight slider per server. Releasing one sends {@code ALTER GANTRY SET WEIGHT 'host:port' TO n}; the weight shown
 * is the engine's, so the new one appears when the engine confirms it; on an error the message is shown and the
 * slider goes back to the engine's weight.
 */
public final class WeightSlidersViewModel implements EngineConnection.Listener {

    private final Executor ui;
    private final AdminCalls engine;
    private final ServerItems<WeightItem> items;

    public WeightSlidersViewModel(Executor ui, AdminCalls engine) {
        this.ui = ui;
        this.engine = engine;
        items = new ServerItems<>(ui, FXCollections.observableArrayList(),
                state -> new WeightItem(state.address(), state.weight()), WeightSlidersViewModel::engineSays,
                (a, b) -> TimelineViewModel.compareAddresses(a.address(), b.address()));
    }

    public ObservableList<WeightItem> items() {
        return items.items();
    }

    public Optional<WeightItem> item(String address) {
        return items.item(address);
    }

    @Override
    public void connected(Reply.Welcome welcome) {
        items.connected(welcome);
    }

    @Override
    public void push(Reply push) {
        items.push(push);
    }

    /** The engine's weight changed: a slider the operator holds, or one waiting for its answer, stays put. */
    private static void engineSays(WeightItem item, ServerState state) {
        item.engineWeightProperty().set(state.weight());
        if (!item.draggingProperty().get() && !item.pendingProperty().get()) {
            item.valueProperty().set(state.weight());
        }
    }

    /** The operator let go of the slider: sends its value unless it is the engine's already. On the UI thread. */
    public void release(WeightItem item) {
        item.draggingProperty().set(false);
        int weight = (int) Math.max(1, Math.min(100, Math.round(item.valueProperty().get())));
        item.valueProperty().set(weight);
        if (weight == item.engineWeightProperty().get() || item.pendingProperty().get()) {
            return;
        }
        item.pendingProperty().set(true);
        item.failedProperty().set(false);
        item.messageProperty().set("setting " + weight + " ...");
        engine.sql("ALTER GANTRY SET WEIGHT '" + item.address() + "' TO " + weight).whenComplete((reply, failure) ->
                ui.execute(() -> answered(item, weight, reply, failure)));
    }

    private void answered(WeightItem item, int weight, Reply reply, Throwable failure) {
        item.pendingProperty().set(false);
        if (reply instanceof Reply.Done done) {
            // The engine confirmed it: its weight is this now (its push says the same, maybe a little later).
            item.engineWeightProperty().set(weight);
            item.failedProperty().set(false);
            item.messageProperty().set(done.message());
            return;
        }
        String error = failure != null ? Failures.message(failure) : Failures.message(reply);
        item.failedProperty().set(true);
        item.messageProperty().set("not changed: " + error);
        item.valueProperty().set(item.engineWeightProperty().get());
    }
}
