package io.gantry.cli;

import java.util.Locale;

/** A flag that is {@code on} or {@code off}. */
final class OnOff {

    private OnOff() {
    }

    /** Whether {@code value} of {@code flag} is on; refused with the flag's name when it is neither. */
    static boolean parse(String flag, String value) {
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "on" -> true;
            case "off" -> false;
            default -> throw new IllegalArgumentException(flag + " must be on or off, not '" + value + "'");
        };
    }
}
