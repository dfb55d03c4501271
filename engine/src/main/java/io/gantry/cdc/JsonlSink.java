package io.gantry.cdc;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The change sink as JSON lines ({@link ChangeJson}) in a file {@code PATH}, rotated by size into
 * {@code PATH.000001}, {@code PATH.000002}, ... (ascending is older to newer, so the files in name order are the data
 * in order).
 *
 * <p><b>Durability.</b> The caller appends whole transactions to an in-memory buffer, then {@link #flush()}es (write
 * and fsync) and only then saves its replication position. The file may therefore be ahead of the saved position,
 * never behind it, and a crash can leave at most a torn transaction at the end of {@code PATH}: {@link #recover()}
 * cuts that off and tells the caller which transactions the file already holds, so they are not written twice.
 *
 * <p><b>Rotated files are never rescanned.</b> A file gets a number only by an atomic rename of a file that is
 * complete and fsynced: {@code PATH} after a flush at a transaction boundary ({@link #rotateIfDue()} refuses to run
 * with anything buffered), or a committed snapshot. Nothing torn can be in one, and their transactions are covered by
 * the caller's saved position, because the caller saves its position before it rotates. The one gap is a crash after
 * a rename and before the caller's next save (a committed snapshot, or a rotation that ran before the save): then
 * {@code PATH} is missing or empty, and {@code recover()} reports the {@code gtid} of the newest rotated file's last
 * line as well, which is the snapshot's position when the snapshot was the last thing committed.
 *
 * <p><b>Errors.</b> After an I/O error while writing, what reached the disk is unknown; the sink then refuses further
 * work ({@link IllegalStateException}) and the caller closes it and starts over with a new sink and
 * {@link #recover()}, which finds the end of the last complete transaction again.
 *
 * <p>The parts: {@link SinkFiles} (names, appends, rotation, renames), {@link SinkRecovery} (crash recovery) and
 * {@link SnapshotWriter} (snapshot staging); this class keeps the buffer and the order of steps.
 *
 * <p>Methods are called from one thread at a time, except {@link #close()}, which may come from another thread;
 * every method holds the sink's monitor. The sink does blocking file I/O: never call it on an event loop.
 */
public final class JsonlSink implements ChangeListener, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(JsonlSink.class);

    /**
     * What {@link #recover()} found.
     *
     * @param gtids                    the distinct {@code gtid}s of the complete transactions in {@code PATH}, in
     *                                 file order, for the caller to union into its applied position (they may be
     *                                 ahead of it); when {@code PATH} holds none, the {@code gtid} of the newest
     *                                 rotated file's last line (see {@link JsonlSink})
     * @param droppedBytes             bytes of a torn transaction cut off the end of {@code PATH}
     * @param droppedLines             lines (a partial last line counts as one) cut off with them
     * @param discardedPartialSnapshot whether a staging file of an unfinished snapshot was deleted
     */
    public record Recovery(List<String> gtids, long droppedBytes, long droppedLines,
                           boolean discardedPartialSnapshot) {
        public Recovery {
            gtids = List.copyOf(gtids);
        }
    }

    private enum State { NEW, OPEN, FAILED, CLOSED }

    private final SinkFiles files;
    private final Buffer buffer = new Buffer();

    private State state = State.NEW;
    private IOException failure;
    private SnapshotWriter snapshot;

    /**
     * @param path          the current file; rotated and staging files are its siblings, and missing parent
     *                      directories are created by {@link #recover()}
     * @param rotationBytes {@link #rotateIfDue()} rotates once {@code path} is larger than this many bytes; more than
     *                      0
     */
    public JsonlSink(Path path, long rotationBytes) {
        this.files = new SinkFiles(Objects.requireNonNull(path, "path"), rotationBytes);
    }

    /** The current file, {@code PATH}. */
    public Path path() {
        return files.path();
    }

    /**
     * Opens {@code PATH} (creating it and its directories) and makes its end a transaction boundary again after a
     * crash ({@link SinkRecovery}); called once, before anything else. A leftover snapshot staging file is deleted:
     * the snapshot never committed, so its position was never saved, and the caller takes it again.
     *
     * @throws IOException when the files cannot be read or written, or when a line before the end of {@code PATH}
     *                     is damaged or out of sequence (named by file and line): only a torn end comes from a crash,
     *                     anything else needs a person to look at it, not a silent skip
     */
    public synchronized Recovery recover() throws IOException {
        if (state != State.NEW) {
            throw new IllegalStateException("recover() is called once, on a new sink; this one is " + state);
        }
        files.open();
        try {
            Recovery recovery = SinkRecovery.recover(files);
            state = State.OPEN;
            return recovery;
        } catch (IOException | RuntimeException e) {
            files.close();
            throw e;
        }
    }

    /**
     * Encodes every row of a transaction into the buffer; nothing reaches the file before {@link #flush()}, so the
     * file never holds half a transaction by the sink's doing. A transaction without changes writes nothing.
     *
     * @throws IllegalArgumentException when a value has a type the sink cannot write; nothing of the transaction is
     *                                  buffered then
     */
    public synchronized void append(ChangeTransaction tx) {
        Objects.requireNonNull(tx, "tx");
        requireOpen();
        if (tx.changes().isEmpty()) {
            return;
        }
        StringBuilder lines = new StringBuilder(256 * tx.changes().size());
        ChangeJson.appendTransaction(lines, tx);
        buffer.writeBytes(lines.toString().getBytes(UTF_8));
    }

    /**
     * Writes the buffer to {@code PATH} and fsyncs it: when this returns, everything appended so far is durable and
     * the caller may save its position.
     *
     * @return whether anything was written
     */
    public synchronized boolean flush() throws IOException {
        requireOpen();
        if (buffer.size() == 0) {
            return false;
        }
        try {
            files.append(buffer.view());
        } catch (IOException e) {
            throw fail(e);
        }
        buffer.reset();
        return true;
    }

    /**
     * Rotates {@code PATH} to the next numbered name once it is larger than the rotation size. The caller flushes
     * and saves its position first, so that a rotated file never holds anything the position does not cover.
     *
     * @return whether it rotated
     * @throws IllegalStateException when something is buffered (not at a transaction boundary on disk)
     */
    public synchronized boolean rotateIfDue() throws IOException {
        requireOpen();
        if (buffer.size() > 0) {
            throw new IllegalStateException("cannot rotate " + files.path() + " with " + buffer.size()
                    + " bytes buffered: flush and save the position first");
        }
        try {
            return files.rotateIfLarger();
        } catch (IOException e) {
            throw fail(e);
        }
    }

    /**
     * Starts a snapshot: its rows stream into the staging file {@code PATH.snapshot-partial}, which becomes visible
     * only as a whole, on {@link SnapshotWriter#commit()}. A leftover staging file is deleted first.
     *
     * @param position the snapshot's position as GTID set text, written as the {@code gtid} of every line
     * @throws IllegalStateException when another snapshot is still open
     */
    public synchronized SnapshotWriter beginSnapshot(String position) throws IOException {
        Objects.requireNonNull(position, "position");
        requireOpen();
        if (snapshot != null) {
            throw new IllegalStateException("a snapshot is already being written to " + files.staging()
                    + "; commit or abort it first");
        }
        Files.deleteIfExists(files.staging());
        snapshot = new SnapshotWriter(this, position, files.staging());
        return snapshot;
    }

    /** As a listener of the change stream: {@link #append} each transaction. */
    @Override
    public void onTransaction(AppliedTransaction transaction) {
        append(transaction.transaction());
    }

    /** As a listener of the change stream: {@link #flush()} before the position is saved. */
    @Override
    public void makeDurable() throws IOException {
        flush();
    }

    /** As a listener of the change stream: {@link #rotateIfDue()} once the position covers everything written. */
    @Override
    public void positionSaved() throws IOException {
        rotateIfDue();
    }

    @Override
    public String toString() {
        return "change sink " + files.path();
    }

    /**
     * Flushes what is buffered and closes the file; an open snapshot is aborted. Safe to call twice, and from
     * another thread than the writer's.
     */
    @Override
    public synchronized void close() throws IOException {
        if (state == State.CLOSED) {
            return;
        }
        IOException problem = null;
        try {
            if (state == State.OPEN) {
                flush();
            }
        } catch (IOException e) {
            problem = e;
        }
        if (snapshot != null) {
            try {
                snapshot.abort();
            } catch (IOException e) {
                problem = addTo(problem, e);
            }
        }
        try {
            files.close();
        } catch (IOException e) {
            problem = addTo(problem, e);
        }
        state = State.CLOSED;
        if (problem != null) {
            throw problem;
        }
    }

    /**
     * A committing snapshot's complete, fsynced staging file joins the sink after everything appended before: the
     * buffer is flushed, a non-empty {@code PATH} rotated, and the staging file renamed to the next number.
     */
    synchronized void publish(Path staging, long rows, String position) throws IOException {
        flush();
        try {
            if (!files.currentIsEmpty()) {
                files.rotate();
            }
            Path target = files.publish(staging);
            LOG.info("cdc sink {}: committed a snapshot of {} rows at {} as {}", files.path(), rows, position,
                    target.getFileName());
        } catch (IOException e) {
            throw fail(e);
        }
    }

    /** The open snapshot was committed or aborted: another may begin. */
    synchronized void snapshotFinished(SnapshotWriter writer) {
        if (snapshot == writer) {
            snapshot = null;
        }
    }

    synchronized void requireOpen() {
        switch (state) {
            case NEW -> throw new IllegalStateException("call recover() before using the change sink " + path());
            case FAILED -> throw new IllegalStateException("an I/O error left the end of " + path()
                    + " unknown; close this sink and recover() with a new one", failure);
            case CLOSED -> throw new IllegalStateException("the change sink " + path() + " is closed");
            case OPEN -> {
            }
        }
    }

    private IOException fail(IOException e) {
        if (state == State.OPEN) {
            state = State.FAILED;
            failure = e;
            LOG.error("cdc sink {}: write failed, the sink stops until it is recovered: {}", path(), e.toString());
        }
        return e;
    }

    private static IOException addTo(IOException problem, IOException e) {
        if (problem == null) {
            return e;
        }
        problem.addSuppressed(e);
        return problem;
    }

    /** A byte buffer whose content can be written without a copy. */
    private static final class Buffer extends ByteArrayOutputStream {
        ByteBuffer view() {
            return ByteBuffer.wrap(buf, 0, count);
        }
    }
}
