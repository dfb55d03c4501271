package io.gantry.console.servers;

import io.gantry.console.ui.Formats;
import java.time.Instant;
import java.util.Comparator;
import java.util.function.Function;
import javafx.beans.value.ObservableValue;
import javafx.collections.transformation.SortedList;
import javafx.scene.control.TableCell;
import javafx.scene.control.TableColumn;
import javafx.scene.control.TableView;

/** The live server table: one row per server, every column sortable, changes drawn in place. */
public final class ServerTableView extends TableView<ServerRow> {

    public ServerTableView(ServerTableViewModel model) {
        setId("server-table");
        SortedList<ServerRow> sorted = new SortedList<>(model.rows());
        sorted.comparatorProperty().bind(comparatorProperty());
        setItems(sorted);
        setColumnResizePolicy(CONSTRAINED_RESIZE_POLICY_FLEX_LAST_COLUMN);
        setPlaceholder(new javafx.scene.control.Label("No servers yet: waiting for the engine"));

        TableColumn<ServerRow, String> address = column("Server", "address", r -> new javafx.beans.property
                .ReadOnlyStringWrapper(r.address()));
        address.setComparator(Comparator.comparing(ServerTableView::sortableAddress));
        getColumns().add(address);
        getColumns().add(column("Role", "role", ServerRow::roleProperty));
        getColumns().add(column("Purpose", "purpose", ServerRow::purposeProperty));
        TableColumn<ServerRow, String> health = column("Health", "health", ServerRow::healthProperty);
        health.setCellFactory(c -> new HealthCell());
        getColumns().add(health);
        TableColumn<ServerRow, Number> weight = column("Weight", "weight", ServerRow::weightProperty);
        getColumns().add(weight);
        TableColumn<ServerRow, Boolean> cdc = column("CDC", "cdc", r -> r.activeCdcProperty().asObject());
        cdc.setCellFactory(c -> text(active -> active ? "\u25cf reading" : ""));
        getColumns().add(cdc);
        TableColumn<ServerRow, Long> lag = column("Lag", "lag", ServerRow::lagMsProperty);
        lag.setCellFactory(c -> text(Formats::millis));
        lag.setComparator(Comparator.nullsFirst(Comparator.naturalOrder()));
        getColumns().add(lag);
        getColumns().add(duration("RTT", "rtt", ServerRow::rttMsProperty));
        getColumns().add(duration("Connect", "connect", ServerRow::connectMsProperty));
        getColumns().add(column("Connections", "connections", ServerRow::connectionsProperty));
        TableColumn<ServerRow, Instant> downSince = column("Down since", "down-since", ServerRow::downSinceProperty);
        downSince.setCellFactory(c -> text(Formats::time));
        downSince.setComparator(Comparator.nullsFirst(Comparator.naturalOrder()));
        getColumns().add(downSince);
        TableColumn<ServerRow, Instant> lastOk = column("Last OK", "last-ok", ServerRow::lastOkProperty);
        lastOk.setCellFactory(c -> text(Formats::time));
        lastOk.setComparator(Comparator.nullsFirst(Comparator.naturalOrder()));
        getColumns().add(lastOk);
        getSortOrder().add(address);
        address.setPrefWidth(130);
    }

    /** Host, then port as a number: 127.0.0.1:33062 before 127.0.0.1:33063, and :9 before :10. */
    private static String sortableAddress(String address) {
        int colon = address.lastIndexOf(':');
        return address.substring(0, colon + 1) + String.format("%05d", Integer.parseInt(address.substring(colon + 1)));
    }

    private static <T> TableColumn<ServerRow, T> column(String title, String id,
                                                        Function<ServerRow, ObservableValue<T>> value) {
        TableColumn<ServerRow, T> column = new TableColumn<>(title);
        column.setId("column-" + id);
        column.setCellValueFactory(cell -> value.apply(cell.getValue()));
        return column;
    }

    /** Milliseconds with a fraction ("0.42 ms"), "-" and sorted first when not measured. */
    private static TableColumn<ServerRow, Double> duration(String title, String id,
                                                           Function<ServerRow, ObservableValue<Double>> value) {
        TableColumn<ServerRow, Double> column = column(title, id, value);
        column.setCellFactory(c -> text(Formats::millis));
        column.setComparator(Comparator.nullsFirst(Comparator.naturalOrder()));
        return column;
    }

    private static <T> TableCell<ServerRow, T> text(Function<T, String> format) {
        return new TableCell<>() {
            @Override
            protected void updateItem(T item, boolean empty) {
                super.updateItem(item, empty);
                setText(empty || item == null ? (empty ? null : format.apply(null)) : format.apply(item));
            }
        };
    }

    /** The health word on its colour. */
    private static final class HealthCell extends TableCell<ServerRow, String> {
        @Override
        protected void updateItem(String health, boolean empty) {
            super.updateItem(health, empty);
            if (empty || health == null) {
                setText(null);
                setStyle("");
            } else {
                setText(health);
                setStyle("-fx-text-fill: white; -fx-font-weight: bold; -fx-background-color: "
                        + Formats.healthColour(health) + "; -fx-background-insets: 2; -fx-alignment: center;");
            }
        }
    }
}
