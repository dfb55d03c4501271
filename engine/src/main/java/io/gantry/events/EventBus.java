package io.gantry.events;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One bus, many subscribers: every published event goes to every subscriber, in the order it was published, on
 * that subscriber's own thread ({@code gantry-events-<name>}).
 *
 * <p>Publishing is lock-free: the event is appended to each subscriber's queue and the subscriber's thread woken if
 * it sleeps; nothing waits. Each queue is bounded: an event that finds a subscriber's queue full is dropped for that
 * subscriber only, counted, and the subscriber told ({@link Subscriber#onDropped}) before its next event. A
 * subscriber that throws is logged and keeps its subscription.
 */
public final class EventBus implements EventPublisher, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(EventBus.class);
    /** How long {@link Subscription#close()} lets a subscriber finish what it holds. */
    private static final Duration DRAIN = Duration.ofSeconds(5);

    private final List<Subscription> subscriptions = new CopyOnWriteArrayList<>();

    /** Hears the events of a bus, on its own thread. */
    public interface Subscriber {

        /** One event; called on the subscription's thread, one at a time, in publishing order. */
        void onEvent(EngineEvent event);

        /**
         * Events were dropped because the queue was full; called on the subscription's thread before the next event
         * that fit.
         *
         * @param count how many were dropped since the last call
         */
        default void onDropped(long count) {
        }
    }

    /**
     * Adds a subscriber; it hears every event published from now on.
     *
     * @param name     names the thread ({@code gantry-events-<name>}) and the log lines
     * @param capacity most events waiting for it; more are dropped (for it alone)
     */
    public Subscription subscribe(String name, int capacity, Subscriber subscriber) {
        Subscription subscription = new Subscription(name, capacity, subscriber);
        subscriptions.add(subscription);
        subscription.thread.start();
        return subscription;
    }

    @Override
    public void publish(EngineEvent event) {
        Objects.requireNonNull(event, "event");
        for (Subscription subscription : subscriptions) {
            subscription.offer(event);
        }
    }

    /** Closes every subscription, each delivering what it holds first (a few seconds at most). */
    @Override
    public void close() {
        for (Subscription subscription : subscriptions) {
            subscription.close();
        }
    }

    /** A subscriber's place on the bus: its queue and its thread. */
    public final class Subscription implements AutoCloseable {

        private final String name;
        private final int capacity;
        private final Subscriber subscriber;
        private final Queue<EngineEvent> queue = new ConcurrentLinkedQueue<>();
        private final AtomicInteger size = new AtomicInteger();
        private final AtomicLong dropped = new AtomicLong();
        private final Thread thread;
        private volatile boolean parked;
        private volatile boolean closing;

        private Subscription(String name, int capacity, Subscriber subscriber) {
            if (capacity < 1) {
                throw new IllegalArgumentException("capacity must be at least 1, not " + capacity);
            }
            this.name = Objects.requireNonNull(name, "name");
            this.capacity = capacity;
            this.subscriber = Objects.requireNonNull(subscriber, "subscriber");
            this.thread = new Thread(this::deliver, "gantry-events-" + name);
            this.thread.setDaemon(true);
        }

        /** Called by publishers: append and wake, or count a drop. Never blocks. */
        private void offer(EngineEvent event) {
            if (closing) {
                return;
            }
            if (size.incrementAndGet() > capacity) {
                size.decrementAndGet();
                dropped.incrementAndGet();
            } else {
                queue.offer(event);
            }
            // The thread sets `parked` before it looks at the queue once more, so either it sees this event or it
            // is seen parked here and woken.
            if (parked) {
                LockSupport.unpark(thread);
            }
        }

        private void deliver() {
            long reported = 0;
            while (true) {
                long drops = dropped.get();
                if (drops > reported) {
                    long count = drops - reported;
                    reported = drops;
                    LOG.warn("events: subscriber {} fell behind; dropped {} events (its queue holds {})", name,
                            count, capacity);
                    safely(() -> subscriber.onDropped(count), "onDropped");
                }
                EngineEvent event = queue.poll();
                if (event == null) {
                    if (closing) {
                        return;
                    }
                    parked = true;
                    if (queue.isEmpty() && !closing && dropped.get() == reported) {
                        LockSupport.parkNanos(this, TimeUnit.SECONDS.toNanos(1));
                    }
                    parked = false;
                    continue;
                }
                size.decrementAndGet();
                safely(() -> subscriber.onEvent(event), "onEvent");
            }
        }

        private void safely(Runnable call, String what) {
            try {
                call.run();
            } catch (RuntimeException e) {
                LOG.error("events: subscriber {} failed in {}: {}", name, what, e.toString(), e);
            }
        }

        public String name() {
            return name;
        }

        /** Events dropped for this subscriber so far. */
        public long dropped() {
            return dropped.get();
        }

        /** Events waiting for this subscriber now. */
        public int pending() {
            return size.get();
        }

        /**
         * Takes no more events, delivers those it holds (waiting a few seconds at most), and ends its thread. Calling
         * it again, or from the subscriber itself, does not wait.
         */
        @Override
        public void close() {
            closing = true;
            subscriptions.remove(this);
            LockSupport.unpark(thread);
            if (Thread.currentThread() == thread) {
                return;
            }
            try {
                thread.join(DRAIN.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (thread.isAlive()) {
                LOG.warn("events: subscriber {} did not finish its {} events within {} s; left behind", name,
                        size.get(), DRAIN.toSeconds());
            }
        }
    }
}
