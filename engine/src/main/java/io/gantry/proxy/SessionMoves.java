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
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
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
    /** What is left of the current pass over the sessions ({@link #next}), and how many that is. */
    private Iterator<LiveSession> pass = Collections.emptyIterator();
    private int leftInPass;
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
     * Up to {@code max} sessions that can move now, each held still ({@link LiveSession#departOnItsLoop}); empty
     * when none can. TLS sessions found on the way are ended as a drain ends them, and counted ({@link #ended}).
     *
     * <p>Sessions are looked at in passes over one copy of the registry, each session once per pass: a call goes on
     * where the last one stopped, and the end of a pass answers what it found, maybe nothing (the Gantry taking over
     * asks again a moment later, and a new pass begins). Asking every session from the start on every call made
     * moving n sessions cost n² copies of the registry. The sessions of a batch are asked all at once, so a batch
     * costs each event loop one trip, not one per session, which under load waits behind the statements there.
     */
    synchronized List<LiveSession.Departure.Moving> next(int max) throws InterruptedException {
        List<LiveSession.Departure.Moving> batch = new ArrayList<>(max);
        nextHeldBack(batch, max);
        if (!batch.isEmpty()) {
            // Busy clients, whose next commands wait for this move: a batch of them alone is the quickest.
            return batch;
        }
        if (!pass.hasNext()) {
            List<LiveSession> sessions = services.sessions().all();
            pass = sessions.iterator();
            leftInPass = sessions.size();
            notMovingYet.clear();
        }
        while (batch.size() < max && pass.hasNext()) {
            List<LiveSession> asked = new ArrayList<>(max - batch.size());
            while (asked.size() < max - batch.size() && pass.hasNext()) {
                LiveSession session = pass.next();
                leftInPass--;
                if (!session.released()) {
                    asked.add(session);
                }
            }
            List<LiveSession.Departure> departures = departures(asked);
            for (int i = 0; i < asked.size(); i++) {
                LiveSession.Departure departure = departures.get(i);
                if (departure instanceof LiveSession.Departure.Moving moving) {
                    batch.add(moving);
                } else if (departure instanceof LiveSession.Departure.Ended) {
                    ended.incrementAndGet();
                } else if (departure instanceof LiveSession.Departure.NotNow notNow) {
                    notMovingYet.merge(notNow.why(), 1, Integer::sum);
                    if (notNow.heldBack()) {
                        heldBack.add(asked.get(i));
                    }
                }
            }
        }
        if (!pass.hasNext()) {
            waiting = reasons();
        }
        return batch;
    }

    /**
     * Into {@code batch}, up to {@code max}: the sessions held back at an earlier look
     * ({@link LiveSession.Departure.NotNow#heldBack}) that can move now, their statements answered meanwhile; looked
     * at no more often than every {@link #HELD_BACK_LOOKS}, so that a busy session waits for its move about as long
     * as its statement takes, not for a whole pass over the others.
     */
    private void nextHeldBack(List<LiveSession.Departure.Moving> batch, int max) throws InterruptedException {
        if (heldBack.isEmpty() || System.nanoTime() - heldBackLooked < HELD_BACK_LOOKS.toNanos()) {
            return;
        }
        heldBackLooked = System.nanoTime();
        List<LiveSession> asked = new ArrayList<>();
        for (Iterator<LiveSession> sessions = heldBack.iterator(); sessions.hasNext() && asked.size() < max; ) {
            LiveSession session = sessions.next();
            sessions.remove();
            if (!session.released()) {
                asked.add(session);
            }
        }
        List<LiveSession.Departure> departures = departures(asked);
        for (int i = 0; i < asked.size(); i++) {
            LiveSession.Departure departure = departures.get(i);
            if (departure instanceof LiveSession.Departure.NotNow notNow && notNow.heldBack()) {
                heldBack.add(asked.get(i)); // its statement still runs
            } else if (departure instanceof LiveSession.Departure.Moving moving) {
                batch.add(moving);
            } else if (departure instanceof LiveSession.Departure.Ended) {
                ended.incrementAndGet();
            }
        }
    }

    /**
     * What each of {@code sessions} makes of a request to depart, asked all at once on their event loops; null for
     * one whose loop did not answer within {@link #DEPART_WAIT}. Such a session, should it be held still later, is
     * let go at once: nobody will pass it.
     */
    private static List<LiveSession.Departure> departures(List<LiveSession> sessions) throws InterruptedException {
        List<CompletableFuture<LiveSession.Departure>> asked = new ArrayList<>(sessions.size());
        sessions.forEach(session -> asked.add(session.departOnItsLoop()));
        long deadline = System.nanoTime() + DEPART_WAIT.toNanos();
        List<LiveSession.Departure> departures = new ArrayList<>(asked.size());
        for (CompletableFuture<LiveSession.Departure> departure : asked) {
            try {
                departures.add(departure.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
            } catch (ExecutionException | TimeoutException e) {
                LOG.warn("proxy: a session could not be held still for the take-over: {}", e.toString());
                departure.thenAccept(late -> {
                    if (late instanceof LiveSession.Departure.Moving moving) {
                        moving.stays().run();
                    }
                });
                departures.add(null);
            }
        }
        return departures;
    }

    /** The take-over ended here (the Gantry taking over went away): every session held back reads again. */
    synchronized void releaseAll() {
        pass = Collections.emptyIterator();
        leftInPass = 0;
        heldBack.clear();
        for (LiveSession session : services.sessions().all()) {
            session.releaseFromMoveOnItsLoop();
        }
    }

    /** Sessions this process still serves: not closed, and not ended with their server side gone. */
    int held() {
        return (int) services.sessions().busy();
    }

    /**
     * Why the sessions that could not move could not, in words: "2 (in a transaction)", as the last whole pass found
     * them; while a pass is under way, as it found them so far, with those it has not looked at yet ("3479 (not
     * looked at yet)").
     */
    synchronized String waiting() {
        if (leftInPass <= 0) {
            return waiting;
        }
        String soFar = reasons();
        String notYet = leftInPass + " (not looked at yet)";
        return soFar.isEmpty() ? notYet : soFar + ", " + notYet;
    }

    private String reasons() {
        return notMovingYet.entrySet().stream().map(entry -> entry.getValue() + " (" + entry.getKey() + ")")
                .collect(Collectors.joining(", "));
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
     * @return completes with what starts it reading once the channel is registered, or fails (the descriptor then
     *         closed); cancelled meanwhile, the channel is closed
     * @throws IllegalArgumentException when {@code state} is not a session's, or this proxy is not on epoll; the
     *                                  descriptor is then closed
     */
    CompletableFuture<Runnable> adopt(FileDescriptor descriptor, String state) {
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
        CompletableFuture<Runnable> adopted = new CompletableFuture<>();
        workers.next().register(channel).addListener(registered -> {
            if (!registered.isSuccess()) {
                channel.close();
                adopted.completeExceptionally(new IllegalStateException("cannot serve session " + moved.id() + ": "
                        + registered.cause()));
            } else if (!adopted.complete(() -> channel.eventLoop().execute(session::beginAdopted))) {
                channel.close(); // given up on meanwhile: the Gantry taken over serves it
            }
        });
        // beginAdopted runs on the channel's loop after its registration's own task, which made the session
        // (channelActive after this listener).
        return adopted;
    }

    private static void closeQuietly(FileDescriptor descriptor) {
        try {
            descriptor.close();
        } catch (IOException e) {
            LOG.debug("proxy: closing a descriptor: {}", e.toString());
        }
    }
}
