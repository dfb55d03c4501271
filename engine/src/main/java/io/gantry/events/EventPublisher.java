package io.gantry.events;

/**
 * Where a component tells what happened. Publishing is cheap and safe from any thread, an event loop included: it
 * never blocks, never waits for a subscriber, and never throws.
 */
@FunctionalInterface
public interface EventPublisher {

    /** Hands the event on and returns at once. */
    void publish(EngineEvent event);

    /** Tells no one. */
    EventPublisher NONE = event -> { };
}
