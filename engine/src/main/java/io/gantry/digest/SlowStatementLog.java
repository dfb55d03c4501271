package io.gantry.digest;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import io.gantry.route.SqlTokenizer;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The slow-statement log ({@code --slow-statement-ms}): one JSON object per line for each statement at least that
 * slow, written by a thread of its own ({@code gantry-slow-statements}) so that an event loop only hands an entry to
 * a bounded queue and never waits for the disk. When the queue is full (the disk is slower than the slow statements
 * come) an entry is dropped and counted ({@link #dropped()}), and the log's thread says how many in Gantry's log.
 *
 * <p>A line reads (without the line breaks)
 *
 * <pre>{@code
 * {"time":"2026-12-07T14:30:00.123Z","latency_ms":1250.004,"session":12,"account":"app","schema":"shop",
 *  "server":"127.0.0.1:3307","ran_on":"replica","reason":"read_on_session_replica","error":0,"rows_sent":1,
 *  "rows_affected":0,"shape":"SELECT * FROM t WHERE id = ?","text":"SELECT * FROM t WHERE id = ?",
 *  "text_cut":false}
 * }</pre>
 *
 * The text is the client's with every literal written as {@code ?} and its comments left out, unless
 * {@code --slow-statement-literals}; {@code null} when its literals cannot be told apart (a quote left open). It
 * is cut at {@value #MAX_TEXT_CHARS} characters ({@code text_cut}). The file is owner-only; past
 * {@value #ROTATE_BYTES} bytes it is renamed {@code .1} (the older ones {@code .2} ... {@code .4}, the oldest
 * deleted) and a new one begun.
 */
public final class SlowStatementLog implements AutoCloseable {

    /** The most characters of a statement's text a line keeps. */
    public static final int MAX_TEXT_CHARS = 1024;
    /** The size past which the file is rotated. */
    public static final long ROTATE_BYTES = 64L * 1024 * 1024;
    /** Rotated files kept: {@code .1} (the newest) to {@code .4}. */
    public static final int KEPT_FILES = 4;
    /** Entries waiting for the disk at most; past it they are dropped. */
    static final int QUEUE_CAPACITY = 4096;
    /** Lines are written in batches of about this many bytes, or fewer when the queue runs empty. */
    private static final int BATCH_BYTES = 64 * 1024;
    /** Dropped entries are told in Gantry's log at most this often. */
    private static final long REPORT_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

    private static final Logger LOG = LoggerFactory.getLogger(SlowStatementLog.class);
    private static final SlowStatement END = new SlowStatement(Instant.EPOCH, 0, "", null, null, "", "", 0, null,
            RanOn.GANTRY, null, 0, 0, 0);
    /** The log that writes nothing: {@code --slow-statement-ms} not given. */
    private static final SlowStatementLog OFF = new SlowStatementLog();

    private final long thresholdNanos;
    private final boolean literals;
    private final Path file;
    private final long rotateBytes;
    private final BlockingQueue<SlowStatement> queue;
    private final AtomicLong written = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final Thread writer;
    private final JsonFactory json = new JsonFactory();
    private final ByteArrayBuilder line = new ByteArrayBuilder(512);
    private final StringBuilder masked = new StringBuilder(256);
    private OutputStream out;
    /** The file's size, and lines written since the last write to it: whole lines, so one write never ends mid-line. */
    private long size;
    private final ByteArrayBuilder batch = new ByteArrayBuilder(64 * 1024);
    private long droppedReported;
    private long reportedAt = System.nanoTime() - REPORT_EVERY_NANOS;
    private boolean failing;

    private SlowStatementLog() {
        thresholdNanos = Long.MAX_VALUE;
        literals = false;
        file = null;
        rotateBytes = 0;
        queue = null;
        writer = null;
    }

    private SlowStatementLog(Path file, Duration threshold, boolean literals, long rotateBytes) {
        this.thresholdNanos = threshold.toNanos();
        this.literals = literals;
        this.file = file;
        this.rotateBytes = rotateBytes;
        this.queue = new ArrayBlockingQueue<>(QUEUE_CAPACITY);
        try {
            openFile();
        } catch (IOException e) {
            throw new UncheckedIOException("the slow-statement log " + file + " cannot be written: " + e, e);
        }
        writer = new Thread(this::run, "gantry-slow-statements");
        writer.setDaemon(true);
        writer.start();
    }

    /** The log the settings ask for: none without {@code --slow-statement-ms}; its file is opened here. */
    public static SlowStatementLog of(DigestSettings settings) {
        if (settings.slowStatement().isEmpty()) {
            return OFF;
        }
        return open(settings.slowStatementLog().orElseThrow(() -> new IllegalArgumentException(
                "the slow-statement log needs a file: DigestSettings.inDirectory names one")),
                settings.slowStatement().get(), settings.slowLiterals(), ROTATE_BYTES);
    }

    /** A log of the statements at least {@code threshold} slow in {@code file}, rotated past {@code rotateBytes}. */
    static SlowStatementLog open(Path file, Duration threshold, boolean literals, long rotateBytes) {
        return new SlowStatementLog(file, threshold, literals, rotateBytes);
    }

    /** Whether a statement that took {@code nanos} goes to the log (never, when there is none). */
    public boolean isSlow(long nanos) {
        return nanos >= thresholdNanos;
    }

    /** Hands {@code statement} to the log's thread; never waits: when the queue is full it is dropped. */
    public void offer(SlowStatement statement) {
        if (queue != null && !queue.offer(statement)) {
            dropped.incrementAndGet();
        }
    }

    /** Lines written since the start. */
    public long written() {
        return written.get();
    }

    /** Entries dropped since the start: the queue was full, or the file could not be written. */
    public long dropped() {
        return dropped.get();
    }

    /** Whether this log writes anything. */
    public boolean isOn() {
        return writer != null;
    }

    /** Writes what is queued and closes the file. */
    @Override
    public void close() {
        if (writer == null) {
            return;
        }
        try {
            if (queue.offer(END, 5, TimeUnit.SECONDS)) {
                writer.join(TimeUnit.SECONDS.toMillis(5));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void run() {
        try {
            while (true) {
                SlowStatement next = queue.take();
                while (next != null && next != END) {
                    write(next);
                    next = queue.poll();
                }
                flush();
                reportDropped();
                if (next == END) {
                    break;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closeFile();
        }
    }

    private void write(SlowStatement statement) {
        try {
            if (out == null) {
                openFile();
            }
            byte[] bytes = lineOf(statement);
            if (size + batch.size() > 0 && size + batch.size() + bytes.length > rotateBytes) {
                writeBatch();
                rotate();
            }
            batch.write(bytes);
            if (batch.size() >= BATCH_BYTES) {
                writeBatch();
            }
            written.incrementAndGet();
            if (failing) {
                failing = false;
                LOG.info("slow-statement log: writing {} again", file);
            }
        } catch (IOException | RuntimeException e) {
            dropped.incrementAndGet();
            closeFile();
            if (!failing) {
                failing = true;
                LOG.error("slow-statement log: cannot write {}; entries are dropped until it can: {}", file,
                        e.toString());
            }
        }
    }

    private byte[] lineOf(SlowStatement statement) throws IOException {
        line.reset();
        try (JsonGenerator g = json.createGenerator(line)) {
            g.writeStartObject();
            g.writeStringField("time", statement.started().toString());
            g.writeFieldName("latency_ms");
            g.writeNumber(BigDecimal.valueOf(statement.nanos() / 1000, 3));
            g.writeNumberField("session", statement.session());
            g.writeStringField("account", statement.account());
            g.writeStringField("schema", statement.schema());
            g.writeStringField("server", statement.server());
            g.writeStringField("ran_on", statement.ranOn().name().toLowerCase(Locale.ROOT));
            g.writeStringField("reason", statement.reason() == null ? null
                    : statement.reason().name().toLowerCase(Locale.ROOT));
            g.writeNumberField("error", statement.errorCode());
            g.writeNumberField("rows_sent", statement.rowsSent());
            g.writeNumberField("rows_affected", statement.rowsAffected());
            g.writeStringField("shape", statement.shape());
            String text = textOf(statement);
            boolean cut = text != null && text.length() > MAX_TEXT_CHARS;
            if (cut) {
                int end = Character.isHighSurrogate(text.charAt(MAX_TEXT_CHARS - 1)) ? MAX_TEXT_CHARS - 1
                        : MAX_TEXT_CHARS;
                text = text.substring(0, end);
            }
            g.writeStringField("text", text);
            g.writeBooleanField("text_cut", cut);
            g.writeEndObject();
        }
        line.write('\n');
        return line.toByteArray();
    }

    private String textOf(SlowStatement statement) {
        if (statement.text() == null || literals) {
            return statement.text();
        }
        masked.setLength(0);
        return SqlTokenizer.writeMasked(statement.text(), statement.mode(), masked) ? masked.toString() : null;
    }

    private void openFile() throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        try {
            if (file.getFileSystem().supportedFileAttributeViews().contains("posix")) {
                Files.createFile(file, PosixFilePermissions.asFileAttribute(
                        PosixFilePermissions.fromString("rw-------")));
            } else {
                Files.createFile(file);
            }
        } catch (FileAlreadyExistsException kept) {
            // appended to, as a restarted server appends to its slow log
        }
        out = new FileOutputStream(file.toFile(), true);
        size = Files.size(file);
    }

    private void rotate() throws IOException {
        closeFile();
        Files.deleteIfExists(rotated(KEPT_FILES));
        for (int i = KEPT_FILES - 1; i >= 1; i--) {
            if (Files.exists(rotated(i))) {
                Files.move(rotated(i), rotated(i + 1), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        Files.move(file, rotated(1), StandardCopyOption.REPLACE_EXISTING);
        openFile();
    }

    private Path rotated(int generation) {
        return file.resolveSibling(file.getFileName() + "." + generation);
    }

    /**
     * Writes the lines gathered so far in one write: a Gantry taking over appends to the same file for a moment, and
     * appends of whole lines in one write each do not split each other's lines.
     */
    private void writeBatch() throws IOException {
        if (batch.size() > 0) {
            out.write(batch.toByteArray());
            size += batch.size();
            batch.reset();
        }
    }

    private void flush() {
        if (out == null) {
            return;
        }
        try {
            writeBatch();
        } catch (IOException e) {
            closeFile();
            if (!failing) {
                failing = true;
                LOG.error("slow-statement log: cannot write {}: {}", file, e.toString());
            }
        }
    }

    /** Closes the file; lines not written yet are lost (closed after a failed write, or after {@link #flush}). */
    private void closeFile() {
        batch.reset();
        if (out != null) {
            try {
                out.close();
            } catch (IOException e) {
                LOG.warn("slow-statement log: closing {}: {}", file, e.toString());
            }
            out = null;
        }
    }

    private void reportDropped() {
        long now = dropped.get();
        if (now > droppedReported && System.nanoTime() - reportedAt >= REPORT_EVERY_NANOS) {
            reportedAt = System.nanoTime();
            LOG.warn("slow-statement log: {} entries dropped so far (the disk was slower than they came, or the "
                    + "file could not be written)", now);
            droppedReported = now;
        }
    }
}
