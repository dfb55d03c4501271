package io.gantry.proxy.session;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;

/**
 * Warnings that a peer can cause at will (malformed logins, refused connections, failed passwords): at most
 * {@code perWindow} lines of one kind per window, then one line saying how many were left out, so a hostile peer
 * cannot flood the log or slow the proxy with logging.
 */
public final class RateLimitedLog {

    private static final class Window {
        Instant start;
        int logged;
        int suppressed;
    }

    private final Logger log;
    private final int perWindow;
    private final Duration window;
    private final Clock clock;
    private final Map<String, Window> windows = new ConcurrentHashMap<>();

    public RateLimitedLog(Logger log, int perWindow, Duration window, Clock clock) {
        this.log = log;
        this.perWindow = perWindow;
        this.window = window;
        this.clock = clock;
    }

    /** Logs a warning of kind {@code kind} unless this kind already used up its window. */
    public void warn(String kind, String format, Object... arguments) {
        Window current = windows.computeIfAbsent(kind, k -> new Window());
        int leftOut;
        synchronized (current) {
            Instant now = clock.instant();
            leftOut = 0;
            if (current.start == null || !now.isBefore(current.start.plus(window))) {
                leftOut = current.suppressed;
                current.start = now;
                current.logged = 0;
                current.suppressed = 0;
            }
            if (current.logged >= perWindow) {
                current.suppressed++;
                return;
            }
            current.logged++;
        }
        if (leftOut > 0) {
            log.warn("{} more lines like the next one were left out in the last {} s", leftOut, window.toSeconds());
        }
        log.warn(format, arguments);
    }
}
