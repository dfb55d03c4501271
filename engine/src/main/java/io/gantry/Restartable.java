package io.gantry;

import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A part that holds the data directory or a port (the Authority's recorder and pruner, the admin socket, the metrics
 * port): stopped while a Gantry taking over borrows them, and made again from the same recipe if it gives them back.
 */
final class Restartable<T extends AutoCloseable> implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Restartable.class);

    private final String name;
    private final Supplier<T> maker;
    private T running;

    /** Makes the part now; a failure is thrown, as a part's start is. */
    Restartable(String name, Supplier<T> maker) {
        this.name = name;
        this.maker = maker;
        this.running = maker.get();
    }

    /** The part, empty while it is stopped. */
    synchronized Optional<T> current() {
        return Optional.ofNullable(running);
    }

    /** Stops the part; a failure to close is logged, and the part counts as stopped. */
    synchronized void stop() {
        if (running == null) {
            return;
        }
        try {
            running.close();
        } catch (Exception e) {
            LOG.error("gantry: stopping {} failed: {}", name, e.toString(), e);
        }
        running = null;
    }

    /** Makes the part again if it is stopped. */
    synchronized void restart() {
        if (running == null) {
            running = maker.get();
        }
    }

    @Override
    public void close() {
        stop();
    }
}
