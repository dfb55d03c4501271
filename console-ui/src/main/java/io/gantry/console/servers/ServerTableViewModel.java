package io.gantry.console.servers;

import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.ServerState;
import io.gantry.console.engine.EngineConnection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executor;
import javafx.collections.FXCollections;
import javafx.collections.ObservableList;

/**
 * The server table's state: one {@link ServerRow} per server of either list, kept from the engine's pushes (the
 * subscription starts with every server as it is, then each change). A change updates its row in place.
 */
public final class ServerTableViewModel implements EngineConnection.Listener {

    private final Executor ui;
    private final ObservableList<ServerRow> rows = FXCollections.observableArrayList(ServerRow::observables);
    private final Map<String, ServerRow> byAddress = new HashMap<>();

    public ServerTableViewModel(Executor ui) {
        this.ui = ui;
    }

    /** The rows, in the order servers were first seen; the view sorts its own copy. */
    public ObservableList<ServerRow> rows() {
        return rows;
    }

    public Optional<ServerRow> row(String address) {
        return Optional.ofNullable(byAddress.get(address));
    }

    @Override
    public void connected(Reply.Welcome welcome) {
        // A new connection pushes every server again; servers gone while disconnected must not stay.
        ui.execute(() -> {
            rows.clear();
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

    void apply(ServerState state) {
        ServerRow row = byAddress.get(state.address());
        if (row == null) {
            row = new ServerRow(state);
            byAddress.put(state.address(), row);
            rows.add(row);
        } else {
            row.update(state);
        }
    }

    void remove(String address) {
        ServerRow row = byAddress.remove(address);
        if (row != null) {
            rows.remove(row);
        }
    }
}
