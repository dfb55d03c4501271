package io.gantry.cli;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import org.slf4j.LoggerFactory;

/**
 * How Gantry writes its log lines: {@code text} ({@code logback.xml}: time, level, component, message) or
 * {@code json}, one JSON object per line from Logback's own {@link JsonEncoder} ({@code timestamp} in epoch
 * milliseconds, {@code level}, {@code loggerName}, {@code threadName}, {@code mdc}, {@code kvpList} (the
 * {@code session} and {@code server} a line is about, where it is about one), {@code formattedMessage},
 * {@code throwable}), for log shippers.
 */
enum LogFormat {
    TEXT, JSON;

    /** The format named by {@code --log-format}. */
    static LogFormat fromFlag(String value) {
        for (LogFormat format : values()) {
            if (format.name().equalsIgnoreCase(value)) {
                return format;
            }
        }
        throw new IllegalArgumentException("--log-format must be text or json, not '" + value + "'");
    }

    /** Switches the process's log lines to this format (text is what logback.xml already sets up). */
    void apply() {
        if (this == TEXT) {
            return;
        }
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        JsonEncoder encoder = new JsonEncoder();
        encoder.setContext(context);
        // The message as an operator reads it, not its template and arguments; none of Logback's own context.
        encoder.setWithFormattedMessage(true);
        encoder.setWithMessage(false);
        encoder.setWithArguments(false);
        encoder.setWithContext(false);
        encoder.setWithSequenceNumber(false);
        encoder.setWithNanoseconds(false);
        encoder.start();
        ConsoleAppender<ILoggingEvent> appender = new ConsoleAppender<>();
        appender.setContext(context);
        appender.setName("json");
        appender.setTarget("System.err");
        appender.setEncoder(encoder);
        appender.start();
        Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.detachAndStopAllAppenders();
        root.addAppender(appender);
    }
}
