package io.gantry.cdc;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The listeners of one change stream, called in the order they were added. Each call is guarded as
 * {@link ChangeListener} promises: a required listener's exception becomes a {@link RequiredListenerFailed} for the
 * stream to stop on; an isolated listener's exception is logged (the first with its stack, then at most one line a
 * minute with the count) and goes no further.
 *
 * <p>Not thread safe: {@link AppliedPosition} makes every call under its monitor, which is what keeps calls from
 * overlapping.
 */
final class ChangeListeners {

    private static final Logger LOG = LoggerFactory.getLogger(ChangeListeners.class);
    private static final Duration REPEAT_LOG_INTERVAL = Duration.ofMinutes(1);

    /** A required listener (the change sink) failed: the stream must stop, since it lost what it was given. */
    static final class RequiredListenerFailed extends RuntimeException {
        RequiredListenerFailed(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final Clock clock;
    private final List<Entry> entries = new ArrayList<>();
    private StateChange last;

    ChangeListeners(Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** Adds a listener after the others; {@code required} when its failure must stop the stream. */
    void add(ChangeListener listener, boolean required) {
        entries.add(new Entry(Objects.requireNonNull(listener, "listener"), required));
    }

    /** Called for every transaction: no lambda, and the failure's description is made only when there is one. */
    void transaction(AppliedTransaction transaction) {
        for (Entry entry : entries) {
            try {
                entry.listener.onTransaction(transaction);
            } catch (RuntimeException e) {
                failed(entry, "transaction " + transaction.gtid(), e);
            }
        }
    }

    /** Tells every listener of a new state or server; a repeat of the last state and server is dropped. */
    void stateChanged(StateChange change) {
        if (last != null && last.state() == change.state() && last.server().equals(change.server())) {
            return;
        }
        last = change;
        for (Entry entry : entries) {
            call(entry, "the state change to " + change.state().displayName(),
                    () -> entry.listener.onStateChange(change));
        }
    }

    void makeDurable() {
        for (Entry entry : entries) {
            call(entry, "making its changes durable", entry.listener::makeDurable);
        }
    }

    void positionSaved() {
        for (Entry entry : entries) {
            call(entry, "the saved position", entry.listener::positionSaved);
        }
    }

    private void call(Entry entry, String what, Call call) {
        try {
            call.run();
        } catch (IOException | RuntimeException e) {
            failed(entry, what, e);
        }
    }

    private void failed(Entry entry, String what, Exception e) {
        if (entry.required) {
            throw new RequiredListenerFailed(entry.listener + " failed on " + what + ": " + FailureText.describe(e), e);
        }
        entry.failed(what, e, clock.instant());
    }

    private interface Call {
        void run() throws IOException;
    }

    /** A listener, and what is left to log of its failures. */
    private static final class Entry {
        private final ChangeListener listener;
        private final boolean required;
        private long failures;
        private long unlogged;
        private Instant lastLogged;

        Entry(ChangeListener listener, boolean required) {
            this.listener = listener;
            this.required = required;
        }

        void failed(String what, Exception e, Instant now) {
            failures++;
            if (lastLogged == null) {
                LOG.error("cdc: listener {} failed on {}; it goes on receiving changes, the stream goes on",
                        listener, what, e);
                lastLogged = now;
            } else if (Duration.between(lastLogged, now).compareTo(REPEAT_LOG_INTERVAL) >= 0) {
                LOG.error("cdc: listener {} failed {} more times ({} in all), the last on {}: {}", listener,
                        unlogged + 1, failures, what, FailureText.describe(e));
                lastLogged = now;
                unlogged = 0;
            } else {
                unlogged++;
            }
        }
    }
}
