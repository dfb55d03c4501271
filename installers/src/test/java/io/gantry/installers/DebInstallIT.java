package io.gantry.installers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Installs the {@code .deb} on this machine, upgrades it and purges it: only with {@code -Pinstall-test}, as root, on
 * a machine where no {@code gantry} package, user or directory exists yet (it refuses otherwise, and puts the
 * machine back as it found it: package purged, data directory, user and group removed).
 */
class DebInstallIT {

    private static final Path DEB = Path.of(System.getProperty("gantry.deb", "target/gantry.deb"));

    @TempDir
    Path work;

    @Test
    void installMakesUserAndDataDirectoryAndUpgradeKeepsConfigurationAndData() throws Exception {
        assumeTrue(Boolean.getBoolean("gantry.installTest"), "the install test runs only with -Pinstall-test");
        assertThat(run("id", "-u").output().strip()).as("the install test needs root").isEqualTo("0");
        assertThat(run("getent", "passwd", "gantry").exitCode()).as("a gantry user exists already").isNotZero();
        assertThat(Path.of("/etc/gantry")).doesNotExist();
        assertThat(Path.of("/var/lib/gantry")).doesNotExist();
        try {
            Result install = run("dpkg", "-i", DEB.toString());
            assertThat(install.exitCode()).as(install.output()).isZero();
            assertThat(install.output()).doesNotContain("Warning").contains("systemctl enable --now gantry");
            assertThat(run("getent", "passwd", "gantry").output()).contains(":/var/lib/gantry:/usr/sbin/nologin");
            assertThat(run("stat", "-c", "%U:%G %a", "/var/lib/gantry").output().strip()).isEqualTo("gantry:gantry 750");
            assertThat(run("stat", "-c", "%U:%G %a", "/etc/gantry").output().strip()).isEqualTo("root:gantry 750");
            Result version = run("runuser", "-u", "gantry", "--", "/usr/bin/gantry", "--version");
            assertThat(version.output().strip()).as(version.output()).startsWith("gantry ");

            // The operator's edit and the engine's data survive an upgrade.
            Files.writeString(Path.of("/etc/gantry/gantry.conf"), "listen = 127.0.0.1:45999\n",
                    java.nio.file.StandardOpenOption.APPEND);
            Path data = Path.of("/var/lib/gantry/gantry-data/authority.mv.db");
            Files.createDirectories(data.getParent());
            Files.writeString(data, "stands in for the Authority");
            Result upgrade = run("dpkg", "-i", newerVersion().toString());
            assertThat(upgrade.exitCode()).as(upgrade.output()).isZero();
            assertThat(run("dpkg-query", "-W", "-f", "${Version}", "gantry").output()).endsWith("+upgrade");
            assertThat(Files.readString(Path.of("/etc/gantry/gantry.conf"))).endsWith("listen = 127.0.0.1:45999\n");
            assertThat(Files.readString(data)).isEqualTo("stands in for the Authority");

            Result purge = run("dpkg", "--purge", "gantry");
            assertThat(purge.exitCode()).as(purge.output()).isZero();
            assertThat(Path.of("/usr/bin/gantry")).doesNotExist();
            assertThat(Path.of("/etc/gantry")).doesNotExist();
            assertThat(data).as("purge keeps the data").exists();
        } finally {
            run("dpkg", "--purge", "gantry");
            run("rm", "-rf", "/var/lib/gantry");
            run("deluser", "--system", "gantry");
            run("delgroup", "--system", "gantry");
        }
    }

    /** The same package with a higher version, as an upgrade brings. */
    private Path newerVersion() throws Exception {
        Path tree = work.resolve("tree");
        assertThat(run("dpkg-deb", "-R", DEB.toString(), tree.toString()).exitCode()).isZero();
        Path control = tree.resolve("DEBIAN/control");
        Files.writeString(control, Files.readString(control).replaceFirst("(?m)^Version: (.*)$", "Version: $1+upgrade"));
        Path newer = work.resolve("gantry-upgrade.deb");
        Result build = run("dpkg-deb", "--root-owner-group", "-Zgzip", "--build", tree.toString(), newer.toString());
        assertThat(build.exitCode()).as(build.output()).isZero();
        return newer;
    }

    private record Result(int exitCode, String output) {
    }

    private static Result run(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
        return new Result(process.exitValue(), output);
    }
}
