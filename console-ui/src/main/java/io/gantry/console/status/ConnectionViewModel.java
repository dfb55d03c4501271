package io.gantry.console.status;

import io.gantry.admin.protocol.Reply;
import io.gantry.console.engine.EngineConnection;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Executor;
import javafx.beans.property.ObjectProperty;
import javafx.beans.property.ReadOnlyObjectProperty;
import javafx.beans.property.ReadOnlyStringProperty;
import javafx.beans.property.SimpleObjectProperty;
import javafx.beans.property.SimpleStringProperty;
import javafx.beans.property.StringProperty;

/** The connection to the engine as the status bar and the window title show it. */
public final class ConnectionViewModel implements EngineConnection.Listener {

    /** Where the connection stands. */
    public enum State { CONNECTING, CONNECTED, WAITING }

    private final Executor ui;
    private final Path socket;
    private final ObjectProperty<State> state = new SimpleObjectProperty<>(State.CONNECTING);
    private final StringProperty status = new SimpleStringProperty();
    private final StringProperty title = new SimpleStringProperty();
    private final ObjectProperty<Reply.Welcome> engine = new SimpleObjectProperty<>();

    public ConnectionViewModel(Executor ui, Path socket) {
        this.ui = ui;
        this.socket = socket;
        status.set("Connecting to " + socket + " ...");
        title.set("Gantry console - connecting to " + socket);
    }

    public ReadOnlyObjectProperty<State> stateProperty() {
        return state;
    }

    public ReadOnlyStringProperty statusProperty() {
        return status;
    }

    /** The window's title: Gantry and the engine it is connected to (or was last). */
    public ReadOnlyStringProperty titleProperty() {
        return title;
    }

    /** The engine's hello of the current connection, or of the last one while waiting. */
    public ReadOnlyObjectProperty<Reply.Welcome> engineProperty() {
        return engine;
    }

    @Override
    public void connected(Reply.Welcome welcome) {
        ui.execute(() -> {
            engine.set(welcome);
            state.set(State.CONNECTED);
            status.set("Connected to Gantry " + welcome.version() + " (proxy " + welcome.listen() + ") through "
                    + socket);
            title.set(title(welcome));
        });
    }

    @Override
    public void disconnected(String reason, Duration retryIn, int attempt) {
        ui.execute(() -> {
            state.set(State.WAITING);
            String retry = String.format(Locale.ROOT, "%.1f s", retryIn.toMillis() / 1000.0);
            status.set((engine.get() == null ? "No engine at " + socket : "Engine gone") + ": " + reason
                    + ". Waiting for it; attempt " + (attempt + 1) + " in " + retry + " ...");
            Reply.Welcome last = engine.get();
            title.set(last == null ? "Gantry console - waiting for " + socket
                    : title(last) + " - disconnected, waiting");
        });
    }

    private static String title(Reply.Welcome welcome) {
        return "Gantry console - Gantry " + welcome.version() + " at " + welcome.listen() + " (" + welcome.dataDir()
                + ")";
    }
}
