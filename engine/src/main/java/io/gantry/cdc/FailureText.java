package io.gantry.cdc;

/**
 * A failure in one line for the change stream's log, status and events. Drivers and the binlog client wrap the
 * cause that says what happened ("Connection refused") in messages that say less, over several lines.
 */
final class FailureText {

    private FailureText() {
    }

    /** The first line of a failure's message, with its root cause when that says more ("Connection refused"). */
    static String describe(Throwable failure) {
        String message = firstLine(failure);
        Throwable root = failure;
        for (int depth = 0; depth < 20 && root.getCause() != null && root.getCause() != root; depth++) {
            root = root.getCause(); // bounded: a cause chain can loop back on itself
        }
        String cause = firstLine(root);
        return root == failure || message.contains(cause) ? message : message + ": " + cause;
    }

    private static String firstLine(Throwable failure) {
        String message = failure.getMessage() == null || failure.getMessage().isBlank() ? failure.toString()
                : failure.getMessage().strip();
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline).strip();
    }
}
