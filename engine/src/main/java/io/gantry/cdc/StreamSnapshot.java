package io.gantry.cdc;

import io.gantry.gtid.Flavour;
import io.gantry.gtid.GtidSet;
import io.gantry.topology.UpstreamUrl;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The snapshot the change stream takes into the sink before it streams, when nothing is known to resume from or
 * {@code --cdc-snapshot} asks for one: whether one is still due, taking it on the stream thread, and its progress or
 * outcome in words for the status. A snapshot that fails is taken again from the start on the next attempt.
 */
final class StreamSnapshot {

    private static final Logger LOG = LoggerFactory.getLogger(CdcStream.class);

    private final CdcSettings settings;
    private final Clock clock;
    private final JsonlSink sink;
    private final AppliedPosition position;
    private final StreamReport report;
    /** Whether this instance may still publish to the sink (a cluster's feed owner: while it holds the lease). */
    private final BooleanSupplier mayPublish;

    private volatile SnapshotProgress progress;
    private volatile String summary;
    private volatile boolean pending;

    /** @param sink where the snapshot goes; null when there is no change sink (then none is ever pending) */
    StreamSnapshot(CdcSettings settings, Clock clock, JsonlSink sink, AppliedPosition position, StreamReport report,
                   boolean pending, BooleanSupplier mayPublish) {
        this.mayPublish = mayPublish;
        this.settings = settings;
        this.clock = clock;
        this.sink = sink;
        this.position = position;
        this.report = report;
        this.pending = pending;
        this.summary = pending ? "pending" : sink == null ? "none (no change sink)"
                : "not needed (resuming from the saved position)";
    }

    boolean pending() {
        return pending;
    }

    /** The snapshot's progress while the stream is in {@code state} snapshotting, else its outcome, in words. */
    String describe(CdcStream.State state) {
        SnapshotProgress current = progress;
        return state == CdcStream.State.SNAPSHOTTING && current != null ? current.describe() : summary;
    }

    /** Takes the snapshot from {@code server}, giving up when {@code stopAsked} says a command came. */
    void take(UpstreamUrl server, Flavour flavour, BooleanSupplier stopAsked) throws Exception {
        SnapshotProgress tracker = new SnapshotProgress(server.address(), clock);
        progress = tracker;
        report.enter(CdcStream.State.SNAPSHOTTING, server, "a snapshot of " + settings.tables());
        Instant startedAt = clock.instant();
        Snapshotter snapshotter = new Snapshotter(server, flavour, settings.tables(), tracker, stopAsked, clock);
        LOG.atInfo().addKeyValue("server", server.address())
                .log("cdc: taking a snapshot of {} from {}", settings.tables(), server.address());
        try (Connection connection = Snapshotter.open(server, settings.connectTimeout())) {
            Snapshotter.Start start = snapshotter.begin(connection);
            SnapshotWriter writer = sink.beginSnapshot(start.position());
            long rows;
            try {
                rows = snapshotter.copyTables(connection, start, writer::add);
                position.resetTo(GtidSet.parse(start.position(), flavour), server.address(),
                        () -> writer.commit(mayPublish));
            } catch (Exception e) {
                writer.abort();
                tracker.finished("failed on " + server.address() + ": " + FailureText.describe(e) + "; it will be "
                        + "taken again from the start");
                summary = tracker.describe();
                throw e;
            }
            pending = false;
            String done = String.format(Locale.ROOT, "done: %d rows from %s at GTID %s in %.1f s", rows,
                    server.address(), StreamReport.display(start.position()),
                    Duration.between(startedAt, clock.instant()).toMillis() / 1e3);
            tracker.finished(done);
            summary = done;
            LOG.info("cdc: snapshot {}", done);
        }
    }
}
