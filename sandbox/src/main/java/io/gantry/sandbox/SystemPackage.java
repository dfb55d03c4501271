package io.gantry.sandbox;

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
    LIBAIO("libaio1", Optional.of("libaio1t64"), List.of("libaio.so.1"), "the bundled MySQL 8.0.15"),
    /** The bundled MySQL 8.0.15's NUMA library. */
    LIBNUMA("libnuma1", Optional.empty(), List.of("libnuma.so.1"), "the bundled MySQL 8.0.15"),
    /** The distribution's MariaDB (Debian 12: 10.11), which tests and benchmarks run beside the bundled 11.4. */
    MARIADB_SERVER("mariadb-server", Optional.empty(), List.of(), "the distribution's MariaDB (/usr/sbin/mariadbd)"),
    /** The distribution's {@code mariadb} client, which its sandbox servers are set up with. */
    MARIADB_CLIENT("mariadb-client", Optional.empty(), List.of(), "the distribution's client (/usr/bin/mariadb)"),
    /** The sandbox's TLS certificates are made with {@code openssl}. */
    OPENSSL("openssl", Optional.empty(), List.of(), "the sandbox's TLS certificates (/usr/bin/openssl)"),
    /** {@code kill}, which sends a sandbox server SIGSTOP and SIGCONT (a frozen server), and sysbench SIGSTOP. */
    PROCPS("procps", Optional.empty(), List.of(), "freezing a sandbox server or sysbench (/bin/kill)"),
    /** GTK 3, which JavaFX opens a window with: the console's launcher test of a missing library behind it. */
    GTK3("libgtk-3-0", Optional.of("libgtk-3-0t64"), List.of("libgtk-3.so.0"),
            "the console's window (JavaFX's GTK glass)"),
    /** An X server for the console's launcher test. */
    XVFB("xvfb", Optional.empty(), List.of(), "the console in a real X display (/usr/bin/Xvfb)"),
    /** {@code systemd-analyze verify} checks the package's unit file. */
    SYSTEMD("systemd", Optional.empty(), List.of(), "checking the .deb's systemd unit (/usr/bin/systemd-analyze)"),
    /** {@code dpkg-deb} builds and reads the {@code .deb}; the installers module is built only where it exists. */
    DPKG("dpkg", Optional.empty(), List.of(), "building the .deb (/usr/bin/dpkg-deb)"),
    /** sysbench's {@code oltp_read_write}, a client no one here wrote, whose statements the digests must count. */
    SYSBENCH("sysbench", Optional.empty(), List.of(), "sysbench through Gantry, SysbenchDigestsIT (/usr/bin/sysbench)");

    private final String name;
    private final Optional<String> newerName;
    private final List<String> libraries;
    private final String neededFor;

    SystemPackage(String name, Optional<String> newerName, List<String> libraries, String neededFor) {
        this.name = name;
        this.newerName = newerName;
        this.libraries = libraries;
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

    /** How to install it, as a line may say it: {@code apt-get install libaio1 (Debian 13, Ubuntu 24.04: ...)}. */
    public String installHint() {
        return "apt-get install " + name + newerName.map(n -> "; on Debian 13 and Ubuntu 24.04: " + n).orElse("");
    }

    /** The package that brings the shared library {@code soname}, if it is one Gantry knows of. */
    public static Optional<SystemPackage> forLibrary(String soname) {
        return Arrays.stream(values()).filter(p -> p.libraries.contains(soname)).findFirst();
    }
}
