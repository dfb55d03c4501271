package io.gantry.console.ui;

import java.util.Objects;
import java.util.concurrent.Executor;
import javafx.application.Platform;

/**
 * The one way onto the JavaFX application thread: every result of the engine, every push and every connection
 * change reaches the UI through here ({@link Platform#runLater}, in the order given). View-models take it as an
 * {@link Executor}; their tests give them {@link #direct()} and run without the FX toolkit.
 */
public final class UiExecutor implements Executor {

    private final Executor target;

    private UiExecutor(Executor target) {
        this.target = target;
    }

    /** Runs each task on the JavaFX application thread, in order. */
    public static UiExecutor fx() {
        return new UiExecutor(Platform::runLater);
    }

    /** Runs each task at once on the caller's thread (tests without the toolkit). */
    public static UiExecutor direct() {
        return new UiExecutor(Runnable::run);
    }

    @Override
    public void execute(Runnable task) {
        Objects.requireNonNull(task, "task");
        target.execute(() -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                // Never swallowed: the operator's console says so on standard error, and the next task still runs.
                System.err.println("gantry console: a UI update failed: " + e);
                e.printStackTrace();
            }
        });
    }
}
