package io.gantry.cdc;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The change sink's files on disk: the current file {@code PATH}, which grows by appends that are fsynced; the
 * rotated files {@code PATH.000001}, {@code PATH.000002}, ..., which a file becomes only by an atomic rename of a
 * complete, fsynced file; and the staging file {@code PATH.snapshot-partial} of a snapshot being written. Every
 * rename and new file is made durable by an fsync of the directory.
 *
 * <p>Knows names, bytes and renames, not lines: {@link JsonlSink} decides when to write and rotate. Not thread
 * safe; the sink's monitor guards it.
 */
final class SinkFiles {

    private static final Logger LOG = LoggerFactory.getLogger(SinkFiles.class);
    private static final String STAGING_SUFFIX = ".snapshot-partial";

    private final Path path;
    private final long rotationBytes;
    private FileChannel current;

    /**
     * @param path          the current file; the others are its siblings
     * @param rotationBytes {@link #rotateIfLarger()} rotates once {@code path} is larger than this; more than 0
     */
    SinkFiles(Path path, long rotationBytes) {
        if (rotationBytes <= 0) {
            throw new IllegalArgumentException(
                    "change sink rotation size must be more than 0 bytes, was " + rotationBytes);
        }
        this.path = path.toAbsolutePath();
        this.rotationBytes = rotationBytes;
    }

    Path path() {
        return path;
    }

    /** Where a snapshot's rows are staged until it commits: {@code PATH.snapshot-partial}. */
    Path staging() {
        return path.resolveSibling(path.getFileName() + STAGING_SUFFIX);
    }

    /** Opens {@code PATH} for reading and appending, creating it and its directories; called once. */
    void open() throws IOException {
        Files.createDirectories(path.getParent());
        current = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
    }

    /** The open current file, for recovery to read and cut; appends go to its position. */
    FileChannel current() {
        return current;
    }

    /** Appends {@code bytes} to {@code PATH} and fsyncs it. */
    void append(ByteBuffer bytes) throws IOException {
        while (bytes.hasRemaining()) {
            current.write(bytes);
        }
        current.force(false);
    }

    boolean currentIsEmpty() throws IOException {
        return current.size() == 0;
    }

    /** Rotates {@code PATH} once it is larger than the rotation size; returns whether it did. */
    boolean rotateIfLarger() throws IOException {
        if (current.size() <= rotationBytes) {
            return false;
        }
        rotate();
        return true;
    }

    /** Closes {@code PATH}, renames it to the next numbered name and opens a new, empty {@code PATH}. */
    void rotate() throws IOException {
        // Everything in PATH was forced by append(): closing loses nothing.
        current.close();
        current = null;
        Path target = nextRotatedName();
        Files.move(path, target, StandardCopyOption.ATOMIC_MOVE);
        syncDirectory();
        // A crash here leaves no PATH, which recovery takes as empty.
        current = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        syncDirectory();
        LOG.info("cdc sink {}: rotated to {}", path, target.getFileName());
    }

    /** Renames a complete, fsynced staging file to the next numbered name; returns that name. */
    Path publish(Path staged) throws IOException {
        Path target = nextRotatedName();
        Files.move(staged, target, StandardCopyOption.ATOMIC_MOVE);
        syncDirectory();
        return target;
    }

    /** The rotated file with the highest number, if any. */
    Optional<Path> newestRotated() throws IOException {
        OptionalLong highest = highestRotatedNumber();
        return highest.isPresent() ? Optional.of(rotatedName(highest.getAsLong())) : Optional.empty();
    }

    /**
     * Makes renames and new files in the directory durable. Some systems (Windows) cannot open a directory; there
     * the rename is as durable as the system makes it.
     */
    void syncDirectory() throws IOException {
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

    /** Closes {@code PATH}; appends are forced as they are made, so nothing is lost. */
    void close() throws IOException {
        if (current != null) {
            current.close();
            current = null;
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
}
