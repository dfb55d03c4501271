package io.gantry.sandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * TLS files for sandbox servers, made once per machine with {@code openssl} under Gantry's cache directory and
 * reused by every server and test (MariaDB 11.4 would otherwise make its own certificate at every start, seconds of
 * CPU each time): a CA, a server certificate it signed for {@code IP:127.0.0.1} (where sandbox servers listen), and
 * a second, unrelated CA that trusts nothing of the sandbox, for tests of a wrong CA.
 *
 * @param directory where the files are
 */
public record SandboxCertificates(Path directory) {

    private static final String VERSION = "v1";

    /** The files, made on first use (well under a second). */
    public static SandboxCertificates obtain() {
        Path root = MariaDbInstallation.cacheDirectory().resolve("tls");
        Path target = root.resolve(VERSION);
        if (Files.exists(target.resolve("READY"))) {
            return new SandboxCertificates(target);
        }
        try {
            Files.createDirectories(root);
            try (FileChannel channel = FileChannel.open(root.resolve(VERSION + ".lock"), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE);
                 FileLock ignored = channel.lock()) {
                if (!Files.exists(target.resolve("READY"))) {
                    make(root, target);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make the sandbox TLS files in " + target, e);
        }
        return new SandboxCertificates(target);
    }

    /** PEM certificate of the CA that signed the servers' certificate. */
    public Path ca() {
        return directory.resolve("ca.pem");
    }

    /** PEM certificate of a CA that signed nothing the sandbox uses. */
    public Path otherCa() {
        return directory.resolve("other-ca.pem");
    }

    /** The servers' certificate (subjectAltName {@code IP:127.0.0.1}, CN {@code 127.0.0.1}). */
    public Path serverCertificate() {
        return directory.resolve("server-cert.pem");
    }

    /** The servers' private key. */
    public Path serverKey() {
        return directory.resolve("server-key.pem");
    }

    /**
     * {@code my.cnf} lines that turn TLS on with these files; they must come after the sandbox's own options (which
     * say {@code skip-ssl}).
     */
    public List<String> serverOptions() {
        return List.of("ssl", "ssl-ca=" + ca().toAbsolutePath(), "ssl-cert=" + serverCertificate().toAbsolutePath(),
                "ssl-key=" + serverKey().toAbsolutePath());
    }

    private static void make(Path root, Path target) throws IOException {
        Path work = Files.createTempDirectory(root, "making-");
        openssl(work, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650", "-subj",
                "/CN=Gantry sandbox CA", "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-keyout", "ca-key.pem", "-out", "ca.pem");
        openssl(work, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650", "-subj",
                "/CN=Some other CA", "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-keyout", "other-ca-key.pem",
                "-out", "other-ca.pem");
        openssl(work, "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout",
                "server-key.pem", "-out", "server.csr");
        Files.writeString(work.resolve("server.ext"), "basicConstraints=CA:FALSE\n"
                + "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
                + "subjectAltName=IP:127.0.0.1\n", StandardCharsets.US_ASCII);
        openssl(work, "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem",
                "-CAcreateserial", "-days", "3650", "-extfile", "server.ext", "-out", "server-cert.pem");
        Files.writeString(work.resolve("READY"), "made by Gantry's sandbox\n", StandardCharsets.US_ASCII);
        if (Files.exists(target)) {
            try (var old = Files.walk(target)) {
                for (Path path : old.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(path);
                }
            }
        }
        Files.move(work, target, StandardCopyOption.ATOMIC_MOVE);
    }

    private static void openssl(Path directory, String... arguments) throws IOException {
        List<String> command = new java.util.ArrayList<>();
        command.add("openssl");
        command.addAll(List.of(arguments));
        Process process = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                throw new IllegalStateException("sandbox: " + String.join(" ", command) + " failed: " + output);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running openssl", e);
        }
    }
}
