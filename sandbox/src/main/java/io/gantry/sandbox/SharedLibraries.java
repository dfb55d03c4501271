package io.gantry.sandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The system libraries a server binary needs that this machine lacks, and the one kind of gap that can be bridged.
 *
 * <p>The bundled MySQL 8.0.15 was linked against {@code libaio.so.1}. Debian 13 and Ubuntu 24.04 ship that library
 * only under its 64-bit-time name {@code libaio.so.1t64} (package {@code libaio1t64}); the code is the same, so a
 * symbolic link named {@code libaio.so.1} in a private directory put first on {@code LD_LIBRARY_PATH} lets the
 * binary load it. Nothing is ever written into the system's folders. Any other missing library cannot be bridged
 * and is reported with the Debian package that brings it ({@link SystemPackage}).
 */
final class SharedLibraries {

    /** Where a {@code t64} library may be found, as Debian and Ubuntu lay out x86-64 systems. */
    private static final List<Path> SYSTEM_DIRECTORIES = List.of(Path.of("/lib/x86_64-linux-gnu"),
            Path.of("/usr/lib/x86_64-linux-gnu"), Path.of("/lib64"), Path.of("/usr/lib64"), Path.of("/usr/lib"),
            Path.of("/lib"));

    private static final Pattern NOT_FOUND = Pattern.compile("^\\s*(\\S+)\\s*=>\\s*not found", Pattern.MULTILINE);

    private SharedLibraries() {
    }

    /**
     * The libraries {@code binary} needs and the dynamic loader cannot find with {@code libraryPath} first (as
     * {@code ldd} reports them), in the order {@code ldd} names them.
     */
    static List<String> missing(Path binary, String libraryPath) {
        ProcessBuilder builder = new ProcessBuilder("ldd", binary.toString()).redirectErrorStream(true);
        if (!libraryPath.isEmpty()) {
            builder.environment().put("LD_LIBRARY_PATH", libraryPath);
        }
        try {
            Process ldd = builder.start();
            String output = new String(ldd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!ldd.waitFor(30, TimeUnit.SECONDS)) {
                ldd.destroyForcibly();
            }
            return parseNotFound(output);
        } catch (IOException e) {
            // No ldd (not a glibc system): the server's own start will say what is missing.
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while asking ldd about " + binary, e);
        }
    }

    /** The sonames {@code ldd}'s output reports as not found. */
    static List<String> parseNotFound(String lddOutput) {
        List<String> names = new ArrayList<>();
        Matcher matcher = NOT_FOUND.matcher(lddOutput);
        while (matcher.find()) {
            if (!names.contains(matcher.group(1))) {
                names.add(matcher.group(1));
            }
        }
        return names;
    }

    /**
     * Links each missing library that exists under its {@code t64} name into {@code bridgeDirectory} (made if
     * needed), and returns the libraries that could not be bridged.
     */
    static List<String> bridge(List<String> missing, Path bridgeDirectory, List<Path> searchDirectories) {
        List<String> left = new ArrayList<>();
        for (String soname : missing) {
            Optional<Path> t64 = findIn(searchDirectories, soname + "t64");
            if (t64.isEmpty()) {
                left.add(soname);
                continue;
            }
            try {
                Files.createDirectories(bridgeDirectory);
                Path link = bridgeDirectory.resolve(soname);
                Files.deleteIfExists(link);
                Files.createSymbolicLink(link, t64.get());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot link " + soname + " to " + t64.get() + " in "
                        + bridgeDirectory, e);
            }
        }
        return left;
    }

    /** {@link #bridge(List, Path, List)} over the system's library directories. */
    static List<String> bridge(List<String> missing, Path bridgeDirectory) {
        return bridge(missing, bridgeDirectory, SYSTEM_DIRECTORIES);
    }

    /**
     * One line for an operator: what {@code what} cannot load and which packages bring it, for example {@code
     * MySQL 8.0.15 (bundled) cannot start here: it needs libaio.so.1 (apt-get install libaio1; on Debian 13 and
     * Ubuntu 24.04: libaio1t64)}.
     */
    static String explain(String what, List<String> missing) {
        Map<String, String> hints = new LinkedHashMap<>();
        for (String soname : missing) {
            hints.put(soname, SystemPackage.forLibrary(soname).map(SystemPackage::installHint)
                    .orElse("install the package that provides it"));
        }
        StringBuilder line = new StringBuilder(what).append(" cannot start here: it needs ");
        boolean first = true;
        for (Map.Entry<String, String> hint : hints.entrySet()) {
            line.append(first ? "" : ", ").append(hint.getKey()).append(" (").append(hint.getValue()).append(')');
            first = false;
        }
        return line.toString();
    }

    private static Optional<Path> findIn(List<Path> directories, String fileName) {
        for (Path directory : directories) {
            Path candidate = directory.resolve(fileName);
            if (Files.exists(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }
}
