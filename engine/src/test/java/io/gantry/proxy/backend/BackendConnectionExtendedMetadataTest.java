package io.gantry.proxy.backend;

import static io.gantry.wire.CapabilityFlags.CLIENT_MYSQL;
import static io.gantry.wire.CapabilityFlags.CLIENT_PLUGIN_AUTH;
import static io.gantry.wire.CapabilityFlags.CLIENT_PROTOCOL_41;
import static io.gantry.wire.CapabilityFlags.CLIENT_SECURE_CONNECTION;
import static io.gantry.wire.CapabilityFlags.CLIENT_TRANSACTIONS;
import static io.gantry.wire.CapabilityFlags.MARIADB_CLIENT_CACHE_METADATA;
import static io.gantry.wire.CapabilityFlags.MARIADB_CLIENT_EXTENDED_METADATA;
import static io.gantry.wire.CapabilityFlags.MARIADB_CLIENT_PROGRESS;
import static io.gantry.wire.CapabilityFlags.MARIADB_CLIENT_STMT_BULK_OPERATIONS;
import static io.gantry.proxy.backend.ScriptedBackend.bytes;
import static io.gantry.proxy.backend.ScriptedBackend.read;
import static io.gantry.proxy.backend.ScriptedBackend.write;
import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.proxy.backend.BackendChannels;
import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.BackendFailure;
import io.gantry.proxy.backend.BackendLogin;
import io.gantry.proxy.backend.BackendSecret;
import io.gantry.proxy.transport.SocketTransport;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.UpstreamUrl;
import io.gantry.wire.ColumnDefinition.FieldType;
import io.gantry.wire.ColumnDefinition;
import io.gantry.wire.CommandType;
import io.gantry.wire.EofPacket;
import io.gantry.wire.HandshakeResponse41;
import io.gantry.wire.HandshakeV10;
import io.gantry.wire.Packet;
import io.gantry.wire.ResponseFraming;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a backend login asks for in MariaDB extended capabilities, and how column definitions reach the client when
 * a backend cannot give what the client negotiated. The backend is a scripted server on a loopback socket.
 */
class BackendConnectionExtendedMetadataTest {

    private static final byte[] SEED = "0123456789abcdefghij".getBytes(StandardCharsets.US_ASCII);
    private static final int CLIENT = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH
            | CLIENT_TRANSACTIONS;
    private static final int SERVER = CLIENT | CLIENT_MYSQL;
    private static final ColumnDefinition JSON_COLUMN = new ColumnDefinition("def", "app", "t", "t", "doc", "doc",
            ColumnDefinition.UTF8MB4_GENERAL_CI, 0xFFFF_FFFFL, FieldType.BLOB.code(), ColumnDefinition.BLOB_FLAG, 0)
            .withExtendedMetadata("", "json");

    /** The proxy's own default transport: backend channels must match their event loop's. */
    private static final SocketTransport TRANSPORT = SocketTransport.best();
    private final EventLoopGroup group = TRANSPORT.newGroup(1, new DefaultThreadFactory("test-io"));

    @AfterEach
    void stopLoop() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    @Test
    void asksAMariaDbBackendForExtendedMetadataOnlyAndForwardsItsDefinitionsUnchanged() throws Exception {
        int offered = MARIADB_CLIENT_PROGRESS | MARIADB_CLIENT_STMT_BULK_OPERATIONS | MARIADB_CLIENT_EXTENDED_METADATA
                | MARIADB_CLIENT_CACHE_METADATA;
        HandshakeV10 greeting = new HandshakeV10("5.5.5-10.11.6-MariaDB", 5, SEED, SERVER & ~CLIENT_MYSQL, 45, 2,
                offered, "mysql_native_password");
        int asked = MARIADB_CLIENT_EXTENDED_METADATA | MARIADB_CLIENT_PROGRESS | MARIADB_CLIENT_CACHE_METADATA;
        Exchange exchange = run(greeting, asked, buf -> JSON_COLUMN.encode(buf, MARIADB_CLIENT_EXTENDED_METADATA));
        assertThat(exchange.login.mariaDbCapabilities()).isEqualTo(MARIADB_CLIENT_EXTENDED_METADATA);
        assertThat(exchange.login.capabilities() & CLIENT_MYSQL).isZero();
        assertThat(exchange.greetingSeen).isEqualTo(greeting);
        assertThat(exchange.definition(MARIADB_CLIENT_EXTENDED_METADATA)).isEqualTo(JSON_COLUMN);
    }

    @Test
    void givesDefinitionsOfABackendWithoutExtendedMetadataTheEmptyFieldTheClientExpects() throws Exception {
        HandshakeV10 mysql = new HandshakeV10("8.0.15", 5, SEED, SERVER, 255, 2, 0, "mysql_native_password");
        Exchange exchange = run(mysql, MARIADB_CLIENT_EXTENDED_METADATA, JSON_COLUMN::encode);
        assertThat(exchange.login.mariaDbCapabilities()).isZero();
        byte[] expected = bytes(buf -> JSON_COLUMN.encode(buf, MARIADB_CLIENT_EXTENDED_METADATA));
        byte[] empty = bytes(buf -> JSON_COLUMN.withExtendedMetadata("", "").encode(buf,
                MARIADB_CLIENT_EXTENDED_METADATA));
        assertThat(exchange.packets.get(1)).as("the definition, with an empty block").isEqualTo(empty)
                .hasSize(expected.length - 6);
        assertThat(exchange.definition(MARIADB_CLIENT_EXTENDED_METADATA))
                .isEqualTo(JSON_COLUMN.withExtendedMetadata("", ""));
        assertThat(exchange.packets.get(3)).as("rows untouched").containsExactly(2, '{', '}');
    }

