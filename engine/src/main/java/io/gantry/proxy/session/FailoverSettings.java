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
 * @param replay             what Gantry does with a transaction whose primary is lost ({@code --transaction-replay})
 */
public record FailoverSettings(Duration healthCheckTimeout, Duration switchoverHold, TransactionReplay replay) {

    /**
     * Transaction replay: while a session's transaction is open on the primary, Gantry keeps its statements and a
     * checksum of each answer, and runs it again on the new primary when the primary is lost.
     *
     * @param enabled  {@code --transaction-replay on|off} (default on)
     * @param maxBytes {@code --transaction-replay-max-bytes}: the statements' bytes one transaction may keep (default
     *                 1 MiB); a larger transaction is not replayable
     * @param timeout  {@code --transaction-replay-timeout-ms}: how long a replay waits for a new primary (default:
     *                 {@code --switchover-hold-ms})
     */
    public record TransactionReplay(boolean enabled, long maxBytes, Duration timeout) {

        public static final long DEFAULT_MAX_BYTES = 1024 * 1024;
        /** The most a transaction may keep: it is kept on the heap, per session. */
        public static final long MAX_MAX_BYTES = 64L * 1024 * 1024;

        public TransactionReplay {
            if (maxBytes < 0 || maxBytes > MAX_MAX_BYTES) {
                throw new IllegalArgumentException("--transaction-replay-max-bytes must be from 0 to "
                        + MAX_MAX_BYTES + ", not " + maxBytes);
            }
            if (timeout.isNegative() || timeout.compareTo(MAX_HOLD) > 0) {
                throw new IllegalArgumentException("--transaction-replay-timeout-ms must be from 0 to "
                        + MAX_HOLD.toMillis() + ", not " + timeout.toMillis());
            }
        }
    }

    /** The most {@link #switchoverHold} accepted: a client waiting longer has given up. */
    public static final Duration MAX_HOLD = Duration.ofMinutes(10);

    public static final FailoverSettings DEFAULTS = new FailoverSettings(Duration.ofMillis(1500),
            Duration.ofMillis(5000), new TransactionReplay(true, TransactionReplay.DEFAULT_MAX_BYTES,
            Duration.ofMillis(5000)));

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
        return new FailoverSettings(healthCheckTimeout, value, replay);
    }

    public FailoverSettings withHealthCheckTimeout(Duration value) {
        return new FailoverSettings(value, switchoverHold, replay);
    }

    public FailoverSettings withReplay(TransactionReplay value) {
        return new FailoverSettings(healthCheckTimeout, switchoverHold, value);
    }
}
