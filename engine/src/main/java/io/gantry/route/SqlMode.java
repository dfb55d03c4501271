package io.gantry.route;

/**
 * The parts of a session's {@code sql_mode} that decide where a token of SQL text ends, as the server reports them
 * in the status flags of every OK packet: {@code SERVER_STATUS_NO_BACKSLASH_ESCAPES} (MySQL and MariaDB) and
 * {@code SERVER_STATUS_ANSI_QUOTES} (MariaDB only; a MySQL session is taken to run without {@code ANSI_QUOTES}).
 *
 * @param noBackslashEscapes a backslash in a string literal is an ordinary character: {@code 'a\'} is the
 *        string {@code a\}
 * @param ansiQuotes {@code "..."} is a quoted identifier, not a string literal
 */
public record SqlMode(boolean noBackslashEscapes, boolean ansiQuotes) {

    /** The server's default: backslash escapes in strings, double quotes around strings. */
    public static final SqlMode DEFAULT = new SqlMode(false, false);

    private static final SqlMode[] ALL = {DEFAULT, new SqlMode(true, false), new SqlMode(false, true),
        new SqlMode(true, true)};

    /** The mode with these two settings; allocates nothing (it runs for every statement). */
    public static SqlMode of(boolean noBackslashEscapes, boolean ansiQuotes) {
        return ALL[(noBackslashEscapes ? 1 : 0) + (ansiQuotes ? 2 : 0)];
    }

    /** The default with or without {@code NO_BACKSLASH_ESCAPES}. */
    public static SqlMode of(boolean noBackslashEscapes) {
        return of(noBackslashEscapes, false);
    }
}
