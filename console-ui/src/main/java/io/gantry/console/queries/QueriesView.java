package io.gantry.console.queries;

import io.gantry.console.ui.Formats;
import java.io.File;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import javafx.beans.binding.Bindings;
import javafx.beans.property.ReadOnlyObjectWrapper;
import javafx.collections.ListChangeListener;
import javafx.collections.transformation.SortedList;
import javafx.geometry.Insets;
import javafx.geometry.Orientation;
import javafx.geometry.Pos;
import javafx.geometry.Side;
import javafx.scene.chart.LineChart;
import javafx.scene.chart.NumberAxis;
import javafx.scene.chart.XYChart;
import javafx.scene.control.Button;
import javafx.scene.control.Label;
import javafx.scene.control.SplitPane;
import javafx.scene.control.TableCell;
import javafx.scene.control.TableColumn;
import javafx.scene.control.TableView;
import javafx.scene.control.TextField;
import javafx.scene.control.ToolBar;
import javafx.scene.layout.BorderPane;
import javafx.scene.layout.VBox;
import javafx.stage.FileChooser;
import javafx.util.StringConverter;
import org.controlsfx.control.textfield.TextFields;

/**
 * The statement digests' busiest shapes in a sortable table (largest total time first), a text filter, and below
 * the selected shape (the busiest until the operator picks one): where it ran, why, and its latency over the last
 * minutes; the shown rows exported as CSV.
 */
public final class QueriesView extends BorderPane {

    private final QueriesViewModel model;
    private final TableView<QueryRow> table;
    private final XYChart.Series<Number, Number> mean = new XYChart.Series<>();
    private final XYChart.Series<Number, Number> p99 = new XYChart.Series<>();

    public QueriesView(QueriesViewModel model) {
        this.model = model;
        setId("queries");
        SortedList<QueryRow> sorted = new SortedList<>(model.filtered());
        table = new TableView<>(sorted);
        table.setId("queries-table");
        table.setPlaceholder(new Label("No statement counted yet."));
        sorted.comparatorProperty().bind(table.comparatorProperty());
        TableColumn<QueryRow, String> query = new TableColumn<>("Query");
        query.setPrefWidth(360);
        query.setCellValueFactory(cell -> new ReadOnlyObjectWrapper<>(cell.getValue().query()));
        table.getColumns().add(query);
        table.getColumns().add(text("Schema", 80, QueryRow::schema));
        table.getColumns().add(text("Account", 80, QueryRow::account));
        table.getColumns().add(number("Count", 70, QueryRow::count, false));
        table.getColumns().add(number("Errors", 60, QueryRow::errors, false));
        TableColumn<QueryRow, Number> total = number("Total ms", 85, QueryRow::totalMillis, true);
        table.getColumns().add(total);
        table.getColumns().add(number("Mean ms", 70, QueryRow::meanMillis, true));
        table.getColumns().add(number("p50 ms", 65, QueryRow::p50Millis, true));
        table.getColumns().add(number("p95 ms", 65, QueryRow::p95Millis, true));
        table.getColumns().add(number("p99 ms", 65, QueryRow::p99Millis, true));
        table.getColumns().add(number("Max ms", 70, QueryRow::maxMillis, true));
        table.getColumns().add(number("Primary", 65, row -> row.shape().onPrimary(), false));
        table.getColumns().add(number("Replica", 65, row -> row.shape().onReplica(), false));
        table.getColumns().add(number("Cache", 55, row -> row.shape().onCache(), false));
        table.getColumns().add(number("Gantry", 55, row -> row.shape().onGantry(), false));
        total.setSortType(TableColumn.SortType.DESCENDING);
        table.getSortOrder().add(total);
        table.getSelectionModel().selectedItemProperty().addListener((o, was, now) -> {
            if (now != null) {
                model.select(now);
            }
        });
        // A push replaces every row: the selection follows the selected shape's key.
        sorted.addListener((ListChangeListener<QueryRow>) change -> reselect(sorted));

        TextField filter = TextFields.createClearableTextField();
        filter.setId("queries-filter");
        filter.setPromptText("Filter: text of the query, schema or account");
        filter.setPrefColumnCount(30);
        filter.textProperty().bindBidirectional(model.filterProperty());
        Label shown = new Label();
        shown.setId("queries-shown");
        shown.textProperty().bind(Bindings.createStringBinding(() -> model.filtered().size() + " of "
                + model.rows().size() + " shown", model.filtered(), model.rows()));
        Button export = new Button("Export CSV ...");
        export.setId("export-queries");
        export.setOnAction(e -> chooseAndExport());
        Label message = new Label();
        message.setId("queries-message");
        message.textProperty().bind(model.messageProperty());
        message.styleProperty().bind(Bindings.when(model.failedProperty())
                .then("-fx-text-fill: #c62828;").otherwise(""));
        setTop(new ToolBar(filter, shown, export, message));

        SplitPane split = new SplitPane(table, details());
        split.setOrientation(Orientation.VERTICAL);
        split.setDividerPositions(0.55);
        setCenter(split);
        setPadding(new Insets(4));
        model.history().addListener((ListChangeListener<LatencyPoint>) change -> draw());
    }

