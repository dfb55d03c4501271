package io.gantry.sandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.NoSuchFileException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the promise that no server process outlives the JVM that started it: every process is registered here and
 * stopped by a shutdown hook, and each server directory holds an owner file so that the next start sweeps away
 * servers left behind by a JVM that was killed before its hook could run.
 */
final class ServerProcesses {

    static final String OWNER_FILE = "gantry-sandbox.owner";

    private static final Logger LOG = LoggerFactory.getLogger(ServerProcesses.class);
    /** Running server processes and the directory each one's owner file is in. */
    private static final Map<Process, Path> RUNNING = new ConcurrentHashMap<>();
    /**
     * What users of the servers stop before the hook stops the servers. JVM shutdown hooks run concurrently, so a
     * user's own hook would race this one: its proxy would see its servers vanish while it is still stopping.
     */
    private static final List<Runnable> STOP_FIRST = new CopyOnWriteArrayList<>();
    /** What runs in the JVM's shutdown once every registered server has stopped. */
    private static final List<Runnable> AFTER_SERVERS = new CopyOnWriteArrayList<>();

    static {
        Thread hook = new Thread(ServerProcesses::stopAllRegistered, "gantry-sandbox-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    private ServerProcesses() {
    }

    /** Records a started server process and who owns it, in its directory. */
    static void register(Process process, Path serverDirectory) {
        RUNNING.put(process, serverDirectory);
        Properties owner = new Properties();
        owner.setProperty("owner_pid", Long.toString(ProcessHandle.current().pid()));
        owner.setProperty("server_pid", Long.toString(process.pid()));
        owner.setProperty("directory", serverDirectory.toAbsolutePath().toString());
        try (var out = Files.newBufferedWriter(serverDirectory.resolve(OWNER_FILE), StandardCharsets.UTF_8)) {
            owner.store(out, "written by the Gantry sandbox; used to clean up after a killed JVM");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Forgets a process that has exited (it was stopped or killed on purpose), owner file included. */
    static void unregister(Process process) {
        Path directory = RUNNING.remove(process);
        if (directory != null) {
            try {
                Files.deleteIfExists(directory.resolve(OWNER_FILE));
            } catch (IOException e) {
                LOG.debug("sandbox: could not delete the owner file in {}: {}", directory, e.toString());
            }
        }
    }

    /** Stops a process: SIGTERM, then SIGKILL if it has not exited within the grace period. Reaps it. */
    static void terminate(Process process, Duration grace) {
        process.destroy();
        try {
            if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        unregister(process);
    }

    /** SIGKILL, and wait for the exit so the process is reaped (no zombie left). */
    static void kill(Process process) {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        unregister(process);
    }

    /** Runs {@code stop} in the JVM's shutdown, before any registered server is stopped. */
    static void stopFirstOnExit(Runnable stop) {
        STOP_FIRST.add(stop);
    }

    /** Runs {@code then} in the JVM's shutdown, after every registered server has stopped. */
    static void afterServersOnExit(Runnable then) {
        AFTER_SERVERS.add(then);
    }

    /** Takes back {@link #stopFirstOnExit}; false when the shutdown has already taken it (it runs or has run). */
    static boolean cancelStopFirstOnExit(Runnable stop) {
        return STOP_FIRST.remove(stop);
    }

    private static void stopAllRegistered() {
        try {
            for (Runnable stop : STOP_FIRST) {
                if (STOP_FIRST.remove(stop)) {
                    try {
                        stop.run();
                    } catch (RuntimeException e) {
                        LOG.error("sandbox: stopping what uses the servers failed: {}", e.toString(), e);
                    }
                }
            }
        } finally {
            // The servers stop whatever failed before, Errors too: a jar replaced under the running JVM makes the
            // first class loaded on the way out fail (NoClassDefFoundError), and left a demo's servers running.
            stopServers();
        }
    }

    private static void stopServers() {
        List<Process> processes = List.copyOf(RUNNING.keySet());
        processes.forEach(Process::destroy);
        for (Process process : processes) {
            terminate(process, Duration.ofSeconds(5));
        }
        AFTER_SERVERS.forEach(Runnable::run);
    }

    /**
     * Kills servers under {@code root} whose owning JVM is gone, found through their owner files. Servers owned by
     * a JVM that still runs are left alone (another test run may be using them).
     *
     * @return the directories whose servers were swept (or had already exited)
     */
    static List<Path> sweepOrphans(Path root) {
        if (!Files.isDirectory(root)) {
            return List.of();
        }
        try (Stream<Path> files = Files.find(root, 4, (path, attributes) -> path.endsWith(OWNER_FILE))) {
            return files.filter(ServerProcesses::sweepIfOrphaned).map(Path::getParent).toList();
        } catch (IOException e) {
            LOG.warn("sandbox: could not look for servers left behind under {}: {}", root, e.toString());
            return List.of();
        }
    }

    private static boolean sweepIfOrphaned(Path ownerFile) {
        Properties owner = new Properties();
        try (var in = Files.newBufferedReader(ownerFile, StandardCharsets.UTF_8)) {
            owner.load(in);
        } catch (IOException e) {
            return false;
        }
        long ownerPid = Long.parseLong(owner.getProperty("owner_pid", "-1"));
        long serverPid = Long.parseLong(owner.getProperty("server_pid", "-1"));
        String directory = owner.getProperty("directory", "");
        if (ownerPid != ProcessHandle.current().pid() && isLive(ownerPid)) {
            return false;
        }
        boolean ours = ownerPid == ProcessHandle.current().pid();
        if (ours && RUNNING.keySet().stream().anyMatch(p -> p.pid() == serverPid)) {
            return false;
        }
        if (isLive(serverPid) && mentionsDirectory(commandLine(serverPid), Path.of(directory))) {
            LOG.warn("sandbox: stopping server pid {} left behind by a JVM that is gone (pid {}), data in {}",
                    serverPid, ownerPid, directory);
            ProcessHandle.of(serverPid).ifPresent(ProcessHandle::destroyForcibly);
            awaitGone(serverPid, Duration.ofSeconds(10));
        }
        try {
            Files.deleteIfExists(ownerFile);
        } catch (IOException e) {
            LOG.debug("sandbox: could not delete {}: {}", ownerFile, e.toString());
        }
        return true;
    }

    /**
     * Whether a process exists and is not a zombie. On machines where pid 1 does not reap orphans, an exited server
     * lingers as a zombie, and {@code kill -0} or {@link ProcessHandle#isAlive()} would still call it alive.
     */
    static boolean isLive(long pid) {
        if (pid <= 0) {
            return false;
        }
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        try {
            String content = Files.readString(stat, StandardCharsets.UTF_8);
            // Format: "pid (comm) S ..."; comm may contain spaces and parentheses, so look after the last ')'.
            int end = content.lastIndexOf(')');
            char state = content.charAt(end + 2);
            return state != 'Z' && state != 'X';
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException | RuntimeException e) {
            // No procfs (not Linux): fall back to the JDK's view, which cannot tell zombies apart.
            return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        }
    }

    /** The command line of a process (arguments joined by spaces), or "" when unknown. */
    static String commandLine(long pid) {
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
            return new String(raw, StandardCharsets.UTF_8).replace('\0', ' ').trim();
        } catch (IOException e) {
            return ProcessHandle.of(pid).flatMap(h -> h.info().commandLine()).orElse("");
        }
    }

    /** Live {@code mariadbd} and {@code mysqld} processes whose command line names a file under {@code directory}. */
    static List<Long> liveServersUnder(Path directory) {
        return ProcessHandle.allProcesses()
                .map(ProcessHandle::pid)
                .filter(pid -> {
                    String commandLine = commandLine(pid);
                    return (commandLine.contains("mariadbd") || commandLine.contains("mysqld"))
                            && mentionsDirectory(commandLine, directory);
                })
                .filter(ServerProcesses::isLive)
                .toList();
    }

    /**
     * Whether a command line names a file under {@code directory} (a server's {@code --defaults-file=DIR/my.cnf}):
     * the directory followed by a separator, so that {@code /tmp/demo} does not match a server of {@code /tmp/demo2}.
     */
    static boolean mentionsDirectory(String commandLine, Path directory) {
        return commandLine.contains(directory.toAbsolutePath().normalize() + java.io.File.separator);
    }

    private static void awaitGone(long pid, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (isLive(pid) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
