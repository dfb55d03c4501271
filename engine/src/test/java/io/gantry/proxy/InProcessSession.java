package io.gantry.proxy;

import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_ATTRS;
import static io.gantry.wire.CapabilityFlags.CLIENT_CONNECT_WITH_DB;
import static io.gantry.wire.CapabilityFlags.CLIENT_MYSQL;

import io.gantry.digest.StatementDigests;
import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.execution.ResponseForwarder;
import io.gantry.proxy.frontend.ClientSession;
import io.gantry.proxy.login.ServerGreetings;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.proxy.transport.ChannelBuffers;
import io.gantry.route.CausalScopes;
import io.gantry.topology.InProcessTopology;
import io.gantry.topology.UpstreamUrl;
import io.gantry.topology.Upstreams;
import io.gantry.wire.CachingSha2Password;
import io.gantry.wire.ColumnDefinition;
import io.gantry.wire.CommandType;
import io.gantry.wire.HandshakeResponse41;
import io.gantry.wire.HandshakeV10;
import io.gantry.wire.NativePassword;
import io.gantry.wire.OkPacket;
import io.gantry.wire.Packet;
import io.gantry.wire.PacketFrameEncoder;
import io.gantry.wire.ServerStatus;
import io.gantry.wire.StmtPrepareOk;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One Gantry client session with everything real but the sockets: the client's connection and each backend
 * connection are Netty {@link EmbeddedChannel}s, so a command goes through the same pipeline, {@link ClientSession},
 * routing, {@link BackendConnection} and {@link ResponseForwarder} as in the proxy, synchronously on the calling
 * thread. The servers are played by this class: a MySQL 8.0 greeting, an OK to every login, canned answers to the
 * commands the benchmark sends.
 *
 * <p>The topology is a primary and a replica, both up and sampled (see {@link InProcessTopology}), with the default
 * routing and read guarantees: reads go to the replica, as in the point-select benchmark.
 *
 * <p>More logins on the same proxy: {@link #login()} (a logged-in session) and {@link #connectClient()} (a client
 * connection, greeted, for the caller to log in). Their client channels share the first session's event loop, as a
 * proxy's clients share a few: Gantry's backend pools are per event loop ({@code BackendPools.of(loop)}), and each
 * {@link EmbeddedChannel} otherwise has an event loop of its own, so a second login would never find the first
 * one's pooled connection. The played servers, their connections and what they were sent are the proxy's, shared.
 */
public final class InProcessSession implements AutoCloseable {

    /** The point-select row's value: sysbench's {@code c} column is 120 characters. */
    static final String ROW_VALUE = "68487932199-96439406143-93774651418-41631865787-96406072701-20604855487-25459966574-"
            + "28203206787-41238978918-19503783441";
    private static final int SERVER_CAPABILITIES = ServerGreetings.OFFERED | CLIENT_MYSQL;
    private static final int CLIENT_CAPABILITIES = ServerGreetings.OFFERED & ~CLIENT_CONNECT_WITH_DB
            & ~CLIENT_CONNECT_ATTRS;
    private static final int MYSQL_TYPE_LONG = 0x03;
    /** The version the played servers greet with. */
    static final String SERVER_VERSION = "8.0.36-benchmark";

    private final Upstreams upstreams;
    private final ProxyServer proxy;
    private final EmbeddedChannel client;
    /** Every backend connection the session opened, by server address, in order. */
    private final Map<String, List<EmbeddedChannel>> backends;
    private final List<EmbeddedChannel> greeted;
    private final ByteBufAllocator alloc = ChannelBuffers.ALLOCATOR;
    /** What each server was sent, by address, when recording (tests; the benchmark records nothing). */
    private final Map<String, List<String>> received;
    /** The session that made the proxy, or null for that one: it alone closes the proxy. */
    private final InProcessSession owner;
    private long nextStatementId = 1;

    /** A session logged in as {@code app} (no password), ready for commands; what servers are sent is not kept. */
    public InProcessSession() {
        this(false);
    }

    /**
     * A session logged in as {@code app} (no password), ready for commands.
     *
     * @param recordCommands whether to keep what each server is sent ({@link #received}): for tests of the command
     *                       handlers, never for the benchmark, whose garbage per query it would change
     */
    public InProcessSession(boolean recordCommands) {
        this(recordCommands, ProxyConfig.defaults(new InetSocketAddress("127.0.0.1", 0)));
    }

