package io.gantry.proxy.backend;

import static io.gantry.proxy.backend.ScriptedBackend.read;
import static io.gantry.proxy.backend.ScriptedBackend.write;
import static io.gantry.wire.CapabilityFlags.CLIENT_MYSQL;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH;
import static io.gantry.wire.CapabilityFlags.CLIENT_PROTOCOL_41;
import static io.gantry.wire.CapabilityFlags.CLIENT_SECURE_CONNECTION;
import static io.gantry.wire.CapabilityFlags.CLIENT_TRANSACTIONS;
import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.proxy.transport.SocketTransport;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.UpstreamUrl;
import io.gantry.wire.CommandType;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.HandshakeV10;
import io.gantry.wire.OkPacket;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Commands Gantry runs for itself go to the server in one round trip (pipelined): the scripted server reads every
 * command before it answers any, so a client that waited for each answer before sending the next would hang.
 */
class InternalCommandPipelineTest {

    private static final byte[] SEED = "0123456789abcdefghij".getBytes(StandardCharsets.US_ASCII);
    private static final int CLIENT = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH
            | CLIENT_TRANSACTIONS;
    private static final HandshakeV10 GREETING = new HandshakeV10("8.0.36", 5, SEED, CLIENT | CLIENT_MYSQL, 45, 2, 0,
            "mysql_native_password");
    private static final SocketTransport TRANSPORT = SocketTransport.best();

    private final EventLoopGroup group = TRANSPORT.newGroup(1, new DefaultThreadFactory("test-io"));
    private final List<String> outcomes = new CopyOnWriteArrayList<>();

    @AfterEach
    void stopLoop() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** What the scripted server does after the login. */
    private interface Script {
        void play(DataInputStream in, OutputStream out) throws IOException;
    }

    @Test
    void commandsGoTogetherAndEachAnswerReachesItsOwnStepInOrder() throws Exception {
        List<String> received = new CopyOnWriteArrayList<>();
        CompletableFuture<Boolean> usableAfter = new CompletableFuture<>();
        withServer((in, out) -> {
            for (int i = 0; i < 3; i++) {
                received.add(text(read(in)));
            }
            write(out, 1, buf -> OkPacket.of(0, 0, 2, 0).encode(buf, CLIENT));
            write(out, 1, buf -> ErrPacket.of(1193, "HY000", "Unknown system variable 'nope'").encode(buf, CLIENT));
            write(out, 1, buf -> OkPacket.of(0, 0, 2, 0).encode(buf, CLIENT));
        }, (connection, loop, finished) -> InternalCommand.runAll(connection, List.of(step("SET a = 1"),
                step("SET nope = 2"), step("SET c = 3")), () -> {
                    usableAfter.complete(connection.isUsable());
                    finished.complete(null);
                }, failure -> finished.completeExceptionally(failure)));
        assertThat(received).containsExactly("SET a = 1", "SET nope = 2", "SET c = 3");
        assertThat(outcomes).containsExactly("SET a = 1: ok", "SET nope = 2: 1193", "SET c = 3: ok");
        assertThat(usableAfter.get(5, TimeUnit.SECONDS)).as("ready for the next command").isTrue();
    }

    @Test
    void aReplayHearsTheFirstRefusalOnceEveryAnswerIsIn() throws Exception {
        CompletableFuture<String> refused = new CompletableFuture<>();
        withServer((in, out) -> {
            read(in);
            read(in);
            write(out, 1, buf -> ErrPacket.of(1231, "42000", "first").encode(buf, CLIENT));
            write(out, 1, buf -> ErrPacket.of(1232, "42000", "second").encode(buf, CLIENT));
        }, (connection, loop, finished) -> InternalCommand.runInOrder(connection,
                List.of(query("SET x = 1"), query("SET y = 2")), command -> { },
                () -> finished.completeExceptionally(new AssertionError("went on after a refusal")),
                error -> {
                    refused.complete(error.message() + ", usable: " + connection.isUsable());
                    finished.complete(null);
                }, finished::completeExceptionally));
        assertThat(refused.get(5, TimeUnit.SECONDS)).isEqualTo("first, usable: true");
    }

