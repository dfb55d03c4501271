package io.gantry.route;

import java.time.Duration;
import java.util.Objects;

/**
 * The read guarantees of a session: the process defaults from the flags, overridden by the session's own
 * {@code SET gantry_...} settings.
 *
 * @param readYourWrites      {@code gantry_read_your_writes} / {@code --read-your-writes} (default on): after the
 *                            session writes, its reads go only to servers known to hold what it wrote
 * @param followerReadStaleness {@code gantry_follower_read_staleness_ms} / {@code --follower-read-staleness-ms}:
 *                            when set, a replica serves a read only if it holds everything the primary had
 *                            executed that long ago; {@link Duration#ZERO} for unset
 * @param maxStaleReadBound   {@code --max-stale-read-bound-ms} (default 60 s; {@link Duration#ZERO} turns the check
 *                            off): no replica whose lag is larger serves a read, whatever the session set
 * @param sampleInterval      {@code --lag-sample-interval-ms} (default 250 ms): how often positions are sampled
 * @param avoidWaiting        {@code --follower-reads-avoid-waiting} (default true): a read that no replica is known
 *                            to qualify for goes to the primary; false: it waits on a replica first
 * @param causalWaitTimeout   {@code --causal-wait-timeout-ms} (default 1 s): how long such a read waits on the
 *                            replica before it goes to the primary after all
 * @param scope               {@code gantry_read_your_writes_scope} / {@code --read-your-writes-scope} (default
 *                            {@code session}): whose writes a read must find, the session's own or those of every
 *                            session of its account or of its token
 * @param causalToken         {@code gantry_causal_token}: the token of a {@code token} scope, null when none is set
 *                            (the session then has its own writes only)
 */
public record ReadGuarantees(boolean readYourWrites, Duration followerReadStaleness, Duration maxStaleReadBound,
                             Duration sampleInterval, boolean avoidWaiting, Duration causalWaitTimeout,
                             ReadYourWritesScope scope, String causalToken) {

    /** The defaults of {@code gantry run}. */
    public static final ReadGuarantees DEFAULTS = new ReadGuarantees(true, Duration.ZERO, Duration.ofSeconds(60),
            Duration.ofMillis(250), true, Duration.ofSeconds(1));

    /** Guarantees of the session's own writes alone. */
    public ReadGuarantees(boolean readYourWrites, Duration followerReadStaleness, Duration maxStaleReadBound,
                          Duration sampleInterval, boolean avoidWaiting, Duration causalWaitTimeout) {
        this(readYourWrites, followerReadStaleness, maxStaleReadBound, sampleInterval, avoidWaiting,
                causalWaitTimeout, ReadYourWritesScope.SESSION, null);
    }

    /** Guarantees that avoid waiting (the default). */
    public ReadGuarantees(boolean readYourWrites, Duration followerReadStaleness, Duration maxStaleReadBound,
                          Duration sampleInterval) {
        this(readYourWrites, followerReadStaleness, maxStaleReadBound, sampleInterval, DEFAULTS.avoidWaiting,
                DEFAULTS.causalWaitTimeout);
    }

    public ReadGuarantees {
        Objects.requireNonNull(followerReadStaleness, "followerReadStaleness");
        Objects.requireNonNull(maxStaleReadBound, "maxStaleReadBound");
        Objects.requireNonNull(sampleInterval, "sampleInterval");
        Objects.requireNonNull(causalWaitTimeout, "causalWaitTimeout");
        Objects.requireNonNull(scope, "scope");
        if (causalWaitTimeout.toMillis() < 1 || causalWaitTimeout.toSeconds() > 3600) {
            throw new IllegalArgumentException("--causal-wait-timeout-ms must be between 1 and 3600000, not "
                    + causalWaitTimeout.toMillis());
        }
        if (sampleInterval.toMillis() < 10) {
            throw new IllegalArgumentException("--lag-sample-interval-ms must be at least 10, not "
                    + sampleInterval.toMillis());
        }
        if (maxStaleReadBound.isNegative()) {
            throw new IllegalArgumentException("--max-stale-read-bound-ms must be 0 (off) or more, not "
                    + maxStaleReadBound.toMillis());
        }
        String problem = stalenessProblem(followerReadStaleness, sampleInterval);
        if (problem != null) {
            throw new IllegalArgumentException("--follower-read-staleness-ms: " + problem);
        }
    }

    /** The smallest staleness a session may ask for: two sampling intervals (a sample's age can be one). */
    public Duration minimumStaleness() {
        return sampleInterval.multipliedBy(2);
    }

    /** Why {@code staleness} cannot be asked for with this sampling interval, or null when it can (zero: unset). */
    public static String stalenessProblem(Duration staleness, Duration sampleInterval) {
        if (staleness.isNegative()) {
            return "a staleness cannot be negative (" + staleness.toMillis() + " ms)";
        }
        if (!staleness.isZero() && staleness.compareTo(sampleInterval.multipliedBy(2)) < 0) {
            return "a staleness of " + staleness.toMillis() + " ms is below the minimum of "
                    + sampleInterval.multipliedBy(2).toMillis() + " ms (twice --lag-sample-interval-ms, "
                    + sampleInterval.toMillis() + " ms): positions are not known more precisely than that";
        }
        return null;
    }

    public ReadGuarantees withReadYourWrites(boolean value) {
        return new ReadGuarantees(value, followerReadStaleness, maxStaleReadBound, sampleInterval, avoidWaiting, causalWaitTimeout, scope,
                causalToken);
    }

    public ReadGuarantees withFollowerReadStaleness(Duration value) {
        return new ReadGuarantees(readYourWrites, value, maxStaleReadBound, sampleInterval, avoidWaiting, causalWaitTimeout, scope,
                causalToken);
    }

    public ReadGuarantees withMaxStaleReadBound(Duration value) {
        return new ReadGuarantees(readYourWrites, followerReadStaleness, value, sampleInterval, avoidWaiting, causalWaitTimeout, scope,
                causalToken);
    }

    /** A copy that waits on a replica for up to {@code timeout} instead of going to the primary at once (or not). */
    public ReadGuarantees withWaiting(boolean avoid, Duration timeout) {
        return new ReadGuarantees(readYourWrites, followerReadStaleness, maxStaleReadBound, sampleInterval, avoid,
                timeout, scope, causalToken);
    }

    /** A copy whose reads must find the writes of {@code value}'s scope. */
    public ReadGuarantees withScope(ReadYourWritesScope value) {
        return new ReadGuarantees(readYourWrites, followerReadStaleness, maxStaleReadBound, sampleInterval,
                avoidWaiting, causalWaitTimeout, value, causalToken);
    }

    /** A copy naming the token of a {@code token} scope (null: none). */
    public ReadGuarantees withCausalToken(String value) {
        return new ReadGuarantees(readYourWrites, followerReadStaleness, maxStaleReadBound, sampleInterval,
                avoidWaiting, causalWaitTimeout, scope, value);
    }
}