    /** A session as {@link #InProcessSession(boolean)}, of a proxy configured as {@code config}. */
    public InProcessSession(boolean recordCommands, ProxyConfig config) {
        received = recordCommands ? new LinkedHashMap<>() : null;
        backends = new LinkedHashMap<>();
        greeted = new ArrayList<>();
        owner = null;
        upstreams = InProcessTopology.primaryAndReplica(url(3306), url(3307));
        proxy = new ProxyServer(config, upstreams, SERVER_VERSION);
        proxy.setBackendChannels((server, loop, connectTimeout, handler) -> {
            EmbeddedChannel channel = withProxyAllocator(handler);
            backends.computeIfAbsent(server.address(), address -> new ArrayList<>()).add(channel);
            return channel.newSucceededFuture();
        });
        client = withProxyAllocator(proxy.clientPipeline());
        logIn();
    }

    /**
     * A channel with the proxy's allocator set before it is registered, as the proxy's sockets have it
     * ({@code childOption(ALLOCATOR)}): a session takes its allocator when the channel becomes active, so one set
     * afterwards would leave the session on Netty's default allocator (it doubled the bytes per query measured).
     */
    private static EmbeddedChannel withProxyAllocator(ChannelHandler handler) {
        EmbeddedChannel channel = EmbeddedChannel.builder().register(false).handlers(handler).build();
        channel.config().setAllocator(ChannelBuffers.ALLOCATOR);
        try {
            channel.register();
        } catch (Exception e) {
            throw new IllegalStateException("cannot register an in-process channel", e);
        }
        return channel;
    }

    /** Another client of {@code owner}'s proxy, on its event loop: see {@link #login()}. */
    private InProcessSession(InProcessSession owner) {
        this.owner = owner;
        received = owner.received;
        backends = owner.backends;
        greeted = owner.greeted;
        upstreams = owner.upstreams;
        proxy = owner.proxy;
        client = owner.connectClient();
        logIn();
    }

    /**
     * A new session logged in as {@code app} on the same proxy, servers and event loop as this one (its login takes
     * a connection from the loop's pool when one is idle there). Closing it closes its client only.
     */
    public InProcessSession login() {
        return new InProcessSession(root());
    }

    /**
     * A new client connection to the same proxy, on the first session's event loop, greeted (the greeting is in its
     * outbound messages): the caller logs it in, with {@link #handshakeResponseFrame()}. Tasks the proxy leaves on
     * the loop run with {@link #runLoopTasks()}; its own {@code runPendingTasks} does not run them.
     */
    public EmbeddedChannel connectClient() {
        InProcessSession root = root();
        EmbeddedChannel channel = EmbeddedChannel.builder().register(false).handlers(proxy.clientPipeline()).build();
        channel.config().setAllocator(ChannelBuffers.ALLOCATOR);
        // Registered on the first client's loop instead of its own (EmbeddedEventLoop accepts any EmbeddedChannel):
        // channelActive runs now, and Gantry greets.
        channel.unsafe().register(root.client.eventLoop(), channel.newPromise());
        root.runLoopTasks();
        return channel;
    }

    /** Runs what is due on the event loop every client of this proxy is on. */
    public void runLoopTasks() {
        root().client.runPendingTasks();
    }

    private InProcessSession root() {
        return owner == null ? this : owner;
    }

    /**
     * The framed handshake response of {@code app}: caching_sha2_password with an empty scramble, so that no
     * account look-up is needed (that needs a database); the primary's login (played here) confirms the account.
     */
    public ByteBuf handshakeResponseFrame() {
        HandshakeResponse41 login = new HandshakeResponse41(CLIENT_CAPABILITIES, 1 << 24, 45, 0, "app", new byte[0],
                "", CachingSha2Password.PLUGIN_NAME, Map.of(), 0);
        ByteBuf payload = alloc.buffer();
        login.encode(payload);
        return framed(new Packet(1, payload));
    }

