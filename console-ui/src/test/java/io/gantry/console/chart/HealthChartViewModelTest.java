package io.gantry.console.chart;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.admin.protocol.HealthPoint;
import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Request;
import io.gantry.console.FakeEngine;
import io.gantry.console.ui.UiExecutor;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class HealthChartViewModelTest {

    private static final Instant NOW = Instant.parse("2026-12-02T03:00:00Z");

    /** An hour of rounds at 1 s: a primary, a quick replica, and a replica that lags 2 s once. */
    private static List<HealthPoint> hour() {
        List<HealthPoint> points = new ArrayList<>();
        for (int s = 3600; s > 0; s--) {
            Instant at = NOW.minusSeconds(s);
            points.add(new HealthPoint(at, "127.0.0.1:33061", "up", "primary", 0.3, null, null));
            points.add(new HealthPoint(at, "127.0.0.1:33062", "up", "replica", 0.4, 3L, null));
            points.add(new HealthPoint(at, "127.0.0.1:33063", "up", "replica", 0.5, s == 1800 ? 2000L : 10L, null));
        }
        return points;
    }

    @Test
    void readsEveryPageOfTheWindowAndKeepsTheHighestValueOfEachBucket() {
        List<HealthPoint> all = hour();
        FakeEngine engine = FakeEngine.answering(request -> {
            Request.Health health = (Request.Health) request;
            // As the engine pages: never splitting a round (three samples with one time).
            int limit = health.limit() - health.limit() % 3;
            List<HealthPoint> page = all.stream().filter(p -> !p.at().isBefore(health.from())).limit(limit)
                    .toList();
            boolean more = all.stream().filter(p -> !p.at().isBefore(health.from())).count() > limit;
            return new Reply.Health(request.id(), page, more ? all.get(all.indexOf(page.get(page.size() - 1)) + 1)
                    .at() : null);
        });
        HealthChartViewModel model = new HealthChartViewModel(UiExecutor.direct(), engine,
                Clock.fixed(NOW, ZoneOffset.UTC));
        model.windowProperty().set(Duration.ofHours(1));

        assertThat(engine.requests()).hasSizeGreaterThan(1);
        assertThat(((Request.Health) engine.requests().get(0)).from()).isEqualTo(NOW.minus(Duration.ofHours(1)));
        HealthChartViewModel.Series series = model.seriesProperty().get();
        assertThat(series.lag()).containsOnlyKeys("127.0.0.1:33061", "127.0.0.1:33062", "127.0.0.1:33063");
        assertThat(series.lag().get("127.0.0.1:33061")).isEmpty();
        assertThat(series.lag().get("127.0.0.1:33063")).hasSizeLessThanOrEqualTo(HealthChartViewModel.BUCKETS)
                .anySatisfy(p -> assertThat(p.value()).isEqualTo(2000.0));
        assertThat(series.maxLag()).containsEntry("127.0.0.1:33063", 2000L).containsEntry("127.0.0.1:33062", 3L);
        assertThat(series.rtt().get("127.0.0.1:33061")).isNotEmpty().allSatisfy(p -> assertThat(p.value())
                .isEqualTo(0.3));
        assertThat(model.samplesHeld()).isEqualTo(3 * 3600);

        int asked = engine.requests().size();
        model.refresh();
        Request.Health next = (Request.Health) engine.requests().get(asked);
        assertThat(next.from()).isEqualTo(NOW.minusSeconds(1).plusMillis(1));
    }

    @Test
    void aFailedReadIsShown() {
        FakeEngine engine = FakeEngine.answering(request -> new Reply.Error(request.id(), "failed", "disk full"));
        HealthChartViewModel model = new HealthChartViewModel(UiExecutor.direct(), engine,
                Clock.fixed(NOW, ZoneOffset.UTC));
        model.refresh();
        assertThat(model.errorProperty().get()).isEqualTo("cannot read the health history: disk full");
    }
}
