package io.gantry.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class PushBudgetTest {

    @Test
    void pushesFitUntilTheLimitAndFitAgainOnceWritten() {
        PushBudget budget = new PushBudget(1000);
        assertThat(budget.tryPush(600)).isTrue();
        assertThat(budget.tryPush(400)).isTrue();
        assertThat(budget.tryPush(1)).as("one byte past the limit").isFalse();
        assertThat(budget.waiting()).isEqualTo(1000);
        budget.written(600);
        assertThat(budget.tryPush(600)).isTrue();
    }

    @Test
    void answersAlwaysCountAndLeaveLessRoomForPushes() {
        PushBudget budget = new PushBudget(1000);
        budget.answer(5000);
        assertThat(budget.waiting()).isEqualTo(5000);
        assertThat(budget.tryPush(1)).isFalse();
        budget.written(5000);
        assertThat(budget.tryPush(1000)).isTrue();
    }

    @Test
    void manyPushersAtOnceNeverGoPastTheLimit() throws InterruptedException {
        PushBudget budget = new PushBudget(10_000);
        AtomicInteger accepted = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            threads.add(new Thread(() -> {
                for (int i = 0; i < 10_000; i++) {
                    if (budget.tryPush(7)) {
                        accepted.incrementAndGet();
                    }
                }
            }));
        }
        threads.forEach(Thread::start);
        for (Thread thread : threads) {
            thread.join();
        }
        assertThat(accepted.get()).isEqualTo(10_000 / 7);
        assertThat(budget.waiting()).isEqualTo(10_000 / 7 * 7L).isLessThanOrEqualTo(10_000);
    }

    @Test
    void aLimitMustBePositive() {
        assertThatThrownBy(() -> new PushBudget(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
