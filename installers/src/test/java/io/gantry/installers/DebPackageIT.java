package io.gantry.installers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The built {@code .deb}, checked without installing it (that needs root and a running systemd): its control data,
 * its file list, the unit (with {@code systemd-analyze verify} where systemd is there), the maintainer scripts,
 * and the packaged launcher with its bundled runtime running from the unpacked tree.
 */
class DebPackageIT {

    private static final Path DEB = Path.of(System.getProperty("gantry.deb", "target/gantry.deb"));
    private static final String VERSION = System.getProperty("gantry.version", "");

    @TempDir
    static Path unpacked;

    @BeforeAll
    static void unpack() throws Exception {
        assertThat(DEB).exists();
        assertThat(run("dpkg-deb", "-x", DEB.toString(), unpacked.toString()).exitCode()).isZero();
        assertThat(run("dpkg-deb", "-e", DEB.toString(), unpacked.resolve("DEBIAN").toString()).exitCode()).isZero();
    }

    @Test
    void controlNamesThePackageItsVersionAndTheConffile() throws Exception {
        Result info = run("dpkg-deb", "-I", DEB.toString());
        assertThat(info.output()).contains("Package: gantry").contains("Version: " + VERSION.replace('-', '~'))
                .contains("Architecture: amd64").contains("Depends: adduser")
                .contains(" postinst").contains(" prerm").contains(" postrm").contains(" conffiles");
        assertThat(Files.readString(unpacked.resolve("DEBIAN/conffiles")).strip()).isEqualTo("/etc/gantry/gantry.conf");
    }

    @Test
    void filesAreWhereAnOperatorLooksForThemOwnedByRoot() throws Exception {
        String listing = run("dpkg-deb", "-c", DEB.toString()).output();
        assertThat(listing).contains("./usr/bin/gantry -> ../lib/gantry/bin/gantry")
                .contains("./usr/lib/gantry/bin/gantry").contains("./usr/lib/gantry/lib/app/gantry.jar")
                .contains("./usr/lib/gantry/lib/runtime/bin/java").contains("./lib/systemd/system/gantry.service")
                .contains("./etc/gantry/gantry.conf").contains("./usr/share/doc/gantry/README.md");
        for (String line : listing.split("\n")) {
            assertThat(line).as("owner of %s", line).contains(" root/root ");
        }
        // The configuration installed is the sample, every key commented out with its default.
        assertThat(Files.readString(unpacked.resolve("etc/gantry/gantry.conf")))
                .isEqualTo(Files.readString(Path.of("..", "assets", "gantry.conf")));
    }

    @Test
    void packagedLauncherRunsWithItsBundledRuntime() throws Exception {
        Result version = run(unpacked.resolve("usr/lib/gantry/bin/gantry").toString(), "--version");
        assertThat(version.exitCode()).as(version.output()).isZero();
        assertThat(version.output().strip()).isEqualTo("gantry " + VERSION);
        Result help = run(unpacked.resolve("usr/bin/gantry").toString(), "run", "--help");
        assertThat(help.exitCode()).as(help.output()).isZero();
        assertThat(help.output()).contains("--config").contains("--drain-timeout-secs");
    }

    @Test
    void unitRunsSandboxedAsTheGantryUserAndRestartsOnFailure() throws Exception {
        String unit = Files.readString(unpacked.resolve("lib/systemd/system/gantry.service"));
        assertThat(unit).contains("User=gantry").contains("ExecStart=/usr/bin/gantry run --config "
                        + "/etc/gantry/gantry.conf").contains("StateDirectory=gantry").contains("Restart=on-failure")
                .contains("ProtectSystem=strict").contains("NoNewPrivileges=yes").contains("PrivateTmp=yes")
                .contains("WantedBy=multi-user.target");
    }

    @Test
    void unitPassesSystemdAnalyzeVerify() throws Exception {
        assumeTrue(run("sh", "-c", "command -v systemd-analyze").exitCode() == 0, "systemd-analyze is not installed");
        // verify checks that ExecStart exists: the unit is verified with it pointing at the unpacked launcher.
        Path unit = unpacked.resolve("verify/gantry.service");
        Files.createDirectories(unit.getParent());
        Files.writeString(unit, Files.readString(unpacked.resolve("lib/systemd/system/gantry.service"))
                .replace("ExecStart=/usr/bin/gantry", "ExecStart=" + unpacked.resolve("usr/bin/gantry")));
        Result verify = run("systemd-analyze", "verify", unit.toString());
        // Warnings (an unknown key, a bad value) leave the exit code 0: the output must be empty too.
        assertThat(verify.exitCode()).as(verify.output()).isZero();
        assertThat(verify.output()).isEmpty();
    }

    @Test
    void maintainerScriptsAreValidShellAndCreateTheUserAndDataDirectory() throws Exception {
        for (String script : List.of("postinst", "prerm", "postrm")) {
            Path path = unpacked.resolve("DEBIAN").resolve(script);
            assertThat(Files.isExecutable(path)).as(script).isTrue();
            Result syntax = run("sh", "-n", path.toString());
            assertThat(syntax.exitCode()).as(script + ": " + syntax.output()).isZero();
        }
        String postinst = Files.readString(unpacked.resolve("DEBIAN/postinst"));
        assertThat(postinst).contains("adduser --system --group --home /var/lib/gantry")
                .contains("install -d -o gantry -g gantry -m 0750 /var/lib/gantry")
                .contains("systemctl try-restart gantry.service");
        // Purging keeps the data, as a database server's package does.
        assertThat(Files.readString(unpacked.resolve("DEBIAN/postrm"))).doesNotContain("rm -rf /var/lib/gantry");
    }

    private record Result(int exitCode, String output) {
    }

    private static Result run(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(new ArrayList<>(List.of(command))).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Result(process.exitValue(), output);
    }
}
