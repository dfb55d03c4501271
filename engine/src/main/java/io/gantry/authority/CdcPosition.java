package io.gantry.authority;

import java.time.Instant;
import java.util.Objects;

/**
 * The last applied position of a change stream, a row of {@code gantry.cdc_position}.
 *
 * @param stream    the stream's name
 * @param gtidSet   the GTID set applied so far, in the server flavour's own text form
 * @param server    {@code host:port} the position was read from
 * @param updatedAt when it was saved, to the millisecond
 */
public record CdcPosition(String stream, String gtidSet, String server, Instant updatedAt) {

    public CdcPosition {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(gtidSet, "gtidSet");
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(updatedAt, "updatedAt");
    }
}
