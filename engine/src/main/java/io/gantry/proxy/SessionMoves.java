package io.gantry.proxy;

import io.gantry.proxy.frontend.ClientSession;
import io.gantry.proxy.session.LiveSession;
import io.gantry.proxy.session.MovedSession;
import io.gantry.proxy.session.ProxyConfig;
import io.gantry.proxy.session.ProxyServices;
import io.gantry.proxy.transport.ChannelBuffers;
import io.gantry.proxy.transport.SocketTransport;
import io.gantry.wire.PacketFrameDecoder;
import io.gantry.wire.PacketFrameEncoder;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.unix.FileDescriptor;
import java.io.IOException;
import java.time.Duration;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Client sessions moving between two Gantry processes in a take-over (docs/ARCHITECTURE.md, "The path of a
 * take-over"): in the Gantry taken over, the next session that can move, held still; in the one taking over, a
 * session served from a client socket's descriptor and the state the other sent.
 */
final class SessionMoves {

    private static final Logger LOG = LoggerFactory.getLogger(SessionMoves.class);
    /** How long one session's event loop may take to hold it still. */
    private static final Duration DEPART_WAIT = Duration.ofSeconds(5);
    /** How often sessions held back are looked at again, at most. */
    private static final Duration HELD_BACK_LOOKS = Duration.ofMillis(2);

    private final ProxyServices services;
    private final ProxyConfig config;
    private final EventLoopGroup workers;
    private final ChannelGroup openChannels;
    private final AtomicInteger ended = new AtomicInteger();
    private volatile String waiting = "";
    /** What is left of the current pass over the sessions ({@link #next}). */
    private Iterator<LiveSession> pass = Collections.emptyIterator();
    /** Sessions whose next command was held back at a look, to be looked at again first ({@link #nextHeldBack}). */
    private final Set<LiveSession> heldBack = new LinkedHashSet<>();
    private long heldBackLooked;
    /** Why the sessions of the current pass that could not move could not, with how many of each. */
    private final Map<String, Integer> notMovingYet = new TreeMap<>();

    SessionMoves(ProxyServices services, ProxyConfig config, EventLoopGroup workers, ChannelGroup openChannels) {
        this.services = services;
        this.config = config;
        this.workers = workers;
        this.openChannels = openChannels;
    }

    /**
     * The next session that can move now, held still ({@link LiveSession#departOnItsLoop}); empty when none can. TLS
     * sessions found on the way are ended as a drain ends them, and counted ({@link #ended}).
     *
     * <p>Sessions are looked at in passes over one copy of the registry, each session once per pass: a call goes on
     * where the last one stopped, and the end of a pass answers empty (the Gantry taking over asks again a moment
     * later, and a new pass begins). Asking every session from the start on every call made moving n sessions cost
     * n² copies of the registry, and a trip to the event loop of every session that could not move yet (one in a
     * transaction) for every session that could.
     */
    synchronized Optional<LiveSession.Departure.Moving> next() throws InterruptedException {
        Optional<LiveSession.Departure.Moving> heldBackReady = nextHeldBack();
        if (heldBackReady.isPresent()) {
            return heldBackReady;
        }
        if (!pass.hasNext()) {
            pass = services.sessions().all().iterator();
            notMovingYet.clear();
        }
        while (pass.hasNext()) {
            LiveSession session = pass.next();
            if (session.released()) {
                continue;
            }
            LiveSession.Departure departure = departure(session);
            if (departure instanceof LiveSession.Departure.Moving moving) {
                return Optional.of(moving);
            }
            if (departure instanceof LiveSession.Departure.Ended) {
                ended.incrementAndGet();
            } else if (departure instanceof LiveSession.Departure.NotNow notNow) {
                notMovingYet.merge(notNow.why(), 1, Integer::sum);
                if (notNow.heldBack()) {
                    heldBack.add(session);
                }
            }
        }
        waiting = notMovingYet.entrySet().stream().map(entry -> entry.getValue() + " (" + entry.getKey() + ")")
                .collect(Collectors.joining(", "));
        return Optional.empty();
    }

    /**
     * The first session held back at an earlier look ({@link LiveSession.Departure.NotNow#heldBack}) that can move
     * now, its statement answered meanwhile; looked at no more often than every {@link #HELD_BACK_LOOKS}, so that
     * a busy session waits for its move about as long as its statement takes, not for a whole pass over the others.
     */
    private Optional<LiveSession.Departure.Moving> nextHeldBack() throws InterruptedException {
        if (heldBack.isEmpty() || System.nanoTime() - heldBackLooked < HELD_BACK_LOOKS.toNanos()) {
            return Optional.empty();
        }
        heldBackLooked = System.nanoTime();
        for (Iterator<LiveSession> sessions = heldBack.iterator(); sessions.hasNext(); ) {
            LiveSession session = sessions.next();
            LiveSession.Departure departure = session.released() ? null : departure(session);
            if (departure instanceof LiveSession.Departure.NotNow notNow && notNow.heldBack()) {
                continue; // its statement still runs
            }
            sessions.remove();
            if (departure instanceof LiveSession.Departure.Moving moving) {
                return Optional.of(moving);
            }
            if (departure instanceof LiveSession.Departure.Ended) {
                ended.incrementAndGet();
            }
        }
        return Optional.empty();
    }

    /** What {@code session} makes of a request to depart, on its event loop; null if its loop did not answer. */
    private static LiveSession.Departure departure(LiveSession session) throws InterruptedException {
        try {
            return session.departOnItsLoop().get(DEPART_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("proxy: a session could not be held still for the take-over: {}", e.toString());
            return null;
        }
    }

    /** The take-over ended here (the Gantry taking over went away): every session held back reads again. */
    synchronized void releaseAll() {
        pass = Collections.emptyIterator();
        heldBack.clear();
        for (LiveSession session : services.sessions().all()) {
            session.releaseFromMoveOnItsLoop();
        }
    }

    /** Sessions this process still serves: not closed, and not ended with their server side gone. */
    int held() {
        return (int) services.sessions().busy();
    }

    /** Why the sessions that could not move in the last whole pass could not, in words: "2 (in a transaction)". */
    String waiting() {
        return waiting;
    }

    /** TLS sessions ended for a take-over. */
    int ended() {
        return ended.get();
    }

    /**
     * Serves a session moved from the Gantry taken over: a channel of the client socket {@code descriptor} on one of
     * the I/O threads (epoll: the one transport whose channels can be made of a descriptor), with the session's id
     * and state, not yet reading.
     *
     * @return what starts it reading
     * @throws IllegalArgumentException when {@code state} is not a session's, or this proxy is not on epoll; the
     *                                  descriptor is then closed
     */
    Runnable adopt(FileDescriptor descriptor, String state) throws InterruptedException {
        MovedSession moved;
        try {
            if (config.socketTransport() != SocketTransport.EPOLL) {
                throw new IllegalArgumentException("a moved session needs --socket-transport epoll, not "
                        + config.socketTransport().flagValue());
            }
            moved = MovedSession.fromJson(state);
            if (services.sessions().find(moved.id()).isPresent()) {
                throw new IllegalArgumentException("session id " + moved.id() + " is taken here");
            }
        } catch (IllegalArgumentException e) {
            closeQuietly(descriptor);
            throw e;
        }
        EpollSocketChannel channel = new EpollSocketChannel(descriptor.intValue());
        channel.config().setAutoRead(false);
        channel.config().setAllocator(ChannelBuffers.ALLOCATOR);
        channel.config().setTcpNoDelay(true);
        ClientSession session = new ClientSession(services, moved);
        openChannels.add(channel);
        channel.pipeline().addLast(new PacketFrameDecoder(config.maxPacketSize()), new PacketFrameEncoder(), session);
        ChannelFuture registered = workers.next().register(channel).await();
        if (!registered.isSuccess()) {
            channel.close();
            throw new IllegalStateException("cannot serve session " + moved.id() + ": " + registered.cause());
        }
        // Run on the channel's loop, after its registration's own task, which made the session (channelActive).
        return () -> channel.eventLoop().execute(session::beginAdopted);
    }

    private static void closeQuietly(FileDescriptor descriptor) {
        try {
            descriptor.close();
        } catch (IOException e) {
            LOG.debug("proxy: closing a descriptor: {}", e.toString());
        }
    }
}
