package io.gantry.console.status;

import javafx.scene.control.Label;
import org.controlsfx.control.StatusBar;

/** The bottom line: the connection's state in words, with a coloured marker. */
public final class StatusBarView extends StatusBar {

    public StatusBarView(ConnectionViewModel model) {
        setId("status-bar");
        textProperty().bind(model.statusProperty());
        Label state = new Label();
        state.setId("connection-state");
        state.textProperty().bind(model.stateProperty().asString());
        model.stateProperty().addListener((o, was, now) -> style(state, now));
        style(state, model.stateProperty().get());
        javafx.scene.layout.Region gap = new javafx.scene.layout.Region();
        gap.setPrefWidth(8);
        getLeftItems().addAll(state, gap);
    }

    private static void style(Label label, ConnectionViewModel.State state) {
        String colour = switch (state) {
            case CONNECTED -> "#2e7d32";
            case CONNECTING -> "#9e9e9e";
            case WAITING -> "#c62828";
        };
        label.setStyle("-fx-text-fill: white; -fx-font-weight: bold; -fx-padding: 1 6 1 6; -fx-background-color: "
                + colour + "; -fx-background-radius: 3;");
    }
}
