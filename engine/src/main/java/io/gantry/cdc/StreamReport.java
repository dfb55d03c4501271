package io.gantry.cdc;

import io.gantry.authority.Event;
import io.gantry.authority.EventKind;
import io.gantry.events.EngineEvent;
import io.gantry.events.EventPublisher;
import io.gantry.topology.UpstreamUrl;
import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the change stream tells: its state, the server it streams from and its last error, as its status shows them;
 * each change of state, to the listeners and as an engine event; and its starts, moves and stops as timeline
 * entries. Written by the stream thread and by whatever stops the stream; read by status callers.
 */
final class StreamReport {

    private static final Logger LOG = LoggerFactory.getLogger(CdcStream.class);

    private final EventPublisher events;
    private final Clock clock;
    private final AppliedPosition position;
    private final StreamControl control;

    private volatile CdcStream.State state = CdcStream.State.STARTING;
    private volatile UpstreamUrl active;
    private volatile String lastError = "none";

    StreamReport(EventPublisher events, Clock clock, AppliedPosition position, StreamControl control) {
        this.events = events;
        this.clock = clock;
        this.position = position;
        this.control = control;
    }

    CdcStream.State state() {
        return state;
    }

    /** The server streamed from now, or null. */
    UpstreamUrl active() {
        return active;
    }

    /** The stream streams from no server now. */
    void inactive() {
        active = null;
    }

    String lastError() {
        return lastError;
    }

    /** Keeps {@code message} as the last error, with the time. */
    void failed(String message) {
        lastError = clock.instant().truncatedTo(ChronoUnit.SECONDS) + " " + message;
    }

    /** Sets the state and tells the listeners; never called holding the commands' lock. Stopped for good stays so. */
    void enter(CdcStream.State next, UpstreamUrl server, String reason) {
        if (control.stoppedForGood() && next != CdcStream.State.STOPPED) {
            return;
        }
        state = next;
        Optional<String> address = Optional.ofNullable(server).map(UpstreamUrl::address);
        position.announce(new StateChange(next, address, reason, clock.instant()));
        events.publish(new EngineEvent.StateChanged(address.orElse(null), "change stream " + next.displayName()
                + ": " + reason));
    }

    /** A timeline entry, published for the recorder to store and for subscribers to show. */
    void recordEvent(String server, EventKind kind, String reason) {
        events.publish(new EngineEvent.Timeline(new Event(0, clock.instant(), server, kind, reason)));
    }

    /** The stream reached {@code server}'s binlog, streaming after GTID {@code from}. */
    void streaming(UpstreamUrl server, FailoverPolicy.Arrival arrival, String from) {
        active = server;
        String address = server.address();
        if (arrival instanceof FailoverPolicy.FirstStart first) {
            enter(CdcStream.State.STREAMING, server, first.reason());
            LOG.info("cdc: streaming from {} ({}), from GTID {}", address, first.reason(), display(from));
            recordEvent(address, EventKind.CDC_STARTED, "streaming from " + address + " (" + first.reason()
                    + "), resuming after GTID " + display(from));
        } else if (arrival instanceof FailoverPolicy.Moved moved) {
            enter(CdcStream.State.STREAMING, server, moved.reason());
            LOG.warn("cdc: moved from {} to {} ({}), resuming after GTID {}", moved.from(), address, moved.reason(),
                    from);
            recordEvent(address, EventKind.CDC_MOVED, "CDC moved from " + moved.from() + " to " + address + ": "
                    + moved.reason() + "; resuming after GTID " + display(from));
        } else if (arrival instanceof FailoverPolicy.Restarted restarted) {
            enter(CdcStream.State.STREAMING, server, restarted.reason());
            LOG.info("cdc: streaming from {} again ({}), from GTID {}", address, restarted.reason(), display(from));
            recordEvent(address, EventKind.CDC_STARTED, restarted.reason() + ": streaming from " + address
                    + ", resuming after GTID " + display(from));
        } else {
            enter(CdcStream.State.STREAMING, server, "reconnected");
            LOG.info("cdc: streaming from {} again, from GTID {}", address, display(from));
        }
    }

    /** A GTID or GTID set as the log and the events show it: the empty one is the start of the binlog. */
    static String display(String gtid) {
        return gtid.isEmpty() ? "(the start of the binlog)" : gtid;
    }
}
