package io.gantry.admin.protocol;

/**
 * A line that is not the message it should be. {@link AdminProtocol} turns it into a {@link AdminProtocol.Decoded.Invalid}
 * with the request's id when one was read; it never leaves the package.
 */
final class BadMessage extends Exception {
    private static final long serialVersionUID = 1L;
    private final String error;

    /**
     * @param error   the kind, as {@link Reply.Error#error()} names them
     * @param message what is wrong, naming the field and the value found
     */
    BadMessage(String error, String message) {
        super(message);
        this.error = error;
    }

    /** The kind, as {@link Reply.Error#error()} names them. */
    String error() {
        return error;
    }
}
