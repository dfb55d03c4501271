package io.gantry.console.queries;

import io.gantry.admin.protocol.QueryShape;
import java.util.Locale;

/** One row of the Queries tab: a shape as the engine's last {@code queries} push had it. */
public record QueryRow(QueryShape shape) {

    public String key() {
        return shape.key();
    }

    public String query() {
        return shape.shape();
    }

    public String schema() {
        return shape.schema();
    }

    public String account() {
        return shape.account();
    }

    public long count() {
        return shape.count();
    }

    public long errors() {
        return shape.errors();
    }

    public double totalMillis() {
        return shape.totalMicros() / 1000.0;
    }

    public double meanMillis() {
        return shape.count() == 0 ? 0 : shape.totalMicros() / 1000.0 / shape.count();
    }

    public double p50Millis() {
        return shape.p50Micros() / 1000.0;
    }

    public double p95Millis() {
        return shape.p95Micros() / 1000.0;
    }

    public double p99Millis() {
        return shape.p99Micros() / 1000.0;
    }

    public double maxMillis() {
        return shape.maxMicros() / 1000.0;
    }

    /** Whether the filter's text is in its query, schema or account (any case); every row for an empty filter. */
    boolean matches(String filter) {
        if (filter == null || filter.isBlank()) {
            return true;
        }
        String wanted = filter.strip().toLowerCase(Locale.ROOT);
        return shape.shape().toLowerCase(Locale.ROOT).contains(wanted)
                || shape.schema().toLowerCase(Locale.ROOT).contains(wanted)
                || shape.account().toLowerCase(Locale.ROOT).contains(wanted);
    }

    /** Where its statements ran, in words: {@code primary 12 (10 %) · replica 108 (90 %)}, the places it ran only. */
    public String whereItRan() {
        StringBuilder text = new StringBuilder();
        place(text, "primary", shape.onPrimary());
        place(text, "replica", shape.onReplica());
        place(text, "cache", shape.onCache());
        place(text, "Gantry", shape.onGantry());
        return text.toString();
    }

    private void place(StringBuilder text, String where, long count) {
        if (count == 0) {
            return;
        }
        if (!text.isEmpty()) {
            text.append(" · ");
        }
        text.append(where).append(' ').append(count).append(String.format(Locale.ROOT, " (%.0f %%)",
                100.0 * count / Math.max(1, shape.count())));
    }
}
