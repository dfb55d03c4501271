package io.gantry.cli;

import io.gantry.Gantry;
import io.gantry.authority.Retention;
import io.gantry.cdc.CdcSettings;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.sandbox.Credentials;
import io.gantry.sandbox.DatabaseServer;
import io.gantry.sandbox.LocalTopology;
import io.gantry.sandbox.MariaDbInstallation;
import io.gantry.sandbox.MariaDbTopology;
import io.gantry.sandbox.MySqlInstallation;
import io.gantry.sandbox.MySqlTopology;
import io.gantry.sandbox.SandboxAccounts;
import io.gantry.sandbox.SandboxCertificates;
import io.gantry.topology.TlsTrust;
import io.gantry.topology.UpstreamUrl;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * {@code gantry demo}: a sandbox of real MariaDB or MySQL servers (a primary and replicas with GTID replication) that
 * stays up until Ctrl-C, then stops everything it started.
 */
@Command(name = "demo", mixinStandardHelpOptions = true, versionProvider = GantryVersion.class,
        description = "Start a sandbox: a MariaDB (or MySQL) primary and replicas with GTID replication on loopback "
                + "ports, and Gantry in front of them. Runs until Ctrl-C, then stops everything it started. Starts "
                + "from empty data each time.")
final class DemoCommand implements Callable<Integer> {

    @Option(names = "--flavour", paramLabel = "FLAVOUR", defaultValue = "mariadb",
            description = "mariadb (MariaDB 11.4.5, or the install in GANTRY_MARIADB_HOME) or mysql (MySQL 8.0.15, "
                    + "or the install in GANTRY_MYSQL_HOME) (default: ${DEFAULT-VALUE}).")
    String flavour;

    @Option(names = "--dir", paramLabel = "DIR", defaultValue = "gantry-demo",
            description = "Where the servers keep their data and logs; emptied at start (default: ${DEFAULT-VALUE}).")
    Path directory;

    @Option(names = "--replicas", paramLabel = "N", defaultValue = "2",
            description = "Number of replicas, 0 to 9 (default: ${DEFAULT-VALUE}).")
    int replicas;

    @Option(names = "--base-port", paramLabel = "PORT", defaultValue = "33061",
            description = "The primary's port; replicas use the next ones (default: ${DEFAULT-VALUE}).")
    int basePort;

    @Option(names = "--server-tls",
            description = "The sandbox's servers offer TLS (a certificate of the sandbox's own CA, made once under "
                    + "the cache directory); Gantry's default ssl-mode=PREFERRED then encrypts its connections to "
                    + "them, as against most production servers. Without it the servers run without TLS.")
    boolean serverTls;

    @Option(names = "--no-console",
            description = "Do not open the desktop console (it opens by itself when there is a display and the "
                    + "console's jar is found).")
    boolean noConsole;

    @CommandLine.Mixin
    ProxyOptions proxy = new ProxyOptions();

    @CommandLine.Mixin
    CdcOptions cdc = new CdcOptions();

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private final CountDownLatch stopped = new CountDownLatch(1);

