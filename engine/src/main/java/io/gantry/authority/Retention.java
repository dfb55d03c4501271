package io.gantry.authority;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How long health samples and events are kept: the value of {@code --health-retention}, a whole number followed by
 * a unit, {@code d} (days), {@code h} (hours), {@code m} (minutes) or {@code s} (seconds), such as {@code 7d},
 * {@code 12h}, {@code 30m} or {@code 90s}. Default {@link #DEFAULT} (7 days). Must be positive.
 *
 * @param duration how long, positive
 */
public record Retention(Duration duration) {

    /** Seven days. */
    public static final Retention DEFAULT = new Retention(Duration.ofDays(7));

    private static final Pattern SYNTAX = Pattern.compile("(\\d+)\\s*([dhms])");

    public Retention {
        Objects.requireNonNull(duration, "duration");
        if (duration.isZero() || duration.isNegative()) {
            throw new IllegalArgumentException("a retention must be positive, not " + duration);
        }
    }

    /**
     * Parses a value such as {@code 7d}, {@code 12h}, {@code 30m} or {@code 90s} (unit letters in either case).
     *
     * @throws IllegalArgumentException naming the value and the expected form
     */
    public static Retention parse(String text) {
        String value = text == null ? "" : text.strip();
        Matcher matcher = SYNTAX.matcher(value.toLowerCase(Locale.ROOT));
        if (!matcher.matches()) {
            throw new IllegalArgumentException("'" + value + "' is not a retention: use a whole number followed by "
                    + "d, h, m or s, such as 7d, 12h, 30m or 90s");
        }
        try {
            long amount = Long.parseLong(matcher.group(1));
            if (amount == 0) {
                throw new IllegalArgumentException("'" + value + "' is not a retention: it must be longer than 0");
            }
            Duration duration = switch (matcher.group(2)) {
                case "d" -> Duration.ofDays(amount);
                case "h" -> Duration.ofHours(amount);
                case "m" -> Duration.ofMinutes(amount);
                default -> Duration.ofSeconds(amount);
            };
            return new Retention(duration);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("'" + value + "' is not a retention: the number is too large");
        }
    }

    /** In words for logs: "7 days", "12 hours", "1 minute", "90 seconds" (the largest unit that fits exactly). */
    public String describe() {
        long seconds = duration.getSeconds();
        if (duration.getNano() != 0) {
            return duration.toString();
        }
        if (seconds % 86_400 == 0) {
            return plural(seconds / 86_400, "day");
        }
        if (seconds % 3_600 == 0) {
            return plural(seconds / 3_600, "hour");
        }
        if (seconds % 60 == 0) {
            return plural(seconds / 60, "minute");
        }
        return plural(seconds, "second");
    }

    /** The flag form: {@code 7d}, {@code 12h}, {@code 30m}, {@code 90s}. */
    @Override
    public String toString() {
        long seconds = duration.getSeconds();
        if (duration.getNano() != 0) {
            return duration.toString();
        }
        if (seconds % 86_400 == 0) {
            return seconds / 86_400 + "d";
        }
        if (seconds % 3_600 == 0) {
            return seconds / 3_600 + "h";
        }
        if (seconds % 60 == 0) {
            return seconds / 60 + "m";
        }
        return seconds + "s";
    }

    private static String plural(long amount, String unit) {
        return amount + " " + unit + (amount == 1 ? "" : "s");
    }
}
