package io.gantry.console.export;

import java.io.File;
import java.nio.file.Path;
import javafx.geometry.Insets;
import javafx.scene.Scene;
import javafx.scene.control.Button;
import javafx.scene.control.ComboBox;
import javafx.scene.control.Label;
import javafx.scene.control.ProgressBar;
import javafx.scene.control.TextField;
import javafx.scene.layout.GridPane;
import javafx.scene.layout.HBox;
import javafx.scene.layout.Priority;
import javafx.stage.FileChooser;
import javafx.stage.Modality;
import javafx.stage.Stage;
import javafx.stage.Window;

/** The export dialog: a time range, a server filter, a file, and the export's progress. */
public final class ExportDialog extends Stage {

    public ExportDialog(Window owner, ExportViewModel model) {
        initOwner(owner);
        initModality(Modality.NONE);
        setTitle("Export health history as CSV");
        GridPane grid = new GridPane();
        grid.setId("export-dialog");
        grid.setHgap(8);
        grid.setVgap(8);
        grid.setPadding(new Insets(14));

        TextField from = new TextField();
        from.setId("export-from");
        from.textProperty().bindBidirectional(model.fromProperty());
        from.setPromptText("empty: the oldest sample");
        TextField until = new TextField();
        until.setId("export-until");
        until.textProperty().bindBidirectional(model.untilProperty());
        until.setPromptText("empty: now");
        ComboBox<String> server = new ComboBox<>(model.servers());
        server.setId("export-server");
        server.valueProperty().bindBidirectional(model.serverProperty());
        server.setMaxWidth(Double.MAX_VALUE);
        TextField file = new TextField();
        file.setId("export-file");
        file.textProperty().bindBidirectional(model.fileProperty());
        file.setPrefColumnCount(32);
        Button choose = new Button("Choose ...");
        choose.setOnAction(e -> {
            FileChooser chooser = new FileChooser();
            chooser.setTitle("Write the health history to");
            chooser.getExtensionFilters().add(new FileChooser.ExtensionFilter("CSV", "*.csv"));
            chooser.setInitialFileName("gantry-health.csv");
            if (!model.fileProperty().get().isBlank()) {
                File current = Path.of(model.fileProperty().get()).toAbsolutePath().getParent().toFile();
                if (current.isDirectory()) {
                    chooser.setInitialDirectory(current);
                }
            }
            File chosen = chooser.showSaveDialog(this);
            if (chosen != null) {
                model.fileProperty().set(chosen.getAbsolutePath());
            }
        });
        HBox fileRow = new HBox(6, file, choose);
        HBox.setHgrow(file, Priority.ALWAYS);

        ProgressBar progress = new ProgressBar();
        progress.setId("export-progress");
        progress.setMaxWidth(Double.MAX_VALUE);
        progress.progressProperty().bind(model.progressProperty());
        Label message = new Label();
        message.setId("export-message");
        message.setWrapText(true);
        message.textProperty().bind(model.messageProperty());
        message.styleProperty().bind(javafx.beans.binding.Bindings.when(model.failedProperty())
                .then("-fx-text-fill: #c62828;").otherwise(""));

        Button export = new Button("Export");
        export.setId("export-start");
        export.setDefaultButton(true);
        export.disableProperty().bind(model.runningProperty());
        export.setOnAction(e -> model.start());
        Button cancel = new Button("Cancel export");
        cancel.disableProperty().bind(model.runningProperty().not());
        cancel.setOnAction(e -> model.cancel());
        Button close = new Button("Close");
        close.setCancelButton(true);
        close.setOnAction(e -> hide());

        grid.addRow(0, new Label("From"), from, new Label("ISO-8601 time, date, -1h, -7d, now"));
        grid.addRow(1, new Label("Until"), until, new Label("exclusive; empty or now for now"));
        grid.addRow(2, new Label("Server"), server);
        grid.addRow(3, new Label("File"), fileRow);
        GridPane.setColumnSpan(fileRow, 2);
        grid.add(progress, 0, 4, 3, 1);
        grid.add(message, 0, 5, 3, 1);
        HBox buttons = new HBox(8, export, cancel, close);
        grid.add(buttons, 0, 6, 3, 1);
        setScene(new Scene(grid));
    }
}
