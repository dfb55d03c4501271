package io.gantry.console.hosts;

import io.gantry.console.ui.TextColumns;
import javafx.beans.binding.Bindings;
import javafx.geometry.Insets;
import javafx.scene.control.Button;
import javafx.scene.control.Label;
import javafx.scene.control.TableView;
import javafx.scene.control.ToolBar;
import javafx.scene.layout.BorderPane;

/** The blocked hosts in a table, with buttons to lift the selected block or every block, and to read them again. */
public final class BlockedHostsView extends BorderPane {

    public BlockedHostsView(BlockedHostsViewModel model) {
        setId("blocked-hosts");
        TableView<BlockedHost> table = new TableView<>(model.hosts());
        table.setId("blocked-hosts-table");
        table.setPlaceholder(new Label("No host is blocked."));
        table.getColumns().add(TextColumns.of("Host", 140, BlockedHost::host));
        table.getColumns().add(TextColumns.of("Reason", 460, BlockedHost::reason));
        table.getColumns().add(TextColumns.of("Failures", 80, BlockedHost::failures));
        table.getColumns().add(TextColumns.of("Blocked since (UTC)", 220, BlockedHost::since));
        table.getColumns().add(TextColumns.of("Seconds left", 100, BlockedHost::secondsLeft));

        Button unblock = new Button("Lift block");
        unblock.setId("unblock-host");
        unblock.disableProperty().bind(table.getSelectionModel().selectedItemProperty().isNull());
        unblock.setOnAction(e -> model.unblock(table.getSelectionModel().getSelectedItem()));
        Button unblockAll = new Button("Lift every block");
        unblockAll.setId("unblock-all-hosts");
        unblockAll.setOnAction(e -> model.unblockAll());
        Button refresh = new Button("Refresh");
        refresh.setId("refresh-blocked-hosts");
        refresh.setOnAction(e -> model.refresh());
        Label message = new Label();
        message.setId("blocked-hosts-message");
        message.textProperty().bind(model.messageProperty());
        message.styleProperty().bind(Bindings.when(model.failedProperty())
                .then("-fx-text-fill: #c62828;").otherwise("-fx-text-fill: #2e7d32;"));

        setTop(new ToolBar(unblock, unblockAll, refresh, message));
        setCenter(table);
        setPadding(new Insets(4));
    }
}
