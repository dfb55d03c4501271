package io.gantry.cdc;

import io.gantry.authority.EventKind;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The change stream's checkpoints: every flush interval, after each binlog session and at close, the applied
 * position is made durable ({@link AppliedPosition#checkpoint()}) and the rates are sampled from it. When the sink
 * cannot be written or the position not saved, the stream stops for good, since applying more would lose changes.
 * Called by the flush thread, the stream thread and close.
 */
final class PositionCheckpoints {

    private static final Logger LOG = LoggerFactory.getLogger(CdcStream.class);

    private final AppliedPosition position;
    private final Throughput throughput;
    private final StreamControl control;
    private final StreamReport report;

    PositionCheckpoints(AppliedPosition position, Throughput throughput, StreamControl control, StreamReport report) {
        this.position = position;
        this.throughput = throughput;
        this.control = control;
        this.report = report;
    }

    /** Saves the position if it moved; a failure stops the stream for good. */
    void checkpointQuietly() {
        if (control.stoppedForGood()) {
            return; // nothing more is written, and the failure was reported once
        }
        try {
            position.checkpoint();
            throughput.sample(position.counts());
        } catch (RuntimeException e) {
            stopForGood(e);
        }
    }

    /**
     * The sink could not be written (disk full, permissions) or the position not saved: the stream stops, since
     * applying more would lose changes. What was applied in memory but not written is read again from a server
     * after a restart (the sink and the saved position agree on what was written).
     */
    void stopForGood(RuntimeException e) {
        String message = e instanceof ChangeListeners.RequiredListenerFailed ? FailureText.describe(e)
                : "saving the position failed: " + FailureText.describe(e);
        if (!control.stopForGood(message)) {
            return;
        }
        LOG.error("cdc: {}; the stream is stopped: fix the cause, restart Gantry to resume from the saved position",
                message, e);
        report.failed(message);
        report.inactive();
        report.enter(CdcStream.State.STOPPED, null, message);
        report.recordEvent(null, EventKind.CDC_STOPPED, message);
    }
}
