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
    private final boolean serverDown;

    public BackendFailure(String serverAddress, String message, Throwable cause) {
        this(serverAddress, message, cause, false);
    }

    private BackendFailure(String serverAddress, String message, Throwable cause, boolean serverDown) {
        super(message, cause);
        this.serverAddress = serverAddress;
        this.serverError = null;
        this.serverDown = serverDown;
    }

    public BackendFailure(String serverAddress, ErrPacket serverError) {
        super(serverError.message());
        this.serverAddress = serverAddress;
        this.serverError = serverError;
        this.serverDown = false;
    }

    /**
     * Gantry gave up the connection because a health check found its server not answering: whatever the connection
     * was waiting for will not come.
     */
    public static BackendFailure serverDown(String serverAddress, String reason) {
        return new BackendFailure(serverAddress, serverAddress + " stopped answering and was marked down (" + reason
                + ")", null, true);
    }

    /** {@code host:port} of the backend. */
    String serverAddress() {
        return serverAddress;
    }

    /** The server's own error, when the server answered with one (then the server is not down). */
    public ErrPacket serverError() {
        return serverError;
    }

    /** Whether Gantry left the connection because its server was marked down ({@link #serverDown}). */
    public boolean serverMarkedDown() {
        return serverDown;
    }

    /** True when the server itself is unreachable or gone, as opposed to refusing something. */
    public boolean serverUnreachable() {
        return serverError == null;
    }
}
