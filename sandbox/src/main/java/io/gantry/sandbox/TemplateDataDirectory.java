package io.gantry.sandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A data directory initialised once per MariaDB install (system tables, the test database and accounts, empty GTID
 * state) and then copied for every server. Copies start with identical data and no GTIDs, so replication needs no
 * dump and no position: a replica starts from the empty position.
 */
final class TemplateDataDirectory {

    private static final Logger LOG = LoggerFactory.getLogger(TemplateDataDirectory.class);

    private TemplateDataDirectory() {
    }

    /** The template's data directory for this install, built on first use (a few seconds, once). */
    static Path obtain(MariaDbInstallation installation) {
        Path templates = MariaDbInstallation.cacheDirectory().resolve("templates");
        Path target = templates.resolve(key(installation));
        Path ready = target.resolve("READY");
        if (Files.exists(ready)) {
            return target.resolve("data");
        }
        try {
            Files.createDirectories(templates);
            try (FileChannel channel = FileChannel.open(templates.resolve(target.getFileName() + ".lock"),
                    StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                 FileLock ignored = channel.lock()) {
                if (!Files.exists(ready)) {
                    build(installation, templates, target);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot build the template data directory in " + target, e);
        }
        return target.resolve("data");
    }

    private static void build(MariaDbInstallation installation, Path templates, Path target) throws IOException {
        LOG.info("sandbox: initialising a template data directory for {} in {} (once)", installation.label(), target);
        long started = System.nanoTime();
        Path staging = Files.createTempDirectory(templates, "building-");
        runInstallDb(installation, staging);
        MariaDbServer bootstrap = new MariaDbServer("template", staging, MariaDbServer.freePort(), installation, false);
        bootstrap.start(true);
        try (Connection connection = bootstrap.connectAsRoot(); Statement statement = connection.createStatement()) {
            for (String sql : SandboxAccounts.setupStatements()) {
                statement.execute(sql);
            }
            // The copies must start with no GTIDs and no binary log, or replicas would replay the setup.
            statement.execute("RESET MASTER");
        } catch (SQLException e) {
            throw new IllegalStateException("template: setting up accounts failed: " + e.getMessage(), e);
        } finally {
            bootstrap.stop();
        }
        try (Stream<Path> files = Files.list(bootstrap.dataDirectory())) {
            for (Path file : files.filter(f -> f.getFileName().toString().startsWith("template-bin")).toList()) {
                Files.delete(file);
            }
        }
        Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
        Files.writeString(target.resolve("READY"), installation.label() + "\n", StandardCharsets.UTF_8);
        LOG.info("sandbox: template ready in {} ms", (System.nanoTime() - started) / 1_000_000);
    }

    private static void runInstallDb(MariaDbInstallation installation, Path staging) throws IOException {
        List<String> command = new ArrayList<>(List.of("bash", installation.installDbScript().toString(),
                "--no-defaults",
                "--basedir=" + installation.home(),
                "--datadir=" + staging.resolve("data"),
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                "--skip-name-resolve",
                "--innodb-log-file-size=8M"));
        if ("root".equals(System.getProperty("user.name"))) {
            command.add("--user=root");
        }
        Path log = staging.resolve("install-db.log");
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        try {
            if (!process.waitFor(120, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("mariadb-install-db did not finish within 120 s; see " + log);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running mariadb-install-db", e);
        }
        if (process.exitValue() != 0) {
            throw new IllegalStateException("mariadb-install-db failed with exit code " + process.exitValue()
                    + ":\n" + Files.readString(log, StandardCharsets.UTF_8));
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
    private static String key(MariaDbInstallation installation) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.update(installation.home().toAbsolutePath().toString().getBytes(StandardCharsets.UTF_8));
            digest.update(installation.label().getBytes(StandardCharsets.UTF_8));
            for (String part : SandboxAccounts.setupStatements()) {
                digest.update(part.getBytes(StandardCharsets.UTF_8));
            }
            for (String part : MariaDbServer.commonOptions()) {
                digest.update(part.getBytes(StandardCharsets.UTF_8));
            }
            return HexFormat.of().formatHex(digest.digest(), 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
