package io.gantry.sandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Topologies for tests: one shared topology per kind for the whole JVM (test classes that do not break servers use
 * it), and private ones for tests that promote or otherwise change the shape. Everything lives under
 * {@code $java.io.tmpdir/gantry-sandbox/jvm-<pid>/}; directories of JVMs that are gone are swept on first use.
 */
public final class Sandboxes {

    private static final Logger LOG = LoggerFactory.getLogger(Sandboxes.class);
    private static final Map<TopologyKind, Topology> SHARED = new EnumMap<>(TopologyKind.class);
    private static final Map<TopologyKind, Path> SHARED_DIRECTORIES = new EnumMap<>(TopologyKind.class);
    private static final AtomicInteger PRIVATE_COUNT = new AtomicInteger();
    private static boolean swept;

    private Sandboxes() {
    }

    /** Free memory {@code /dev/shm} must have for the servers' files to go there (a whole test run's at once). */
    private static final long MEMORY_ROOT_MIN_FREE = 8L << 30;
    private static final Path ROOT = chooseRoot();

    /**
     * The root of every test JVM's sandbox directories: {@code -Dgantry.sandbox.dir} if given; else {@code
     * /dev/shm/gantry-sandbox} where {@code /dev/shm} is a memory file system with at least 8 GiB free; else {@code
     * $java.io.tmpdir/gantry-sandbox}. In memory, the servers' files cost no disk writes: a run of the engine's
     * tests starts over a hundred servers, each from a copy of a 26-74 MB template, and on disk the test JVMs
     * spent a third of their time waiting for those writes (iowait 20-68 % in vmstat).
     */
    public static Path testRoot() {
        return ROOT;
    }

    private static Path chooseRoot() {
        String explicit = System.getProperty("gantry.sandbox.dir");
        if (explicit != null && !explicit.isBlank()) {
            return Path.of(explicit);
        }
        Path memory = Path.of("/dev/shm");
        if (Files.isDirectory(memory) && Files.isWritable(memory)
                && memory.toFile().getUsableSpace() >= MEMORY_ROOT_MIN_FREE) {
            return memory.resolve("gantry-sandbox");
        }
        return Path.of(System.getProperty("java.io.tmpdir"), "gantry-sandbox");
    }

    private static boolean inMemory() {
        return ROOT.startsWith("/dev/shm");
    }

    /** This JVM's own directory under {@link #testRoot()}. */
    public static Path runDirectory() {
        return testRoot().resolve("jvm-" + ProcessHandle.current().pid());
    }

    /** The topology of this kind shared by the JVM's tests (a primary and two replicas), started on first use. */
    public static synchronized Topology shared(TopologyKind kind) {
        Topology topology = SHARED.get(kind);
        if (topology == null) {
            Path directory = privateDirectory("shared-" + kind.name().toLowerCase());
            topology = kind.start(directory, 2);
            SHARED.put(kind, topology);
            SHARED_DIRECTORIES.put(kind, directory);
        }
        return topology;
    }

    /** A topology of its own for a test that changes it; the caller closes it. */
    public static Topology startPrivate(TopologyKind kind, String name, int replicas) {
        return kind.start(privateDirectory(name), replicas);
    }

    /** A new directory name under this JVM's run directory (after sweeping what dead JVMs left). */
    private static Path privateDirectory(String name) {
        sweepOnce();
        return runDirectory().resolve(name + "-" + PRIVATE_COUNT.incrementAndGet());
    }

    /** A private MariaDB topology of {@code installation}'s servers; the caller closes it. */
    public static MariaDbTopology startPrivate(MariaDbInstallation installation, String name, int replicas) {
        Path directory = privateDirectory(name);
        return MariaDbTopology.start(installation, directory, replicas, 0);
    }

    /** A private MariaDB topology whose primary commits semi-synchronously; the caller closes it. */
    public static MariaDbTopology startSemiSync(String name, int replicas) {
        Path directory = privateDirectory(name);
        return MariaDbTopology.startSemiSync(MariaDbInstallation.locate(), directory, replicas);
    }

    /**
     * A lone MariaDB server (no replicas) with extra {@code my.cnf} lines, for tests of servers that are set up
     * wrongly on purpose; the caller closes it.
     */
    public static MariaDbTopology startMisfit(String name, List<String> extraOptions) {
        Path directory = privateDirectory(name);
        return MariaDbTopology.start(MariaDbInstallation.locate(), directory, 0, 0, extraOptions);
    }

