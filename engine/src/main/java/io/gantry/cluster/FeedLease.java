package io.gantry.cluster;

import io.gantry.topology.Upstreams;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lease on a cluster's change feed ({@code --cdc-sink} with {@code --cluster}): one instance at a time writes the
 * feed, the one holding the lease row in {@code feed_lease} on the primary. Every instance tries to take it every
 * third of the lease time; the holder renews it as often. Taking it raises the epoch, and the feed's position is
 * saved only under the current epoch, so an instance that lost the lease cannot save after it; it also stops
 * writing the sink once its last renewal is older than the lease time less a margin, before anyone else may take
 * it. A kill -9 of the holder leaves the lease to expire: another instance takes the feed over within the lease
 * time, from the saved position and the sink's own record of what it holds.
 *
 * <p>What the holder does with the feed is the {@link Holder}'s: open its stream when the lease is taken, close it
 * when the lease is lost (on this class's thread).
 */
public final class FeedLease implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(FeedLease.class);

    /** What runs the feed on this instance. */
    public interface Holder {
        /** This instance took the lease: start writing the feed from {@code position} (empty: none saved yet). */
        void taken(long epoch, Optional<String> position);

        /** This instance lost the lease (or stops): stop writing the feed now. */
        void lost(String why);

        /** Whether the feed stopped on its own (its sink or a save failed): the lease is taken again to restart it. */
        boolean stopped();
    }

    private final ClusterSettings settings;
    private final ClusterStore store;
    private final PrimaryConnection primary;
    private final Duration lease;
    private final Holder holder;
    private final Object lock = new Object();
    /** Guarded by {@link #lock}: the epoch held, 0 when none. */
    private long epoch;
    private volatile long writableUntilNanos;
    private volatile Optional<String> takenPosition = Optional.empty();
    private volatile boolean closed;
    private Thread thread;

    public FeedLease(ClusterSettings settings, Upstreams upstreams, Duration connectTimeout, Duration lease,
                     Holder holder) {
        this.settings = settings;
        this.store = new ClusterStore(settings.name(), settings.schema());
        this.primary = new PrimaryConnection(upstreams, store, connectTimeout);
        this.lease = lease;
        this.holder = holder;
    }

    public void start() {
        thread = new Thread(this::run, "gantry-cluster-feed");
        thread.setDaemon(true);
        thread.start();
    }

    /** Whether this instance holds the lease now, with time to spare: it may write the feed's sink. */
    public boolean mayWrite() {
        return epoch() != 0 && System.nanoTime() - writableUntilNanos < 0;
    }

    /** The position saved with the lease when this instance took it. */
    public Optional<String> takenPosition() {
        return takenPosition;
    }

    /**
     * Saves the feed's position under this instance's lease.
     *
     * @throws IllegalStateException when the lease is another instance's now, or the primary refused the save
     */
    public void savePosition(String gtidSet, String server) {
        synchronized (lock) {
            if (epoch == 0) {
                throw new IllegalStateException("this instance does not hold the cluster's feed lease");
            }
            try {
                if (!store.saveFeedPosition(primary.get(), settings.instance(), epoch, gtidSet, server)) {
                    throw new IllegalStateException("the cluster's feed lease (epoch " + epoch + ") was taken over "
                            + "by another instance: this one saves and writes no more");
                }
            } catch (SQLException e) {
                primary.drop();
                throw new IllegalStateException("the feed's position could not be saved on the primary "
                        + primary.target() + ": " + e.getMessage(), e);
            } catch (ClusterException e) {
                throw new IllegalStateException("the feed's position could not be saved: " + e.getMessage(), e);
            }
        }
    }

    private long epoch() {
        synchronized (lock) {
            return epoch;
        }
    }

    private void run() {
        long period = Math.max(100, lease.toMillis() / 3);
        while (!closed) {
            try {
                round();
            } catch (RuntimeException e) {
                LOG.error("cluster '{}': the feed's lease: {}", settings.name(), e.toString(), e);
            }
            try {
                Thread.sleep(period);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** One turn: renew the lease held (or give the feed up when it cannot be), or try to take it. */
    private void round() {
        long held = epoch();
        if (held != 0 && holder.stopped()) {
            lose("the feed stopped; taking the lease again to restart it");
            held = 0;
        }
        if (held != 0) {
            renew(held);
            return;
        }
        Optional<ClusterStore.Lease> taken;
        long started = System.nanoTime();
        synchronized (lock) {
            try {
                taken = store.takeLease(primary.get(), settings.instance(), lease.toMillis());
            } catch (SQLException | ClusterException e) {
                primary.drop();
                return; // no primary now: try again next turn
            }
            taken.ifPresent(l -> epoch = l.epoch());
        }
        if (taken.isPresent()) {
            writableUntilNanos = started + margin();
            takenPosition = taken.get().position();
            LOG.info("cluster '{}': this instance ({}) writes the change feed now (lease epoch {}, from {})",
                    settings.name(), settings.instance(), taken.get().epoch(),
                    taken.get().position().map(p -> "position " + p).orElse("no saved position"));
            try {
                holder.taken(taken.get().epoch(), taken.get().position());
            } catch (RuntimeException e) {
                // Holding the lease without writing would stall the feed: give it up for another instance to try.
                LOG.error("cluster '{}': this instance took the change feed's lease but cannot write the feed: {}",
                        settings.name(), e.toString(), e);
                release(taken.get().epoch());
            }
        }
    }

    private void release(long held) {
        synchronized (lock) {
            epoch = 0;
            try {
                store.releaseLease(primary.get(), settings.instance(), held);
            } catch (SQLException | ClusterException e) {
                primary.drop();
                LOG.warn("cluster '{}': could not give the feed's lease up ({}); another instance takes it when it "
                        + "expires", settings.name(), e.getMessage());
            }
        }
    }

    /**
     * Renews the lease of {@code held}. Another instance holding it now ends this instance's feed at once; a failed
     * renewal (no primary, an error) only once the time this instance may write has run out.
     */
    private void renew(long held) {
        long started = System.nanoTime();
        boolean takenOver;
        String failure = null;
        synchronized (lock) {
            try {
                takenOver = !store.renewLease(primary.get(), settings.instance(), held, lease.toMillis());
            } catch (SQLException | ClusterException e) {
                primary.drop();
                takenOver = false;
                failure = e.getMessage();
            }
        }
        if (takenOver) {
            lose("another instance took the lease");
        } else if (failure == null) {
            writableUntilNanos = started + margin();
        } else if (System.nanoTime() - writableUntilNanos >= 0) {
            lose("the lease could not be renewed: " + failure);
        }
    }

    /** The lease time less a fifth: an owner stops writing before anyone else may take the lease. */
    private long margin() {
        return TimeUnit.MILLISECONDS.toNanos(lease.toMillis() * 4 / 5);
    }

    private void lose(String why) {
        synchronized (lock) {
            epoch = 0;
        }
        LOG.warn("cluster '{}': this instance ({}) stops writing the change feed: {}", settings.name(),
                settings.instance(), why);
        holder.lost(why);
    }

    /** Stops the feed here (its stream saves its position while the lease is held), then gives the lease up. */
    @Override
    public void close() {
        closed = true;
        Thread running = thread;
        if (running != null) {
            running.interrupt();
            try {
                running.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        long held = epoch();
        if (held != 0) {
            holder.lost("Gantry is stopping");
            release(held);
            LOG.info("cluster '{}': gave the change feed's lease up (epoch {})", settings.name(), held);
        }
        synchronized (lock) {
            primary.drop();
        }
    }
}
