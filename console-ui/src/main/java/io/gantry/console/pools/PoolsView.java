package io.gantry.console.pools;

import io.gantry.console.ui.TextColumns;
import javafx.geometry.Insets;
import javafx.scene.control.Button;
import javafx.scene.control.Label;
import javafx.scene.control.TableView;
import javafx.scene.control.ToolBar;
import javafx.scene.layout.BorderPane;

/** The pools of shared server connections in a table, per server and account, with a button to read them again. */
public final class PoolsView extends BorderPane {

    public PoolsView(PoolsViewModel model) {
        setId("pools");
        TableView<Pool> table = new TableView<>(model.pools());
        table.setId("pools-table");
        table.setPlaceholder(new Label("No pooled connection yet (or multiplexing is off)."));
        table.getColumns().add(TextColumns.of("Server", 150, Pool::server));
        table.getColumns().add(TextColumns.of("Account", 90, Pool::user));
        table.getColumns().add(TextColumns.of("Open", 60, Pool::serverConnections));
        table.getColumns().add(TextColumns.of("Cap", 60, Pool::cap));
        table.getColumns().add(TextColumns.of("Waiting", 70, Pool::waiting));
        table.getColumns().add(TextColumns.of("Idle", 60, Pool::idle));
        table.getColumns().add(TextColumns.of("Created", 70, Pool::created));
        table.getColumns().add(TextColumns.of("Reused", 70, Pool::reused));
        table.getColumns().add(TextColumns.of("Reuse ratio", 90, Pool::reuseRatio));
        table.getColumns().add(TextColumns.of("Closed idle", 90, Pool::closedIdle));
        table.getColumns().add(TextColumns.of("Waited", 70, Pool::waited));
        table.getColumns().add(TextColumns.of("Wait p99 (ms)", 120, Pool::waitP99Millis));

        Button refresh = new Button("Refresh");
        refresh.setId("refresh-pools");
        refresh.setOnAction(e -> model.refresh());
        Label message = new Label();
        message.setId("pools-message");
        message.textProperty().bind(model.messageProperty());

        setTop(new ToolBar(refresh, message));
        setCenter(table);
        setPadding(new Insets(4));
    }
}
