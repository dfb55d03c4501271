package io.gantry.admin.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class HealthTimesTest {

    private static final Instant NOW = Instant.parse("2026-12-02T06:00:00Z");

    @Test
    void everyFormAnExportTakes() {
        assertThat(HealthTimes.parse("now", NOW)).isEqualTo(NOW);
        assertThat(HealthTimes.parse(" -90s ", NOW)).isEqualTo(NOW.minusSeconds(90));
        assertThat(HealthTimes.parse("-30M", NOW)).isEqualTo(NOW.minusSeconds(1800));
        assertThat(HealthTimes.parse("-1h", NOW)).isEqualTo(NOW.minusSeconds(3600));
        assertThat(HealthTimes.parse("-7d", NOW)).isEqualTo(NOW.minusSeconds(7 * 86_400));
        assertThat(HealthTimes.parse("2026-11-30T21:00:00Z", NOW)).isEqualTo(Instant.parse("2026-11-30T21:00:00Z"));
        assertThat(HealthTimes.parse("2026-11-30T22:00:00+01:00", NOW))
                .isEqualTo(Instant.parse("2026-11-30T21:00:00Z"));
        assertThat(HealthTimes.parse("2026-11-30T21:00:00", NOW)).isEqualTo(Instant.parse("2026-11-30T21:00:00Z"));
        assertThat(HealthTimes.parse("2026-11-30", NOW)).isEqualTo(Instant.parse("2026-11-30T00:00:00Z"));
    }

    @Test
    void anythingElseIsRefusedNamingTheText() {
        for (String bad : new String[] {"yesterday", "-1w", "1h", "2026-13-01", ""}) {
            assertThatThrownBy(() -> HealthTimes.parse(bad, NOW)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'" + bad + "' is not a time");
        }
    }
}
