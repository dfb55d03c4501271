package io.gantry.digest;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * How the proxy measures its statements.
 *
 * @param enabled           whether statements are counted at all ({@code --digests on|off}, default on); off, nothing
 *                          is measured: the digests stay empty and there is no slow-statement log
 * @param maxShapes         the digests' rows at most ({@code --digest-max-shapes}, default 10 000); past it the least
 *                          used shapes are folded into one "other" row
 * @param slowStatement     from what latency a statement is written to the slow-statement log
 *                          ({@code --slow-statement-ms}); empty (the default): no log
 * @param slowLiterals      whether the log keeps the statement's literals ({@code --slow-statement-literals}); by
 *                          default they are written as {@code ?}
 * @param slowStatementLog  the log's file ({@code --slow-statement-log}); empty: {@value #SLOW_LOG_FILE} in the data
 *                          directory, which {@link #inDirectory} fills in
 */
public record DigestSettings(boolean enabled, int maxShapes, Optional<Duration> slowStatement, boolean slowLiterals,
                             Optional<Path> slowStatementLog) {

    /** The slow-statement log's file name in the data directory when {@code --slow-statement-log} is not given. */
    public static final String SLOW_LOG_FILE = "slow-statements.jsonl";

    /** Every default: on, 10 000 shapes, no slow-statement log. */
    public static final DigestSettings DEFAULTS = new DigestSettings(true, StatementDigests.DEFAULT_MAX_SHAPES,
            Optional.empty(), false, Optional.empty());

    public DigestSettings {
        if (maxShapes < 1) {
            throw new IllegalArgumentException("--digest-max-shapes must be at least 1, not " + maxShapes);
        }
        if (slowStatement.isPresent() && slowStatement.get().isNegative()) {
            throw new IllegalArgumentException("--slow-statement-ms must not be negative, not "
                    + slowStatement.get().toMillis());
        }
        if (!enabled && slowStatement.isPresent()) {
            throw new IllegalArgumentException("--slow-statement-ms needs --digests on: the slow statements are "
                    + "found by the digests' timing");
        }
    }

    /** These settings with the slow-statement log's file in {@code dataDirectory} unless one was named. */
    public DigestSettings inDirectory(Path dataDirectory) {
        return slowStatementLog.isPresent() ? this : new DigestSettings(enabled, maxShapes, slowStatement, slowLiterals,
                Optional.of(dataDirectory.resolve(SLOW_LOG_FILE)));
    }

    public DigestSettings withMaxShapes(int value) {
        return new DigestSettings(enabled, value, slowStatement, slowLiterals, slowStatementLog);
    }
}
