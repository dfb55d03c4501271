package io.gantry.proxy.backend;

import io.gantry.wire.ErrPacket;

/**
 * A backend could not be reached, refused the login, or dropped the connection. Carries the server's own error
 * (code and SQL state) when it sent one, so a client sees, for example, "Unknown database" exactly as it would
 * directly.
 */
public final class BackendFailure extends RuntimeException {

    private final String serverAddress;
    private final ErrPacket serverError;

    public BackendFailure(String serverAddress, String message, Throwable cause) {
        super(message, cause);
        this.serverAddress = serverAddress;
        this.serverError = null;
    }

    public BackendFailure(String serverAddress, ErrPacket serverError) {
        super(serverError.message());
        this.serverAddress = serverAddress;
        this.serverError = serverError;
    }

    /** {@code host:port} of the backend. */
    String serverAddress() {
        return serverAddress;
    }

    /** The server's own error, when the server answered with one (then the server is not down). */
    public ErrPacket serverError() {
        return serverError;
    }

    /** True when the server itself is unreachable or gone, as opposed to refusing something. */
    public boolean serverUnreachable() {
        return serverError == null;
    }
}
