package io.gantry.installers;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.sandbox.Credentials;
import io.gantry.sandbox.SandboxAccounts;
import io.gantry.sandbox.Sandboxes;
import io.gantry.sandbox.Topology;
import io.gantry.sandbox.TopologyKind;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.EpollDomainDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.unix.DomainDatagramPacket;
import io.netty.channel.unix.DomainSocketAddress;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code systemctl reload} of the {@code .deb}'s unit, run the way systemd runs it, with this test in systemd's part
 * (the build machines have no running systemd): the unit's own {@code ExecStart} and {@code ExecReload} lines, with the
 * packaged launcher and the packaged configuration pointed at a sandbox, and a notification socket
 * ({@code NOTIFY_SOCKET}) that records what Gantry tells the service manager.
 *
 * <p>What systemd needs to go through a reload without counting the service stopped: the start says {@code READY=1};
 * the reload command returns 0 once the new Gantry serves; the Gantry taken over names the new one as the main process
 * ({@code MAINPID=}) before it exits; the new one says {@code STOPPING=1} on its SIGTERM. And what the clients need: a
 * session open across the reload keeps its connection, its {@code CONNECTION_ID()} and its user variables.
 */
class DebUnitReloadIT {

    private static final Path DEB = Path.of(System.getProperty("gantry.deb", "target/gantry.deb"));
    private static final long WAIT_SECONDS = 120;

    @TempDir
    static Path unpacked;
    private static EventLoopGroup loop;

    @BeforeAll
    static void unpack() throws Exception {
        Process unpack = new ProcessBuilder("dpkg-deb", "-x", DEB.toString(), unpacked.toString()).inheritIO().start();
        assertThat(unpack.waitFor()).isZero();
        loop = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    }

    @AfterAll
    static void stopLoop() {
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    @Test
    void reloadMovesTheSessionsToANewMainProcess() throws Exception {
        String unit = Files.readString(unpacked.resolve("lib/systemd/system/gantry.service"));
        assertThat(unit.lines()).contains("Type=notify", "NotifyAccess=main");
        int port = freePort();
        Path config = writeConfig(port);
        List<String> start = command(unit, "ExecStart=", config);
        List<String> reload = command(unit, "ExecReload=", config);

        Path notifySocket = unpacked.resolve("notify.sock");
        BlockingQueue<String> told = new LinkedBlockingQueue<>();
        Channel manager = new Bootstrap().group(loop).channel(EpollDomainDatagramChannel.class)
                .handler(new SimpleChannelInboundHandler<DomainDatagramPacket>() {
                    @Override
                    protected void channelRead0(ChannelHandlerContext ctx, DomainDatagramPacket packet) {
                        told.add(packet.content().toString(StandardCharsets.UTF_8));
                    }
                }).bind(new DomainSocketAddress(notifySocket.toFile())).sync().channel();
        Path startLog = unpacked.resolve("start.log");
        Process main = launch(start, notifySocket, startLog);
        ProcessHandle successor = null;
        try {
            String ready = awaitMessage(told, "READY=1", startLog);
            assertThat(ready).contains("STATUS=serving on 127.0.0.1:" + port);
            assertThat(Files.readString(startLog)).contains("native epoll");

            Credentials app = SandboxAccounts.APP;
            try (Connection client = DriverManager.getConnection("jdbc:mysql://127.0.0.1:" + port
                    + "/app?sslMode=DISABLED&allowPublicKeyRetrieval=true", app.user(), app.password());
                 Statement statement = client.createStatement()) {
                statement.execute("SET @across_the_reload = 42");
                long id = connectionIdAndVariable(statement)[0];

                Path reloadLog = unpacked.resolve("reload.log");
                Process reloading = launch(reload, notifySocket, reloadLog);
                assertThat(reloading.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)).as("the reload command returns").isTrue();
                assertThat(reloading.exitValue()).as(Files.readString(reloadLog)).isZero();

                String handOver = awaitMessage(told, "MAINPID=", startLog);
                long newMain = Long.parseLong(handOver.lines().filter(line -> line.startsWith("MAINPID="))
                        .findFirst().orElseThrow().substring("MAINPID=".length()));
                assertThat(newMain).isNotEqualTo(main.pid());
                successor = ProcessHandle.of(newMain).orElseThrow(() -> new AssertionError("the new main process "
                        + newMain + " is not running: " + read(reloadLog)));
                assertThat(main.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)).as("the old Gantry stops").isTrue();
                assertThat(main.exitValue()).as(Files.readString(startLog)).isZero();
                assertThat(told).as("nothing else was told between the start and the hand-over").isEmpty();

                long[] after = connectionIdAndVariable(statement);
                assertThat(after[0]).as("CONNECTION_ID() across the reload").isEqualTo(id);
                assertThat(after[1]).as("@across_the_reload").isEqualTo(42);
                assertThat(Files.readString(reloadLog)).contains("serves; the take-over is done");
            }

            successor.destroy();
            String stopping = awaitMessage(told, "STOPPING=1", unpacked.resolve("reload.log"));
            assertThat(stopping).contains("STATUS=draining: SIGTERM received");
            assertThat(successor.onExit().get(WAIT_SECONDS, TimeUnit.SECONDS).isAlive()).isFalse();
        } finally {
            main.destroyForcibly();
            if (successor != null) {
                successor.destroyForcibly();
            }
            manager.close().sync();
        }
    }

    private static long[] connectionIdAndVariable(Statement statement) throws Exception {
        try (ResultSet row = statement.executeQuery("SELECT CONNECTION_ID(), @across_the_reload")) {
            assertThat(row.next()).isTrue();
            return new long[] {row.getLong(1), row.getLong(2)};
        }
    }

    /** The packaged configuration, with the settings a real host would have written for this sandbox. */
    private static Path writeConfig(int port) throws IOException {
        Topology topology = Sandboxes.shared(TopologyKind.MARIADB);
        Credentials app = SandboxAccounts.APP;
        Path config = unpacked.resolve("gantry.conf");
        Files.writeString(config, Files.readString(unpacked.resolve("etc/gantry/gantry.conf"))
                + "\nupstream-db-url = mysql://" + app.user() + ":" + app.password() + "@"
                + topology.primary().address() + "/app\nlisten = 127.0.0.1:" + port + "\nno-cdc = true\n"
                + "data-dir = " + unpacked.resolve("gantry-data") + "\ntake-over-timeout = 20\n");
        return config;
    }

    /** A command line of the unit, with the packaged launcher and configuration where the unpacked tree has them. */
    private static List<String> command(String unit, String key, Path config) {
        String line = unit.lines().filter(l -> l.startsWith(key)).findFirst()
                .orElseThrow(() -> new AssertionError("the unit has no " + key)).substring(key.length());
        assertThat(line).as(key).startsWith("/usr/bin/gantry run --config /etc/gantry/gantry.conf");
        return List.of(line.replace("/usr/bin/gantry", unpacked.resolve("usr/bin/gantry").toString())
                .replace("/etc/gantry/gantry.conf", config.toString()).split(" "));
    }

    private static Process launch(List<String> command, Path notifySocket, Path log) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command).directory(unpacked.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().put("NOTIFY_SOCKET", notifySocket.toString());
        return builder.start();
    }

    private static String awaitMessage(BlockingQueue<String> told, String assignment, Path log) throws Exception {
        String message = told.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(message).as("a message with %s; the log: %s", assignment, read(log)).isNotNull();
        assertThat(message.lines()).as("the message told").anyMatch(line -> line.startsWith(assignment));
        return message;
    }

    private static String read(Path log) {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