    @Test
    void aClientWithoutExtendedMetadataGetsTheMySqlLayoutFromAMariaDbBackend() throws Exception {
        HandshakeV10 greeting = new HandshakeV10("5.5.5-10.11.6-MariaDB", 5, SEED, SERVER & ~CLIENT_MYSQL, 45, 2,
                MARIADB_CLIENT_EXTENDED_METADATA, "mysql_native_password");
        Exchange exchange = run(greeting, 0, JSON_COLUMN::encode);
        assertThat(exchange.login.mariaDbCapabilities()).isZero();
        assertThat(exchange.packets.get(1)).isEqualTo(bytes(JSON_COLUMN::encode));
    }

    // ---- a scripted backend ------------------------------------------------------------------------------------

    private record Exchange(HandshakeResponse41 login, HandshakeV10 greetingSeen, List<byte[]> packets) {
        ColumnDefinition definition(int mariaDbCapabilities) {
            ByteBuf buf = Unpooled.wrappedBuffer(packets.get(1));
            try {
                ColumnDefinition column = ColumnDefinition.decode(buf, mariaDbCapabilities);
                assertThat(buf.isReadable()).as("nothing left after the definition").isFalse();
                return column;
            } finally {
                buf.release();
            }
        }
    }

    /**
     * Logs in to a server that greets with {@code greeting}, runs one query, and answers it with one column written
     * by {@code definition}, one row and EOFs; returns the login the server got and the packets the listener got.
     */
    private Exchange run(HandshakeV10 greeting, int clientMariaDb, Consumer<ByteBuf> definition) throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<HandshakeResponse41> login = CompletableFuture.supplyAsync(() -> {
                try (Socket socket = listener.accept()) {
                    socket.setSoTimeout(5_000);
                    DataInputStream in = new DataInputStream(socket.getInputStream());
                    OutputStream out = socket.getOutputStream();
                    write(out, 0, greeting::encode);
                    HandshakeResponse41 response = HandshakeResponse41.decode(Unpooled.wrappedBuffer(read(in)));
                    write(out, 2, buf -> buf.writeBytes(new byte[] {0, 0, 0, 2, 0, 0, 0}));
                    assertThat(read(in)[0]).isEqualTo((byte) CommandType.COM_QUERY.code());
                    write(out, 1, buf -> buf.writeByte(1));
                    write(out, 2, definition);
                    write(out, 3, buf -> new EofPacket(0, 2).encode(buf));
                    write(out, 4, buf -> buf.writeBytes(new byte[] {2, '{', '}'}));
                    write(out, 5, buf -> new EofPacket(0, 2).encode(buf));
                    return response;
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            UpstreamServer server = new UpstreamServer(new UpstreamUrl("127.0.0.1", listener.getLocalPort(), "app",
                    "app", "app", 50));
            BackendLogin backendLogin = new BackendLogin("app", BackendSecret.password("pw".getBytes(
                    StandardCharsets.UTF_8)), "", 45, CLIENT, clientMariaDb);
            HandshakeV10[] seen = new HandshakeV10[1];
            EventLoop loop = group.next();
            BackendConnection connection = loop.submit(() -> BackendConnection.open(server, backendLogin, loop,
                    Duration.ofSeconds(5), 1 << 24, (from, g) -> seen[0] = g, BackendChannels.tcp(TRANSPORT)))
                    .get(5, TimeUnit.SECONDS).get(5, TimeUnit.SECONDS);
            List<byte[]> packets = new ArrayList<>();
            CompletableFuture<Void> done = new CompletableFuture<>();
            loop.execute(() -> connection.execute(new Packet(0, Unpooled.buffer().writeByte(
                    CommandType.COM_QUERY.code()).writeBytes("SELECT doc".getBytes(StandardCharsets.US_ASCII))),
                    new BackendConnection.ResponseListener() {
                        @Override
                        public void onPacket(Packet packet, ResponseFraming framing) {
                            packets.add(ByteBufUtil.getBytes(packet.payload()));
                            packet.release();
                        }

                        @Override
                        public void onBatchEnd() {
                        }

                        @Override
                        public void onComplete(ResponseFraming framing) {
                            done.complete(null);
                        }

                        @Override
                        public void onFailure(BackendFailure failure) {
                            done.completeExceptionally(failure);
                        }
                    }));
            done.get(5, TimeUnit.SECONDS);
            loop.execute(connection::close);
            assertThat(packets).hasSize(5);
            return new Exchange(login.get(5, TimeUnit.SECONDS), seen[0], packets);
        }
    }
}