    @Override
    public Integer call() throws InterruptedException {
        if (replicas < 0 || replicas > 9) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--replicas must be between 0 and 9, not " + replicas);
        }
        if (basePort < 1024 || basePort + replicas > 65535) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--base-port must leave room for " + (replicas + 1) + " ports between 1024 and 65535, not " + basePort);
        }
        boolean mySql = switch (flavour.toLowerCase(Locale.ROOT)) {
            case "mariadb" -> false;
            case "mysql" -> true;
            default -> throw new CommandLine.ParameterException(spec.commandLine(),
                    "--flavour must be mariadb or mysql, not '" + flavour + "'");
        };
        if (mySql) {
            // Said in one line before anything starts, rather than as the loader's error from a server's log.
            Optional<String> unavailable = MySqlInstallation.unavailableBecause();
            if (unavailable.isPresent()) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--flavour mysql: " + unavailable.get());
            }
        }
        ProxyConfig config = proxy.toConfig(spec.commandLine());
        if (mySql && config.tls().isEmpty()) {
            // MySQL's accounts use caching_sha2_password, whose first login needs the password itself: over TLS, or
            // RSA-encrypted with a key the client would have to fetch unverified. MySQL 8 servers offer TLS out of
            // the box, so MySQL clients try it; Gantry does the same here, with the sandbox's certificate.
            SandboxCertificates certificates = SandboxCertificates.obtain();
            config = config.withTls(new ProxyConfig.TlsFiles(certificates.serverCertificate(),
                    certificates.serverKey()));
        }
        // Checked before any server starts, so a bad flag costs nothing.
        Optional<CdcSettings> cdcSettings = cdc.toSettings(spec.commandLine(), config, SandboxAccounts.DATABASE);
        PrintWriter out = spec.commandLine().getOut();
        out.println("Starting the sandbox under " + directory.toAbsolutePath() + " ...");
        out.flush();
        List<String> serverOptions = serverTls ? SandboxCertificates.obtain().serverOptions() : List.of();
        LocalTopology topology = mySql
                ? MySqlTopology.start(MySqlInstallation.locate(), directory.toAbsolutePath(), replicas, basePort,
                        serverOptions)
                : MariaDbTopology.start(MariaDbInstallation.locate(), directory.toAbsolutePath(), replicas, basePort,
                        serverOptions);
        Gantry gantry;
        try {
            gantry = Gantry.start(new Gantry.Options(config, upstreamUrls(topology), List.of(),
                    directory.toAbsolutePath().resolve("gantry-data"), proxy.healthInterval(), Retention.DEFAULT,
                    Set.of(), cdcSettings));
        } catch (RuntimeException e) {
            topology.close();
            throw e;
        }
        printServers(out, topology, gantry, cdcSettings.flatMap(CdcSettings::sink), config.tls());
        Optional<Process> console = openConsole(out, gantry);
        Runnable stopInOrder = () -> {
            out.println("Stopping Gantry and the sandbox ...");
            out.flush();
            console.ifPresent(Process::destroy);
            gantry.close();
            topology.close();
            out.println("Sandbox stopped.");
            out.flush();
            stopped.countDown();
        };
        // In the sandbox's own shutdown hook, ahead of its servers: Gantry stops while they still answer.
        topology.stopFirstOnExit(stopInOrder);
        out.println("Press Ctrl-C to stop Gantry and every server.");
        out.flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            // Interrupted without a JVM shutdown (embedded use): stop here instead of in the hook.
            if (topology.cancelStopFirstOnExit(stopInOrder)) {
                stopInOrder.run();
            }
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    private static List<UpstreamUrl> upstreamUrls(LocalTopology topology) {
        Credentials account = topology.appAccount();
        return topology.servers().stream()
                .map(s -> new UpstreamUrl(s.host(), s.port(), topology.database(), account.user(),
                        account.password(), UpstreamUrl.DEFAULT_WEIGHT))
                .toList();
    }

    private void printServers(PrintWriter out, LocalTopology topology, Gantry gantry,
                                     Optional<Path> sink, Optional<ProxyConfig.TlsFiles> tls) {
        out.println();
        out.println("Gantry demo sandbox: " + topology.flavour() + ", GTID replication, data under "
                + topology.directory());
        if (serverTls) {
            out.println("The servers offer TLS; Gantry's connections to them are encrypted ("
                    + TlsTrust.implementation() + ").");
        }
        out.println("Database '" + topology.database() + "', account '" + topology.appAccount().user() + "' / '"
                + topology.appAccount().password() + "' (cannot write to a read-only replica).");
        out.println();
        out.printf("  %-8s %-9s %-16s %s%n", "ROLE", "NAME", "ADDRESS", "CONNECT WITH");
        for (DatabaseServer server : topology.servers()) {
            String role = server == topology.primary() ? "primary" : "replica";
            out.printf("  %-8s %-9s %-16s %s%n", role, server.name(), server.address(), topology.clientCommand(server));
        }
        out.println();
        InetSocketAddress address = gantry.address();
        out.println("Gantry listens on " + address.getHostString() + ":" + address.getPort()
                + ": writes go to the primary, reads to the replicas. Connect through it with:");
        out.println("  " + topology.clientCommand(address.getHostString(), address.getPort()));
        tls.ifPresent(files -> out.println("Gantry offers TLS to clients with " + files.certificate() + "."));
        out.println();
        out.println("Change stream: " + gantry.cdc().map(stream -> "reads the binlog of the highest-weight server "
                + "(SHOW GANTRY STATUS through Gantry shows it); " + sink.map(path -> "row changes go to " + path)
                .orElse("no sink (--cdc-sink jsonl:PATH writes every row change)")).orElse("off (--no-cdc)"));
        out.println("Admin socket: " + gantry.adminSocket() + "; watch the servers live with:");
        out.println("  ./gantry admin --admin-socket " + gantry.adminSocket() + " --watch");
        out.println();
        out.flush();
    }

    /** Opens the console as a process of its own when it can, and says either way. */
    private Optional<Process> openConsole(PrintWriter out, Gantry gantry) {
        ConsoleProcess.Decision decision = ConsoleProcess.decide(noConsole, System.getenv(), ConsoleProcess.ownJar());
        if (decision instanceof ConsoleProcess.Decision.Skip skip) {
            out.println("Console: not opened: " + skip.reason() + ". Open it on a desktop with:");
            out.println("  ./gantry console --socket " + gantry.adminSocket());
            out.println();
            out.flush();
            return Optional.empty();
        }
        Path jar = ((ConsoleProcess.Decision.Open) decision).jar();
        Path log = directory.toAbsolutePath().resolve("console.log");
        try {
            Process process = ConsoleProcess.start(jar, gantry.adminSocket(), log);
            out.println("Console: opened (" + jar + ", pid " + process.pid() + ", output in " + log
                    + "); --no-console skips it.");
            out.println();
            out.flush();
            return Optional.of(process);
        } catch (java.io.IOException e) {
            out.println("Console: not opened: cannot start " + jar + ": " + e.getMessage());
            out.println();
            out.flush();
            return Optional.empty();
        }
    }
}
