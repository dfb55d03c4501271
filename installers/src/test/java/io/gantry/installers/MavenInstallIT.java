package io.gantry.installers;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code mvn install} works, not only {@code mvn verify} (CI's command): it once failed at this module, which had
 * jar packaging and no jar ("the packaging for this project did not assign a file to the build artifact"). Runs
 * Maven's install on this module and the ones it needs, with the packages this build made (building them again
 * would only take longer), and finds them installed in the local repository.
 */
class MavenInstallIT {

    private static final Path DEB = Path.of(System.getProperty("gantry.deb", "target/gantry.deb"));
    private static final Path CONSOLE_DEB = Path.of(System.getProperty("gantry.consoleDeb", "target/console.deb"));
    private static final Path CONSOLE = Path.of(System.getProperty("gantry.consoleImage", "target/console.tar.gz"));
    private static final String VERSION = System.getProperty("gantry.version", "");

    @Test
    void installPutsThePackagesAndTheConsoleImageInTheLocalRepository() throws Exception {
        Path installed = Path.of(System.getProperty("gantry.localRepository"), "io", "gantry", "gantry-installers",
                VERSION);
        Path deb = installed.resolve("gantry-installers-" + VERSION + ".deb");
        Path consoleDeb = installed.resolve("gantry-installers-" + VERSION + "-console.deb");
        Path console = installed.resolve("gantry-installers-" + VERSION + "-console-linux-x64.tar.gz");
        // Those of an earlier install go first, so what is found below is this one's.
        Files.deleteIfExists(deb);
        Files.deleteIfExists(consoleDeb);
        Files.deleteIfExists(console);
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("maven.home"), "bin", "mvn")
                .toString(), "-B", "-f", Path.of("..", "pom.xml").toAbsolutePath().normalize().toString(),
                "-Pinstallers", "-pl", "installers", "-am", "install", "-DskipTests", "-DreusePackages=true",
                // -DskipTests leaves this module's package checks on (they are its only tests); this one among them
                // would start Maven again.
                "-DskipPackageChecks=true"));
        // Not offline (-o), even when this build is: the install plugin may not be in the local repository yet;
        // whatever is there (every pinned release) is used without asking Central.
        Path log = Files.createTempFile("gantry-mvn-install", ".log");
        ProcessBuilder maven = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        maven.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Process process = maven.start();
        assertThat(process.waitFor(10, TimeUnit.MINUTES)).as("mvn install finished").isTrue();
        String output = Files.readString(log, StandardCharsets.UTF_8);
        assertThat(process.exitValue()).as("mvn install said:%n%s", tail(output)).isZero();
        Files.delete(log);

        assertThat(deb).exists();
        assertThat(consoleDeb).exists();
        assertThat(Files.mismatch(deb, DEB)).as("%s is %s", deb, DEB).isEqualTo(-1L);
        assertThat(Files.mismatch(consoleDeb, CONSOLE_DEB)).as("%s is %s", consoleDeb, CONSOLE_DEB).isEqualTo(-1L);
        assertThat(console).exists();
        assertThat(Files.mismatch(console, CONSOLE)).as("%s is %s", console, CONSOLE).isEqualTo(-1L);
        assertThat(installed.resolve("gantry-installers-" + VERSION + ".pom")).exists();
    }

    private static String tail(String output) {
        List<String> lines = output.lines().toList();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }
}
