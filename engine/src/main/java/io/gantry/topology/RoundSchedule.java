package io.gantry.topology;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When the health loop's rounds run: every interval; every {@value #NO_PRIMARY_INTERVAL_MS} ms while no primary is
 * known (a promotion or a primary coming back is then seen within that); and as soon as possible when someone asks
 * ({@link #request}: the primary refused a write as read-only, a server was lost). Requests coalesce into one round,
 * which starts at least {@value #ON_DEMAND_GAP_MS} ms after the last one ended, so a stream of requests cannot keep
 * the servers busy answering checks. Rounds are numbered, so that whoever asked can tell when a round that started
 * after the request has finished ({@link #finished}).
 */
final class RoundSchedule implements Upstreams.HealthRounds, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RoundSchedule.class);

    /** How often servers are checked while no primary is known. */
    static final long NO_PRIMARY_INTERVAL_MS = 250;
    /** Rounds asked for on demand start at least this long after the last one ended. */
    private static final long ON_DEMAND_GAP_MS = 50;

    private final Runnable round;
    private final BooleanSupplier primaryKnown;
    private final ScheduledExecutorService scheduler;
    /** Guards the next round, when it is due, and the count of rounds started. */
    private final Object lock = new Object();
    private ScheduledFuture<?> nextRound;
    private long nextRoundAtNanos;
    private long roundsStarted;
    private volatile long roundsFinished;
    private volatile long lastRoundEndNanos = System.nanoTime();
    private volatile Duration interval;

    /**
     * @param round        one health round; it calls {@link #roundStarted} and {@link #roundFinished} itself, as
     *                     rounds run outside the schedule do (a list change, a test's round)
     * @param primaryKnown whether the last round found a primary
     */
    RoundSchedule(Runnable round, BooleanSupplier primaryKnown) {
        this.round = round;
        this.primaryKnown = primaryKnown;
        AtomicInteger count = new AtomicInteger();
        this.scheduler = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "gantry-health-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Runs a round every {@code interval} from now on. */
    void start(Duration every) {
        this.interval = every;
        schedule(every);
    }

    void roundStarted() {
        synchronized (lock) {
            roundsStarted++;
        }
    }

    void roundFinished() {
        lastRoundEndNanos = System.nanoTime();
        synchronized (lock) {
            roundsFinished++;
        }
    }

    @Override
    public long request(String reason) {
        long ticket;
        synchronized (lock) {
            ticket = roundsStarted + 1; // a round running now may have looked before the change
        }
        long sinceLast = System.nanoTime() - lastRoundEndNanos;
        long delayNanos = Math.max(0, TimeUnit.MILLISECONDS.toNanos(ON_DEMAND_GAP_MS) - sinceLast);
        if (schedule(Duration.ofNanos(delayNanos))) {
            LOG.debug("topology: checking every server now: {}", reason);
        }
        return ticket;
    }

    @Override
    public long finished() {
        return roundsFinished;
    }

    /** Puts the next round {@code delay} from now unless one is due sooner already; true when it moved. */
    private boolean schedule(Duration delay) {
        synchronized (lock) {
            if (interval == null || scheduler.isShutdown()) {
                return false; // not started (a test's own rounds only), or stopped
            }
            long at = System.nanoTime() + delay.toNanos();
            if (nextRound != null && nextRoundAtNanos - at <= 0) {
                return false;
            }
            if (nextRound != null) {
                nextRound.cancel(false);
            }
            nextRoundAtNanos = at;
            nextRound = scheduler.schedule(this::scheduledRound, delay.toNanos(), TimeUnit.NANOSECONDS);
            return true;
        }
    }

    private void scheduledRound() {
        synchronized (lock) {
            nextRound = null; // a request that comes while this round runs gets a round of its own after it
        }
        try {
            round.run();
        } catch (RuntimeException e) {
            // One bad round must not end the schedule.
            LOG.error("topology: health round failed: {}", e.toString(), e);
        }
        Duration every = interval;
        Duration noPrimary = Duration.ofMillis(NO_PRIMARY_INTERVAL_MS);
        schedule(primaryKnown.getAsBoolean() || every.compareTo(noPrimary) < 0 ? every : noPrimary);
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
