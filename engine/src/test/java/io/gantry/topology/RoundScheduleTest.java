package io.gantry.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** When health rounds run: at the interval, at once when asked (coalesced), more often while no primary is known. */
class RoundScheduleTest {

    private final AtomicInteger rounds = new AtomicInteger();
    private final AtomicBoolean primaryKnown = new AtomicBoolean(true);
    private RoundSchedule schedule;

    private RoundSchedule schedule(Duration roundTakes) {
        schedule = new RoundSchedule(() -> {
            schedule.roundStarted();
            try {
                Thread.sleep(roundTakes.toMillis());
                rounds.incrementAndGet();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                schedule.roundFinished();
            }
        }, primaryKnown::get);
        return schedule;
    }

    @Test
    void aRequestRunsARoundAtOnceAndItsTicketTellsWhenItIsIn() {
        try (RoundSchedule schedule = schedule(Duration.ofMillis(20))) {
            schedule.start(Duration.ofMinutes(1));
            long ticket = schedule.request("test");
            assertThat(schedule.finished()).isLessThan(ticket);
            await().atMost(Duration.ofSeconds(2)).until(() -> schedule.finished() >= ticket);
            assertThat(rounds.get()).isEqualTo(1);
        }
    }

    @Test
    void requestsWhileARoundIsDueCoalesceIntoIt() throws InterruptedException {
        try (RoundSchedule schedule = schedule(Duration.ofMillis(200))) {
            schedule.start(Duration.ofMinutes(1));
            long first = schedule.request("one");
            for (int i = 0; i < 50; i++) {
                assertThat(schedule.request("many")).isEqualTo(first);
            }
            await().atMost(Duration.ofSeconds(2)).until(() -> schedule.finished() >= first);
            Thread.sleep(300);
            assertThat(rounds.get()).isEqualTo(1);
        }
    }

    @Test
    void aRequestDuringARoundGetsARoundThatStartsAfterIt() throws InterruptedException {
        try (RoundSchedule schedule = schedule(Duration.ofMillis(300))) {
            schedule.start(Duration.ofMinutes(1));
            long first = schedule.request("before");
            Thread.sleep(150); // the first round is running now: it may have looked before what comes next
            long during = schedule.request("during");
            assertThat(during).isEqualTo(first + 1);
            await().atMost(Duration.ofSeconds(3)).until(() -> schedule.finished() >= during);
            assertThat(rounds.get()).isEqualTo(2);
        }
    }

    @Test
    void withoutAPrimaryRoundsComeEveryQuarterSecondAndWithOneAtTheInterval() throws InterruptedException {
        primaryKnown.set(false);
        try (RoundSchedule schedule = schedule(Duration.ZERO)) {
            schedule.start(Duration.ofSeconds(10));
            schedule.request("go");
            Thread.sleep(1_400);
            assertThat(rounds.get()).isBetween(4, 7);
            primaryKnown.set(true);
            Thread.sleep(300); // the round due now finds the primary; the next is 10 s away
            int settled = rounds.get();
            Thread.sleep(1_000);
            assertThat(rounds.get()).isEqualTo(settled);
        }
    }

    @Test
    void nothingRunsBeforeTheStartNorAfterTheClose() throws InterruptedException {
        RoundSchedule schedule = schedule(Duration.ZERO);
        schedule.request("before the start");
        Thread.sleep(200);
        assertThat(rounds.get()).isZero();
        schedule.start(Duration.ofMillis(50));
        schedule.close();
        Thread.sleep(200);
        assertThat(rounds.get()).isZero();
    }
}