    private void logIn() {
        takeClientPackets().forEach(ByteBuf::release); // the greeting
        client.writeInbound(handshakeResponseFrame());
        runLoopTasks();
        serveBackends();
        runLoopTasks();
        List<ByteBuf> answer = takeClientPackets();
        if (answer.size() != 1 || answer.get(0).getUnsignedByte(Packet.HEADER_SIZE) != OkPacket.HEADER) {
            throw new IllegalStateException("the login through Gantry did not end with an OK");
        }
        answer.forEach(ByteBuf::release);
    }

    private static UpstreamUrl url(int port) {
        return new UpstreamUrl("127.0.0.1", port, "app", "gantry", "gantry", 1);
    }

    /** A framed command of {@code type} with {@code body} after its command byte, as a client sends it. */
    public ByteBuf commandFrame(CommandType type, byte[] body) {
        ByteBuf payload = alloc.buffer().writeByte(type.code()).writeBytes(body);
        return framed(new Packet(0, payload));
    }

    /** A framed COM_QUERY as a client sends it. */
    public ByteBuf queryFrame(String sql) {
        ByteBuf payload = alloc.buffer().writeByte(CommandType.COM_QUERY.code());
        payload.writeCharSequence(sql, StandardCharsets.ISO_8859_1);
        return framed(new Packet(0, payload));
    }

    /**
     * A framed COM_STMT_EXECUTE of a statement with one INT parameter.
     *
     * @param withTypes whether the parameter types are sent (a client sends them with the first execution only)
     */
    public ByteBuf executeFrame(long statementId, int id, boolean withTypes) {
        ByteBuf payload = alloc.buffer().writeByte(CommandType.COM_STMT_EXECUTE.code());
        payload.writeIntLE((int) statementId).writeByte(0).writeIntLE(1);
        payload.writeByte(0); // NULL bitmap: the one parameter is not NULL
        payload.writeByte(withTypes ? 1 : 0);
        if (withTypes) {
            payload.writeByte(MYSQL_TYPE_LONG).writeByte(0);
        }
        payload.writeIntLE(id);
        return framed(new Packet(0, payload));
    }

    /** Prepares {@code sql} (one INT parameter, one column) through Gantry; returns the client's statement id. */
    public long prepare(String sql) {
        ByteBuf payload = alloc.buffer().writeByte(CommandType.COM_STMT_PREPARE.code());
        payload.writeCharSequence(sql, StandardCharsets.ISO_8859_1);
        sendFromClient(new Packet(0, payload));
        serveBackends();
        List<ByteBuf> answer = takeClientPackets();
        ByteBuf first = answer.get(0);
        if (first.getUnsignedByte(Packet.HEADER_SIZE) != StmtPrepareOk.HEADER) {
            throw new IllegalStateException("the prepare through Gantry failed");
        }
        long id = first.getUnsignedIntLE(Packet.HEADER_SIZE + 1);
        answer.forEach(ByteBuf::release);
        return id;
    }

    /** Sends framed client bytes (a copy: Gantry may rewrite what it reads) and lets backends answer. */
    public List<ByteBuf> command(ByteBuf frames) {
        client.writeInbound(frames.copy());
        serveBackends();
        return takeClientPackets();
    }

    /** Sends framed client bytes (a copy), and no server answers yet: the command is in flight. */
    public void send(ByteBuf frames) {
        client.writeInbound(frames.copy());
    }

    /**
     * A health check finds the replica down while the session may have a command in flight there: the session leaves
     * it on its loop, and what the replica was sent is never answered.
     */
    public void replicaFoundDown() {
        InProcessTopology.confirmDown(upstreams, upstreams.servers().get(1), "the test stopped it");
        client.runPendingTasks();
        for (EmbeddedChannel channel : backends.getOrDefault(replicaAddress(), List.of())) {
            for (ByteBuf unanswered; (unanswered = channel.readOutbound()) != null; ) {
                unanswered.release();
            }
        }
    }

    /** Lets the servers answer what they were sent; returns what Gantry then wrote to the client. */
    public List<ByteBuf> served() {
        serveBackends();
        return takeClientPackets();
    }

    /** The session's connection to the replica, once a read has opened it. */
    public EmbeddedChannel replica() {
        return backends.get(upstreams.servers().get(1).address()).get(0);
    }

    /** The client's side of the session. */
    public EmbeddedChannel client() {
        return client;
    }

    /** A new position sample of every server (the sampler takes one every 250 ms in the proxy). */
    public void samplePositions() {
        InProcessTopology.sampleNow(upstreams);
    }

