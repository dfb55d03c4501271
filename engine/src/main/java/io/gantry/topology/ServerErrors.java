package io.gantry.topology;

import java.sql.SQLException;

/** What a server's or the driver's error means for Gantry's own connections, in words an operator can act on. */
final class ServerErrors {

    private ServerErrors() {
    }

    /**
     * One line an operator can act on: the driver's "Communications link failure" and its paragraph say less than
     * the socket error underneath ("Connection refused", "connect timed out").
     */
    static String describe(SQLException e) {
        Throwable deepest = e;
        while (deepest.getCause() != null && deepest.getCause() != deepest) {
            deepest = deepest.getCause();
        }
        String message = deepest == e || deepest.getMessage() == null
                ? e.getMessage()
                : firstLine(e.getMessage()) + " (" + deepest.getMessage() + ")";
        return firstLine(message);
    }

    static String firstLine(String text) {
        if (text == null) {
            return "unknown error";
        }
        int newline = text.indexOf('\n');
        return (newline < 0 ? text : text.substring(0, newline)).trim();
    }

    /**
     * A refusal, not an outage: too many connections ({@code 1040}), the account's {@code max_user_connections}
     * ({@code 1203}) or its hourly limits ({@code 1226}), or the service account refused ({@code 1044}, {@code 1045}).
     */
    static boolean isRefusal(SQLException e) {
        int code = e.getErrorCode();
        return AccountLookup.isFull(e) || code == 1226 || code == 1044 || code == 1045;
    }
}
