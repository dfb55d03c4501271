package io.gantry.proxy.login;

import java.time.Duration;

/**
 * Limits on connections that have not logged in yet, and on failed logins.
 *
 * @param handshakeTimeout  time a peer has to log in ({@code --connect-timeout-secs}, default 10 s, as MariaDB's
 *                          {@code connect_timeout}); past it the connection is closed
 * @param maxPending        connections logging in at once, from all hosts ({@code --max-pending-logins}, 256)
 * @param maxPendingPerHost connections logging in at once from one host ({@code --max-pending-logins-per-host},
 *                          64)
 * @param maxHandshakeErrors malformed or unfinished handshakes in a row after which a host is blocked
 *                          ({@code --max-handshake-errors-until-block}, 10; 0 turns blocking off); refused
 *                          passwords never block a host
 * @param blockFor          how long a host stays blocked ({@code --auth-block-secs}, 60 s)
 * @param delayAfter        refused logins in a row of one account from one host from which each refusal is
 *                          answered after a growing delay ({@code --login-delay-after}, 3; 0 turns it off)
 * @param maxDelay          the longest such delay ({@code --login-max-delay-ms}; when not given,
 *                          {@link #defaultMaxDelay}: 5 s, or half of {@code handshakeTimeout} when that is less);
 *                          shorter than {@code handshakeTimeout}, so the client hears the refusal before it is timed
 *                          out
 */
public record LoginLimits(Duration handshakeTimeout, int maxPending, int maxPendingPerHost, int maxHandshakeErrors,
                          Duration blockFor, int delayAfter, Duration maxDelay) {

    /** The longest delay of a refused login when {@code --login-max-delay-ms} is not given (a long enough timeout). */
    public static final long DEFAULT_MAX_DELAY_MS = 5000;

    /** {@link #DEFAULT_MAX_DELAY_MS} as a duration. */
    public static final Duration DEFAULT_MAX_DELAY = Duration.ofMillis(DEFAULT_MAX_DELAY_MS);

    /** The defaults of {@code gantry run}. */
    public static final LoginLimits DEFAULTS = new LoginLimits(Duration.ofSeconds(10), 256, 64, 10,
            Duration.ofSeconds(60), 3, DEFAULT_MAX_DELAY);

    /**
     * The longest delay of a refused login when {@code --login-max-delay-ms} is not given: {@link #DEFAULT_MAX_DELAY},
     * or half of {@code handshakeTimeout} when that is less (so a short {@code --connect-timeout-secs} alone never
     * makes the default refused). Half, because the timeout runs from the greeting: the client's round trips and the
     * account's look-up come before the refusal, and the other half is left for them.
     */
    public static Duration defaultMaxDelay(Duration handshakeTimeout) {
        Duration half = handshakeTimeout.dividedBy(2);
        return half.compareTo(DEFAULT_MAX_DELAY) < 0 ? half : DEFAULT_MAX_DELAY;
    }

    public LoginLimits {
        if (handshakeTimeout.isNegative() || handshakeTimeout.isZero()) {
            throw new IllegalArgumentException("--connect-timeout-secs must be positive, not "
                    + handshakeTimeout.toSeconds());
        }
        if (maxPending < 1) {
            throw new IllegalArgumentException("--max-pending-logins must be at least 1, not " + maxPending);
        }
        if (maxPendingPerHost < 1) {
            throw new IllegalArgumentException("--max-pending-logins-per-host must be at least 1, not "
                    + maxPendingPerHost);
        }
        if (maxHandshakeErrors < 0) {
            throw new IllegalArgumentException("--max-handshake-errors-until-block must be 0 (off) or more, not "
                    + maxHandshakeErrors);
        }
        if (blockFor.isNegative() || blockFor.isZero()) {
            throw new IllegalArgumentException("--auth-block-secs must be positive, not " + blockFor.toSeconds());
        }
        if (delayAfter < 0) {
            throw new IllegalArgumentException("--login-delay-after must be 0 (off) or more, not " + delayAfter);
        }
        if (maxDelay.isNegative()) {
            throw new IllegalArgumentException("--login-max-delay-ms must be 0 or more, not " + maxDelay.toMillis());
        }
        if (maxDelay.compareTo(handshakeTimeout) >= 0) {
            throw new IllegalArgumentException("--login-max-delay-ms " + maxDelay.toMillis() + " must be less than "
                    + "--connect-timeout-secs " + handshakeTimeout.toSeconds() + " (" + handshakeTimeout.toMillis()
                    + " ms): a client must hear its refusal before it is timed out");
        }
    }

    /** These limits with failed logins answered at once and no host ever blocked (tests, benchmarks). */
    public LoginLimits withoutPenalties() {
        return new LoginLimits(handshakeTimeout, maxPending, maxPendingPerHost, 0, blockFor, 0, maxDelay);
    }
}
