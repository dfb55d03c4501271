package io.gantry.console.pools;

import java.util.function.Function;
import javafx.beans.property.ReadOnlyStringWrapper;
import javafx.beans.value.ObservableValue;
import javafx.geometry.Insets;
import javafx.scene.control.Button;
import javafx.scene.control.Label;
import javafx.scene.control.TableColumn;
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
        table.getColumns().add(column("Server", 150, Pool::server));
        table.getColumns().add(column("Account", 90, Pool::user));
        table.getColumns().add(column("Open", 60, Pool::serverConnections));
        table.getColumns().add(column("Cap", 60, Pool::cap));
        table.getColumns().add(column("Waiting", 70, Pool::waiting));
        table.getColumns().add(column("Idle", 60, Pool::idle));
        table.getColumns().add(column("Created", 70, Pool::created));
        table.getColumns().add(column("Reused", 70, Pool::reused));
        table.getColumns().add(column("Reuse ratio", 90, Pool::reuseRatio));
        table.getColumns().add(column("Closed idle", 90, Pool::closedIdle));
        table.getColumns().add(column("Waited", 70, Pool::waited));
        table.getColumns().add(column("Wait p99 (ms)", 120, Pool::waitP99Millis));

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

    private static TableColumn<Pool, String> column(String title, double width, Function<Pool, String> value) {
        TableColumn<Pool, String> column = new TableColumn<>(title);
        column.setPrefWidth(width);
        column.setCellValueFactory(cell -> (ObservableValue<String>) new ReadOnlyStringWrapper(
                value.apply(cell.getValue())).getReadOnlyProperty());
        return column;
    }
}
