package io.gantry.localsocket;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Objects;

/**
 * A Unix socket's file in Gantry's data directory (the admin socket, the hand-over socket), made owner-only before
 * anyone can reach it: the socket is bound inside a fresh directory
 * that only the owner may enter ({@code rwx------}, made so by {@code mkdir} itself), made {@code rw-------}, and
 * then renamed to its place in one step. Until the rename nobody else can reach it; after, its mode keeps them out
 * (connecting to a Unix socket needs write permission on its file).
 */
public final class SocketFile {

    /** Linux's limit on a socket path ({@code sun_path}, 108 bytes with the terminating zero). */
    static final int MAX_PATH_BYTES = 107;
    private static final String ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path path;
    private final Object fileKey;

    /**
     * What a socket is, for the errors about its file.
     *
     * @param name      what it is ("the admin socket")
     * @param elsewhere how to put it elsewhere ("choose another path with --admin-socket")
     */
    public record Name(String name, String elsewhere) {
    }

    private SocketFile(Path path, Object fileKey) {
        this.path = path;
        this.fileKey = fileKey;
    }

    /** Binds a listening socket at a given address; the caller's server starts accepting there. */
    public interface Binder {
        void bind(UnixDomainSocketAddress address) throws IOException;
    }

    /**
     * Makes the socket at {@code target}: checks what is there, binds through {@code binder} in a private directory
     * next to it, restricts it and moves it into place.
     *
     * @throws IOException naming the path and what is wrong: a file that is not a socket, a socket another process
     *                     listens on, a path too long for a Unix socket
     */
    public static SocketFile bind(Path target, Name name, Binder binder) throws IOException {
        Path absolute = target.toAbsolutePath().normalize();
        Path parent = absolute.getParent();
        checkLength(absolute, name);
        checkWhatIsThere(absolute, name);
        Files.createDirectories(parent);
        Path directory = privateDirectory(parent);
        // A one-letter name: the temporary path is then as long as the final one for a name like admin.sock.
        Path temporary = directory.resolve("s");
        try {
            checkLength(temporary, name);
            binder.bind(UnixDomainSocketAddress.of(temporary));
            Files.setPosixFilePermissions(temporary, PosixFilePermissions.fromString("rw-------"));
            Files.move(temporary, absolute, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(temporary);
            Files.deleteIfExists(directory);
        }
        return new SocketFile(absolute, Files.readAttributes(absolute, BasicFileAttributes.class,
                LinkOption.NOFOLLOW_LINKS).fileKey());
    }

    public Path path() {
        return path;
    }

    /** Removes the file, unless another process has put its own socket there since. */
    public void delete() {
        try {
            Object now = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
            if (Objects.equals(now, fileKey)) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            // gone already
        }
    }

    private static void checkLength(Path path, Name name) throws IOException {
        int bytes = path.toString().getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_PATH_BYTES) {
            throw new IOException(name.name() + " path " + path + " is " + bytes + " bytes long, and a Unix socket "
                    + "path may have at most " + MAX_PATH_BYTES + ": " + name.elsewhere());
        }
    }

    /** A socket left by a Gantry that died is replaced; anything else there stops the start. */
    private static void checkWhatIsThere(Path path, Name name) throws IOException {
        if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        if (!isSocket(path)) {
            throw new IOException(name.name() + " path " + path + " exists and is not a socket; remove it or "
                    + name.elsewhere());
        }
        try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            probe.connect(UnixDomainSocketAddress.of(path));
            throw new IOException("another process listens on " + name.name() + " " + path + " (a Gantry still "
                    + "running on this data directory?); stop it or " + name.elsewhere());
        } catch (IOException refused) {
            if (refused.getMessage() != null && refused.getMessage().startsWith("another process")) {
                throw refused;
            }
            // Nobody listens: a socket left by a Gantry that did not stop cleanly. The rename replaces it.
        }
    }

    private static boolean isSocket(Path path) throws IOException {
        int mode = (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        return (mode & 0170000) == 0140000;
    }

    /** A new directory only the owner may enter, named {@code .g} and six random characters. */
    private static Path privateDirectory(Path parent) throws IOException {
        for (int attempt = 0; ; attempt++) {
            StringBuilder name = new StringBuilder(".g");
            for (int i = 0; i < 6; i++) {
                name.append(ALPHABET.charAt(RANDOM.nextInt(ALPHABET.length())));
            }
            try {
                // mkdir applies the umask, which can only take permissions away: never more than rwx------.
                return Files.createDirectory(parent.resolve(name.toString()),
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } catch (FileAlreadyExistsException e) {
                if (attempt > 10) {
                    throw e;
                }
            }
        }
    }
}
