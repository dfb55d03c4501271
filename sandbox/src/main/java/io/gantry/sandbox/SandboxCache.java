package io.gantry.sandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Gantry's cache directory ({@code $GANTRY_CACHE_DIR}, else {@code $XDG_CACHE_HOME/gantry}, else
 * {@code ~/.cache/gantry}): unpacked server binaries, template data directories and TLS files, each built once per
 * machine and then reused by every test JVM and demo.
 */
final class SandboxCache {

    /** Fills a fresh staging directory with an entry's files. */
    interface Builder {
        void build(Path staging) throws IOException;
    }

    private SandboxCache() {
    }

    /** The root of the cache. */
    static Path directory() {
        String explicit = System.getenv("GANTRY_CACHE_DIR");
        if (explicit != null && !explicit.isBlank()) {
            return Path.of(explicit);
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return base.resolve("gantry");
    }

    /**
     * The entry {@code parent/name}, built on first use: {@code builder} fills a staging directory next to it, which
     * is then moved into place in one step, so an entry is either complete or absent. Several JVMs may ask at once:
     * one builds under a file lock, the others wait for it and reuse what it built.
     *
     * @param complete a path inside the entry that exists once it is complete (checked before taking the lock)
     */
    static Path obtain(Path parent, String name, String complete, Builder builder) {
        Path target = parent.resolve(name);
        if (Files.exists(target.resolve(complete))) {
            return target;
        }
        try {
            Files.createDirectories(parent);
            try (FileChannel channel = FileChannel.open(parent.resolve(name + ".lock"), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE);
                 FileLock ignored = channel.lock()) {
                if (Files.exists(target.resolve(complete))) {
                    return target;
                }
                Path staging = Files.createTempDirectory(parent, "building-" + name + "-");
                try {
                    builder.build(staging);
                    deleteRecursively(target); // an incomplete entry of an older layout, never a complete one
                    Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
                } catch (IOException | RuntimeException e) {
                    deleteRecursively(staging);
                    throw e;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot build " + target + " in the sandbox cache", e);
        }
        return target;
    }

    static void deleteRecursively(Path directory) throws IOException {
        if (!Files.exists(directory)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(directory)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