    @Test
    void aConnectionLostHalfWayIsReportedOnceAndNothingGoesOn() throws Exception {
        AtomicInteger failures = new AtomicInteger();
        CompletableFuture<Void> wentOn = new CompletableFuture<>();
        withServer((in, out) -> {
            for (int i = 0; i < 3; i++) {
                read(in);
            }
            write(out, 1, buf -> OkPacket.of(0, 0, 2, 0).encode(buf, CLIENT));
            // and the server goes away with two answers owed
        }, (connection, loop, finished) -> InternalCommand.runAll(connection, List.of(step("SET a = 1"),
                step("SET b = 2"), step("SET c = 3")), () -> wentOn.complete(null), failure -> {
                    failures.incrementAndGet();
                    // Let any second report arrive before the test looks.
                    loop.schedule(() -> finished.complete(null), 200, TimeUnit.MILLISECONDS);
                }));
        assertThat(outcomes).containsExactly("SET a = 1: ok");
        assertThat(failures).hasValue(1);
        assertThat(wentOn).isNotDone();
    }

    // ---- helpers -------------------------------------------------------------------------------------------------

    private interface Client {
        void run(BackendConnection connection, EventLoop loop, CompletableFuture<Void> finished);
    }

    private InternalCommand.Step step(String sql) {
        return new InternalCommand.Step(Unpooled.wrappedBuffer(query(sql)),
                (first, error) -> outcomes.add(sql + ": " + (error == null ? "ok" : error.errorCode())));
    }

    private static byte[] query(String sql) {
        byte[] text = sql.getBytes(StandardCharsets.UTF_8);
        byte[] payload = new byte[text.length + 1];
        payload[0] = (byte) CommandType.COM_QUERY.code();
        System.arraycopy(text, 0, payload, 1, text.length);
        return payload;
    }

    private static String text(byte[] command) {
        assertThat(command[0]).isEqualTo((byte) CommandType.COM_QUERY.code());
        return new String(command, 1, command.length - 1, StandardCharsets.UTF_8);
    }

    /** Logs in to a scripted server that then plays {@code script}, and runs {@code client} on the connection. */
    private void withServer(Script script, Client client) throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> played = CompletableFuture.runAsync(() -> {
                try (Socket socket = listener.accept()) {
                    socket.setSoTimeout(5_000);
                    DataInputStream in = new DataInputStream(socket.getInputStream());
                    OutputStream out = socket.getOutputStream();
                    write(out, 0, GREETING::encode);
                    read(in);
                    write(out, 2, buf -> OkPacket.of(0, 0, 2, 0).encode(buf, CLIENT));
                    script.play(in, out);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            UpstreamServer server = new UpstreamServer(new UpstreamUrl("127.0.0.1", listener.getLocalPort(), "app",
                    "app", "app", 50));
            BackendLogin login = new BackendLogin("app", BackendSecret.password("pw".getBytes(StandardCharsets.UTF_8)),
                    "", 45, CLIENT, 0);
            EventLoop loop = group.next();
            BackendConnection connection = loop.submit(() -> BackendConnection.open(server, login, loop,
                    Duration.ofSeconds(5), 1 << 24, BackendConnection.GreetingObserver.NONE,
                    BackendChannels.tcp(TRANSPORT))).get(5, TimeUnit.SECONDS).get(5, TimeUnit.SECONDS);
            CompletableFuture<Void> finished = new CompletableFuture<>();
            loop.execute(() -> client.run(connection, loop, finished));
            played.get(10, TimeUnit.SECONDS);
            finished.get(10, TimeUnit.SECONDS);
            loop.execute(connection::close);
        }
    }
}
