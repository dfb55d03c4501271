package io.gantry.admin.protocol;

import java.util.Locale;
import java.util.Objects;

/**
 * A column of a {@link Reply.Rows} result.
 *
 * @param name as the statement labels it
 * @param type what its values are on the wire and in Java
 */
public record Column(String name, Type type) {

    public Column {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
    }

    /**
     * Value types. On the wire and (in brackets) in Java: {@code text} a string ({@link String}), {@code integer} a
     * number ({@link Long}), {@code decimal} a number ({@link java.math.BigDecimal}), {@code double} a number
     * ({@link Double}), {@code boolean} true or false ({@link Boolean}), {@code timestamp} an ISO-8601 UTC string
     * such as {@code 2026-11-30T21:00:05.123Z} ({@link java.time.Instant}), {@code binary} a string of hex digits
     * ({@link String}). SQL NULL is {@code null} in every type.
     */
    public enum Type {
        TEXT, INTEGER, DECIMAL, DOUBLE, BOOLEAN, TIMESTAMP, BINARY;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** @throws IllegalArgumentException naming the value */
        public static Type fromWireName(String name) {
            for (Type type : values()) {
                if (type.wireName().equals(name)) {
                    return type;
                }
            }
            throw new IllegalArgumentException("unknown column type '" + name + "'");
        }
    }
}
