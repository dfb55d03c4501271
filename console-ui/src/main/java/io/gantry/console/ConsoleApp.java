package io.gantry.console;

import java.nio.file.Path;
import javafx.application.Application;
import javafx.stage.Stage;

/** The JavaFX application; started by {@link ConsoleLauncher}, which parses the command line. */
public final class ConsoleApp extends Application {

    private Console console;

    @Override
    public void start(Stage stage) {
        String socket = getParameters().getNamed().get("socket");
        console = Console.open(stage, Path.of(socket));
        switch (getParameters().getNamed().getOrDefault("tab", "timeline")) {
            case "chart" -> console.view().showChart();
            case "weights" -> console.view().showWeights();
            default -> console.view().showTimeline();
        }
    }

    @Override
    public void stop() {
        if (console != null) {
            console.close();
        }
    }
}
