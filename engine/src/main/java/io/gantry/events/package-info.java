/**
 * The engine's event bus: one place where topology (servers down and up, roles, health rounds), the change stream
 * (started, moved, skipped, stopped), the proxy (hosts blocked) and the Authority (list and weight changes) tell
 * what happened, and where any number of subscribers hear it (the timeline recorder, the greeting refresh, the
 * admin socket).
 *
 * <p>Publishing never blocks and never waits for a subscriber: each subscriber has its own bounded queue and its
 * own thread, so a slow one drops its own events (and is told how many) without slowing the publishers or the
 * other subscribers. An event loop may publish.
 *
 * <p>This package reads only the Authority's value types ({@link io.gantry.authority.Event},
 * {@link io.gantry.authority.HealthSample}), the timeline's vocabulary.
 */
package io.gantry.events;
