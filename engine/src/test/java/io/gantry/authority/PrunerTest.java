package io.gantry.authority;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PrunerTest {

    private static final Instant NOW = Instant.parse("2026-11-30T12:00:00Z");
    private final Clock clock = Clock.fixed(NOW, ZoneOffset.UTC);

    @TempDir
    Path dir;

    @Test
    void prunesWhatIsOlderThanTheRetentionFromTheInjectedClock() {
        try (Authority authority = Authority.open(dir, clock)) {
            authority.recordHealth(List.of(
                    new HealthSample(NOW.minus(Duration.ofDays(8)), "db1:3306", "up", "primary", 1.0, null, null),
                    new HealthSample(NOW.minus(Duration.ofDays(7)).minusMillis(1), "db1:3306", "up", "primary", 1.0,
                            null, null),
                    new HealthSample(NOW.minus(Duration.ofDays(6)), "db1:3306", "up", "primary", 1.0, null, null)));
            authority.recordEvent(NOW.minus(Duration.ofDays(30)), "db1:3306", EventKind.DOWN, "long ago");

            Pruner pruner = new Pruner(authority::pruneOlderThan, Retention.DEFAULT, Pruner.PERIOD, clock);
            assertThat(pruner.pruneNow()).isEqualTo(3);
            assertThat(authority.healthHistory(null, null, Optional.empty())).hasSize(1);
            assertThat(pruner.pruneNow()).isZero();
        }
    }

    @Test
    void runsAtStartOnItsOwnNamedDaemonThread() throws InterruptedException {
        List<Thread> threads = new CopyOnWriteArrayList<>();
        List<Instant> cutoffs = new CopyOnWriteArrayList<>();
        CountDownLatch ran = new CountDownLatch(1);
        Pruner pruner = new Pruner(cutoff -> {
            threads.add(Thread.currentThread());
            cutoffs.add(cutoff);
            ran.countDown();
            return 0;
        }, Retention.parse("12h"), Duration.ofHours(1), clock);
        try {
            pruner.start();
            assertThat(ran.await(5, TimeUnit.SECONDS)).isTrue();
        } finally {
            pruner.close();
        }
        assertThat(threads.get(0).getName()).isEqualTo("gantry-authority-prune");
        assertThat(threads.get(0).isDaemon()).isTrue();
        assertThat(cutoffs).containsExactly(NOW.minus(Duration.ofHours(12)));
    }

    @Test
    void aFailedRunIsLoggedAndTheScheduleGoesOn() throws InterruptedException {
        AtomicInteger calls = new AtomicInteger();
        CountDownLatch third = new CountDownLatch(3);
        Pruner pruner = new Pruner(cutoff -> {
            third.countDown();
            if (calls.incrementAndGet() == 1) {
                throw new AuthorityException("authority: could not prune GANTRY.HEALTH_HISTORY: disk full");
            }
            return 5;
        }, Retention.DEFAULT, Duration.ofMillis(20), clock);
        try {
            pruner.start();
            assertThat(third.await(5, TimeUnit.SECONDS)).isTrue();
        } finally {
            pruner.close();
        }
        int afterClose = calls.get();
        Thread.sleep(100);
        assertThat(calls.get()).as("no runs after close").isEqualTo(afterClose);
    }
}
