package io.gantry;

import io.gantry.authority.Authority;
import io.gantry.authority.Event;
import io.gantry.events.EngineEvent;
import io.gantry.events.EventBus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes what the event bus carries into the Authority: each health round as health samples, and each timeline
 * entry not stored yet (downs, ups, role changes, the change stream's starts, moves and stops, blocked hosts) as a
 * row of {@code gantry.events}. It runs as a bus subscriber ({@code gantry-events-authority}), so neither the health
 * loop, the change stream nor an event loop waits for H2.
 */
final class AuthorityRecorder implements EventBus.Subscriber, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(AuthorityRecorder.class);
    /** Events waiting to be written; a minute of a busy bus, far more than H2 ever falls behind. */
    private static final int CAPACITY = 10_000;

    private final Authority authority;
    private final EventBus.Subscription subscription;

    AuthorityRecorder(Authority authority, EventBus bus) {
        this.authority = authority;
        this.subscription = bus.subscribe("authority", CAPACITY, this);
    }

    @Override
    public void onEvent(EngineEvent event) {
        try {
            if (event instanceof EngineEvent.Timeline timeline && !timeline.stored()) {
                Event entry = timeline.event();
                authority.recordEvent(entry.at(), entry.server(), entry.kind(), entry.reason());
            } else if (event instanceof EngineEvent.HealthRound round) {
                authority.recordHealth(round.samples());
            }
        } catch (RuntimeException e) {
            // A failed write must not stop the next ones; the operator sees why.
            LOG.error("authority: could not record health or events: {}", e.toString());
        }
    }

    @Override
    public void onDropped(long count) {
        LOG.error("authority: {} health rounds or timeline events were not recorded: the Authority fell behind",
                count);
    }

    /** Writes what is still queued (a few seconds at most), then stops. */
    @Override
    public void close() {
        subscription.close();
    }
}
