package io.gantry.proxy.session;

import java.time.Duration;

/**
 * How Gantry follows the primary and leaves a server that stopped answering.
 *
 * @param healthCheckTimeout bound on each health check ({@code --upstream-check-timeout-ms}, default 1500 ms): its
 *                           new connection's connect, TLS and login together, and each answer on the kept
 *                           connection; a server that does not answer within it is down. It bounds the account
 *                           look-up of a login on each server too (which then asks the next server)
 * @param switchoverHold     how long a statement that needs the primary waits for one
 *                           ({@code --switchover-hold-ms}, default 5000 ms; 0 refuses at once): while none is known,
 *                           or after the server taken for the primary refused it as read-only (so it certainly did
 *                           not run)
 */
public record FailoverSettings(Duration healthCheckTimeout, Duration switchoverHold) {

    /** The most {@link #switchoverHold} accepted: a client waiting longer has given up. */
    public static final Duration MAX_HOLD = Duration.ofMinutes(10);

    public static final FailoverSettings DEFAULTS = new FailoverSettings(Duration.ofMillis(1500),
            Duration.ofMillis(5000));

    public FailoverSettings {
        if (healthCheckTimeout.toMillis() < 10 || healthCheckTimeout.compareTo(Duration.ofMinutes(10)) > 0) {
            throw new IllegalArgumentException("--upstream-check-timeout-ms must be between 10 and 600000, not "
                    + healthCheckTimeout.toMillis());
        }
        if (switchoverHold.isNegative() || switchoverHold.compareTo(MAX_HOLD) > 0) {
            throw new IllegalArgumentException("--switchover-hold-ms must be between 0 and " + MAX_HOLD.toMillis()
                    + ", not " + switchoverHold.toMillis());
        }
    }

    public FailoverSettings withSwitchoverHold(Duration value) {
        return new FailoverSettings(healthCheckTimeout, value);
    }

    public FailoverSettings withHealthCheckTimeout(Duration value) {
        return new FailoverSettings(value, switchoverHold);
    }
}
