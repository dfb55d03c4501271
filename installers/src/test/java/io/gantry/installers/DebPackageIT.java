package io.gantry.installers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gantry.sandbox.Credentials;
import io.gantry.sandbox.SandboxAccounts;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
    private static final Pattern PROXY_LISTENING = Pattern.compile(
            "proxy: listening on 127\\.0\\.0\\.1:(\\d+) \\((.*), \\d+ I/O threads?\\)");
    private static final Pattern METRICS_LISTENING = Pattern.compile("metrics: serving Prometheus metrics on "
            + "http://127\\.0\\.0\\.1:(\\d+)/metrics");

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
                .contains(" postinst").contains(" prerm").contains(" postrm").contains(" conffiles")
                // The engine needs no desktop: GTK and the rest are the console's package's (ConsoleDebIT).
                .doesNotContain("libgtk").doesNotContain("libx11");
        assertThat(Files.readString(unpacked.resolve("DEBIAN/conffiles")).strip()).isEqualTo("/etc/gantry/gantry.conf");
    }

    @Test
    void filesAreWhereAnOperatorLooksForThemOwnedByRoot() throws Exception {
        String listing = run("dpkg-deb", "-c", DEB.toString()).output();
        assertThat(listing).contains("./usr/bin/gantry -> ../lib/gantry/bin/gantry")
                .contains("./usr/lib/gantry/bin/gantry").contains("./usr/lib/gantry/lib/app/gantry.jar")
                .contains("./usr/lib/gantry/lib/runtime/bin/java").contains("./lib/systemd/system/gantry.service")
                .contains("./etc/gantry/gantry.conf").contains("./usr/share/doc/gantry/README.md")
                .contains("./usr/share/doc/gantry/docs/README.md").contains("./usr/share/doc/gantry/docs/errors.md");
        for (String line : listing.split("\n")) {
            assertThat(line).as("owner of %s", line).contains(" root/root ");
        }
        // The configuration installed is the sample, every key commented out with its default, but for epoll, whose
        // sessions systemctl reload moves (DebUnitReloadIT), with the lines saying why.
        List<String> sample = Files.readAllLines(Path.of("..", "assets", "gantry.conf"));
        List<String> installed = Files.readAllLines(unpacked.resolve("etc/gantry/gantry.conf"));
        List<String> added = installed.stream().filter(line -> !sample.contains(line)).toList();
        assertThat(added).last().isEqualTo("socket-transport = epoll");
        assertThat(added.subList(0, added.size() - 1)).isNotEmpty().allMatch(line -> line.startsWith("# "));
        assertThat(installed.stream().filter(line -> !added.contains(line)).toList())
                .isEqualTo(sample.stream().filter(line -> !line.equals("#socket-transport = auto")).toList());
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

    /**
     * The bundled runtime holds every module the jar needs at run time, not only at start: the packaged launcher
     * proxies a real server on a native transport (io_uring, or epoll where the kernel forbids io_uring), and serves
     * {@code /metrics} (the JDK's HTTP server, a module a hand-kept list once left out).
     */
    @Test
    void packagedLauncherProxiesARealServerAndServesMetrics() throws Exception {
        Topology topology = Sandboxes.shared(TopologyKind.MARIADB);
        Credentials app = SandboxAccounts.APP;
        Path log = unpacked.resolve("run.log");
        Process gantry = new ProcessBuilder(unpacked.resolve("usr/bin/gantry").toString(), "run",
                "--upstream-db-url", "mysql://" + app.user() + ":" + app.password() + "@"
                        + topology.primary().address() + "/app",
                "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--no-cdc",
                "--data-dir", unpacked.resolve("run-data").toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            Matcher proxy = awaitLine(log, gantry, PROXY_LISTENING);
            Matcher metrics = awaitLine(log, gantry, METRICS_LISTENING);
            assertThat(proxy.group(2)).as("the transport on the start-up line")
                    .matches("io_uring|native epoll; io_uring unavailable: .*");
            try (Connection client = DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + proxy.group(1)
                    + "/app?sslMode=DISABLED&allowPublicKeyRetrieval=true", app.user(), app.password());
                 ResultSet rows = client.createStatement().executeQuery("SELECT 6 * 7")) {
                assertThat(rows.next()).isTrue();
                assertThat(rows.getInt(1)).isEqualTo(42);
            }
            HttpResponse<String> scrape = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + metrics.group(1) + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(scrape.statusCode()).isEqualTo(200);
            assertThat(scrape.body()).contains("gantry_upstream_up{server=\"" + topology.primary().address()
                    + "\"} 1.0").contains("gantry_statements_routed_total");
        } finally {
            gantry.destroy();
            assertThat(gantry.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(gantry.exitValue()).as(Files.readString(log)).isZero();
    }

    private static Matcher awaitLine(Path log, Process process, Pattern line) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            Matcher found = line.matcher(Files.readString(log));
            if (found.find()) {
                return found;
            }
            assertThat(process.isAlive()).as("gantry exited: %s", Files.readString(log)).isTrue();
            Thread.sleep(100);
        }
        throw new AssertionError("no line " + line + " within 60 s: " + Files.readString(log));
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
        // verify checks that the commands exist: the unit is verified with them pointing at the unpacked launcher.
        Path unit = unpacked.resolve("verify/gantry.service");
        Files.createDirectories(unit.getParent());
        Files.writeString(unit, Files.readString(unpacked.resolve("lib/systemd/system/gantry.service"))
                .replace("=/usr/bin/gantry ", "=" + unpacked.resolve("usr/bin/gantry") + " "));
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
                .contains("systemctl try-reload-or-restart gantry.service")
                .contains("|| systemctl try-restart gantry.service");
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
