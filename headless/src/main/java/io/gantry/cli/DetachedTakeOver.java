package io.gantry.cli;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code gantry run --take-over --detach}: starts this same command line without {@code --detach} as a process of its
 * own, and returns once that Gantry serves, the take-over done, or once it stopped. That is what {@code systemctl
 * reload} needs of its command: it returns, and the process it started stays in the service (systemd makes it the
 * main one when the Gantry taken over says so, {@link RunCommand}).
 *
 * <p>The new Gantry says it serves with one line on its standard output, a pipe to this process; its log goes to the
 * standard error both share (the journal, under systemd).
 */
final class DetachedTakeOver {

    /** Set for the Gantry started here, to this process's id: it then reports on standard output once it serves. */
    static final String PARENT_VARIABLE = "GANTRY_DETACHED_FROM";
    private static final String SERVING = "gantry-serving";
    private static final String JPACKAGE_RELAUNCH_VARIABLE = "_JPACKAGE_LAUNCHER";
    private static final Logger LOG = LoggerFactory.getLogger(DetachedTakeOver.class);

    private DetachedTakeOver() {
    }

    /**
     * Starts the Gantry taking over and waits for it.
     *
     * @param detachFlag the flag left out of its command line
     * @param patience   how long it may take to serve: its start, then its {@code --take-over-timeout}
     * @return 0 once it serves; its exit status if it stopped first; 1 if it neither served nor stopped in time
     */
    static int start(String detachFlag, Duration patience) throws InterruptedException {
        ProcessHandle.Info self = ProcessHandle.current().info();
        Optional<String> command = self.command();
        Optional<String[]> arguments = self.arguments();
        if (command.isEmpty() || arguments.isEmpty()) {
            LOG.error("gantry: {} cannot start the Gantry taking over: the system does not give this process's "
                    + "command line to repeat; run 'gantry run ... --take-over' in the background instead", detachFlag);
            return 1;
        }
        List<String> line = new ArrayList<>();
        line.add(command.get());
        for (String argument : arguments.get()) {
            if (!argument.equals(detachFlag)) {
                line.add(argument);
            }
        }
        ProcessBuilder builder = new ProcessBuilder(line).redirectInput(ProcessBuilder.Redirect.from(new File(
                "/dev/null"))).redirectError(ProcessBuilder.Redirect.INHERIT);
        builder.environment().put(PARENT_VARIABLE, Long.toString(ProcessHandle.current().pid()));
        // Set by the packaged (jpackage) launcher for its own re-launch: inherited, it makes the new launcher skip its
        // configuration and take 'run' for the main class.
        builder.environment().remove(JPACKAGE_RELAUNCH_VARIABLE);
        Process gantry;
        try {
            gantry = builder.start();
        } catch (IOException e) {
            LOG.error("gantry: {} cannot start the Gantry taking over ({}): {}", detachFlag, command.get(),
                    e.getMessage());
            return 1;
        }
        LOG.info("gantry: started the Gantry taking over as process {}; waiting up to {} s until it serves",
                gantry.pid(), patience.toSeconds());
        CompletableFuture<Object> outcome = CompletableFuture.anyOf(servingLine(gantry), gantry.onExit());
        try {
            outcome.get(patience.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            LOG.error("gantry: the Gantry taking over (process {}) did not serve within {} s; it runs on, see its log",
                    gantry.pid(), patience.toSeconds());
            return 1;
        } catch (ExecutionException e) {
            throw new IllegalStateException(e);
        }
        if (gantry.isAlive()) {
            LOG.info("gantry: the Gantry taking over (process {}) serves; the take-over is done", gantry.pid());
            return 0;
        }
        int status = gantry.exitValue();
        LOG.error("gantry: the Gantry taking over (process {}) stopped with exit status {} before it served (its log "
                + "says why); the running Gantry serves on", gantry.pid(), status);
        return status == 0 ? 1 : status;
    }

    /** Completes when the process reports that it serves; never, if it stops first. */
    private static CompletableFuture<Void> servingLine(Process gantry) {
        CompletableFuture<Void> serving = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader output = new BufferedReader(new InputStreamReader(gantry.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line = output.readLine(); line != null; line = output.readLine()) {
                    if (line.startsWith(SERVING)) {
                        serving.complete(null);
                        return;
                    }
                    System.out.println(line);
                }
            } catch (IOException e) {
                LOG.debug("gantry: reading the new Gantry's output: {}", e.toString());
            }
        }, "gantry-detached-output");
        reader.setDaemon(true);
        reader.start();
        return serving;
    }

    /**
     * In the Gantry started by {@link #start}: says on standard output that it serves, then closes it, since no one
     * reads it after the starting process returned.
     */
    static void reportServing(Map<String, String> environment) {
        if (environment.containsKey(PARENT_VARIABLE)) {
            System.out.println(SERVING + " pid=" + ProcessHandle.current().pid());
            System.out.close();
        }
    }
}
