package io.gantry.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.ManualPage;
import io.gantry.route.ReplicaRefusal;
import io.gantry.route.RouteReason;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * docs/metrics.md names every value of the labels {@link GantryMetrics} makes from the routing's enums: a reason of
 * routing ({@link RouteReason}, the {@code reason} of {@code gantry_statements_routed_total}) or of a read sent to the
 * primary ({@link ReplicaRefusal}, the {@code reason} of {@code gantry_consistent_prefix_failed_reads_total}) added
 * without its row fails here.
 */
class DocDriftMetricsTest {

    private static final String PAGE = "docs/metrics.md";

    @Test
    void everyLabelValueOfTheRoutingReasonsHasARow() throws IOException {
        String page = ManualPage.read(PAGE);
        List<String> missing = new ArrayList<>();
        for (RouteReason reason : RouteReason.values()) {
            String value = reason.name().toLowerCase(Locale.ROOT);
            if (!page.contains("| `" + value + "` |")) {
                missing.add(value + " (gantry_statements_routed_total)");
            }
        }
        for (ReplicaRefusal refusal : ReplicaRefusal.values()) {
            if (!page.contains("| `" + refusal.counterName() + "` |")) {
                missing.add(refusal.counterName() + " (gantry_consistent_prefix_failed_reads_total)");
            }
        }
        assertThat(missing).as("%s has no row for these values of a reason label: %s", PAGE, missing).isEmpty();
    }
}
