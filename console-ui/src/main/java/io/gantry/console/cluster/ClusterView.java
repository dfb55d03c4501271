package io.gantry.console.cluster;

import io.gantry.console.ui.TextColumns;
import javafx.geometry.Insets;
import javafx.scene.control.Button;
import javafx.scene.control.Label;
import javafx.scene.control.TableRow;
import javafx.scene.control.TableView;
import javafx.scene.control.ToolBar;
import javafx.scene.layout.BorderPane;

/**
 * The instances of the cluster in a table, the one the console is connected to in bold and an instance serving an
 * older configuration in red, with a button to read them again.
 */
public final class ClusterView extends BorderPane {

    public ClusterView(ClusterViewModel model) {
        setId("cluster");
        TableView<Instance> table = new TableView<>(model.rows());
        table.setId("cluster-table");
        table.setPlaceholder(new Label("Not in a cluster (gantry run --cluster NAME), or not read yet."));
        table.getColumns().add(TextColumns.of("Instance", 160, Instance::instance));
        table.getColumns().add(TextColumns.of("Address", 150, Instance::address));
        table.getColumns().add(TextColumns.of("Config version", 120, Instance::configVersion));
        table.getColumns().add(TextColumns.of("Cluster version", 125, Instance::clusterVersion));
        table.getColumns().add(TextColumns.of("Last seen", 215, Instance::lastSeen));
        table.getColumns().add(TextColumns.of("Seconds ago", 105, Instance::secondsSinceSeen));
        table.getColumns().add(TextColumns.of("Writes the feed", 120, Instance::feedOwner));
        table.getColumns().add(TextColumns.of("Gantry", 140, Instance::gantryVersion));
        table.setRowFactory(view -> new TableRow<>() {
            @Override
            protected void updateItem(Instance instance, boolean empty) {
                super.updateItem(instance, empty);
                String style = "";
                if (!empty && instance != null) {
                    style = ("yes".equals(instance.thisInstance()) ? "-fx-font-weight: bold;" : "")
                            + (instance.behind() ? "-fx-text-background-color: #b00020;" : "");
                }
                setStyle(style);
            }
        });

        Button refresh = new Button("Refresh");
        refresh.setId("refresh-cluster");
        refresh.setOnAction(e -> model.refresh());
        Label message = new Label();
        message.setId("cluster-message");
        message.textProperty().bind(model.messageProperty());

        setTop(new ToolBar(refresh, message));
        setCenter(table);
        setPadding(new Insets(4));
    }
}
