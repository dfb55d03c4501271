package io.gantry.admin;

import io.gantry.admin.protocol.AdminProtocol;
import io.gantry.admin.protocol.Column;
import io.gantry.admin.protocol.HealthPoint;
import io.gantry.admin.protocol.QueryShape;
import io.gantry.admin.protocol.Reply;
import io.gantry.admin.protocol.Request;
import io.gantry.admin.protocol.ServerState;
import io.gantry.admin.protocol.TimelineEvent;
import io.gantry.admin.protocol.Topic;
import io.gantry.authority.Authority;
import io.gantry.authority.Event;
import io.gantry.authority.HealthSample;
import io.gantry.authority.LiveServerRow;
import io.gantry.digest.RanOn;
import io.gantry.digest.ShapeDigest;
import io.gantry.events.EngineEvent;
import io.gantry.events.EventBus;
import io.gantry.localsocket.SocketFile;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import io.netty.handler.codec.LineBasedFrameDecoder;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.string.StringDecoder;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin socket: a Unix domain socket, owner-only ({@link SocketFile}), speaking {@link AdminProtocol} to any
 * number of clients at once ({@code gantry admin}, the console). It answers admin SQL ({@link AdminSqlRunner}, the
 * same statements and results as the proxy port, as typed rows), the servers' live state, pages of health history
 * and of the timeline, and pushes to subscribers every change of a server's state and every timeline entry, and, every
 * {@link Settings#queriesInterval()}, the statement digests' top rows.
 *
 * <p>Threads: one Netty event loop ({@code gantry-admin-socket}) frames lines and writes; admin SQL, health and
 * timeline reads run on the admin executor; the server-state feed ({@code gantry-admin-state}) diffs the live
 * state when the bus says something happened and every {@link Settings#stateInterval()} (lag, RTT and connections
 * change without an event); timeline pushes come from the bus subscription ({@code gantry-events-admin-socket}).
 *
 * <p>Memory: a client that stops reading while subscribed is disconnected once more than
 * {@link Settings#maxQueuedBytes()} wait for it, instead of the queue growing; a client that sends requests without
 * reading the answers is not read from until it does (the loop's write buffer bounds it).
 */
public final class AdminSocket implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(AdminSocket.class);
    private static final String BY = "the admin socket";
    private static final SocketFile.Name NAME = new SocketFile.Name(BY, "choose another path with --admin-socket");
    /**
     * The rows each {@code queries} push holds at most: the largest by total latency. About 500 bytes a row, so a
     * push is at most some 250 KB, well inside a subscriber's queue.
     */
    static final int QUERIES_PUSHED = 500;

    /**
     * @param maxQueuedBytes bytes waiting for one subscriber beyond which it is disconnected (default 4 MiB)
     * @param stateInterval  how often the feed looks for changes no event announces (lag, RTT, connections;
     *                       default 500 ms)
     * @param queriesInterval how often the statement digests' top rows are pushed to the {@code queries} topic's
     *                       subscribers (default 2 s)
     */
    public record Settings(int maxQueuedBytes, Duration stateInterval, Duration queriesInterval) {

        public static final Settings DEFAULTS = new Settings(4 << 20, Duration.ofMillis(500), Duration.ofSeconds(2));

        public Settings {
            if (maxQueuedBytes < 1024) {
                throw new IllegalArgumentException("maxQueuedBytes must be at least 1024, not " + maxQueuedBytes);
            }
            if (stateInterval.isNegative() || stateInterval.isZero()) {
                throw new IllegalArgumentException("stateInterval must be positive, not " + stateInterval);
            }
            if (queriesInterval.isNegative() || queriesInterval.isZero()) {
                throw new IllegalArgumentException("queriesInterval must be positive, not " + queriesInterval);
            }
        }
    }

    private final AdminSqlRunner sql;
    private final AdminOperations operations;
    private final Executor work;
    private final Supplier<Reply.Welcome> welcome;
    private final Settings settings;
    private final EventLoopGroup loop = new MultiThreadIoEventLoopGroup(1,
            new DefaultThreadFactory("gantry-admin-socket", true), NioIoHandler.newFactory());
    private final ScheduledExecutorService feed = Executors.newSingleThreadScheduledExecutor(
            new DefaultThreadFactory("gantry-admin-state", true));
    private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean refreshPending = new AtomicBoolean();
    /** The state last pushed, by address; touched only on the feed thread. */
    private final Map<String, ServerState> lastStates = new LinkedHashMap<>();
    private EventBus.Subscription subscription;
    private Channel server;
    private SocketFile file;

    private AdminSocket(AdminSqlRunner sql, AdminOperations operations, Executor work,
                        Supplier<Reply.Welcome> welcome, Settings settings) {
        this.sql = sql;
        this.operations = operations;
        this.work = work;
        this.welcome = welcome;
        this.settings = settings;
    }

    /**
     * Binds the socket at {@code path} (owner-only before it accepts anything) and starts answering.
     *
     * @param work    where admin SQL and Authority reads run (the admin executor)
     * @param welcome the engine's hello (version, proxy address, data directory)
     * @throws IOException when the socket cannot be made there; nothing is left running
     */
    public static AdminSocket start(Path path, AdminSqlRunner sql, AdminOperations operations, EventBus bus,
                                    Executor work, Supplier<Reply.Welcome> welcome, Settings settings)
            throws IOException {
        AdminSocket socket = new AdminSocket(sql, operations, work, welcome, settings);
        try {
            socket.bind(path);
            socket.subscription = bus.subscribe("admin-socket", 10_000, new EventBus.Subscriber() {
                @Override
                public void onEvent(EngineEvent event) {
                    socket.onBusEvent(event);
                }

                @Override
                public void onDropped(long count) {
                    socket.requestRefresh();
                }
            });
            long period = settings.stateInterval().toMillis();
            socket.feed.scheduleWithFixedDelay(socket::refreshQuietly, period, period, TimeUnit.MILLISECONDS);
            long queries = settings.queriesInterval().toMillis();
            socket.feed.scheduleWithFixedDelay(socket::pushQueriesQuietly, queries, queries, TimeUnit.MILLISECONDS);
            LOG.info("admin socket: listening on {} (owner-only)", socket.file.path());
            return socket;
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    private void bind(Path path) throws IOException {
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(loop)
                .channel(NioServerDomainSocketChannel.class)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(256 << 10, 1 << 20))
                .childHandler(new ChannelInitializer<NioDomainSocketChannel>() {
                    @Override
                    protected void initChannel(NioDomainSocketChannel channel) {
                        channel.pipeline().addLast(
                                new LineBasedFrameDecoder(AdminProtocol.MAX_REQUEST_BYTES, true, true),
                                new StringDecoder(StandardCharsets.UTF_8),
                                new Connection());
                    }
                });
        file = SocketFile.bind(path, NAME, address -> {
            try {
                server = bootstrap.bind(address).sync().channel();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while binding the admin socket", e);
            } catch (Exception e) {
                throw new IOException("cannot bind the admin socket: " + e.getMessage(), e);
            }
        });
    }

    /** Where the socket is. */
    public Path path() {
        return file.path();
    }

    /** Clients connected now. */
    public int connections() {
        return connections.size();
    }

    // ---- pushes ------------------------------------------------------------------------------------------------

    private void onBusEvent(EngineEvent event) {
        if (event instanceof EngineEvent.Timeline timeline) {
            // This instance's own entries are pushed before their row names the instance: the push does.
            Event entry = timeline.event();
            String line = AdminProtocol.encode(new Reply.Event(timelineEvent(entry.instance() != null ? entry
                    : new Event(0, entry.at(), entry.server(), entry.kind(), entry.reason(),
                    operations.eventsInstance()), 0)));
            for (Connection connection : connections) {
                if (connection.topics.contains(Topic.EVENTS)) {
                    connection.push(line);
                }
            }
        }
        // Anything that happened may have changed a server's state.
        requestRefresh();
    }

    private void requestRefresh() {
        if (refreshPending.compareAndSet(false, true)) {
            feed.execute(this::refreshQuietly);
        }
    }

    private void refreshQuietly() {
        try {
            refresh();
        } catch (RuntimeException e) {
            LOG.error("admin socket: reading the servers' state failed: {}", e.toString(), e);
        }
    }

    /** On the feed thread: pushes every server whose state changed since the last look, and every one gone. */
    private void refresh() {
        refreshPending.set(false);
        if (connections.stream().noneMatch(c -> c.topics.contains(Topic.SERVERS))) {
            lastStates.clear();
            return;
        }
        Map<String, ServerState> now = snapshot();
        for (ServerState state : now.values()) {
            if (!state.equals(lastStates.get(state.address()))) {
                pushToServerSubscribers(AdminProtocol.encode(new Reply.ServerChanged(state)));
            }
        }
        for (String address : lastStates.keySet()) {
            if (!now.containsKey(address)) {
                pushToServerSubscribers(AdminProtocol.encode(new Reply.ServerRemoved(address)));
            }
        }
        lastStates.clear();
        lastStates.putAll(now);
    }

    private Map<String, ServerState> snapshot() {
        Map<String, ServerState> states = new LinkedHashMap<>();
        for (LiveServerRow row : operations.servers()) {
            ServerState state = serverState(row);
            states.put(state.address(), state);
        }
        return states;
    }

    /** On the feed thread: the digests' top rows to every subscriber of {@code queries}, when there is one. */
    private void pushQueriesQuietly() {
        try {
            if (connections.stream().anyMatch(c -> c.topics.contains(Topic.QUERIES))) {
                String line = queriesLine();
                for (Connection connection : connections) {
                    if (connection.topics.contains(Topic.QUERIES)) {
                        connection.push(line);
                    }
                }
            }
        } catch (RuntimeException e) {
            LOG.error("admin socket: reading the statement digests failed: {}", e.toString(), e);
        }
    }

    private String queriesLine() {
        return AdminProtocol.encode(new Reply.Queries(Instant.now(),
                operations.topQueries(QUERIES_PUSHED).stream().map(AdminSocket::queryShape).toList()));
    }

    /** On the feed thread: a new subscriber of {@code queries} gets the rows at once, then every interval. */
    private void startQueryPushes(Connection connection) {
        connection.topics.add(Topic.QUERIES);
        connection.push(queriesLine());
    }

    private void pushToServerSubscribers(String line) {
        for (Connection connection : connections) {
            if (connection.topics.contains(Topic.SERVERS)) {
                connection.push(line);
            }
        }
    }

    /**
     * On the feed thread, where every other server push is made too: a new subscriber gets every server as it is
     * now, then the changes.
     */
    private void startServerPushes(Connection connection) {
        refresh();
        if (lastStates.isEmpty()) {
            lastStates.putAll(snapshot());
        }
        connection.topics.add(Topic.SERVERS);
        for (ServerState state : lastStates.values()) {
            connection.push(AdminProtocol.encode(new Reply.ServerChanged(state)));
        }
    }

    // ---- conversions -------------------------------------------------------------------------------------------

    static ServerState serverState(LiveServerRow row) {
        return new ServerState(row.host(), row.port(), row.database(), row.user(), row.weight(), row.purpose(),
                row.activeCdc(), row.health(), row.downSince(), row.lastOk(), row.connections(), row.role(),
                row.lagMs(), row.rttMs(), row.connectMs(), row.rttSmoothedMs());
    }

    static QueryShape queryShape(ShapeDigest row) {
        return new QueryShape(row.shape(), row.schema(), row.account(), row.count(), row.errors(),
                row.errorCodesText(), row.rowsSent(), row.rowsAffected(), row.totalMicros(), row.p50Micros(),
                row.p95Micros(), row.p99Micros(), row.maxMicros(), row.ran(RanOn.PRIMARY), row.ran(RanOn.REPLICA),
                row.ran(RanOn.CACHE), row.ran(RanOn.GANTRY), row.reasonsText(), row.firstSeen(), row.lastSeen(),
                row.folded());
    }

    /** @param id the entry's row, or 0 for a pushed entry; reasons are masked as the Authority stores them */
    static TimelineEvent timelineEvent(Event event, long id) {
        return new TimelineEvent(id, event.at(), event.server(), event.kind().sqlName(),
                Authority.redact(event.reason()), event.instance());
    }

    static HealthPoint healthPoint(HealthSample sample) {
        return new HealthPoint(sample.at(), sample.server(), sample.health(), sample.role(), sample.rttMs(),
                sample.lagMs(), sample.connectMs());
    }

    static Reply reply(String id, AdminResult result) {
        if (result instanceof AdminResult.Rows rows) {
            return new Reply.Rows(id, rows.columns().stream()
                    .map(c -> new Column(c.name(), Column.Type.valueOf(c.type().name()))).toList(), rows.rows());
        }
        if (result instanceof AdminResult.Done done) {
            return new Reply.Done(id, done.affectedRows(), done.message());
        }
        AdminResult.Failed failed = (AdminResult.Failed) result;
        return error(id, failed.failure(), failed.message());
    }

    private static Reply.Error error(String id, AdminResult.Failure failure, String message) {
        return new Reply.Error(id, failure.name().toLowerCase(java.util.Locale.ROOT), message);
    }

    // ---- one client --------------------------------------------------------------------------------------------

    /** One client's connection: its hello, its subscriptions, and the bytes waiting for it. */
    private final class Connection extends SimpleChannelInboundHandler<String> {

        private final Set<Topic> topics = ConcurrentHashMap.newKeySet();
        private final PushBudget budget = new PushBudget(settings.maxQueuedBytes());
        private volatile Channel channel;
        private volatile boolean greeted;
        private volatile String client = "?";

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            channel = ctx.channel();
            connections.add(this);
            LOG.debug("admin socket: a client connected ({} now)", connections.size());
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            connections.remove(this);
            LOG.debug("admin socket: client '{}' disconnected ({} left)", client, connections.size());
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            // A client that does not read its answers is not read from until it does.
            ctx.channel().config().setAutoRead(ctx.channel().isWritable());
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (cause instanceof TooLongFrameException) {
                send(new Reply.Error(null, "line_too_long", "a request line may hold at most "
                        + AdminProtocol.MAX_REQUEST_BYTES + " bytes; the rest of this one was skipped"));
                return;
            }
            LOG.debug("admin socket: client '{}': {}", client, cause.toString());
            ctx.close();
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, String line) {
            if (line.isBlank()) {
                return;
            }
            AdminProtocol.Decoded<Request> decoded = AdminProtocol.decodeRequest(line);
            if (decoded instanceof AdminProtocol.Decoded.Invalid<Request> invalid) {
                send(new Reply.Error(invalid.id(), invalid.error(), invalid.message()));
                return;
            }
            Request request = ((AdminProtocol.Decoded.Valid<Request>) decoded).message();
            if (request instanceof Request.Hello hello) {
                hello(hello);
            } else if (!greeted) {
                send(new Reply.Error(request.id(), "hello_first", "say hello first: {\"type\":\"hello\",\"protocol\":"
                        + AdminProtocol.VERSION + ",\"client\":\"...\"}"));
            } else {
                handle(request);
            }
        }

        private void hello(Request.Hello hello) {
            if (hello.protocol() != AdminProtocol.VERSION) {
                send(new Reply.Error(null, "unsupported_protocol", "this Gantry speaks admin protocol "
                        + AdminProtocol.VERSION + ", not " + hello.protocol())).addListener(f -> channel.close());
                return;
            }
            client = hello.client();
            greeted = true;
            LOG.info("admin socket: client '{}' connected", client);
            send(welcome.get());
        }

        private void handle(Request request) {
            String id = request.id();
            if (request instanceof Request.Sql statement) {
                sql.run(statement.sql(), BY + " (" + client + ")").whenComplete((result, failure) -> send(
                        failure != null ? error(id, AdminResult.Failure.FAILED, String.valueOf(failure.getMessage()))
                                : reply(id, result)));
            } else if (request instanceof Request.Servers) {
                answer(id, feed, () -> new Reply.Servers(id, List.copyOf(snapshot().values())));
            } else if (request instanceof Request.Health health) {
                answer(id, work, () -> {
                    AdminOperations.HealthPage page = operations.healthHistory(health.from(), health.until(),
                            Optional.ofNullable(health.server()), health.limit());
                    return new Reply.Health(id, page.samples().stream().map(AdminSocket::healthPoint).toList(),
                            page.next().orElse(null));
                });
            } else if (request instanceof Request.Events events) {
                answer(id, work, () -> new Reply.Events(id, operations.events(events.since(), events.limit())
                        .stream().map(e -> timelineEvent(e, e.id())).toList()));
            } else if (request instanceof Request.Subscribe subscribe) {
                Set<Topic> now = EnumSet.noneOf(Topic.class);
                now.addAll(topics);
                now.addAll(subscribe.topics());
                send(new Reply.Subscribed(id, now));
                if (subscribe.topics().contains(Topic.EVENTS)) {
                    topics.add(Topic.EVENTS);
                }
                if (subscribe.topics().contains(Topic.SERVERS) && !topics.contains(Topic.SERVERS)) {
                    feed.execute(() -> startServerPushes(this));
                }
                if (subscribe.topics().contains(Topic.QUERIES) && !topics.contains(Topic.QUERIES)) {
                    feed.execute(() -> startQueryPushes(this));
                }
            } else if (request instanceof Request.Unsubscribe unsubscribe) {
                topics.removeAll(unsubscribe.topics());
                send(new Reply.Subscribed(id, topics.isEmpty() ? Set.of() : EnumSet.copyOf(topics)));
            } else if (request instanceof Request.Ping) {
                send(new Reply.Pong(id));
            }
        }

        private void answer(String id, Executor executor, Supplier<Reply> answer) {
            executor.execute(() -> {
                Reply reply;
                try {
                    reply = answer.get();
                } catch (AdminException e) {
                    reply = error(id, e.failure(), e.getMessage());
                } catch (RuntimeException e) {
                    LOG.error("admin socket: a request of client '{}' failed: {}", client, e.toString(), e);
                    reply = error(id, AdminResult.Failure.FAILED, e.getMessage() == null ? e.toString()
                            : e.getMessage());
                }
                send(reply);
            });
        }

        /** A push: if too much already waits for this client, the connection is closed instead. */
        void push(String line) {
            Channel current = channel;
            if (current == null || !current.isActive() || topics.isEmpty()) {
                return;
            }
            ByteBuf bytes = Unpooled.copiedBuffer(line + "\n", StandardCharsets.UTF_8);
            int size = bytes.readableBytes();
            if (!budget.tryPush(size)) {
                bytes.release();
                topics.clear();
                LOG.warn("admin socket: client '{}' is not reading its pushes ({} bytes wait for it); disconnected",
                        client, budget.waiting());
                current.close();
                return;
            }
            current.writeAndFlush(bytes).addListener(f -> budget.written(size));
        }

        io.netty.channel.ChannelFuture send(Reply reply) {
            ByteBuf bytes = Unpooled.copiedBuffer(AdminProtocol.encode(reply) + "\n", StandardCharsets.UTF_8);
            int size = bytes.readableBytes();
            budget.answer(size);
            return channel.writeAndFlush(bytes).addListener(f -> budget.written(size));
        }
    }

    /** Stops listening, disconnects every client and removes the socket file. */
    @Override
    public void close() {
        if (subscription != null) {
            subscription.close();
        }
        feed.shutdownNow();
        if (server != null) {
            server.close().syncUninterruptibly();
        }
        for (Connection connection : connections) {
            Channel channel = connection.channel;
            if (channel != null) {
                channel.close();
            }
        }
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        if (file != null) {
            file.delete();
        }
    }
}
