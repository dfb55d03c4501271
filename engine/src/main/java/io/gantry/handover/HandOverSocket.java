package io.gantry.handover;

import io.gantry.localsocket.SocketFile;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.channel.unix.FileDescriptor;
import io.netty.channel.unix.Socket;
import io.netty.handler.codec.LineBasedFrameDecoder;
import io.netty.handler.codec.string.StringDecoder;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running Gantry's end of a take-over ({@link HandOverProtocol}): a Unix socket in the data directory, owner-only
 * as the admin socket is ({@link SocketFile}), on which one Gantry at a time may take over. It passes the listening
 * socket's descriptor, has the {@link Lender} let go of the data directory and takes it back if the connection
 * closes before the new Gantry said it listens.
 *
 * <p>Threads: one epoll event loop ({@code gantry-hand-over}) frames lines and carries the descriptor (only Netty's
 * native epoll channels send {@code SCM_RIGHTS}); every step of the conversation, letting go and taking back
 * included, runs in order on {@code gantry-hand-over-work}, so none blocks the loop and none races another.
 */
public final class HandOverSocket implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(HandOverSocket.class);
    /** How long a Gantry taking over whose connection closed is watched for dying before it is taken to run on. */
    private static final Duration SUCCESSOR_GRACE = Duration.ofMillis(500);
    /** How often the sessions that cannot move yet are said while a take-over waits for them. */
    private static final Duration WAIT_LOG_INTERVAL = Duration.ofSeconds(5);
    private static final SocketFile.Name NAME = new SocketFile.Name("the hand-over socket",
            "choose a shorter --data-dir");

    /** What the running Gantry lends to the one taking over, and how it lets go. */
    public interface Lender {

        /** Where its proxy listens, {@code host:port}. */
        String listenAddress();

        /** Its {@code --socket-transport}. */
        String transport();

        /** Its Gantry version, for the logs of the one taking over. */
        String version();

        /** The listening socket's descriptor; empty when its transport keeps it out of reach (NIO). */
        Optional<FileDescriptor> listener();

        /**
         * Lets go of everything that holds the data directory or a port the new Gantry binds, while the proxy goes on
         * serving and accepting. On failure it has taken back what it let go.
         *
         * @param borrower who takes over, for the logs ("the Gantry taking over (pid 42)")
         */
        void lend(String borrower) throws Exception;

        /** Takes back what {@link #lend} let go: the Gantry taking over failed or went away. */
        void takeBack(String borrower);

        /**
         * The session ids this Gantry gave, and may give until it stops accepting, are at most this: the Gantry taking
         * over gives ids above it, so every session keeps its {@code CONNECTION_ID()} and no two share one.
         */
        long sessionIdsUpTo();

        /** The new Gantry listens: stop accepting new clients, keeping the listening socket open. */
        void stopAccepting();

        /** Accept again: the new Gantry went away before the hand-over was done. */
        void acceptAgain();

        /**
         * Up to {@code max} sessions that can move now (between two statements, outside a transaction, holding no
         * server connection's state), each held still until {@link MovingSession#moved} or
         * {@link MovingSession#stays}; empty when none can now. A TLS session found there is ended as a drain ends
         * it instead ({@link #sessionsEnded}).
         */
        List<MovingSession> nextSessions(int max);

        /** Sessions this Gantry still serves: each moves once it can, or is drained. */
        int sessionsHeld();

        /**
         * Why the sessions held could not move at the last {@link #nextSession}, in words: "2 (in a transaction), 1
         * (a statement runs)".
         */
        String sessionsWaiting();

        /** TLS sessions ended between two statements since the hand-over began, as a drain ends them. */
        int sessionsEnded();

        /** The hand-over is done: drain what is left and stop, as on SIGTERM. */
        void handedOver(Successor successor);

        /** Whether the process {@code pid}, the Gantry taking over, still runs ({@link #processRuns}). */
        default boolean stillRuns(long pid) {
            return processRuns(pid);
        }
    }

    /** Where the one conversation is; changed only on the work thread. */
    private enum Step { GREETED, LISTENER_SENT, LENT, MOVING, HANDED_OVER }

    private final Path path;
    private final Lender lender;
    private final EventLoopGroup loop = new MultiThreadIoEventLoopGroup(1,
            new DefaultThreadFactory("gantry-hand-over", true), EpollIoHandler.newFactory());
    private final ExecutorService work = Executors.newSingleThreadExecutor(
            new DefaultThreadFactory("gantry-hand-over-work", true));
    /** The conversation under way, its step and its peer's name; touched only on the work thread. */
    private Channel conversation;
    private Step step;
    /** The sessions sent and not yet confirmed, by id, in the order sent; on the work thread. */
    private final Map<Long, MovingSession> inFlight = new LinkedHashMap<>();
    private int moved;
    private long lastWaitLogged = System.nanoTime();
    /** Read when the connection opens: once it is closed, the kernel no longer says who it was. */
    private String borrower;
    private OptionalLong borrowerPid = OptionalLong.empty();
    private Channel server;
    private SocketFile file;

    private HandOverSocket(Path path, Lender lender) {
        this.path = path;
        this.lender = lender;
    }

    /**
     * Makes the hand-over socket at {@code path} and answers there.
     *
     * @return empty where Netty's native epoll transport cannot load (off Linux): no take-over is possible there
     * @throws IOException when the socket cannot be made; nothing is left running
     */
    public static Optional<HandOverSocket> start(Path path, Lender lender) throws IOException {
        if (!Epoll.isAvailable()) {
            LOG.info("hand-over: no hand-over socket, so no --take-over of this Gantry: passing a socket needs "
                    + "native epoll ({})", Epoll.unavailabilityCause().getMessage());
            return Optional.empty();
        }
        HandOverSocket socket = new HandOverSocket(path, lender);
        try {
            socket.bind();
            LOG.info("hand-over: a Gantry started with --take-over takes over through {}", socket.file.path());
            return Optional.of(socket);
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    private void bind() throws IOException {
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(loop)
                .channel(EpollServerDomainSocketChannel.class)
                .childHandler(new ChannelInitializer<EpollDomainSocketChannel>() {
                    @Override
                    protected void initChannel(EpollDomainSocketChannel channel) {
                        channel.pipeline().addLast(
                                new LineBasedFrameDecoder(HandOverProtocol.MAX_LINE_BYTES, true, true),
                                new StringDecoder(StandardCharsets.UTF_8),
                                new Conversation());
                    }
                });
        file = SocketFile.bind(path, NAME, address -> {
            try {
                server = bootstrap.bind(new DomainSocketAddress(address.getPath().toString())).sync().channel();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while binding the hand-over socket", e);
            } catch (Exception e) {
                throw new IOException("cannot bind the hand-over socket: " + e.getMessage(), e);
            }
        });
    }

    /** Stops listening and removes the file, so that the Gantry taking over can make its own there. */
    private void unbind() {
        if (server != null) {
            server.close().syncUninterruptibly();
            server = null;
        }
        if (file != null) {
            file.delete();
            file = null;
        }
    }

    /** Handles one connection; every step goes to the work thread, in order. */
    private final class Conversation extends SimpleChannelInboundHandler<String> {

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            onWorkThread(() -> opened(ctx.channel()));
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, String line) {
            onWorkThread(() -> asked(ctx.channel(), line.strip()));
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            onWorkThread(() -> closed(ctx.channel()));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LOG.warn("hand-over: closing a connection: {}", cause.toString());
            ctx.close();
        }
    }

    private void onWorkThread(Runnable step) {
        try {
            work.execute(step);
        } catch (RejectedExecutionException closing) {
            // This Gantry is stopping: no conversation has anything left to do.
        }
    }

    private void opened(Channel channel) {
        boolean busy = conversation != null;
        HandOverProtocol.Greeting greeting = HandOverProtocol.Greeting.ofThisGantry(ProcessHandle.current().pid(),
                lender.version(), lender.listenAddress(), lender.transport(), busy);
        if (busy) {
            LOG.warn("hand-over: {} wants to take over while {} does; it is told so", nameOf(pidOf(channel)),
                    borrower);
            send(channel, greeting.line()).addListener(future -> channel.close());
            return;
        }
        conversation = channel;
        step = Step.GREETED;
        borrowerPid = pidOf(channel);
        borrower = nameOf(borrowerPid);
        send(channel, greeting.line());
    }

    private void asked(Channel channel, String line) {
        if (channel != conversation) {
            return;
        }
        if (step == Step.GREETED && line.equals(HandOverProtocol.LISTENER)) {
            Optional<FileDescriptor> listener = lender.listener();
            if (listener.isEmpty()) {
                refuse(channel, "its --socket-transport " + lender.transport() + " cannot pass its listening socket");
                return;
            }
            // A new object: the outbound buffer drops the message once sent, and the descriptor stays this one's.
            channel.writeAndFlush(new FileDescriptor(listener.get().intValue()));
            step = Step.LISTENER_SENT;
            LOG.info("hand-over: passed the listening socket ({}) to {}", lender.listenAddress(), borrower);
        } else if (step == Step.LISTENER_SENT && line.equals(HandOverProtocol.RELEASE)) {
            try {
                lender.lend(borrower);
            } catch (Exception e) {
                LOG.error("hand-over: could not let go of the data directory for {}: {}", borrower, e.toString(), e);
                refuse(channel, "could not let go of the data directory: " + e.getMessage());
                return;
            }
            unbind();
            step = Step.LENT;
            send(channel, HandOverProtocol.RELEASED + " ids-after=" + lender.sessionIdsUpTo());
        } else if (step == Step.LENT && line.equals(HandOverProtocol.LISTENING)) {
            step = Step.MOVING;
            moved = 0;
            lender.stopAccepting();
            LOG.info("hand-over: {} listens; this Gantry stops accepting and passes it its {} sessions, each between "
                    + "two statements", borrower, lender.sessionsHeld());
            send(channel, HandOverProtocol.MOVING);
        } else if (step == Step.MOVING) {
            moving(channel, line);
        } else {
            refuse(channel, "'" + HandOverProtocol.abbreviate(line) + "' was not expected after " + step);
        }
    }

    /** A request of the sessions' part of the conversation. */
    private void moving(Channel channel, String line) {
        String[] words = line.split(" ", 3);
        long number = words.length >= 2 ? parseNumber(words[1]) : -1;
        MovingSession named = inFlight.get(number);
        if (inFlight.isEmpty() && words[0].equals(HandOverProtocol.SESSIONS) && words.length == 2 && number > 0) {
            sendSessions(channel, (int) Math.min(number, HandOverProtocol.SESSIONS_PER_BATCH));
        } else if (named != null && words.length == 2 && words[0].equals(HandOverProtocol.DESCRIPTOR)) {
            passDescriptor(channel, named);
        } else if (named != null && words.length == 2 && words[0].equals(HandOverProtocol.ADOPTED)) {
            inFlight.remove(named.id());
            named.moved().run();
            moved++;
        } else if (named != null && words.length == 3 && words[0].equals(HandOverProtocol.KEPT)) {
            LOG.warn("hand-over: {} could not take session {} ({}); this Gantry serves it on", borrower, named.id(),
                    words[2]);
            inFlight.remove(named.id());
            named.stays().run();
        } else if (inFlight.isEmpty() && line.equals(HandOverProtocol.DRAIN)) {
            LOG.info("hand-over: {} sessions could not move in time: {}", lender.sessionsHeld(),
                    lender.sessionsWaiting());
            send(channel, HandOverProtocol.DRAINING + " held=" + lender.sessionsHeld() + " ended="
                    + lender.sessionsEnded());
            handedOver("its --take-over-timeout passed");
        } else {
            // The new Gantry serves already: closing would have this one take everything back beside it. It drains
            // instead, and the sessions on their way stay here until then.
            LOG.warn("hand-over: {} sent '{}', which was not expected while sessions move; this Gantry drains what "
                    + "it holds", borrower, HandOverProtocol.abbreviate(line));
            keepInFlight();
            send(channel, HandOverProtocol.DRAINING + " held=" + lender.sessionsHeld() + " ended="
                    + lender.sessionsEnded());
            handedOver("a request it did not expect");
        }
    }

    /** The next batch of at most {@code max} sessions, each held still; or why there is none. */
    private void sendSessions(Channel channel, int max) {
        List<MovingSession> batch = lender.nextSessions(max);
        if (!batch.isEmpty()) {
            StringBuilder lines = new StringBuilder(HandOverProtocol.SESSIONS).append(' ').append(batch.size());
            for (MovingSession session : batch) {
                inFlight.put(session.id(), session);
                lines.append('\n').append(HandOverProtocol.SESSION).append(' ').append(session.id()).append(' ')
                        .append(session.state());
            }
            send(channel, lines.toString());
        } else if (lender.sessionsHeld() == 0) {
            send(channel, HandOverProtocol.DONE + " ended=" + lender.sessionsEnded());
            handedOver("it holds no session any more");
        } else {
            send(channel, HandOverProtocol.WAIT + " held=" + lender.sessionsHeld() + " ended="
                    + lender.sessionsEnded());
            if (System.nanoTime() - lastWaitLogged > WAIT_LOG_INTERVAL.toNanos()) {
                lastWaitLogged = System.nanoTime();
                LOG.info("hand-over: {} sessions cannot move yet: {}", lender.sessionsHeld(),
                        lender.sessionsWaiting());
            }
        }
    }

    /** The client socket of {@code session}, sent and not yet confirmed. */
    private void passDescriptor(Channel channel, MovingSession session) {
        if (!session.open().getAsBoolean()) {
            // Its client left while it was held: its number may name another file now. The new Gantry waits for
            // a descriptor, so it gets a socket that was never connected instead: it ends that session at its
            // first read, as the client's close would have, and the sessions after it go on moving.
            LOG.info("hand-over: session {} ended as it was being passed (its client left); the Gantry taking "
                    + "over gets an unconnected socket for it, which it ends at once", session.id());
            Socket standIn = Socket.newSocketStream();
            channel.writeAndFlush(standIn).addListener(sent -> {
                try {
                    standIn.close();
                } catch (IOException e) {
                    LOG.debug("hand-over: closing the stand-in socket: {}", e.toString());
                }
            });
            return;
        }
        // A new object, as for the listener: the descriptor stays this process's until ADOPTED.
        channel.writeAndFlush(new FileDescriptor(session.descriptor().intValue()));
    }

    /** The sessions sent and not confirmed stay with this Gantry: the conversation ended in the middle. */
    private void keepInFlight() {
        inFlight.values().forEach(session -> session.stays().run());
        inFlight.clear();
    }

    /** A request's number (a session id, or how many sessions), or -1 when it is none. */
    private static long parseNumber(String word) {
        try {
            return Long.parseLong(word);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private void handedOver(String why) {
        step = Step.HANDED_OVER;
        LOG.info("hand-over: done ({}): {} sessions moved to {}; {} ended as TLS sessions; this Gantry drains the {} "
                + "it still holds and stops", why, moved, borrower, lender.sessionsEnded(), lender.sessionsHeld());
        lender.handedOver(new Successor(borrower, borrowerPid));
    }

    private void closed(Channel channel) {
        if (channel != conversation) {
            return;
        }
        conversation = null;
        if (step == Step.MOVING && successorRunsOn()) {
            // The new Gantry listens and serves what moved: taking back would make two Gantrys serve the port. The
            // connection broke without it dying (a failed write closes it: a descriptor whose client left in the
            // instant after its check): this one lets the new one have the port, as after DRAIN.
            keepInFlight();
            LOG.warn("hand-over: the connection to {} broke off while sessions moved ({} moved), but that process "
                    + "runs on and serves them; this Gantry lets it have the port", borrower, moved);
            handedOver("its connection to the Gantry taking over broke off");
            return;
        }
        if (step == Step.LENT || step == Step.MOVING) {
            if (step == Step.LENT) {
                LOG.warn("hand-over: {} went away before it listened; taking the data directory back", borrower);
            } else {
                keepInFlight();
                LOG.warn("hand-over: {} went away while sessions moved to it ({} moved, gone with it); taking the "
                        + "data directory back, accepting again and serving the {} sessions still here", borrower,
                        moved, lender.sessionsHeld());
            }
            lender.takeBack(borrower);
            if (step == Step.MOVING) {
                lender.acceptAgain();
            }
            try {
                bind();
            } catch (IOException e) {
                LOG.error("hand-over: cannot make the hand-over socket again, so this Gantry cannot be taken over "
                        + "until it restarts: {}", e.getMessage());
            }
        } else if (step != Step.HANDED_OVER) {
            LOG.info("hand-over: {} went away before it took anything over; nothing changes", borrower);
        }
    }

    /**
     * Whether the Gantry taking over still runs, its connection gone: watched for half a second, since a process
     * killed closes its sockets before it becomes a zombie, so its end of the connection may close first; it is a
     * zombie within milliseconds. Unknown without the peer's pid: then it is taken as gone, as before.
     */
    private boolean successorRunsOn() {
        return borrowerPid.isPresent() && lender.stillRuns(borrowerPid.getAsLong());
    }

    /** Whether process {@code pid} runs: not gone, and not a zombie, for {@link #SUCCESSOR_GRACE}. */
    static boolean processRuns(long pid) {
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        long deadline = System.nanoTime() + SUCCESSOR_GRACE.toNanos();
        do {
            try {
                String line = Files.readString(stat);
                // pid (comm) STATE ...: the comm may hold spaces and parentheses, so the state follows the last ')'.
                char state = line.charAt(line.lastIndexOf(')') + 2);
                if (state == 'Z' || state == 'X' || state == 'x') {
                    return false;
                }
            } catch (IOException | RuntimeException gone) {
                return false;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        } while (System.nanoTime() < deadline);
        return true;
    }

    private void refuse(Channel channel, String reason) {
        LOG.warn("hand-over: refused {}: {}", borrower, reason);
        send(channel, HandOverProtocol.REFUSED + " " + reason).addListener(future -> channel.close());
    }

    private static ChannelFuture send(Channel channel, String line) {
        return channel.writeAndFlush(Unpooled.copiedBuffer(line + "\n", StandardCharsets.UTF_8));
    }

    /** The peer's process id, which the kernel gives with the connection. */
    private static OptionalLong pidOf(Channel channel) {
        try {
            return OptionalLong.of(((EpollDomainSocketChannel) channel).peerCredentials().pid());
        } catch (IOException e) {
            return OptionalLong.empty();
        }
    }

    /** The peer as the logs name it. */
    private static String nameOf(OptionalLong pid) {
        return pid.isPresent() ? "the Gantry taking over (pid " + pid.getAsLong() + ")" : "the Gantry taking over";
    }

    @Override
    public void close() {
        try {
            work.submit(this::unbind).get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.debug("hand-over: closing the socket: {}", e.toString());
        }
        work.shutdownNow();
        loop.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
