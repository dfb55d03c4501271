package io.gantry.cdc;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes the sink's files consistent again after a crash, before anything is written (see {@link JsonlSink} for
 * why each step is enough): deletes the staging file of a snapshot that never committed, cuts a torn transaction off
 * the end of {@code PATH}, and names the transactions the files hold beyond what the caller may have saved.
 */
final class SinkRecovery {

    private static final Logger LOG = LoggerFactory.getLogger(SinkRecovery.class);
    private static final int READ_CHUNK = 1 << 16;

    private SinkRecovery() {
    }

    /**
     * Recovers the files of a sink, whose current file must be {@linkplain SinkFiles#open() open}; leaves that file
     * positioned at the end of its last complete transaction.
     *
     * @throws IOException when the files cannot be read or written, or when a line before the end of {@code PATH}
     *                     or the last line of the newest rotated file is damaged or out of sequence (named by file
     *                     and line): only a torn end comes from a crash, anything else needs a person to look at it
     */
    static JsonlSink.Recovery recover(SinkFiles files) throws IOException {
        boolean discardedPartialSnapshot = Files.deleteIfExists(files.staging());
        if (discardedPartialSnapshot) {
            LOG.warn("cdc sink {}: discarded the staging file of a snapshot that never committed", files.path());
        }
        FileChannel channel = files.current();
        Scan scan = new Scan(files.path());
        scan.read(channel);
        long dropped = channel.size() - scan.boundary;
        if (dropped > 0) {
            channel.truncate(scan.boundary);
            channel.force(true);
            LOG.warn("cdc sink {}: cut {} bytes ({} lines) of an unfinished transaction off the end", files.path(),
                    dropped, scan.linesAfterBoundary);
        }
        channel.position(scan.boundary);
        // A new PATH (first start, or a crash right after a rename) must survive a crash as well.
        files.syncDirectory();
        List<String> gtids = new ArrayList<>(scan.gtids);
        if (gtids.isEmpty()) {
            // PATH holds nothing complete: the last thing committed, if anything, was renamed into the newest
            // rotated file, maybe after the caller's last save (see JsonlSink). Its last line's gtid is the newest
            // the sink holds; a snapshot file's lines all carry the snapshot's position.
            Optional<Path> newest = files.newestRotated();
            if (newest.isPresent()) {
                lastGtid(newest.get()).ifPresent(gtids::add);
            }
        }
        return new JsonlSink.Recovery(gtids, dropped, scan.linesAfterBoundary, discardedPartialSnapshot);
    }

    /** The {@code gtid} of a rotated file's last line; empty when the file is empty. */
    private static Optional<String> lastGtid(Path file) throws IOException {
        byte[] line = lastLine(file);
        if (line == null) {
            return Optional.empty();
        }
        ChangeJson.ParsedLine parsed = ChangeJson.parse(line);
        if (parsed instanceof ChangeJson.BadLine bad) {
            throw new IOException("cdc sink: the last line of " + file + " is damaged (" + bad.reason()
                    + "); rotated files are written whole, so this needs a person to look at it");
        }
        return Optional.of(((ChangeJson.LineMark) parsed).gtid());
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
            ChangeJson.ParsedLine parsed = ChangeJson.parse(line.toByteArray());
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

        private IOException damage(String reason) {
            return new IOException("cdc sink: " + file + " line " + lineNumber + " is damaged (" + reason
                    + "); only the end of the file can be torn by a crash, so this needs a person to look at it");
        }
    }
}
