package io.gantry.route;

import java.util.Locale;

/** How reads are spread over replicas ({@code --read-balance}). */
public enum ReadBalance {
    /**
     * Default. A client session keeps one replica (chosen by weight) until it disconnects or that replica stops
     * being up or qualifying; then a new one is chosen by weight.
     */
    SESSION,
    /** Every read picks a replica by weight; backend connection retention lets a following statement reuse one. */
    STATEMENT;

    /**
     * Parses the flag value {@code session} or {@code statement} (any case).
     *
     * @throws IllegalArgumentException naming the accepted values
     */
    public static ReadBalance fromFlag(String value) {
        if (value != null) {
            switch (value.trim().toLowerCase(Locale.ROOT)) {
                case "session":
                    return SESSION;
                case "statement":
                    return STATEMENT;
                default:
                    break;
            }
        }
        throw new IllegalArgumentException("--read-balance must be 'session' or 'statement', got '" + value + "'");
    }
}
