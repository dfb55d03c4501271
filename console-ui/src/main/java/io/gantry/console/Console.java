package io.gantry.console;

import io.gantry.console.ui.UiExecutor;
import java.nio.file.Path;
import java.time.Clock;
import javafx.scene.Scene;
import javafx.stage.Stage;

/** The console in a window: its models, its view, a stage titled after the engine. */
public final class Console implements AutoCloseable {

    private final ConsoleModels models;
    private final MainView view;
    private final Stage stage;

    private Console(ConsoleModels models, MainView view, Stage stage) {
        this.models = models;
        this.view = view;
        this.stage = stage;
    }

    /** Fills {@code stage} with a console of the engine at {@code socket} and starts connecting; on the FX thread. */
    public static Console open(Stage stage, Path socket) {
        ConsoleModels models = new ConsoleModels(socket, UiExecutor.fx(), Clock.systemUTC());
        MainView view = new MainView(models);
        stage.setScene(new Scene(view, 1280, 820));
        stage.titleProperty().bind(models.connection().titleProperty());
        stage.show();
        models.start();
        return new Console(models, view, stage);
    }

    public ConsoleModels models() {
        return models;
    }

    public MainView view() {
        return view;
    }

    public Stage stage() {
        return stage;
    }

    @Override
    public void close() {
        models.close();
    }
}
