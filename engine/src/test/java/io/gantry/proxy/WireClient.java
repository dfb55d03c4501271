package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gantry.wire.CapabilityFlags;
import io.gantry.wire.CommandType;
import io.gantry.wire.Fuzzing;
import io.gantry.wire.HandshakeResponse41;
import io.gantry.wire.HandshakeV10;
import io.gantry.wire.NativePassword;
import io.gantry.wire.ResponseFraming;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * A client that speaks the protocol itself, with exactly the capabilities a test gives it, and hands back every
 * response packet as bytes: for comparing what Gantry sends with what a server sends a direct client.
 */
final class WireClient implements AutoCloseable {

    /** What every test client negotiates; tests add {@code CLIENT_SESSION_TRACK}, {@code CLIENT_DEPRECATE_EOF}. */
    static final int BASE_CAPABILITIES = CapabilityFlags.CLIENT_PROTOCOL_41 | CapabilityFlags.CLIENT_SECURE_CONNECTION
            | CapabilityFlags.CLIENT_PLUGIN_AUTH | CapabilityFlags.CLIENT_LONG_PASSWORD
            | CapabilityFlags.CLIENT_TRANSACTIONS | CapabilityFlags.CLIENT_CONNECT_WITH_DB
            | CapabilityFlags.CLIENT_MULTI_RESULTS;

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private int capabilities;

