package io.gantry.admin.protocol;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The times a health-history export is bounded by, as {@code gantry export-health --since/--until} and the console's
 * export dialog read them: {@code now}; a time back from now ({@code -90s}, {@code -30m}, {@code -1h}, {@code -7d});
 * an ISO-8601 instant ({@code 2026-11-30T21:00:00Z}), one with an offset, or one without (UTC); or a date (its start,
 * UTC).
 */
public final class HealthTimes {

    private static final Pattern RELATIVE = Pattern.compile("-(\\d{1,9})([smhd])");

    private HealthTimes() {
    }

    /**
     * @throws IllegalArgumentException when {@code text} is none of the forms above (callers name the field)
     */
    public static Instant parse(String text, Instant now) {
        String value = text.strip();
        if (value.equalsIgnoreCase("now")) {
            return now;
        }
        Matcher relative = RELATIVE.matcher(value.toLowerCase(Locale.ROOT));
        if (relative.matches()) {
            long amount = Long.parseLong(relative.group(1));
            Duration back = switch (relative.group(2)) {
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                default -> Duration.ofDays(amount);
            };
            return now.minus(back);
        }
        try {
            return Instant.parse(value);
        } catch (DateTimeParseException notAnInstant) {
            // the other ISO-8601 forms, below
        }
        try {
            return OffsetDateTime.parse(value).toInstant();
        } catch (DateTimeParseException notWithOffset) {
            // below
        }
        try {
            return LocalDateTime.parse(value).toInstant(ZoneOffset.UTC);
        } catch (DateTimeParseException notLocal) {
            // below
        }
        try {
            return LocalDate.parse(value).atStartOfDay().toInstant(ZoneOffset.UTC);
        } catch (DateTimeParseException notADate) {
            throw new IllegalArgumentException("'" + text + "' is not a time", notADate);
        }
    }
}
