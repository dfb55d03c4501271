package io.gantry.sandbox;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Every system package (Debian's name) that the tests, the sandbox or {@code gantry demo} look for, and what each is
 * for. {@code .ci/run} installs each of them by this name, so that CI on a new machine has what a machine set up by
 * hand had ({@code SystemPackagesInCiTest} holds the two lists together), and a skip or a refusal names the package
 * to install.
 */
public enum SystemPackage {

    /** The bundled MySQL 8.0.15's asynchronous I/O library. */
    LIBAIO("libaio1", Optional.of("libaio1t64"), List.of("libaio.so.1"), Optional.empty(),
            "the bundled MySQL 8.0.15"),
    /** The bundled MySQL 8.0.15's NUMA library. */
    LIBNUMA("libnuma1", Optional.empty(), List.of("libnuma.so.1"), Optional.empty(), "the bundled MySQL 8.0.15"),
    /** The distribution's MariaDB (Debian 12: 10.11), which tests and benchmarks run beside the bundled 11.4. */
    MARIADB_SERVER("mariadb-server", Optional.empty(), List.of(), Optional.of(Path.of("/usr/sbin/mariadbd")),
            "the distribution's MariaDB server"),
    /** The distribution's {@code mariadb} client, which its sandbox servers are set up with. */
    MARIADB_CLIENT("mariadb-client", Optional.empty(), List.of(), Optional.of(Path.of("/usr/bin/mariadb")),
            "the distribution's MariaDB client"),
    /** The sandbox's TLS certificates are made with {@code openssl}. */
    OPENSSL("openssl", Optional.empty(), List.of(), Optional.of(Path.of("/usr/bin/openssl")),
            "the sandbox's TLS certificates"),
    /** {@code kill}, which sends a sandbox server SIGSTOP and SIGCONT (a frozen server). */
    PROCPS("procps", Optional.empty(), List.of(), Optional.of(Path.of("/bin/kill")), "freezing a sandbox server"),
    /** GTK 3, which JavaFX opens a window with: the console's launcher test of a missing library behind it. */
    GTK3("libgtk-3-0", Optional.of("libgtk-3-0t64"), List.of("libgtk-3.so.0"), Optional.empty(),
            "the console's window (JavaFX's GTK glass)"),
    /** An X server for the console's launcher test. */
    XVFB("xvfb", Optional.empty(), List.of(), Optional.of(Path.of("/usr/bin/Xvfb")), "the console in a real X display"),
    /** {@code systemd-analyze verify} checks the package's unit file. */
    SYSTEMD("systemd", Optional.empty(), List.of(), Optional.of(Path.of("/usr/bin/systemd-analyze")),
            "checking the .deb's systemd unit"),
    /** {@code dpkg-deb} builds and reads the {@code .deb}; the installers module is built only where it exists. */
    DPKG("dpkg", Optional.empty(), List.of(), Optional.of(Path.of("/usr/bin/dpkg-deb")), "building the .deb");

    private final String name;
    private final Optional<String> newerName;
    private final List<String> libraries;
    private final Optional<Path> program;
    private final String neededFor;

    SystemPackage(String name, Optional<String> newerName, List<String> libraries, Optional<Path> program,
                  String neededFor) {
        this.name = name;
        this.newerName = newerName;
        this.libraries = libraries;
        this.program = program;
        this.neededFor = neededFor;
    }

    /** The package's name on Debian 12. */
    public String packageName() {
        return name;
    }

    /** Its name on Debian 13 and Ubuntu 24.04 where that differs (the 64-bit-time rename), else empty. */
    public Optional<String> newerName() {
        return newerName;
    }

    /** What Gantry's tests or sandbox need it for. */
    public String neededFor() {
        return neededFor;
    }

    /** Whether the program this package brings is installed (true for library packages, checked by loading). */
    public boolean installed() {
        return program.map(Files::isExecutable).orElse(true);
    }

    /** How to install it, as a line may say it: {@code apt-get install libaio1 (Debian 13, Ubuntu 24.04: ...)}. */
    public String installHint() {
        return "apt-get install " + name + newerName.map(n -> "; on Debian 13 and Ubuntu 24.04: " + n).orElse("");
    }

    /** The line a skipped test or a refused command prints when this package's program is missing. */
    public String missingLine() {
        return program.map(p -> p + " is not installed").orElse(name + " is not installed")
                + ", needed for " + neededFor + " (" + installHint() + ")";
    }

    /** The package that brings the shared library {@code soname}, if it is one Gantry knows of. */
    public static Optional<SystemPackage> forLibrary(String soname) {
        return Arrays.stream(values()).filter(p -> p.libraries.contains(soname)).findFirst();
    }
}
