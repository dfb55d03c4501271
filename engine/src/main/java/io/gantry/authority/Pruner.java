package io.gantry.authority;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.ToIntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes health samples and events older than the retention: once at {@link #start} and then every
 * {@link #PERIOD} (one hour), on its own daemon thread {@value #THREAD_NAME}. A failed run is logged and the next
 * one runs on schedule.
 */
public final class Pruner implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Pruner.class);

    /** Time between two runs: one hour. */
    public static final Duration PERIOD = Duration.ofHours(1);

    /** The name of the pruning thread. */
    public static final String THREAD_NAME = "gantry-authority-prune";

    private final ToIntFunction<Instant> prune;
    private final Retention retention;
    private final Duration period;
    private final Clock clock;
    private final ScheduledExecutorService scheduler;

    Pruner(ToIntFunction<Instant> prune, Retention retention, Duration period, Clock clock) {
        this.prune = Objects.requireNonNull(prune, "prune");
        this.retention = Objects.requireNonNull(retention, "retention");
        this.period = Objects.requireNonNull(period, "period");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.scheduler = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, THREAD_NAME);
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Starts pruning {@code authority}: a run now, then one every {@link #PERIOD}.
     *
     * @param clock gives "now"; the cutoff is now minus the retention
     */
    public static Pruner start(Authority authority, Retention retention, Clock clock) {
        Pruner pruner = new Pruner(authority::pruneOlderThan, retention, PERIOD, clock);
        pruner.start();
        return pruner;
    }

    void start() {
        scheduler.scheduleWithFixedDelay(this::runSafely, 0, period.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * One run on the calling thread.
     *
     * @return how many rows were deleted
     */
    public int pruneNow() {
        Instant cutoff = clock.instant().minus(retention.duration());
        int deleted = prune.applyAsInt(cutoff);
        if (deleted > 0) {
            LOG.info("authority: pruned {} health samples and events older than {} (before {})", deleted,
                    retention.describe(), cutoff);
        } else {
            LOG.debug("authority: nothing older than {} to prune (before {})", retention.describe(), cutoff);
        }
        return deleted;
    }

    private void runSafely() {
        try {
            pruneNow();
        } catch (RuntimeException e) {
            // One failed run must not end the schedule; the next one may well succeed.
            LOG.error("authority: pruning failed, next try in {}: {}", new Retention(period).describe(), e.toString(),
                    e);
        }
    }

    /** Stops the schedule, letting a run in progress finish (up to 10 seconds) rather than interrupting H2. */
    @Override
    public void close() {
        scheduler.shutdown();
        try {
            if (!scheduler.awaitTermination(10, TimeUnit.SECONDS)) {
                LOG.warn("authority: pruning still running after 10 seconds; interrupting it");
                scheduler.shutdownNow();
            }
        } catch (InterruptedException e) {
            scheduler.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
