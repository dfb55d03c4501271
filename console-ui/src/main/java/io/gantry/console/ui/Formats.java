package io.gantry.console.ui;

import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/** How the console writes times, durations and health in cells and labels. */
public final class Formats {

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneId.systemDefault());
    private static final DateTimeFormatter TIME_MS =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS").withZone(ZoneId.systemDefault());

    private Formats() {
    }

    /** {@code 14:03:27}, local time; empty for null. */
    public static String time(Instant at) {
        return at == null ? "" : TIME.format(at);
    }

    /** {@code 2026-12-02 14:03:27.120}, local time. */
    public static String timeMillis(Instant at) {
        return at == null ? "" : TIME_MS.format(at);
    }

    /** {@code 12 ms}, {@code -} for null. */
    public static String millis(Long ms) {
        return ms == null ? "-" : ms + " ms";
    }

    /** {@code 0.42 ms}, {@code -} for null. */
    public static String millis(Double ms) {
        return ms == null ? "-" : String.format(Locale.ROOT, ms < 10 ? "%.2f ms" : "%.1f ms", ms);
    }

    /** The colour of a health word: green up, red down, orange broken, purple diverged, blue streaming. */
    public static String healthColour(String health) {
        if (health == null) {
            return "#9e9e9e";
        }
        return switch (health) {
            case "up" -> "#2e7d32";
            case "down" -> "#c62828";
            case "broken" -> "#ef6c00";
            case "diverged" -> "#6a1b9a";
            case "streaming" -> "#1565c0";
            default -> "#757575";
        };
    }
}
