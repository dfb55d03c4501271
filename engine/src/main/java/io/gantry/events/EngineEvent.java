package io.gantry.events;

import io.gantry.authority.Event;
import io.gantry.authority.HealthSample;
import java.util.List;
import java.util.Objects;

/** Something that happened in the engine, as the {@link EventBus} carries it to its subscribers. */
public sealed interface EngineEvent {

    /**
     * An entry of the failover timeline: a server down or up, a role change, the change stream started, moved or
     * stopped, a list or weight changed, a host blocked.
     *
     * @param event the entry; its id is 0 when it is not stored yet (the timeline recorder stores it), and the
     *              Authority's id for the entries the Authority stores itself, in the same transaction as the change
     *              they record (list and weight changes)
     */
    record Timeline(Event event) implements EngineEvent {

        public Timeline {
            Objects.requireNonNull(event, "event");
        }

        /** Whether the Authority has stored it already. */
        public boolean stored() {
            return event.id() != 0;
        }
    }

    /**
     * A health round finished: what it found about each server, for the health history.
     *
     * @param samples one per server checked, all with the round's time
     */
    record HealthRound(List<HealthSample> samples) implements EngineEvent {

        public HealthRound {
            samples = List.copyOf(samples);
        }
    }

    /**
     * Live state changed in a way the timeline does not record (a weight applied to the live list, a list put in
     * place, the change stream's state), so that whoever shows live state reads it again.
     *
     * @param server {@code host:port} it concerns, or null when it concerns no single server
     * @param what   what changed, in words, for logs
     */
    record StateChanged(String server, String what) implements EngineEvent {

        public StateChanged {
            Objects.requireNonNull(what, "what");
        }
    }
}
