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

    @Option(names = "--transaction-replay", paramLabel = "on|off", defaultValue = "on",
            description = "When the primary is lost during a session's transaction (its connection closed, the "
                    + "server down, or the primary moved), run the transaction again on the new primary and go on "
                    + "if every answer is the same as the client got; else the session ends as without it "
                    + "(default: ${DEFAULT-VALUE}).")
    String transactionReplay;

    @Option(names = "--transaction-replay-max-bytes", paramLabel = "BYTES", defaultValue = "1048576",
            description = "The statements' bytes one transaction may keep for a replay; a larger transaction is not "
                    + "replayable (SHOW GANTRY SESSION says so), 0 to "
                    + FailoverSettings.TransactionReplay.MAX_MAX_BYTES + " (default: ${DEFAULT-VALUE}).")
    long transactionReplayMaxBytes;

    @Option(names = "--transaction-replay-timeout-ms", paramLabel = "MS",
            description = "How long a replay waits for a new primary before the session ends (default: "
                    + "--switchover-hold-ms).")
    Long transactionReplayTimeoutMs;

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
        Duration replayTimeout = Duration.ofMillis(transactionReplayTimeoutMs != null ? transactionReplayTimeoutMs
                : switchoverHoldMs);
        return new FailoverSettings(Duration.ofMillis(checkTimeoutMs), Duration.ofMillis(switchoverHoldMs),
                new FailoverSettings.TransactionReplay(OnOff.parse("--transaction-replay", transactionReplay),
                        transactionReplayMaxBytes, replayTimeout));
    }
}
