package io.gantry.cli;

import io.gantry.proxy.session.FailoverSettings;
import java.time.Duration;
import picocli.CommandLine.Option;

/** How Gantry follows the primary and leaves a server that stops answering: the health loop's pace and bounds. */
final class FailoverOptions {

    @Option(names = "--upstream-health-interval-secs", paramLabel = "SECONDS", defaultValue = "2",
            description = "How often every server is checked and the primary re-detected; while no primary is "
                    + "known, every 0.25 s, and at once when the primary refuses a write as read-only or a "
                    + "server is lost (default: ${DEFAULT-VALUE}).")
    double healthIntervalSeconds;

    @Option(names = "--upstream-check-timeout-ms", paramLabel = "MS", defaultValue = "1500",
            description = "Bound on each health check: its new connection (connect, TLS and login together) "
                    + "and each answer on the connection it keeps; a server that does not answer within it is "
                    + "down, 10 to 600000 (default: ${DEFAULT-VALUE}).")
    long checkTimeoutMs;

    @Option(names = "--switchover-hold-ms", paramLabel = "MS", defaultValue = "5000",
            description = "How long a statement that needs the primary waits for one instead of failing: while "
                    + "none is known, or after the primary refused a write as read-only outside a "
                    + "transaction; 0 refuses at once, at most 600000 (default: ${DEFAULT-VALUE}).")
    long switchoverHoldMs;

    /** The health loop's interval; refused with the flag's name when not positive. */
    Duration healthInterval() {
        if (healthIntervalSeconds <= 0) {
            throw new IllegalArgumentException("--upstream-health-interval-secs must be positive, not "
                    + healthIntervalSeconds);
        }
        return Duration.ofMillis((long) (healthIntervalSeconds * 1000));
    }

    FailoverSettings toSettings() {
        healthInterval();
        return new FailoverSettings(Duration.ofMillis(checkTimeoutMs), Duration.ofMillis(switchoverHoldMs));
    }
}
