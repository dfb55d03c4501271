package io.gantry.route;

import java.util.Locale;

/**
 * Whose writes a session's reads must find ({@code gantry_read_your_writes_scope}, {@code --read-your-writes-scope}):
 * read-your-writes across the connections of an application's pool.
 */
public enum ReadYourWritesScope {

    /** The session's own writes: what a session alone guarantees. */
    SESSION,
    /** The writes of every session of the same account through this Gantry. */
    ACCOUNT,
    /** The writes of every session that named the same {@code gantry_causal_token}, whatever its account. */
    TOKEN;

    /** Its name in SQL and on the command line. */
    public String sqlName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The scope named {@code name} (any case), or null when none is. */
    public static ReadYourWritesScope named(String name) {
        for (ReadYourWritesScope scope : values()) {
            if (scope.name().equalsIgnoreCase(name.strip())) {
                return scope;
            }
        }
        return null;
    }
}
