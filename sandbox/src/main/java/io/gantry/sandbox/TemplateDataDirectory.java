package io.gantry.sandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A data directory initialised once per install (system tables, the test database and accounts, empty GTID state)
 * and then copied for every server. Copies start with identical data and no GTIDs, so replication needs no dump and
 * no position: a replica starts from the empty position.
 */
final class TemplateDataDirectory {

    private static final Logger LOG = LoggerFactory.getLogger(TemplateDataDirectory.class);

    private TemplateDataDirectory() {
    }

    /** The template's data directory for this install, built on first use (a few seconds, once). */
    static Path obtain(ServerInstallation installation) {
        Path templates = SandboxCache.directory().resolve("templates");
        return SandboxCache.obtain(templates, key(installation), "READY", staging -> {
            LOG.info("sandbox: initialising a template data directory for {} (once)", installation.label());
            long started = System.nanoTime();
            installation.initialise(staging.resolve("data"), staging);
            Files.writeString(staging.resolve("READY"), installation.label() + "\n", StandardCharsets.UTF_8);
            LOG.info("sandbox: template ready in {} ms", (System.nanoTime() - started) / 1_000_000);
        }).resolve("data");
    }

    /**
     * Starts a server on a template's data directory (in {@code work/data}), runs {@code statements} as root and
     * stops it again, leaving no binary log behind.
     */
    static void runOnBootstrapServer(ServerInstallation installation, Path work, List<String> statements) {
        LocalServer bootstrap = new LocalServer("template", work, LocalServer.freePort(), installation, false);
        bootstrap.start(true);
        try (Connection connection = bootstrap.connectAsRoot(); Statement statement = connection.createStatement()) {
            for (String sql : statements) {
                statement.execute(sql);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("template: setting up accounts failed: " + e.getMessage(), e);
        } finally {
            bootstrap.stop();
        }
        try (Stream<Path> files = Files.list(bootstrap.dataDirectory())) {
            for (Path file : files.filter(f -> f.getFileName().toString().startsWith("template-bin")).toList()) {
                Files.delete(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Runs an initialisation program to its end (at most 120 s), its output in {@code log}; fails if it fails. */
    static void run(List<String> command, Map<String, String> environment, Path log, String what) {
        try {
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
            builder.environment().putAll(environment);
            Process process = builder.start();
            try {
                if (!process.waitFor(120, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(10, TimeUnit.SECONDS);
                    throw new IllegalStateException(what + " did not finish within 120 s; see " + log);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while running " + what, e);
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException(what + " failed with exit code " + process.exitValue() + ":\n"
                        + Files.readString(log, StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + what, e);
        }
    }

    /** Copies the template's files into a new server's data directory. */
    static void copyTo(Path template, Path dataDirectory) {
        try {
            Files.walkFileTree(template, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                    Files.createDirectories(dataDirectory.resolve(template.relativize(dir)));
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.copy(file, dataDirectory.resolve(template.relativize(file)));
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("cannot copy the template data directory into " + dataDirectory, e);
        }
    }

    /** The template depends on the install and on what is set up in it; a change to either makes a new one. */
    private static String key(ServerInstallation installation) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.update(installation.home().toAbsolutePath().toString().getBytes(StandardCharsets.UTF_8));
            digest.update(installation.label().getBytes(StandardCharsets.UTF_8));
            for (String part : installation.setupStatements()) {
                digest.update(part.getBytes(StandardCharsets.UTF_8));
            }
            for (String part : installation.serverOptions("template", false)) {
                digest.update(part.getBytes(StandardCharsets.UTF_8));
            }
            return HexFormat.of().formatHex(digest.digest(), 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
