package io.gantry.authority;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RetentionTest {

    @Test
    void parsesEachUnit() {
        assertThat(Retention.parse("7d").duration()).isEqualTo(Duration.ofDays(7));
        assertThat(Retention.parse("12h").duration()).isEqualTo(Duration.ofHours(12));
        assertThat(Retention.parse("30m").duration()).isEqualTo(Duration.ofMinutes(30));
        assertThat(Retention.parse("90s").duration()).isEqualTo(Duration.ofSeconds(90));
        assertThat(Retention.parse(" 2D ").duration()).isEqualTo(Duration.ofDays(2));
    }

    @Test
    void defaultIsSevenDays() {
        assertThat(Retention.DEFAULT).isEqualTo(Retention.parse("7d"));
        assertThat(Retention.DEFAULT.describe()).isEqualTo("7 days");
        assertThat(Retention.DEFAULT).hasToString("7d");
    }

    @Test
    void describesInTheLargestExactUnit() {
        assertThat(Retention.parse("48h").describe()).isEqualTo("2 days");
        assertThat(Retention.parse("36h").describe()).isEqualTo("36 hours");
        assertThat(Retention.parse("1m").describe()).isEqualTo("1 minute");
        assertThat(Retention.parse("90s").describe()).isEqualTo("90 seconds");
        assertThat(Retention.parse("120s")).hasToString("2m");
    }

    @ParameterizedTest
    @ValueSource(strings = {"7x", "", "7", "d", "-1d", "1.5h", "7 days", "1d12h"})
    void refusesABadValueNamingIt(String value) {
        assertThatThrownBy(() -> Retention.parse(value))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("'" + value.strip() + "' is not a retention: use a whole number followed by d, h, m or s, "
                        + "such as 7d, 12h, 30m or 90s");
    }

    @Test
    void refusesZeroAndOverflow() {
        assertThatThrownBy(() -> Retention.parse("0h")).hasMessage("'0h' is not a retention: it must be longer than 0");
        assertThatThrownBy(() -> Retention.parse("99999999999999999999d"))
                .hasMessage("'99999999999999999999d' is not a retention: the number is too large");
        assertThatThrownBy(() -> Retention.parse("999999999999999d"))
                .hasMessage("'999999999999999d' is not a retention: the number is too large");
    }
}
