package io.gantry.console.servers;

import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.ServerState;
import io.gantry.console.engine.EngineConnection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;
import java.util.function.Function;
import javafx.collections.ObservableList;

/**
 * One item per server, kept on the UI thread from the engine's server pushes: made at a server's first state,
 * updated in place by its later ones, dropped when the server leaves the lists, and all dropped at a new connection
 * (which pushes every server again, so servers gone meanwhile do not stay). The server table's rows and the weight
 * sliders are such lists.
 *
 * @param <T> the item
 */
public final class ServerItems<T> implements EngineConnection.Listener {

    private final Executor ui;
    private final ObservableList<T> items;
    private final Map<String, T> byAddress = new HashMap<>();
    private final Function<ServerState, T> create;
    private final BiConsumer<T, ServerState> update;
    private final Comparator<T> order;

    /** @param order how items are kept ordered, or null for the order servers were first seen in */
    public ServerItems(Executor ui, ObservableList<T> items, Function<ServerState, T> create,
                       BiConsumer<T, ServerState> update, Comparator<T> order) {
        this.ui = ui;
        this.items = items;
        this.create = create;
        this.update = update;
        this.order = order;
    }

    public ObservableList<T> items() {
        return items;
    }

    public Optional<T> item(String address) {
        return Optional.ofNullable(byAddress.get(address));
    }

    @Override
    public void connected(Reply.Welcome welcome) {
        ui.execute(() -> {
            items.clear();
            byAddress.clear();
        });
    }

    @Override
    public void push(Reply push) {
        if (push instanceof Reply.ServerChanged changed) {
            ui.execute(() -> apply(changed.server()));
        } else if (push instanceof Reply.ServerRemoved removed) {
            ui.execute(() -> remove(removed.address()));
        }
    }

    private void apply(ServerState state) {
        T item = byAddress.get(state.address());
        if (item != null) {
            update.accept(item, state);
            return;
        }
        item = create.apply(state);
        byAddress.put(state.address(), item);
        items.add(item);
        if (order != null) {
            items.sort(order);
        }
    }

    private void remove(String address) {
        T item = byAddress.remove(address);
        if (item != null) {
            items.remove(item);
        }
    }
}