    private WireClient(Socket socket, int capabilities) throws IOException {
        this.socket = socket;
        this.capabilities = capabilities;
        socket.setSoTimeout(10_000);
        this.in = new DataInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /** Logs in with {@code mysql_native_password}; fails the test unless the answer is OK. */
    static WireClient login(int port, String user, String password, String database, int capabilities)
            throws IOException {
        WireClient client = new WireClient(new Socket("127.0.0.1", port), capabilities);
        HandshakeV10 greeting = HandshakeV10.decode(Unpooled.wrappedBuffer(client.readPacket()));
        int negotiated = capabilities & greeting.capabilities();
        client.capabilities = negotiated;
        byte[] seed = Arrays.copyOf(greeting.authPluginData(), NativePassword.SEED_LENGTH);
        HandshakeResponse41 response = new HandshakeResponse41(negotiated, 1 << 24, 45, 0, user,
                NativePassword.scramble(password.getBytes(StandardCharsets.UTF_8), seed), database,
                NativePassword.PLUGIN_NAME, Map.of(), 0);
        client.send(1, Fuzzing.encode(response::encode));
        byte[] answer = client.readPacket();
        if (answer[0] == (byte) 0xFE) {
            // An auth switch (a greeting that offered caching_sha2_password): to mysql_native_password, a new seed.
            int nameEnd = indexOf(answer, (byte) 0, 1);
            String plugin = new String(answer, 1, nameEnd - 1, StandardCharsets.US_ASCII);
            assertThat(plugin).as("the plugin an auth switch from port %d asks for", port)
                    .isEqualTo(NativePassword.PLUGIN_NAME);
            byte[] switchSeed = Arrays.copyOfRange(answer, nameEnd + 1, nameEnd + 1 + NativePassword.SEED_LENGTH);
            client.send(3, NativePassword.scramble(password.getBytes(StandardCharsets.UTF_8), switchSeed));
            answer = client.readPacket();
        }
        assertThat(answer[0]).as("login answer from port %d", port).isEqualTo((byte) 0);
        return client;
    }

    /** Sends a COM_QUERY and returns every packet of its response, the last one ending it. */
    List<byte[]> query(String sql) throws IOException {
        return command(CommandType.COM_QUERY, sql.getBytes(StandardCharsets.UTF_8));
    }

    /** Prepares {@code sql} (COM_STMT_PREPARE) and returns the server's statement id. */
    long prepare(String sql) throws IOException {
        byte[] ok = command(CommandType.COM_STMT_PREPARE, sql.getBytes(StandardCharsets.UTF_8)).get(0);
        assertThat(ok[0]).as("COM_STMT_PREPARE_OK for %s", sql).isEqualTo((byte) 0);
        return (ok[1] & 0xFFL) | (ok[2] & 0xFFL) << 8 | (ok[3] & 0xFFL) << 16 | (ok[4] & 0xFFL) << 24;
    }

    /** Executes a prepared statement of one parameter, bound as a BIGINT, and returns every packet of the answer. */
    List<byte[]> execute(long statementId, long parameter) throws IOException {
        return execute(statementId, parameter, true);
    }

    /**
     * Like {@link #execute(long, long)}; without {@code bindTypes} the execution sends no types, as clients do after
     * the first one.
     */
    List<byte[]> execute(long statementId, long parameter, boolean bindTypes) throws IOException {
        ByteBuf body = Unpooled.buffer().writeIntLE((int) statementId).writeByte(0).writeIntLE(1)
                .writeByte(0); // NULL bitmap: no NULL
        if (bindTypes) {
            body.writeByte(1).writeShortLE(0x08); // types bound: LONGLONG, signed
        } else {
            body.writeByte(0);
        }
        body.writeLongLE(parameter);
        return command(CommandType.COM_STMT_EXECUTE, ByteBufUtil.getBytes(body));
    }

    private List<byte[]> command(CommandType type, byte[] body) throws IOException {
        byte[] payload = new byte[body.length + 1];
        payload[0] = (byte) type.code();
        System.arraycopy(body, 0, payload, 1, body.length);
        send(0, payload);
        ResponseFraming framing = ResponseFraming.forCommand(type, capabilities);
        List<byte[]> packets = new ArrayList<>();
        ResponseFraming.Progress progress;
        do {
            byte[] packet = readPacket();
            packets.add(packet);
            ByteBuf buf = Unpooled.wrappedBuffer(packet);
            progress = framing.accept(buf);
        } while (progress != ResponseFraming.Progress.COMPLETE);
        return packets;
    }

    /**
     * Sends COM_QUIT, which has no answer, and waits for the other side to close the connection, as a server does at
     * once; returns how long that took. Fails the test if anything but the close arrives, or nothing in 10 s.
     */
    Duration quit() throws IOException {
        long sent = System.nanoTime();
        send(0, new byte[] {(byte) CommandType.COM_QUIT.code()});
        int read = in.read();
        assertThat(read).as("what follows a COM_QUIT: the close (-1), not a byte").isEqualTo(-1);
        return Duration.ofNanos(System.nanoTime() - sent);
    }

    /** The capabilities in effect: the test's, as far as the server offered them. */
    int capabilities() {
        return capabilities;
    }

    /** The last packet of the response to {@code sql}: its OK (or ERR). */
    byte[] lastPacket(String sql) throws IOException {
        List<byte[]> packets = query(sql);
        return packets.get(packets.size() - 1);
    }

    private static int indexOf(byte[] bytes, byte wanted, int from) {
        for (int i = from; i < bytes.length; i++) {
            if (bytes[i] == wanted) {
                return i;
            }
        }
        throw new AssertionError("no byte " + wanted + " after position " + from);
    }

    /** {@code payload} with its 4-byte packet header in front: what goes on the wire. */
    static byte[] framed(int sequenceId, byte[] payload) {
        byte[] frame = new byte[payload.length + 4];
        frame[0] = (byte) payload.length;
        frame[1] = (byte) (payload.length >> 8);
        frame[2] = (byte) (payload.length >> 16);
        frame[3] = (byte) sequenceId;
        System.arraycopy(payload, 0, frame, 4, payload.length);
        return frame;
    }

    private void send(int sequenceId, byte[] payload) throws IOException {
        out.write(framed(sequenceId, payload));
        out.flush();
    }

    private byte[] readPacket() throws IOException {
        int length = in.readUnsignedByte() | in.readUnsignedByte() << 8 | in.readUnsignedByte() << 16;
        in.readUnsignedByte();
        byte[] payload = new byte[length];
        in.readFully(payload);
        return payload;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