    /**
     * A private MariaDB topology (primary and {@code replicas} replicas) whose servers all get extra {@code my.cnf}
     * lines, for a test that needs a setting the shared topology lacks, such as {@code performance-schema=ON}; the
     * caller closes it.
     */
    public static MariaDbTopology startMariaDbWith(String name, int replicas, List<String> extraOptions) {
        Path directory = privateDirectory(name);
        return MariaDbTopology.start(MariaDbInstallation.locate(), directory, replicas, 0, extraOptions);
    }

    /**
     * A lone local MySQL server (the bundled binaries or {@code GANTRY_MYSQL_HOME}; never a container) with extra
     * {@code my.cnf} lines, for tests of servers that are set up wrongly on purpose; the caller closes it.
     */
    public static MySqlTopology startMySqlMisfit(String name, List<String> extraOptions) {
        Path directory = privateDirectory(name);
        return MySqlTopology.start(MySqlInstallation.locate(), directory, 0, 0, extraOptions);
    }

    /**
     * A private MariaDB topology whose servers offer TLS with the {@link SandboxCertificates} (the sandbox's servers
     * otherwise run without TLS); the caller closes it.
     */
    public static MariaDbTopology startWithTls(String name, int replicas) {
        Path directory = privateDirectory(name);
        return MariaDbTopology.start(MariaDbInstallation.locate(), directory, replicas, 0,
                SandboxCertificates.obtain().serverOptions());
    }

    /** Stops the shared topologies (the shutdown hook does it too; this lets a test check nothing is left). */
    public static synchronized void closeShared() {
        SHARED.values().forEach(Topology::close);
        SHARED.clear();
        SHARED_DIRECTORIES.clear();
    }

    /**
     * Process ids of servers started by this JVM that are still running and belong to no shared topology: after a
     * test class is done, what it started and did not stop.
     */
    public static synchronized List<Long> liveServersOutsideShared() {
        List<Long> shared = SHARED_DIRECTORIES.values().stream().flatMap(d -> liveServersUnder(d).stream()).toList();
        return liveServersOfThisRun().stream().filter(pid -> !shared.contains(pid)).toList();
    }

    /** Process ids of {@code mariadbd} and {@code mysqld} servers started by this JVM that are still running. */
    public static List<Long> liveServersOfThisRun() {
        return liveServersUnder(runDirectory());
    }

    /**
     * Process ids of running (not zombie) {@code mariadbd} and {@code mysqld} servers whose command line names
     * {@code directory}.
     */
    public static List<Long> liveServersUnder(Path directory) {
        return ServerProcesses.liveServersUnder(directory);
    }

    private static synchronized void sweepOnce() {
        if (swept) {
            return;
        }
        swept = true;
        if (inMemory()) {
            // Memory is not left holding a finished run's files; on disk they stay until the next run's sweep.
            ServerProcesses.afterServersOnExit(() -> deleteQuietly(runDirectory()));
        }
        Path root = testRoot();
        List<Path> orphans = ServerProcesses.sweepOrphans(root);
        if (!orphans.isEmpty()) {
            LOG.info("sandbox: cleaned up {} server directories left by earlier runs", orphans.size());
        }
        if (!Files.isDirectory(root)) {
            return;
        }
        try (Stream<Path> runs = Files.list(root)) {
            for (Path run : runs.filter(Sandboxes::belongsToDeadJvm).toList()) {
                deleteQuietly(run);
            }
        } catch (IOException e) {
            LOG.warn("sandbox: could not clean {}: {}", root, e.toString());
        }
    }

    private static boolean belongsToDeadJvm(Path run) {
        String name = run.getFileName().toString();
        if (!name.startsWith("jvm-")) {
            return false;
        }
        try {
            long pid = Long.parseLong(name.substring(4));
            return pid != ProcessHandle.current().pid() && !ServerProcesses.isLive(pid)
                    && ServerProcesses.liveServersUnder(run).isEmpty();
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private static void deleteQuietly(Path directory) {
        try (Stream<Path> paths = Files.walk(directory)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException | java.io.UncheckedIOException e) {
            // Another test JVM on this machine may be sweeping the same directory: what it deleted is gone anyway.
            LOG.debug("sandbox: could not delete {}: {}", directory, e.toString());
        }
    }
}
