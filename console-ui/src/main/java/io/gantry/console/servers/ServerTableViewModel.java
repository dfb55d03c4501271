package io.gantry.console.servers;

import io.gantry.admin.protocol.Reply;
import io.gantry.console.engine.EngineConnection;
import java.util.Optional;
import java.util.concurrent.Executor;
import javafx.collections.FXCollections;
import javafx.collections.ObservableList;

/**
 * The server table's state: one {@link ServerRow} per server of either list, kept from the engine's pushes (the
 * subscription starts with every server as it is, then each change). A change updates its row in place.
 */
public final class ServerTableViewModel implements EngineConnection.Listener {

    private final ServerItems<ServerRow> rows;

    public ServerTableViewModel(Executor ui) {
        rows = new ServerItems<>(ui, FXCollections.observableArrayList(ServerRow::observables), ServerRow::new,
                ServerRow::update, null);
    }

    /** The rows, in the order servers were first seen; the view sorts its own copy. */
    public ObservableList<ServerRow> rows() {
        return rows.items();
    }

    public Optional<ServerRow> row(String address) {
        return rows.item(address);
    }

    @Override
    public void connected(Reply.Welcome welcome) {
        rows.connected(welcome);
    }

    @Override
    public void push(Reply push) {
        rows.push(push);
    }
}