    /**
     * What the server at {@code address} was sent since the last call, one line a command: the text of a
     * COM_QUERY or COM_STMT_PREPARE, else the command's name ({@code COM_STMT_EXECUTE}); logins are left out.
     */
    public List<String> received(String address) {
        List<String> sent = received.computeIfAbsent(address, a -> new ArrayList<>());
        List<String> taken = List.copyOf(sent);
        sent.clear();
        return taken;
    }

    /** The causal scopes the proxy's sessions share. */
    public CausalScopes causalScopes() {
        return proxy.causalScopes();
    }

    /** Where the proxy counts its sessions' statements. */
    public StatementDigests digests() {
        return proxy.digests();
    }

    /** The primary's address, then the replica's. */
    public String primaryAddress() {
        return upstreams.servers().get(0).address();
    }

    public String replicaAddress() {
        return upstreams.servers().get(1).address();
    }

    /** The backend connections opened so far, per server address. */
    public Map<String, List<EmbeddedChannel>> backends() {
        return backends;
    }

    // ---- the servers' side -------------------------------------------------------------------------------------

    /** Answers every command the session sent to a backend until none is waiting (a login, then the commands). */
    public void serveBackends() {
        boolean answered = true;
        while (answered) {
            answered = false;
            for (List<EmbeddedChannel> channels : List.copyOf(backends.values())) {
                for (EmbeddedChannel channel : channels) {
                    if (!greeted.contains(channel)) {
                        greeted.add(channel);
                        channel.writeInbound(greeting());
                        answered = true;
                    }
                    ByteBuf sent;
                    while ((sent = channel.readOutbound()) != null) {
                        answer(channel, sent);
                        answered = true;
                    }
                }
            }
        }
    }

    private ByteBuf greeting() {
        byte[] seed = new byte[NativePassword.SEED_LENGTH];
        java.util.Arrays.fill(seed, (byte) 'g');
        HandshakeV10 greeting = new HandshakeV10(SERVER_VERSION, 7, seed, SERVER_CAPABILITIES, 45,
                ServerStatus.SERVER_STATUS_AUTOCOMMIT, 0, NativePassword.PLUGIN_NAME);
        ByteBuf payload = alloc.buffer();
        greeting.encode(payload);
        return framed(new Packet(0, payload));
    }

    /** What a server answers to one framed packet from Gantry. */
    private void answer(EmbeddedChannel channel, ByteBuf sent) {
        try {
            int sequenceId = sent.getUnsignedByte(3);
            int command = sent.getUnsignedByte(Packet.HEADER_SIZE);
            if (sequenceId != 0) {
                channel.writeInbound(ok(sequenceId + 1)); // the login's handshake response
                return;
            }
            if (received != null) {
                record(channel, command, sent);
            }
            if (command == CommandType.COM_STMT_PREPARE.code()) {
                channel.writeInbound(prepareOk(nextStatementId++));
            } else if (command == CommandType.COM_QUERY.code()) {
                String sql = sent.toString(Packet.HEADER_SIZE + 1, sent.readableBytes() - Packet.HEADER_SIZE - 1,
                        StandardCharsets.ISO_8859_1);
                channel.writeInbound(sql.regionMatches(true, 0, "SELECT", 0, 6) ? textRow() : ok(1));
            } else if (command == CommandType.COM_STMT_EXECUTE.code()) {
                channel.writeInbound(binaryRow());
            } else if (command != CommandType.COM_QUIT.code() && command != CommandType.COM_STMT_CLOSE.code()) {
                throw new IllegalStateException("the benchmark's server has no answer to command " + command);
            }
        } finally {
            sent.release();
        }
    }

    private void record(EmbeddedChannel channel, int command, ByteBuf sent) {
        String address = backends.entrySet().stream().filter(entry -> entry.getValue().contains(channel))
                .map(Map.Entry::getKey).findFirst().orElseThrow();
        String line = command == CommandType.COM_QUERY.code() || command == CommandType.COM_STMT_PREPARE.code()
                ? sent.toString(Packet.HEADER_SIZE + 1, sent.readableBytes() - Packet.HEADER_SIZE - 1,
                        StandardCharsets.ISO_8859_1)
                : CommandType.of(sent.slice(Packet.HEADER_SIZE, 1)).name();
        received.computeIfAbsent(address, a -> new ArrayList<>()).add(line);
    }

