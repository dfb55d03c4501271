package io.gantry.authority;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The data directory is Gantry's alone: the directory is owner-only ({@code rwx------}) and so is every file in it
 * ({@code rw-------}). A directory or file that group or others can use is made owner-only at start, with a
 * warning that says what it was. It also holds the Authority's password ({@value #KEY_FILE}), made once.
 */
final class DataDirectory {

    private static final Logger LOG = LoggerFactory.getLogger(DataDirectory.class);
    static final String KEY_FILE = "authority.key";
    private static final Set<PosixFilePermission> OWNER_DIRECTORY = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> OWNER_FILE = PosixFilePermissions.fromString("rw-------");
    private static final Set<PosixFilePermission> GROUP_OR_OTHERS = EnumSet.of(
            PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE,
            PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

    private DataDirectory() {
    }

    private static boolean posix() {
        return FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
    }

    /** Creates the directory owner-only, or makes an existing one owner-only (with a warning if it was not). */
    static void prepare(Path directory) {
        try {
            if (!Files.isDirectory(directory)) {
                if (posix()) {
                    Files.createDirectories(directory, PosixFilePermissions.asFileAttribute(OWNER_DIRECTORY));
                    // createDirectories honours the umask: set the permissions outright.
                    Files.setPosixFilePermissions(directory, OWNER_DIRECTORY);
                } else {
                    Files.createDirectories(directory);
                }
                return;
            }
            restrict(directory, OWNER_DIRECTORY, true);
            restrictFiles(directory);
        } catch (IOException e) {
            throw new AuthorityException("authority: cannot prepare the data directory " + directory + ": " + e, e);
        }
    }

    /** Makes every file in the directory owner-only (H2 creates its files with the process umask). */
    static void restrictFiles(Path directory) {
        if (!posix()) {
            return;
        }
        try (Stream<Path> files = Files.list(directory)) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                restrict(file, OWNER_FILE, false);
            }
        } catch (IOException e) {
            throw new AuthorityException("authority: cannot make the files of " + directory + " owner-only: " + e, e);
        }
    }

    /**
     * @param warn whether a change is worth a warning: for the directory yes (someone made it so); files H2 has
     *             just created carry the process umask, which the owner-only directory already fences in
     */
    private static void restrict(Path path, Set<PosixFilePermission> wanted, boolean warn) throws IOException {
        if (!posix()) {
            return;
        }
        Set<PosixFilePermission> found = Files.getPosixFilePermissions(path);
        if (!java.util.Collections.disjoint(found, GROUP_OR_OTHERS)) {
            String format = "authority: {} was open to group or others ({}); made it owner-only ({})";
            if (warn) {
                LOG.warn(format, path, PosixFilePermissions.toString(found), PosixFilePermissions.toString(wanted));
            } else {
                LOG.debug(format, path, PosixFilePermissions.toString(found), PosixFilePermissions.toString(wanted));
            }
            Files.setPosixFilePermissions(path, wanted);
        }
    }

    /** The Authority's password, made (owner-only, before anything is written to it) on first use. */
    static String key(Path directory) {
        Path file = directory.resolve(KEY_FILE);
        try {
            if (!Files.exists(file)) {
                byte[] secret = new byte[24];
                new SecureRandom().nextBytes(secret);
                try {
                    if (posix()) {
                        Files.createFile(file, PosixFilePermissions.asFileAttribute(OWNER_FILE));
                        Files.setPosixFilePermissions(file, OWNER_FILE);
                    } else {
                        Files.createFile(file);
                    }
                    Files.writeString(file, Base64.getUrlEncoder().withoutPadding().encodeToString(secret) + "\n",
                            StandardCharsets.US_ASCII);
                } catch (FileAlreadyExistsException raced) {
                    // another start made it a moment ago: use that one
                }
            }
            String key = Files.readString(file, StandardCharsets.US_ASCII).strip();
            if (key.isEmpty()) {
                throw new AuthorityException("authority: " + file + " is empty; remove it to have a new key made");
            }
            return key;
        } catch (IOException e) {
            throw new AuthorityException("authority: cannot read or create " + file + ": " + e, e);
        }
    }
}
