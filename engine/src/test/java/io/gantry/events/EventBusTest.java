package io.gantry.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class EventBusTest {

    private final EventBus bus = new EventBus();

    @AfterEach
    void close() {
        bus.close();
    }

    private static EngineEvent event(int n) {
        return new EngineEvent.StateChanged(null, Integer.toString(n));
    }

    private static int number(EngineEvent event) {
        return Integer.parseInt(((EngineEvent.StateChanged) event).what());
    }

    @Test
    void everySubscriberHearsEveryEventInPublishingOrder() {
        List<Integer> first = new CopyOnWriteArrayList<>();
        List<Integer> second = new CopyOnWriteArrayList<>();
        bus.subscribe("first", 1000, e -> first.add(number(e)));
        bus.subscribe("second", 1000, e -> second.add(number(e)));
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            bus.publish(event(i));
            expected.add(i);
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> first.size() == 500 && second.size() == 500);
        assertThat(first).isEqualTo(expected);
        assertThat(second).isEqualTo(expected);
    }

    @Test
    void aStuckSubscriberDropsItsOwnEventsWithoutSlowingThePublisherOrTheOthers() throws Exception {
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<Integer> stuck = new CopyOnWriteArrayList<>();
        AtomicLong droppedTold = new AtomicLong();
        EventBus.Subscription stuckSubscription = bus.subscribe("stuck", 10, new EventBus.Subscriber() {
            @Override
            public void onEvent(EngineEvent event) {
                stuck.add(number(event));
                inside.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }

            @Override
            public void onDropped(long count) {
                droppedTold.addAndGet(count);
            }
        });
        // A count, not a CopyOnWriteArrayList: 100 000 adds to one copy the array each time (quadratic), which took
        // over 10 s on a loaded machine and failed the test for the test's own sake.
        AtomicLong healthy = new AtomicLong();
        bus.subscribe("healthy", 200_000, e -> healthy.incrementAndGet());

        bus.publish(event(0));
        assertThat(inside.await(5, TimeUnit.SECONDS)).isTrue();
        long start = System.nanoTime();
        for (int i = 1; i < 100_000; i++) {
            bus.publish(event(i));
        }
        long publishMillis = (System.nanoTime() - start) / 1_000_000;
        assertThat(publishMillis).as("100 000 publishes with one subscriber stuck").isLessThan(2_000);
        await().atMost(Duration.ofSeconds(10)).until(() -> healthy.get() == 100_000);
        assertThat(stuckSubscription.pending()).isEqualTo(10);
        assertThat(stuckSubscription.dropped()).isEqualTo(100_000 - 11);

        release.countDown();
        await().atMost(Duration.ofSeconds(5)).until(() -> stuck.size() == 11);
        assertThat(stuck).containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
        await().atMost(Duration.ofSeconds(5)).until(() -> droppedTold.get() == 100_000 - 11);
    }

    @Test
    void aSubscriberThatThrowsKeepsItsSubscription() {
        List<Integer> heard = new CopyOnWriteArrayList<>();
        bus.subscribe("throws", 100, e -> {
            heard.add(number(e));
            throw new IllegalStateException("broken subscriber");
        });
        bus.publish(event(1));
        bus.publish(event(2));
        await().atMost(Duration.ofSeconds(5)).until(() -> heard.size() == 2);
    }

    @Test
    void closingASubscriptionDeliversWhatItHoldsAndThenNothingMore() {
        CountDownLatch release = new CountDownLatch(1);
        List<Integer> heard = new CopyOnWriteArrayList<>();
        EventBus.Subscription subscription = bus.subscribe("slow", 100, e -> {
            try {
                release.await();
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            heard.add(number(e));
        });
        for (int i = 0; i < 5; i++) {
            bus.publish(event(i));
        }
        release.countDown();
        subscription.close();
        assertThat(heard).containsExactly(0, 1, 2, 3, 4);
        bus.publish(event(5));
        assertThat(subscription.pending()).isZero();
        assertThat(heard).hasSize(5);
    }

    @Test
    void manyPublishersAtOnceLoseNothingAndKeepEachOnesOrder() throws Exception {
        // In arrival order, without CopyOnWriteArrayList's copy per add (quadratic over 40 000 events).
        java.util.Queue<Integer> heard = new java.util.concurrent.ConcurrentLinkedQueue<>();
        bus.subscribe("all", 100_000, e -> heard.add(number(e)));
        List<Thread> publishers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int base = t * 10_000;
            publishers.add(new Thread(() -> {
                for (int i = 0; i < 10_000; i++) {
                    bus.publish(event(base + i));
                }
            }));
        }
        publishers.forEach(Thread::start);
        for (Thread publisher : publishers) {
            publisher.join();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> heard.size() == 40_000);
        for (int t = 0; t < 4; t++) {
            int base = t * 10_000;
            List<Integer> own = heard.stream().filter(n -> n >= base && n < base + 10_000).toList();
            assertThat(own).isSorted().hasSize(10_000);
        }
    }

    @Test
    void timelineEntriesKnowWhetherTheAuthorityStoredThem() {
        io.gantry.authority.Event fresh = new io.gantry.authority.Event(0, java.time.Instant.EPOCH, "db1:3306",
                io.gantry.authority.EventKind.DOWN, "refused");
        assertThat(new EngineEvent.Timeline(fresh).stored()).isFalse();
        assertThat(new EngineEvent.Timeline(new io.gantry.authority.Event(7, java.time.Instant.EPOCH, null,
                io.gantry.authority.EventKind.WEIGHT_CHANGED, "weight")).stored()).isTrue();
    }
}
