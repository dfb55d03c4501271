package io.gantry.cdc;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
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
 * <p>Methods are called from one thread at a time, except {@link #close()}, which may come from another thread;
 * every method holds the sink's monitor. The sink does blocking file I/O: never call it on an event loop.
 */
public final class JsonlSink implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(JsonlSink.class);

    private static final String PARTIAL_SNAPSHOT_SUFFIX = ".snapshot-partial";
    private static final int READ_CHUNK = 1 << 16;
    private static final int SNAPSHOT_BUFFER = 1 << 16;

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

    private final Path path;
    private final long rotationBytes;
    private final Path partialSnapshot;
    private final Buffer buffer = new Buffer();

    private State state = State.NEW;
    private IOException failure;
    private FileChannel live;
    private SnapshotWriter snapshot;

    /**
     * @param path          the current file; rotated and staging files are its siblings, and missing parent
     *                      directories are created by {@link #recover()}
     * @param rotationBytes {@link #rotateIfDue()} rotates once {@code path} is larger than this many bytes; more than
     *                      0
     */
    public JsonlSink(Path path, long rotationBytes) {
        Objects.requireNonNull(path, "path");
        if (rotationBytes <= 0) {
            throw new IllegalArgumentException(
                    "change sink rotation size must be more than 0 bytes, was " + rotationBytes);
        }
        this.path = path.toAbsolutePath();
        this.rotationBytes = rotationBytes;
        this.partialSnapshot = this.path.resolveSibling(this.path.getFileName() + PARTIAL_SNAPSHOT_SUFFIX);
    }

    /** The current file, {@code PATH}. */
    public Path path() {
        return path;
    }

    /**
     * Opens {@code PATH} (creating it and its directories) and makes its end a transaction boundary again after a
     * crash; called once, before anything else. A leftover snapshot staging file is deleted: the snapshot never
     * committed, so its position was never saved, and the caller takes it again.
     *
     * @throws IOException when the files cannot be read or written, or when a line before the end of {@code PATH}
     *                     is damaged or out of sequence (named by file and line): only a torn end comes from a crash,
     *                     anything else needs a person to look at it, not a silent skip
     */
    public synchronized Recovery recover() throws IOException {
        if (state != State.NEW) {
            throw new IllegalStateException("recover() is called once, on a new sink; this one is " + state);
        }
        Files.createDirectories(path.getParent());
        boolean discardedPartialSnapshot = Files.deleteIfExists(partialSnapshot);
        if (discardedPartialSnapshot) {
            LOG.warn("cdc sink {}: discarded the staging file of a snapshot that never committed", path);
        }
        FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        try {
            Scan scan = new Scan(path);
            scan.read(channel);
            long size = channel.size();
            long dropped = size - scan.boundary;
            if (dropped > 0) {
                channel.truncate(scan.boundary);
                channel.force(true);
                LOG.warn("cdc sink {}: cut {} bytes ({} lines) of an unfinished transaction off the end", path,
                        dropped, scan.linesAfterBoundary);
            }
            channel.position(scan.boundary);
            // A new PATH (first start, or a crash right after a rename) must survive a crash as well.
            syncDirectory();
            List<String> gtids = new ArrayList<>(scan.gtids);
            if (gtids.isEmpty()) {
                // PATH holds nothing complete: the last thing committed, if anything, was renamed into the newest
                // rotated file, maybe after the caller's last save (see the class comment). Its last line's gtid is
                // the newest the sink holds; a snapshot file's lines all carry the snapshot's position.
                String newest = newestRotatedGtid();
                if (newest != null) {
                    gtids.add(newest);
                }
            }
            live = channel;
            state = State.OPEN;
            return new Recovery(gtids, dropped, scan.linesAfterBoundary, discardedPartialSnapshot);
        } catch (IOException | RuntimeException e) {
            channel.close();
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
            ByteBuffer bytes = buffer.view();
            while (bytes.hasRemaining()) {
                live.write(bytes);
            }
            live.force(false);
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
        requireNothingBuffered("rotate");
        long size;
        try {
            size = live.size();
        } catch (IOException e) {
            throw fail(e);
        }
        if (size <= rotationBytes) {
            return false;
        }
        rotate();
        return true;
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
            throw new IllegalStateException("a snapshot is already being written to " + partialSnapshot
                    + "; commit or abort it first");
        }
        Files.deleteIfExists(partialSnapshot);
        FileChannel file = FileChannel.open(partialSnapshot, StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE);
        snapshot = new SnapshotWriter(position, file);
        return snapshot;
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
        if (live != null) {
            try {
                live.close();
            } catch (IOException e) {
                problem = addTo(problem, e);
            }
            live = null;
        }
        state = State.CLOSED;
        if (problem != null) {
            throw problem;
        }
    }

    /**
     * Streams the rows of one snapshot into the staging file, buffered (a snapshot may have millions of rows).
     * Snapshot lines carry {@code "txn_rows":null}: the total is unknown while streaming, and the unit that is
     * complete is the whole file, which only {@link #commit()} makes visible. {@link #close()} aborts unless
     * committed, for try-with-resources.
     */
    public final class SnapshotWriter implements AutoCloseable {

        private final String position;
        private final FileChannel file;
        private final OutputStream out;
        private long rows;
        private boolean finished;
        private IOException failure;

        private SnapshotWriter(String position, FileChannel file) {
            this.position = position;
            this.file = file;
            this.out = new BufferedOutputStream(Channels.newOutputStream(file), SNAPSHOT_BUFFER);
        }

        /**
         * Writes one row that the snapshot read.
         *
         * @param server {@code host:port} of the server read from
         * @param at     when the row was read, written as {@code commit_time}
         * @param row    a {@link ChangeOp#SNAPSHOT} row
         * @throws IllegalArgumentException when the row is not a snapshot row or holds a value the sink cannot
         *                                  write; nothing is written then
         */
        public void add(String server, Instant at, RowChange row) throws IOException {
            synchronized (JsonlSink.this) {
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
            synchronized (JsonlSink.this) {
                return rows;
            }
        }

        /**
         * Makes the snapshot part of the sink, after everything appended before: fsyncs the staging file, flushes
         * the sink's buffer, rotates {@code PATH} if it is not empty, and renames the staging file to the next
         * numbered name; {@code PATH} goes on empty. The caller saves the snapshot's position right after (see
         * {@link JsonlSink} for a crash before that). A snapshot without rows leaves no file: there is nothing to
         * read, and taking an empty snapshot again costs nothing.
         *
         * <p>The caller should flush and save its position before committing; committing flushes the buffer only
         * so that nothing is lost or out of order, but transactions flushed here and not yet covered by a saved
         * position may be written again after a crash.
         *
         * @throws IllegalStateException when the snapshot was committed or aborted, or an earlier write failed
         */
        public void commit() throws IOException {
            synchronized (JsonlSink.this) {
                requireWritable();
                requireOpen();
                try {
                    out.flush();
                    file.force(true);
                    file.close();
                } catch (IOException e) {
                    failure = e;
                    throw e;
                }
                if (rows == 0) {
                    Files.delete(partialSnapshot);
                    finish();
                    return;
                }
                flush();
                try {
                    if (live.size() > 0) {
                        rotate();
                    }
                    Path target = nextRotatedName();
                    Files.move(partialSnapshot, target, StandardCopyOption.ATOMIC_MOVE);
                    finish();
                    syncDirectory();
                    LOG.info("cdc sink {}: committed a snapshot of {} rows at {} as {}", path, rows, position,
                            target.getFileName());
                } catch (IOException e) {
                    failure = e;
                    throw fail(e);
                }
            }
        }

        /** Drops the snapshot and deletes its staging file; does nothing once committed or aborted. */
        public void abort() throws IOException {
            synchronized (JsonlSink.this) {
                // Once finished, the staging name may belong to a newer snapshot: leave it alone.
                if (snapshot != this) {
                    return;
                }
                finish();
                file.close();
                Files.deleteIfExists(partialSnapshot);
            }
        }

        /** Aborts unless committed. */
        @Override
        public void close() throws IOException {
            abort();
        }

        private void finish() {
            finished = true;
            snapshot = null;
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

    /** Closes {@code PATH}, renames it to the next numbered name and opens a new, empty {@code PATH}. */
    private void rotate() throws IOException {
        try {
            // Everything in PATH was forced by flush(): closing loses nothing.
            live.close();
            live = null;
            Path target = nextRotatedName();
            Files.move(path, target, StandardCopyOption.ATOMIC_MOVE);
            syncDirectory();
            // A crash here leaves no PATH, which recover() takes as empty.
            live = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            syncDirectory();
            LOG.info("cdc sink {}: rotated to {}", path, target.getFileName());
        } catch (IOException e) {
            throw fail(e);
        }
    }

    /**
     * One more than the highest number in use. The name is checked as well, because an atomic move replaces an
     * existing target on most systems.
     */
    private Path nextRotatedName() throws IOException {
        OptionalLong highest = highestRotatedNumber();
        Path target = rotatedName(highest.isPresent() ? highest.getAsLong() + 1 : 1);
        if (Files.exists(target)) {
            throw new FileAlreadyExistsException(target.toString(), null, "rotated change file already exists");
        }
        return target;
    }

    private Path rotatedName(long number) {
        return path.resolveSibling(path.getFileName() + "." + String.format("%06d", number));
    }

    private OptionalLong highestRotatedNumber() throws IOException {
        String prefix = path.getFileName() + ".";
        long highest = -1;
        try (DirectoryStream<Path> siblings = Files.newDirectoryStream(path.getParent())) {
            for (Path sibling : siblings) {
                String name = sibling.getFileName().toString();
                if (!name.startsWith(prefix)) {
                    continue;
                }
                String suffix = name.substring(prefix.length());
                if (suffix.length() >= 6 && suffix.length() <= 18
                        && suffix.chars().allMatch(c -> c >= '0' && c <= '9')) {
                    highest = Math.max(highest, Long.parseLong(suffix));
                }
            }
        }
        return highest < 0 ? OptionalLong.empty() : OptionalLong.of(highest);
    }

    /** The {@code gtid} of the newest rotated file's last line, or {@code null} when there is none. */
    private String newestRotatedGtid() throws IOException {
        OptionalLong highest = highestRotatedNumber();
        if (highest.isEmpty()) {
            return null;
        }
        Path file = rotatedName(highest.getAsLong());
        byte[] line = lastLine(file);
        if (line == null) {
            return null;
        }
        ChangeJson.ParsedLine parsed = ChangeJson.parse(line);
        if (parsed instanceof ChangeJson.BadLine bad) {
            throw new IOException("cdc sink: the last line of " + file + " is damaged (" + bad.reason()
                    + "); rotated files are written whole, so this needs a person to look at it");
        }
        return ((ChangeJson.LineMark) parsed).gtid();
    }

    /** The last line of a complete file (ending in a line end), read from the end; {@code null} when empty. */
    private static byte[] lastLine(Path file) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            long end = channel.size();
            if (end == 0) {
                return null;
            }
            ByteBuffer one = ByteBuffer.allocate(1);
            readFully(channel, one, end - 1);
            if (one.get(0) != '\n') {
                throw new IOException("cdc sink: " + file + " does not end with a line end; rotated files are "
                        + "written whole, so this needs a person to look at it");
            }
            long lineEnd = end - 1;
            long start = 0;
            ByteBuffer chunk = ByteBuffer.allocate(READ_CHUNK);
            long chunkEnd = lineEnd;
            search:
            while (chunkEnd > 0) {
                long chunkStart = Math.max(0, chunkEnd - READ_CHUNK);
                chunk.clear().limit((int) (chunkEnd - chunkStart));
                readFully(channel, chunk, chunkStart);
                for (int i = chunk.limit() - 1; i >= 0; i--) {
                    if (chunk.get(i) == '\n') {
                        start = chunkStart + i + 1;
                        break search;
                    }
                }
                chunkEnd = chunkStart;
            }
            if (lineEnd - start > Integer.MAX_VALUE - 16) {
                throw new IOException("cdc sink: the last line of " + file + " is too long to read");
            }
            ByteBuffer line = ByteBuffer.allocate((int) (lineEnd - start));
            readFully(channel, line, start);
            return line.array();
        }
    }

    private static void readFully(FileChannel channel, ByteBuffer into, long position) throws IOException {
        long at = position;
        while (into.hasRemaining()) {
            int n = channel.read(into, at);
            if (n < 0) {
                throw new IOException("unexpected end of file at " + at);
            }
            at += n;
        }
    }

    /**
     * Makes renames and new files in the directory durable. Some systems (Windows) cannot open a directory; there
     * the rename is as durable as the system makes it.
     */
    private void syncDirectory() throws IOException {
        FileChannel directory;
        try {
            directory = FileChannel.open(path.getParent(), StandardOpenOption.READ);
        } catch (IOException | UnsupportedOperationException e) {
            LOG.debug("cdc sink {}: cannot open the directory to sync it: {}", path, e.toString());
            return;
        }
        try (directory) {
            directory.force(true);
        }
    }

    private void requireOpen() {
        switch (state) {
            case NEW -> throw new IllegalStateException("call recover() before using the change sink " + path);
            case FAILED -> throw new IllegalStateException("an I/O error left the end of " + path
                    + " unknown; close this sink and recover() with a new one", failure);
            case CLOSED -> throw new IllegalStateException("the change sink " + path + " is closed");
            case OPEN -> {
            }
        }
    }

    private void requireNothingBuffered(String what) {
        if (buffer.size() > 0) {
            throw new IllegalStateException("cannot " + what + " " + path + " with " + buffer.size()
                    + " bytes buffered: flush and save the position first");
        }
    }

    private IOException fail(IOException e) {
        if (state == State.OPEN) {
            state = State.FAILED;
            failure = e;
            LOG.error("cdc sink {}: write failed, the sink stops until it is recovered: {}", path, e.toString());
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

    /**
     * One pass over {@code PATH}: finds the end of the last complete transaction and the gtids before it. After it
     * may come only what a crash leaves, lines of one unfinished transaction and, last, one damaged or partial line;
     * anything else out of place is an error naming the line.
     */
    private static final class Scan {
        private final Path file;
        private final Set<String> gtids = new LinkedHashSet<>();
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();
        /** The end of the last complete transaction, after its line end. */
        private long boundary;
        private long linesAfterBoundary;
        private long lineNumber;
        private long offset;
        /** The last line of the unfinished transaction, or {@code null} at a boundary. */
        private ChangeJson.LineMark open;
        /** A damaged line, allowed only as the very last line. */
        private String damaged;

        Scan(Path file) {
            this.file = file;
        }

        void read(FileChannel channel) throws IOException {
            long size = channel.size();
            ByteBuffer chunk = ByteBuffer.allocate(READ_CHUNK);
            long readAt = 0;
            while (readAt < size) {
                chunk.clear();
                int n = channel.read(chunk, readAt);
                if (n < 0) {
                    break;
                }
                readAt += n;
                byte[] bytes = chunk.array();
                int from = 0;
                for (int i = 0; i < n; i++) {
                    if (bytes[i] == '\n') {
                        line.write(bytes, from, i - from);
                        endOfLine();
                        from = i + 1;
                    }
                }
                if (from < n) {
                    beforeMore();
                    line.write(bytes, from, n - from);
                }
            }
            if (line.size() > 0) {
                // A last line without a line end is torn, however it reads.
                linesAfterBoundary++;
            }
        }

        private void endOfLine() throws IOException {
            beforeMore();
            lineNumber++;
            offset += line.size() + 1;
            linesAfterBoundary++;
            ChangeJson.ParsedLine parsed = parse();
            line.reset();
            if (parsed instanceof ChangeJson.BadLine bad) {
                damaged = bad.reason();
                return;
            }
            ChangeJson.LineMark mark = (ChangeJson.LineMark) parsed;
            if (mark.txnRows().isEmpty()) {
                throw damage("a snapshot line, which belongs in a rotated file only");
            }
            if (open == null && mark.txnRow() != 1) {
                throw damage("transaction " + mark.gtid() + " starts at row " + mark.txnRow());
            }
            if (open != null && (mark.txnRow() != open.txnRow() + 1 || !mark.gtid().equals(open.gtid())
                    || !mark.txnRows().equals(open.txnRows()))) {
                throw damage("row " + mark.txnRow() + " of " + mark.gtid() + " follows row " + open.txnRow()
                        + " of " + open.gtid() + ", which is unfinished");
            }
            if (mark.endsTransaction()) {
                gtids.add(mark.gtid());
                boundary = offset;
                linesAfterBoundary = 0;
                open = null;
            } else {
                open = mark;
            }
        }

        /** More bytes follow a damaged line: it was not the last, so no crash made it. */
        private void beforeMore() throws IOException {
            if (damaged != null) {
                throw damage(damaged);
            }
        }

        private ChangeJson.ParsedLine parse() {
            return ChangeJson.parse(line.toByteArray());
        }

        private IOException damage(String reason) {
            return new IOException("cdc sink: " + file + " line " + lineNumber + " is damaged (" + reason
                    + "); only the end of the file can be torn by a crash, so this needs a person to look at it");
        }
    }
}