    private VBox details() {
        Label shape = new Label();
        shape.setId("queries-selected");
        shape.setWrapText(true);
        shape.setStyle("-fx-font-family: monospace;");
        Label where = new Label();
        where.setId("queries-where");
        Label reasons = new Label();
        reasons.setId("queries-reasons");
        reasons.setWrapText(true);
        model.selectedProperty().addListener((o, was, now) -> {
            shape.setText(now == null ? "Select a shape to see where it ran and its latency over time."
                    : now.query() + (now.schema().isEmpty() ? "" : "   (" + now.schema() + ", " + now.account()
                    + ")"));
            where.setText(now == null ? "" : "Ran on: " + now.whereItRan() + (now.errors() == 0 ? ""
                    : "   errors: " + now.shape().errorCodes()));
            reasons.setText(now == null || now.shape().reasons().isEmpty() ? ""
                    : "Routing reasons: " + now.shape().reasons());
        });
        shape.setText("Select a shape to see where it ran and its latency over time.");
        NumberAxis x = new NumberAxis();
        x.setForceZeroInRange(false);
        x.setTickLabelFormatter(new StringConverter<>() {
            @Override
            public String toString(Number millis) {
                return Formats.time(Instant.ofEpochMilli(millis.longValue()));
            }

            @Override
            public Number fromString(String s) {
                return null;
            }
        });
        NumberAxis y = new NumberAxis();
        y.setLabel("ms");
        LineChart<Number, Number> chart = new LineChart<>(x, y);
        chart.setId("queries-latency");
        chart.setTitle("Latency of the selected shape");
        chart.setAnimated(false);
        chart.setCreateSymbols(true);
        chart.setMinHeight(160);
        chart.setLegendSide(Side.RIGHT);
        mean.setName("mean over each 2 s");
        p99.setName("p99 since first seen");
        chart.getData().add(mean);
        chart.getData().add(p99);
        VBox box = new VBox(4, shape, where, reasons, chart);
        VBox.setVgrow(chart, javafx.scene.layout.Priority.ALWAYS);
        box.setPadding(new Insets(4));
        return box;
    }

    private void draw() {
        List<XYChart.Data<Number, Number>> means = new ArrayList<>();
        List<XYChart.Data<Number, Number>> p99s = new ArrayList<>();
        for (LatencyPoint point : model.history()) {
            if (!Double.isNaN(point.meanMillis())) {
                means.add(new XYChart.Data<>(point.atMillis(), point.meanMillis()));
            }
            p99s.add(new XYChart.Data<>(point.atMillis(), point.p99Millis()));
        }
        mean.getData().setAll(means);
        p99.getData().setAll(p99s);
    }

    /** Until the operator picks a shape, the busiest one (the first by total time) is shown. */
    private void reselect(List<QueryRow> rows) {
        String key = model.selectedKeyProperty().get();
        if (key == null) {
            model.filtered().stream().findFirst().ifPresent(busiest -> table.getSelectionModel()
                    .select(rows.indexOf(busiest)));
            return;
        }
        if (table.getSelectionModel().getSelectedItem() != null
                && table.getSelectionModel().getSelectedItem().key().equals(key)) {
            return;
        }
        for (int i = 0; i < rows.size(); i++) {
            if (rows.get(i).key().equals(key)) {
                table.getSelectionModel().select(i);
                return;
            }
        }
    }

    private void chooseAndExport() {
        FileChooser chooser = new FileChooser();
        chooser.setTitle("Export the shown shapes as CSV");
        chooser.setInitialFileName("gantry-queries.csv");
        chooser.getExtensionFilters().add(new FileChooser.ExtensionFilter("CSV", "*.csv"));
        File file = chooser.showSaveDialog(getScene().getWindow());
        if (file != null) {
            model.exportCsv(file.toPath());
        }
    }

    private static TableColumn<QueryRow, String> text(String title, double width, Function<QueryRow, String> value) {
        TableColumn<QueryRow, String> column = new TableColumn<>(title);
        column.setPrefWidth(width);
        column.setCellValueFactory(cell -> new ReadOnlyObjectWrapper<>(value.apply(cell.getValue())));
        return column;
    }

    /** A column of numbers that sorts by value, right-aligned; {@code millis}: three decimals. */
    private static TableColumn<QueryRow, Number> number(String title, double width, Function<QueryRow, Number> value,
                                                       boolean millis) {
        TableColumn<QueryRow, Number> column = new TableColumn<>(title);
        column.setPrefWidth(width);
        column.setCellValueFactory(cell -> new ReadOnlyObjectWrapper<>(value.apply(cell.getValue())));
        column.setComparator(Comparator.comparingDouble(Number::doubleValue));
        column.setCellFactory(c -> new TableCell<>() {
            @Override
            protected void updateItem(Number item, boolean empty) {
                super.updateItem(item, empty);
                setText(empty || item == null ? null : millis
                        ? String.format(Locale.ROOT, "%.3f", item.doubleValue()) : item.toString());
                setAlignment(Pos.CENTER_RIGHT);
            }
        });
        return column;
    }
}
