package io.gantry.cdc;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.function.BooleanSupplier;

/**
 * Stages the rows of one snapshot in the sink's staging file {@code PATH.snapshot-partial}, buffered (a snapshot may
 * have millions of rows); the snapshot becomes part of the sink only as a whole, on {@link #commit()}. Snapshot lines
 * carry {@code "txn_rows":null}: the total is unknown while streaming, and the unit that is complete is the whole
 * file. {@link #close()} aborts unless committed, for try-with-resources.
 *
 * <p>Made by {@link JsonlSink#beginSnapshot(String)}; every method holds the sink's monitor, as the sink's own
 * methods do, so that closing the sink from another thread aborts the snapshot cleanly.
 */
public final class SnapshotWriter implements AutoCloseable {

    private static final int BUFFER = 1 << 16;

    private final JsonlSink sink;
    private final String position;
    private final Path staging;
    private final FileChannel file;
    /**
     * The staging file's identity (device and inode): the staging name is the sink's, and a cluster's next feed owner
     * may have made its own file under it after this one was deleted; abort deletes only this one's.
     */
    private final Object fileKey;
    private final OutputStream out;
    private long rows;
    private boolean finished;
    private IOException failure;

    /** Creates the staging file; the caller has deleted a leftover one. */
    SnapshotWriter(JsonlSink sink, String position, Path staging) throws IOException {
        this.sink = sink;
        this.position = position;
        this.staging = staging;
        this.file = FileChannel.open(staging, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        this.fileKey = Files.readAttributes(staging, BasicFileAttributes.class).fileKey();
        this.out = new BufferedOutputStream(Channels.newOutputStream(file), BUFFER);
    }

    /**
     * Writes one row that the snapshot read.
     *
     * @param server {@code host:port} of the server read from
     * @param at     when the row was read, written as {@code commit_time}
     * @param row    a {@link ChangeOp#SNAPSHOT} row
     * @throws IllegalArgumentException when the row is not a snapshot row or holds a value the sink cannot write;
     *                                  nothing is written then
     */
    public void add(String server, Instant at, RowChange row) throws IOException {
        synchronized (sink) {
            requireWritable();
            byte[] line = ChangeJson.snapshotLine(position, server, at, row, rows + 1).getBytes(UTF_8);
            try {
                out.write(line);
                out.write('\n');
            } catch (IOException e) {
                // Part of the line may be in the file: this snapshot can only be aborted now.
                failure = e;
                throw e;
            }
            rows++;
        }
    }

    /** The rows written so far. */
    public long rows() {
        synchronized (sink) {
            return rows;
        }
    }

    /**
     * Makes the snapshot part of the sink, after everything appended before: fsyncs the staging file, flushes the
     * sink's buffer, rotates {@code PATH} if it is not empty, and renames the staging file to the next numbered name;
     * {@code PATH} goes on empty. The caller saves the snapshot's position right after (see {@link JsonlSink} for a
     * crash before that). A snapshot without rows leaves no file: there is nothing to read, and taking an empty
     * snapshot again costs nothing.
     *
     * <p>The caller should flush and save its position before committing; committing flushes the buffer only so that
     * nothing is lost or out of order, but transactions flushed here and not yet covered by a saved position may be
     * written again after a crash.
     *
     * @throws IllegalStateException when the snapshot was committed or aborted, or an earlier write failed
     */
    public void commit() throws IOException {
        commit(() -> true);
    }

    /**
     * {@link #commit()}, asking {@code mayPublish} once the staging file is on disk, right before it becomes part of
     * the sink: a cluster's feed owner that lost its lease while it copied the tables (or while the file was
     * forced) publishes nothing, so the instance that took the feed over is its only writer.
     *
     * @throws IOException when {@code mayPublish} refuses; the snapshot is then to be aborted
     */
    public void commit(BooleanSupplier mayPublish) throws IOException {
        synchronized (sink) {
            requireWritable();
            sink.requireOpen();
            try {
                out.flush();
                file.force(true);
                file.close();
                if (!mayPublish.getAsBoolean()) {
                    throw new IOException("this instance no longer owns the cluster's change feed: its snapshot of "
                            + rows + " rows is dropped, not published");
                }
                if (rows == 0) {
                    Files.delete(staging);
                } else {
                    sink.publish(staging, rows, position);
                }
            } catch (IOException e) {
                failure = e;
                throw e;
            }
            finish();
        }
    }

    /** Drops the snapshot and deletes its staging file; does nothing once committed or aborted. */
    public void abort() throws IOException {
        synchronized (sink) {
            // Once finished, the staging name may belong to a newer snapshot: leave it alone.
            if (finished) {
                return;
            }
            finish();
            file.close();
            if (isOwnStagingFile()) {
                Files.deleteIfExists(staging);
            }
        }
    }

    private boolean isOwnStagingFile() {
        try {
            Object current = Files.readAttributes(staging, BasicFileAttributes.class).fileKey();
            return fileKey == null || fileKey.equals(current);
        } catch (IOException gone) {
            return false;
        }
    }

    /** Aborts unless committed. */
    @Override
    public void close() throws IOException {
        abort();
    }

    private void finish() {
        finished = true;
        sink.snapshotFinished(this);
    }

    private void requireWritable() {
        if (finished) {
            throw new IllegalStateException("the snapshot at " + position + " was already committed or aborted");
        }
        if (failure != null) {
            throw new IllegalStateException("a write of the snapshot at " + position
                    + " failed; it can only be aborted", failure);
        }
    }
}
