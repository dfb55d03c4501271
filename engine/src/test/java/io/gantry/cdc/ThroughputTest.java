package io.gantry.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class ThroughputTest {

    private final TestClock clock = new TestClock(Instant.parse("2026-12-01T03:04:05Z"));
    private final Throughput throughput = new Throughput(clock);

    @Test
    void isZeroUntilTwoSamplesAreApartInTime() {
        assertThat(throughput.rates()).isEqualTo(new Throughput.Rates(0, 0));
        throughput.sample(new AppliedPosition.Counts(10, 1));
        throughput.sample(new AppliedPosition.Counts(20, 2));

        assertThat(throughput.rates()).isEqualTo(new Throughput.Rates(0, 0));
    }

    @Test
    void measuresOverTheLastWindowOnly() {
        throughput.sample(new AppliedPosition.Counts(0, 0));
        clock.advance(Duration.ofSeconds(5));
        throughput.sample(new AppliedPosition.Counts(5000, 50)); // a burst, then a steady rate
        for (int second = 1; second <= 20; second++) {
            clock.advance(Duration.ofSeconds(1));
            throughput.sample(new AppliedPosition.Counts(5000 + 100L * second, 50 + second));
        }

        Throughput.Rates rates = throughput.rates();

        assertThat(rates.rows()).isEqualTo(100.0);
        assertThat(rates.transactions()).isEqualTo(1.0);
    }
}