    /** A text result set of one row, as a server sends it for {@code SELECT c FROM sbtest1 WHERE id=...}. */
    public ByteBuf textRow() {
        ByteBuf out = alloc.buffer();
        writeColumns(out);
        ByteBuf row = alloc.buffer();
        io.gantry.wire.Buffers.writeLenEncString(row, ROW_VALUE);
        writeFramed(out, new Packet(3, row));
        writeFramed(out, eofOk(4));
        return out;
    }

    /** A binary result set of one row, as a server sends it for an execute of the same statement. */
    public ByteBuf binaryRow() {
        ByteBuf out = alloc.buffer();
        writeColumns(out);
        ByteBuf row = alloc.buffer().writeByte(0).writeByte(0); // header, NULL bitmap
        io.gantry.wire.Buffers.writeLenEncString(row, ROW_VALUE);
        writeFramed(out, new Packet(3, row));
        writeFramed(out, eofOk(4));
        return out;
    }

    private void writeColumns(ByteBuf out) {
        writeFramed(out, new Packet(1, alloc.buffer().writeByte(1)));
        ByteBuf column = alloc.buffer();
        ColumnDefinition.text("sbtest", "sbtest1", "c", 120).encode(column);
        writeFramed(out, new Packet(2, column));
    }

    private ByteBuf prepareOk(long statementId) {
        ByteBuf out = alloc.buffer();
        ByteBuf ok = alloc.buffer();
        new StmtPrepareOk(statementId, 1, 1, 0).encode(ok);
        writeFramed(out, new Packet(1, ok));
        ByteBuf parameter = alloc.buffer();
        new ColumnDefinition("def", "", "", "", "?", "", 63, 0, MYSQL_TYPE_LONG, ColumnDefinition.BINARY_FLAG, 0)
                .encode(parameter);
        writeFramed(out, new Packet(2, parameter));
        ByteBuf column = alloc.buffer();
        ColumnDefinition.text("sbtest", "sbtest1", "c", 120).encode(column);
        writeFramed(out, new Packet(3, column));
        return out;
    }

    private ByteBuf ok(int sequenceId) {
        ByteBuf payload = alloc.buffer();
        OkPacket.of(0, 0, ServerStatus.SERVER_STATUS_AUTOCOMMIT, 0).encode(payload, CLIENT_CAPABILITIES);
        return framed(new Packet(sequenceId, payload));
    }

    /** The OK that ends a result set under CLIENT_DEPRECATE_EOF (header 0xFE). */
    private Packet eofOk(int sequenceId) {
        ByteBuf payload = alloc.buffer();
        OkPacket.of(0, 0, ServerStatus.SERVER_STATUS_AUTOCOMMIT, 0).encode(payload, CLIENT_CAPABILITIES);
        payload.setByte(0, OkPacket.EOF_HEADER);
        return new Packet(sequenceId, payload);
    }

    // ---- the client's side -------------------------------------------------------------------------------------

    private void sendFromClient(Packet packet) {
        client.writeInbound(framed(packet));
    }

    /** What Gantry wrote to the client since the last call, as written. */
    public List<ByteBuf> takeClientPackets() {
        List<ByteBuf> out = new ArrayList<>();
        ByteBuf next;
        while ((next = client.readOutbound()) != null) {
            out.add(next);
        }
        return out;
    }

    /** Releases what Gantry wrote to the client; returns how many bytes it was (the benchmark's result). */
    public int drainClient() {
        int bytes = 0;
        ByteBuf next;
        while ((next = client.readOutbound()) != null) {
            bytes += next.readableBytes();
            next.release();
        }
        return bytes;
    }

    private ByteBuf framed(Packet packet) {
        ByteBuf out = alloc.buffer();
        writeFramed(out, packet);
        return out;
    }

    private static void writeFramed(ByteBuf out, Packet packet) {
        PacketFrameEncoder.writeFramed(packet, out);
        packet.release();
    }

    @Override
    public void close() {
        client.finishAndReleaseAll();
        if (owner != null) {
            owner.runLoopTasks();
            return;
        }
        backends.values().forEach(channels -> channels.forEach(EmbeddedChannel::finishAndReleaseAll));
        proxy.close();
    }
}
