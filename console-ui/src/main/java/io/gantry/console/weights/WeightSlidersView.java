package io.gantry.console.weights;

import javafx.collections.ListChangeListener;
import javafx.geometry.Insets;
import javafx.geometry.Pos;
import javafx.scene.control.Label;
import javafx.scene.control.ScrollPane;
import javafx.scene.control.Slider;
import javafx.scene.input.KeyCode;
import javafx.scene.layout.GridPane;
import javafx.scene.layout.Priority;
import javafx.scene.layout.ColumnConstraints;

/** A slider per server, 1 to 100, with the engine's weight beside it and what became of the last change. */
public final class WeightSlidersView extends ScrollPane {

    private final WeightSlidersViewModel model;
    private final GridPane grid = new GridPane();

    public WeightSlidersView(WeightSlidersViewModel model) {
        this.model = model;
        setId("weight-sliders");
        grid.setHgap(12);
        grid.setVgap(10);
        grid.setPadding(new Insets(12));
        ColumnConstraints name = new ColumnConstraints(140);
        ColumnConstraints slider = new ColumnConstraints(200, 420, Double.MAX_VALUE);
        slider.setHgrow(Priority.ALWAYS);
        ColumnConstraints weight = new ColumnConstraints(90);
        ColumnConstraints message = new ColumnConstraints(200, 360, Double.MAX_VALUE);
        grid.getColumnConstraints().addAll(name, slider, weight, message);
        setContent(grid);
        setFitToWidth(true);
        model.items().addListener((ListChangeListener<WeightItem>) change -> rebuild());
        rebuild();
    }

    private void rebuild() {
        grid.getChildren().clear();
        grid.addRow(0, header("Server"), header("Weight (1-100): drag and release to apply"), header("Engine"),
                header("Last change"));
        int row = 1;
        for (WeightItem item : model.items()) {
            Label address = new Label(item.address());
            // 0 to 100 for round ticks; the view-model sends at least 1, the lowest weight.
            Slider slider = new Slider(0, 100, item.valueProperty().get());
            slider.setId("weight-slider-" + item.address());
            slider.setShowTickMarks(true);
            slider.setShowTickLabels(true);
            slider.setMajorTickUnit(25);
            slider.setMinorTickCount(4);
            slider.setBlockIncrement(5);
            slider.valueProperty().bindBidirectional(item.valueProperty());
            slider.valueChangingProperty().addListener((o, was, changing) -> {
                if (changing) {
                    item.draggingProperty().set(true);
                } else {
                    model.release(item);
                }
            });
            // A click on the track moves the slider without "changing"; a key press neither.
            slider.setOnMouseReleased(e -> model.release(item));
            slider.setOnKeyReleased(e -> {
                if (e.getCode().isArrowKey() || e.getCode() == KeyCode.HOME || e.getCode() == KeyCode.END) {
                    model.release(item);
                }
            });
            slider.disableProperty().bind(item.pendingProperty());
            Label engineWeight = new Label();
            engineWeight.setId("weight-engine-" + item.address());
            engineWeight.textProperty().bind(item.engineWeightProperty().asString());
            engineWeight.setStyle("-fx-font-weight: bold; -fx-font-size: 14px;");
            engineWeight.setAlignment(Pos.CENTER_RIGHT);
            Label message = new Label();
            message.setId("weight-message-" + item.address());
            message.setWrapText(true);
            message.textProperty().bind(item.messageProperty());
            message.styleProperty().bind(javafx.beans.binding.Bindings.when(item.failedProperty())
                    .then("-fx-text-fill: #c62828;").otherwise("-fx-text-fill: #2e7d32;"));
            grid.addRow(row++, address, slider, engineWeight, message);
        }
    }

    private static Label header(String text) {
        Label label = new Label(text);
        label.setStyle("-fx-font-weight: bold;");
        return label;
    }
}
