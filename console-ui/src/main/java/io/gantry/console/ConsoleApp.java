package io.gantry.console;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import javafx.application.Application;
import javafx.stage.Stage;

/** The JavaFX application; started by {@link ConsoleLauncher}, which parses the command line. */
public final class ConsoleApp extends Application {

    /** The chart windows by their names on the command line. */
    static final Map<String, Duration> WINDOWS = windows();

    private Console console;

    @Override
    public void start(Stage stage) {
        StartupOutput.toolkitStarted();
        String socket = getParameters().getNamed().get("socket");
        console = Console.open(stage, Path.of(socket));
        console.models().chart().windowProperty().set(WINDOWS.get(getParameters().getNamed()
                .getOrDefault("window", "15m")));
        switch (getParameters().getNamed().getOrDefault("tab", "timeline")) {
            case "chart" -> console.view().showChart();
            case "weights" -> console.view().showWeights();
            case "queries" -> console.view().showQueries();
            default -> console.view().showTimeline();
        }
    }

    private static Map<String, Duration> windows() {
        Map<String, Duration> windows = new LinkedHashMap<>();
        windows.put("5m", Duration.ofMinutes(5));
        windows.put("15m", Duration.ofMinutes(15));
        windows.put("1h", Duration.ofHours(1));
        windows.put("6h", Duration.ofHours(6));
        windows.put("1d", Duration.ofDays(1));
        return windows;
    }

    @Override
    public void stop() {
        if (console != null) {
            console.close();
        }
    }
}
