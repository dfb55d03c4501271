package io.gantry.proxy.caching;

import io.gantry.cache.CachedResult;
import io.gantry.cache.QueryCaches;
import io.gantry.cache.Rerun;
import io.gantry.proxy.backend.BackendChannels;
import io.gantry.proxy.backend.BackendConnection;
import io.gantry.proxy.backend.BackendFailure;
import io.gantry.proxy.backend.BackendLogin;
import io.gantry.proxy.backend.BackendSecret;
import io.gantry.proxy.backend.InternalCommand;
import io.gantry.proxy.prepared.StmtExecutePayloads;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.proxy.session.RateLimitedLog;
import io.gantry.topology.UpstreamServer;
import io.gantry.topology.Upstreams;
import io.gantry.wire.CommandType;
import io.gantry.wire.ErrPacket;
import io.gantry.wire.Packet;
import io.gantry.wire.ResponseFraming;
import io.gantry.wire.StmtPrepareOk;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refresh-ahead by Gantry's own connections: entries due for a refresh ({@link QueryCaches#refreshIfDue}) wait in one
 * queue, and a fixed number of workers ({@code --cache-refresh-workers}) run their statements again, one at a time
 * each, and replace them through the rules a session's fill obeys ({@link CacheFill}).
 *
 * <p>A worker logs in as Gantry's own account on the server (the server's URL), with the capabilities and collation
 * of the entry's result format, and first replays the session settings of that format, so its answer has the bytes
 * a session of that format would get. It keeps one connection per format, on a server picked at random among the up
 * ones when it connects, and picks again when it reconnects: after the connection failed, the server went down or
 * left the list, or the connection was closed for being idle ({@link #IDLE_CLOSE}). Each worker lives on one of the
 * proxy's event loops, so its connections need no locks.
 */
public final class CacheRefreshWorkers implements QueryCaches.Refresher, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(CacheRefreshWorkers.class);
    /** A worker's connection unused for this long is closed. */
    private static final Duration IDLE_CLOSE = Duration.ofSeconds(60);
    /** A refresh without an answer for this long is given up and its connection closed. */
    private static final Duration REFRESH_TIMEOUT = Duration.ofSeconds(30);
    /** How often the refreshes done are summed up in the log, per cache and server. */
    private static final Duration SUMMARY_EVERY = Duration.ofMinutes(1);

    private record Request(QueryCaches.EntryKey key, CachedResult entry) {
    }

    private final QueryCaches caches;
    private final Upstreams upstreams;
    private final ProxyConfig config;
    private final BackendChannels channels;
    private final RandomGenerator random;
    private final Queue<Request> queue = new ConcurrentLinkedQueue<>();
    private final List<Worker> workers = new ArrayList<>();
    /** Refreshes stored since the last summary, by cache name and server. */
    private final Map<String, LongAdder> refreshedSinceSummary = new ConcurrentHashMap<>();
    private final RateLimitedLog failures = new RateLimitedLog(LOG, 5, Duration.ofMinutes(1), Clock.systemUTC());
    private final ScheduledFuture<?> summary;
    private volatile boolean closed;

    public CacheRefreshWorkers(QueryCaches caches, Upstreams upstreams, EventLoopGroup loops, ProxyConfig config,
                        BackendChannels channels) {
        this.caches = caches;
        this.upstreams = upstreams;
        this.config = config;
        this.channels = channels;
        this.random = () -> ThreadLocalRandom.current().nextLong();
        for (int i = 1; i <= caches.refreshWorkers(); i++) {
            workers.add(new Worker(i, loops.next()));
        }
        EventLoop first = workers.get(0).loop;
        summary = first.scheduleWithFixedDelay(this::logSummary, SUMMARY_EVERY.toMillis(), SUMMARY_EVERY.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    @Override
    public void refresh(QueryCaches.EntryKey key, CachedResult entry) {
        if (closed) {
            return; // the proxy stops: its event loops take no more work
        }
        queue.offer(new Request(key, entry));
        for (Worker worker : workers) {
            if (worker.wake()) {
                return;
            }
        }
        // Every worker is busy: each takes the next request from the queue when it is done.
    }

    /** An up server picked at random, any role: the fill rules decide whether its answer is new enough. */
    static Optional<UpstreamServer> pickUp(List<UpstreamServer> servers, RandomGenerator random) {
        List<UpstreamServer> up = servers.stream().filter(UpstreamServer::isUp).toList();
        return up.isEmpty() ? Optional.empty() : Optional.of(up.get(random.nextInt(up.size())));
    }

    private void stored(QueryCaches.EntryKey key, UpstreamServer server) {
        caches.refreshed(key, true);
        refreshedSinceSummary.computeIfAbsent(key.cache().name() + "\0" + server.address(), k -> new LongAdder())
                .increment();
    }

    private void failed(QueryCaches.EntryKey key, String server, String why) {
        caches.refreshed(key, false);
        failures.warn("refresh " + key.cache().name() + " " + server, "cache {}: a refresh from {} failed: {}; the "
                + "entry stays until its TTL or an eviction", key.cache().name(), server, why);
    }

    private void logSummary() {
        try {
            for (Iterator<Map.Entry<String, LongAdder>> it = refreshedSinceSummary.entrySet().iterator();
                 it.hasNext(); ) {
                Map.Entry<String, LongAdder> counted = it.next();
                it.remove();
                String[] cacheAndServer = counted.getKey().split("\0", 2);
                LOG.info("cache {}: refreshed {} entries from {} in the last {} s", cacheAndServer[0],
                        counted.getValue().sum(), cacheAndServer[1], SUMMARY_EVERY.toSeconds());
            }
        } catch (RuntimeException e) {
            LOG.error("cache: the refresh summary failed: {}", e.toString(), e);
        }
    }

    @Override
    public void close() {
        closed = true;
        queue.clear();
        summary.cancel(false);
        for (Worker worker : workers) {
            worker.close();
        }
    }

    /** One worker's connection for one result format, and when it last ran a refresh. */
    private static final class Link {
        final BackendConnection connection;
        long lastUsedNanos = System.nanoTime();

        Link(BackendConnection connection) {
            this.connection = connection;
        }
    }

    /** Runs one refresh at a time on its event loop, with a connection per result format. */
    private final class Worker {
        final int number;
        final EventLoop loop;
        final AtomicBoolean busy = new AtomicBoolean();
        /** By {@link Rerun.Format#key()}; touched on {@link #loop} only. */
        final Map<String, Link> links = new HashMap<>();
        final ScheduledFuture<?> idleCheck;

        Worker(int number, EventLoop loop) {
            this.number = number;
            this.loop = loop;
            long every = IDLE_CLOSE.toMillis() / 4;
            this.idleCheck = loop.scheduleWithFixedDelay(this::closeIdle, every, every, TimeUnit.MILLISECONDS);
        }

        /** Starts taking requests from the queue unless the worker already does. */
        boolean wake() {
            if (!busy.compareAndSet(false, true)) {
                return false;
            }
            loop.execute(this::next);
            return true;
        }

        private void next() {
            Request request = queue.poll();
            if (request == null) {
                busy.set(false);
                if (!queue.isEmpty()) {
                    wake(); // a request came between the poll and the reset
                }
                return;
            }
            Refresh refresh = new Refresh(request, () -> loop.execute(this::next));
            try {
                run(refresh);
            } catch (RuntimeException e) {
                LOG.error("cache refresh worker {}: {}", number, e.toString(), e);
                refresh.failed(refresh.connection == null ? "(none)" : refresh.connection.server().address(),
                        e.toString());
            }
        }

        private void run(Refresh refresh) {
            Rerun rerun = refresh.request.entry().rerun();
            connection(rerun.format(), connection -> {
                refresh.connection = connection;
                if (!rerun.binary()) {
                    execute(refresh, Unpooled.wrappedBuffer(rerun.command()), refresh::end);
                    return;
                }
                InternalCommand.run(connection, Unpooled.wrappedBuffer(rerun.prepare()), (first, error) -> {
                    if (error != null) {
                        refresh.failed("preparing it: " + error.message());
                        return;
                    }
                    long statementId = StmtPrepareOk.decode(Unpooled.wrappedBuffer(first)).statementId();
                    ByteBuf execute = Unpooled.copiedBuffer(rerun.command());
                    StmtExecutePayloads.setStatementId(execute, statementId);
                    execute(refresh, execute, () -> {
                        if (connection.isUsable()) {
                            ByteBuf close = Unpooled.buffer(5).writeByte(CommandType.COM_STMT_CLOSE.code())
                                    .writeIntLE((int) statementId);
                            InternalCommand.run(connection, close, (ok, ignored) -> { }, failure -> { });
                        }
                        refresh.end();
                    });
                }, refresh::connectionFailed);
            }, why -> refresh.failed(why.server(), why.message()));
        }

        /** Runs the statement and replaces the entry with its answer, by the rules of a session's fill. */
        private void execute(Refresh refresh, ByteBuf command, Runnable then) {
            QueryCaches.EntryKey key = refresh.request.key();
            BackendConnection connection = refresh.connection;
            CacheFill fill = CacheFill.refresh(caches, key, refresh.request.entry());
            fill.start(connection);
            connection.execute(new Packet(0, command), new BackendConnection.ResponseListener() {
                private ErrPacket error;

                @Override
                public void onPacket(Packet packet, ResponseFraming framing) {
                    try {
                        if (framing.lastPacketKind() == ResponseFraming.PacketKind.ERR && error == null) {
                            error = ErrPacket.decode(packet.payload().duplicate());
                        }
                        fill.capture(packet, framing);
                    } finally {
                        packet.release();
                    }
                }

                @Override
                public void onBatchEnd() {
                    // Nothing goes to a client.
                }

                @Override
                public void onComplete(ResponseFraming framing) {
                    if (fill.complete(framing)) {
                        refresh.stored();
                    } else if (error != null) {
                        refresh.failed(error.errorCode() + " " + error.message());
                    } else {
                        refresh.notStored();
                    }
                    then.run();
                }

                @Override
                public void onFailure(BackendFailure failure) {
                    refresh.connectionFailed(failure);
                }
            });
        }

        /**
         * One request being refreshed: its outcome is counted once, and the worker goes on to the next request once,
         * when the answer came, the connection failed, or {@link #REFRESH_TIMEOUT} passed without either (the
         * connection is then closed, and a late answer is ignored).
         */
        private final class Refresh {
            final Request request;
            final Runnable done;
            final ScheduledFuture<?> timeout;
            BackendConnection connection;
            boolean counted;
            boolean ended;

            Refresh(Request request, Runnable done) {
                this.request = request;
                this.done = done;
                this.timeout = loop.schedule(this::timedOut, REFRESH_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            }

            void stored() {
                if (!counted) {
                    counted = true;
                    CacheRefreshWorkers.this.stored(request.key(), connection.server());
                }
            }

            /** A change came while it ran, its server lacked the cache's last eviction, or the answer is not a
             *  plain result of at most --cache-max-entry-bytes: not a server's failure, so not a warning. */
            void notStored() {
                if (!counted) {
                    counted = true;
                    caches.refreshed(request.key(), false);
                    LOG.debug("cache {}: a refresh from {} was not stored", request.key().cache().name(),
                            connection.server().address());
                }
            }

            void failed(String why) {
                failed(connection.server().address(), why);
            }

            void failed(String server, String why) {
                if (!counted) {
                    counted = true;
                    CacheRefreshWorkers.this.failed(request.key(), server, why);
                }
                end();
            }

            /** The connection failed under the refresh: the next one goes to a server picked again. */
            void connectionFailed(BackendFailure failure) {
                Worker.this.lost(request.entry().rerun().format(), connection);
                failed(failure.getMessage());
            }

            private void timedOut() {
                if (ended) {
                    return;
                }
                String server = connection == null ? "(connecting)" : connection.server().address();
                if (connection != null) {
                    Worker.this.lost(request.entry().rerun().format(), connection);
                }
                failed(server, "no answer within " + REFRESH_TIMEOUT.toSeconds() + " s");
            }

            void end() {
                if (!ended) {
                    ended = true;
                    timeout.cancel(false);
                    done.run();
                }
            }
        }

        /** Why no connection could be had: the server (or "(none)") and the error. */
        private record NoConnection(String server, String message) {
        }

        /**
         * The worker's connection for {@code format}: the one it has while its server is up and in the list, else a
         * new one to an up server picked at random, logged in and with the format's settings replayed.
         */
        private void connection(Rerun.Format format, Consumer<BackendConnection> then, Consumer<NoConnection> failed) {
            Link link = links.get(format.key());
            if (link != null) {
                UpstreamServer server = link.connection.server();
                if (link.connection.isUsable() && server.isUp() && upstreams.servers().contains(server)) {
                    link.lastUsedNanos = System.nanoTime();
                    then.accept(link.connection);
                    return;
                }
                lost(format, link.connection);
            }
            List<UpstreamServer> servers = upstreams.servers();
            Optional<UpstreamServer> picked = pickUp(servers, random);
            if (picked.isEmpty()) {
                failed.accept(new NoConnection("(none)", "no server is up"));
                return;
            }
            UpstreamServer server = picked.get();
            BackendConnection.open(server, login(server, format), loop, config.connectTimeout(),
                    config.maxPacketSize(), BackendConnection.GreetingObserver.NONE, channels).addListener(future -> {
                if (!future.isSuccess()) {
                    failed.accept(new NoConnection(server.address(), future.cause().getMessage()));
                    return;
                }
                BackendConnection connection = (BackendConnection) future.getNow();
                InternalCommand.runInOrder(connection, format.settings(), command -> { }, () -> {
                    links.put(format.key(), new Link(connection));
                    connection.onIdleClose(() -> lost(format, connection));
                    LOG.info("cache refresh worker {}: connected to {} (picked at random among the up servers)",
                            number, server.address());
                    then.accept(connection);
                }, error -> {
                    connection.close();
                    failed.accept(new NoConnection(server.address(), "replaying the session settings of the entry: "
                            + error.message()));
                }, failure -> failed.accept(new NoConnection(server.address(), failure.getMessage())));
            });
        }

        /** Gantry's own account on the server, in the entry's result format. */
        private BackendLogin login(UpstreamServer server, Rerun.Format format) {
            return new BackendLogin(server.url().user(),
                    BackendSecret.password(server.url().password().getBytes(StandardCharsets.UTF_8)),
                    format.database(), format.collationId(), format.capabilities(), format.mariaDbCapabilities());
        }

        private void lost(Rerun.Format format, BackendConnection connection) {
            Link link = links.get(format.key());
            if (link != null && link.connection == connection) {
                links.remove(format.key());
            }
            connection.close();
        }

        private void closeIdle() {
            try {
                long now = System.nanoTime();
                for (Iterator<Link> it = links.values().iterator(); it.hasNext(); ) {
                    Link link = it.next();
                    if (now - link.lastUsedNanos > IDLE_CLOSE.toNanos() && !link.connection.isBusy()) {
                        it.remove();
                        link.connection.close();
                    }
                }
            } catch (RuntimeException e) {
                LOG.error("cache refresh worker {}: closing idle connections failed: {}", number, e.toString(), e);
            }
        }

        void close() {
            idleCheck.cancel(false);
            loop.execute(() -> {
                links.values().forEach(link -> link.connection.close());
                links.clear();
            });
        }
    }
}
