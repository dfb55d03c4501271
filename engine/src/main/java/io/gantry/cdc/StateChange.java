package io.gantry.cdc;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * The change stream's state changed, as its {@linkplain ChangeListener listeners} are told.
 *
 * @param state  what the stream does now
 * @param server {@code host:port} it streams, snapshots or retries from; empty when starting or stopped
 * @param reason why, in words: the reason of a start or move, the failure, the command
 * @param at     when, by the stream's clock
 */
public record StateChange(CdcStream.State state, Optional<String> server, String reason, Instant at) {

    public StateChange {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(at, "at");
    }
}
