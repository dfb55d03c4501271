package io.gantry.handover;

import io.gantry.proxy.transport.AdoptedListener;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.channel.unix.DomainSocketReadMode;
import io.netty.channel.unix.FileDescriptor;
import io.netty.handler.codec.LineBasedFrameDecoder;
import io.netty.handler.codec.string.StringDecoder;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The end of a take-over in the Gantry started with {@code --take-over} ({@link HandOverProtocol}): it connects to
 * the running Gantry of the same data directory, checks that they speak one version, takes the listening socket,
 * asks the running Gantry to let go of the data directory, and says when it listens. Closing it before
 * {@link #listening} gives everything back: the running Gantry goes on as if nothing happened.
 *
 * <p>Each step blocks the calling thread (the start of {@code gantry run}) for at most its timeout; the connection's
 * own epoll loop ({@code gantry-take-over}) only frames what arrives.
 */
public final class TakeOver implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TakeOver.class);
    /** How much longer than the other steps letting go of the data directory may take. */
    static final Duration RELEASE_WAIT = Duration.ofMinutes(1);
    /** How long to wait before asking again while the running Gantry has no session that can move now. */
    static final Duration WAIT_BETWEEN_ASKS = Duration.ofMillis(10);
    /** How long a batch of sessions may take before the next is smaller: what a busy client may wait for it. */
    static final Duration BATCH_TIME = Duration.ofMillis(20);
    /** A closed connection, in the queue of what arrived. */
    private static final Object CLOSED = new Object();

    private final EventLoopGroup loop;
    private final EpollDomainSocketChannel channel;
    private final BlockingQueue<Object> arrived;
    private final HandOverProtocol.Greeting greeting;
    private final Duration timeout;

    private TakeOver(EventLoopGroup loop, EpollDomainSocketChannel channel, BlockingQueue<Object> arrived,
                     HandOverProtocol.Greeting greeting, Duration timeout) {
        this.loop = loop;
        this.channel = channel;
        this.arrived = arrived;
        this.greeting = greeting;
        this.timeout = timeout;
    }

    /**
     * Connects to the Gantry running on {@code dataDir} and reads its greeting. Nothing is asked yet.
     *
     * @param timeout how long each answer may take, letting go of the data directory excepted
     * @throws HandOverException naming the data directory when no Gantry runs there, when it speaks another version
     *                           of the protocol, when another take-over is under way, or when its listening socket
     *                           cannot be passed
     */
    public static TakeOver connect(Path dataDir, Duration timeout) throws InterruptedException {
        Path socket = HandOverProtocol.socketIn(dataDir.toAbsolutePath().normalize());
        if (!Files.exists(socket)) {
            throw new HandOverException("--take-over: there is no hand-over socket " + socket + ", so no Gantry "
                    + "can be taken over on --data-dir " + dataDir + " now. If another Gantry is taking over from "
                    + "the one running there at this moment, the socket is back once that one listens: try again in "
                    + "a few seconds. If no Gantry runs there, start without --take-over; if the running Gantry was "
                    + "made before --take-over existed, stop it with SIGTERM, then start this one");
        }
        if (!Epoll.isAvailable()) {
            throw new HandOverException("--take-over needs Netty's native epoll transport, which does not load here: "
                    + Epoll.unavailabilityCause().getMessage());
        }
        BlockingQueue<Object> arrived = new LinkedBlockingQueue<>();
        EventLoopGroup loop = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("gantry-take-over", true),
                EpollIoHandler.newFactory());
        try {
            ChannelFuture connected = new Bootstrap().group(loop).channel(EpollDomainSocketChannel.class)
                    .handler(new ChannelInitializer<EpollDomainSocketChannel>() {
                        @Override
                        protected void initChannel(EpollDomainSocketChannel channel) {
                            channel.pipeline().addLast(
                                    new LineBasedFrameDecoder(HandOverProtocol.MAX_SESSION_LINE_BYTES, true, true),
                                    new StringDecoder(StandardCharsets.UTF_8),
                                    new Arrivals(arrived));
                        }
                    })
                    .connect(new DomainSocketAddress(socket.toString())).await();
            Channel channel = connected.channel();
            // Whether it connected, not whether it is still connected: a Gantry busy with another take-over sends its
            // greeting and closes at once, which may happen before this line.
            if (!connected.isSuccess()) {
                String cause = connected.cause() == null ? "" : ": " + connected.cause().getMessage();
                throw new HandOverException("--take-over: no Gantry answers on " + socket + " (the one that made it "
                        + "is gone" + cause + "): start without --take-over");
            }
            Object first = next(arrived, "its greeting", timeout);
            if (!(first instanceof String line)) {
                throw new HandOverException("--take-over: the running Gantry closed the hand-over before its greeting");
            }
            HandOverProtocol.Greeting greeting = HandOverProtocol.Greeting.parse(line);
            if (greeting.busy()) {
                throw new HandOverException("another Gantry is taking over from the one running on --data-dir "
                        + dataDir + " (pid " + greeting.pid() + ") now; try again once it is done");
            }
            if (greeting.transport().equals("nio")) {
                throw new HandOverException("the Gantry running on --data-dir " + dataDir + " (pid " + greeting.pid()
                        + ") uses --socket-transport nio, whose listening socket cannot be passed: stop it with "
                        + "SIGTERM instead, or run it with --socket-transport epoll or io_uring next time");
            }
            LOG.info("take-over: Gantry {} (pid {}) listens on {} ({}); taking over from it", greeting.gantry(),
                    greeting.pid(), greeting.listen(), greeting.transport());
            return new TakeOver(loop, (EpollDomainSocketChannel) channel, arrived, greeting, timeout);
        } catch (RuntimeException | InterruptedException e) {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw e;
        }
    }

    /** What the running Gantry said of itself. */
    public HandOverProtocol.Greeting greeting() {
        return greeting;
    }

    /**
     * Asks for the listening socket and adopts it; the running Gantry keeps accepting on it too.
     *
     * @param listen this Gantry's {@code --listen}, which must be where the running one listens
     * @throws HandOverException when it is another address (the descriptor received is closed)
     */
    public AdoptedListener takeListener(InetSocketAddress listen) throws InterruptedException {
        // SCM_RIGHTS arrives with a byte of its own; read in the descriptor mode, or the kernel drops the descriptor.
        setReadMode(DomainSocketReadMode.FILE_DESCRIPTORS);
        send(HandOverProtocol.LISTENER);
        Object answer = next(arrived, "the listening socket", timeout);
        setReadMode(DomainSocketReadMode.BYTES);
        if (!(answer instanceof FileDescriptor descriptor)) {
            throw unexpected("the listening socket", answer);
        }
        AdoptedListener listener = AdoptedListener.of(descriptor);
        if (!listener.serves(listen)) {
            listener.closeUnadopted();
            throw new HandOverException("--listen " + listen.getHostString() + ":" + listen.getPort() + " is not "
                    + "where the running Gantry (pid " + greeting.pid() + ") listens, " + greeting.listen()
                    + ": take over with the same --listen");
        }
        return listener;
    }

    /**
     * Asks the running Gantry to let go of the data directory: it pauses its change stream (saving its position),
     * closes its admin socket, metrics port and Authority, and goes on serving. Pausing waits for the stream's
     * thread, which may be making a binlog connection that has to fail first: this waits up to
     * {@link #RELEASE_WAIT} longer than the other steps.
     *
     * @return the highest session id the running Gantry gave or may give: this one's sessions take ids above it
     */
    public long release() throws InterruptedException {
        send(HandOverProtocol.RELEASE);
        String answer = nextLine("its release of the data directory", timeout.plus(RELEASE_WAIT));
        if (!answer.startsWith(HandOverProtocol.RELEASED + " ")) {
            throw refusal(answer);
        }
        return Long.parseLong(field(answer, "ids-after"));
    }

    /**
     * Says this Gantry listens: the running one stops accepting and is ready to pass its sessions
     * ({@link #moveSessions}). Never fails: from here on this Gantry serves whatever the other answers, and if it is
     * gone there is nobody left to take sessions from.
     *
     * @return whether the running Gantry is there to pass its sessions
     */
    public boolean listening() throws InterruptedException {
        ChannelFuture sent = channel.writeAndFlush(Unpooled.copiedBuffer(HandOverProtocol.LISTENING
                + "\n", StandardCharsets.UTF_8)).await();
        if (!sent.isSuccess()) {
            LOG.warn("take-over: the Gantry taken over from (pid {}) is gone already: {}", greeting.pid(),
                    sent.cause().toString());
            return false;
        }
        Object answer = arrived.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (HandOverProtocol.MOVING.equals(answer)) {
            LOG.info("take-over: the Gantry taken over from (pid {}) stops accepting; its sessions move here",
                    greeting.pid());
            return true;
        }
        LOG.warn("take-over: the Gantry taken over from (pid {}) answered {} to LISTENING; this one serves "
                + "all the same", greeting.pid(), answer == null ? "nothing within " + timeout.toSeconds() + " s"
                : answer == CLOSED ? "by closing the connection" : "'" + answer + "'");
        return false;
    }

    /** What this Gantry does with a session the running one passes: it serves it from its socket and state. */
    public interface Adopter {

        /**
         * Begins a session of the client socket {@code descriptor} and its {@code state} (the running Gantry's JSON),
         * not yet reading from it. The sessions of a batch begin all at once, so that their event loops' trips
         * overlap.
         *
         * @return completes with what starts it reading, once it can be served (the running Gantry is then told it
         *         moved), or fails when it cannot (the descriptor is then closed, and the running Gantry serves it
         *         on); a session cancelled here after waiting too long is closed here, never served
         * @throws Exception when it cannot at once, as the failed future does
         */
        CompletableFuture<Runnable> adopt(FileDescriptor descriptor, String state) throws Exception;
    }

    /**
     * How the sessions' move went.
     *
     * @param moved     sessions this Gantry serves now, with their ids and state
     * @param ended     TLS sessions the running Gantry ended between two statements, as a drain does
     * @param drained   sessions still held when {@code --take-over-timeout} passed, left to the running Gantry's drain
     * @param failed    sessions this Gantry could not take, which the running one served on
     * @param took      from the first request to the last answer
     * @param completed whether the running Gantry answered to the end (it was not gone in the middle)
     */
    public record Moved(int moved, int ended, int drained, int failed, Duration took, boolean completed) {
    }

    /**
     * Takes the running Gantry's sessions in batches of up to {@link HandOverProtocol#SESSIONS_PER_BATCH}, each
     * session between two statements, until it holds none or {@code within} passed: then it drains what is left, as
     * on SIGTERM. A session the running Gantry holds in a transaction moves once the transaction ends. Never fails: a
     * running Gantry that goes away in the middle has ended what it held, and the sessions that moved are served
     * here.
     */
    public Moved moveSessions(Adopter adopter, Duration within) throws InterruptedException {
        return moveSessions(adopter, within, BATCH_TIME);
    }

    /** As {@link #moveSessions(Adopter, Duration)}, a batch taking up to {@code batchTime} before the next shrinks. */
    Moved moveSessions(Adopter adopter, Duration within, Duration batchTime) throws InterruptedException {
        long started = System.nanoTime();
        long deadline = started + within.toNanos();
        if (!greeting.transport().equals("epoll")) {
            // io_uring keeps a read of each client socket under way in the kernel: a session's next bytes could reach
            // the running Gantry after its state left, so its sessions stay there and are drained.
            LOG.warn("take-over: the Gantry taken over from (pid {}) runs on --socket-transport {}, whose sessions "
                    + "cannot move (only epoll's can): it drains them as on SIGTERM", greeting.pid(),
                    greeting.transport());
            deadline = started;
        }
        int moved = 0;
        int failed = 0;
        boolean batches = greeting.version() >= 4;
        // Every session of a batch waits for the whole batch (a busy client's next statement too), and this JVM's
        // first sessions take longest (its code not compiled yet): batches start at one session and double while a
        // batch takes less than batchTime, and halve when one takes longer (a loaded machine).
        int batchAsked = 1;
        try {
            while (true) {
                if (System.nanoTime() - deadline > 0) {
                    send(HandOverProtocol.DRAIN);
                    String answer = nextLine("its answer to DRAIN", timeout);
                    if (!answer.startsWith(HandOverProtocol.DRAINING + " ")) {
                        throw unexpected("its answer to DRAIN", answer);
                    }
                    return new Moved(moved, Integer.parseInt(field(answer, "ended")),
                            Integer.parseInt(field(answer, "held")), failed, since(started), true);
                }
                long asked = System.nanoTime();
                send(batches ? HandOverProtocol.SESSIONS + " " + batchAsked : HandOverProtocol.SESSION);
                String answer = nextLine("sessions", timeout);
                if (answer.startsWith(HandOverProtocol.DONE + " ")) {
                    return new Moved(moved, Integer.parseInt(field(answer, "ended")), 0, failed, since(started),
                            true);
                } else if (answer.startsWith(HandOverProtocol.DRAINING + " ")) {
                    // It did not expect what this one asked: it drains what it holds.
                    return new Moved(moved, Integer.parseInt(field(answer, "ended")),
                            Integer.parseInt(field(answer, "held")), failed, since(started), true);
                } else if (answer.startsWith(HandOverProtocol.WAIT + " ")) {
                    Thread.sleep(WAIT_BETWEEN_ASKS.toMillis());
                } else if (batches && answer.startsWith(HandOverProtocol.SESSIONS + " ")) {
                    List<Sent> batch = sessionsOf(answer);
                    int adopted = adoptBatch(adopter, batch);
                    moved += adopted;
                    failed += batch.size() - adopted;
                    batchAsked = System.nanoTime() - asked > batchTime.toNanos() ? Math.max(1, batchAsked / 2)
                            : Math.min(2 * batchAsked, HandOverProtocol.SESSIONS_PER_BATCH);
                } else if (!batches && answer.startsWith(HandOverProtocol.SESSION + " ")) {
                    // Version 3 passes one session per exchange, with the same requests for its socket.
                    int adopted = adoptBatch(adopter, List.of(sent(answer)));
                    moved += adopted;
                    failed += 1 - adopted;
                } else {
                    throw unexpected("sessions", answer);
                }
            }
        } catch (HandOverException e) {
            LOG.warn("take-over: the Gantry taken over from (pid {}) stopped passing sessions: {}; {} moved here",
                    greeting.pid(), e.getMessage(), moved);
            return new Moved(moved, 0, 0, failed, since(started), false);
        }
    }

    /** A session the running Gantry sent: its id and its state. */
    private record Sent(String id, String state) {
    }

    private static int batchSize(String header) {
        try {
            int size = Integer.parseInt(header.substring(HandOverProtocol.SESSIONS.length() + 1).strip());
            if (size >= 1 && size <= HandOverProtocol.SESSIONS_PER_BATCH) {
                return size;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        throw new HandOverException("--take-over: the running Gantry announced a batch of sessions this one did not "
                + "ask for: '" + HandOverProtocol.abbreviate(header) + "'");
    }

    /** The sessions of a batch whose header is {@code header}: its lines, which follow it. */
    private List<Sent> sessionsOf(String header) throws InterruptedException {
        int size = batchSize(header);
        List<Sent> batch = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            batch.add(sent(nextLine("session " + (i + 1) + " of " + size, timeout)));
        }
        return batch;
    }

    /** A session of a {@code SESSION id state} line. */
    private Sent sent(String line) {
        int space = line.indexOf(' ', HandOverProtocol.SESSION.length() + 1);
        if (!line.startsWith(HandOverProtocol.SESSION + " ") || space < 0) {
            throw unexpected("a session", line);
        }
        return new Sent(line.substring(HandOverProtocol.SESSION.length() + 1, space), line.substring(space + 1));
    }

    /**
     * One batch: every socket asked for at once, a session made of each, the running Gantry told of all; then they
     * read. The number that moved.
     */
    private int adoptBatch(Adopter adopter, List<Sent> batch) throws InterruptedException {
        setReadMode(DomainSocketReadMode.FILE_DESCRIPTORS);
        StringBuilder requests = new StringBuilder();
        batch.forEach(session -> requests.append(HandOverProtocol.DESCRIPTOR).append(' ').append(session.id())
                .append('\n'));
        sendLines(requests);
        List<FileDescriptor> descriptors = new ArrayList<>(batch.size());
        try {
            for (Sent session : batch) {
                Object answer = next(arrived, "session " + session.id() + "'s socket", timeout);
                if (!(answer instanceof FileDescriptor descriptor)) {
                    throw unexpected("session " + session.id() + "'s socket", answer);
                }
                descriptors.add(descriptor);
            }
        } catch (HandOverException | InterruptedException e) {
            // Not told ADOPTED, the running Gantry serves them on: these copies must never answer.
            descriptors.forEach(TakeOver::closeQuietly);
            throw e;
        }
        setReadMode(DomainSocketReadMode.BYTES);
        List<CompletableFuture<Runnable>> begun = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            try {
                begun.add(adopter.adopt(descriptors.get(i), batch.get(i).state()));
            } catch (Exception e) {
                begun.add(CompletableFuture.failedFuture(e));
            }
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        StringBuilder answers = new StringBuilder();
        List<Runnable> starts = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            String id = batch.get(i).id();
            try {
                starts.add(begun.get(i).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
                answers.append(HandOverProtocol.ADOPTED).append(' ').append(id).append('\n');
            } catch (ExecutionException | TimeoutException e) {
                begun.get(i).cancel(false);
                Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
                LOG.warn("take-over: cannot take session {}: {}; the Gantry taken over from serves it on", id,
                        cause.toString());
                // One short line: the running Gantry reads lines of at most MAX_LINE_BYTES.
                answers.append(HandOverProtocol.KEPT).append(' ').append(id).append(' ').append(
                        HandOverProtocol.abbreviate(String.valueOf(cause.getMessage()).replaceAll("\\s+", " ")))
                        .append('\n');
            }
        }
        // Told before they read: until the running Gantry closes its copies, only these copies may ever answer. If the
        // running Gantry is gone meanwhile, this one is the only one left to serve them.
        ChannelFuture told = channel.writeAndFlush(Unpooled.copiedBuffer(answers, StandardCharsets.UTF_8)).await();
        starts.forEach(Runnable::run);
        if (!told.isSuccess()) {
            LOG.warn("take-over: the Gantry taken over from went away before it was told {} sessions moved; this one "
                    + "serves them", starts.size());
        }
        return starts.size();
    }

    private static Duration since(long startedNanos) {
        return Duration.ofNanos(System.nanoTime() - startedNanos);
    }

    /** The value of {@code name=value} among a line's words. */
    private static String field(String line, String name) {
        for (String word : line.split(" ")) {
            if (word.startsWith(name + "=")) {
                return word.substring(name.length() + 1);
            }
        }
        throw new HandOverException("--take-over: the running Gantry's answer lacks " + name + ": '"
                + HandOverProtocol.abbreviate(line) + "'");
    }

    private void setReadMode(DomainSocketReadMode mode) throws InterruptedException {
        channel.eventLoop().submit(() -> channel.config().setReadMode(mode)).sync();
    }

    private void send(String line) throws InterruptedException {
        sendLines(line + "\n");
    }

    /** Sends {@code lines}, each ending in a line feed, in one write. */
    private void sendLines(CharSequence lines) throws InterruptedException {
        ChannelFuture sent = channel.writeAndFlush(Unpooled.copiedBuffer(lines, StandardCharsets.UTF_8)).await();
        if (!sent.isSuccess()) {
            throw new HandOverException("--take-over: the connection to the running Gantry failed: "
                    + sent.cause().getMessage());
        }
    }

    private String nextLine(String what, Duration wait) throws InterruptedException {
        Object answer = next(arrived, what, wait);
        if (answer instanceof String line) {
            return line;
        }
        throw unexpected(what, answer);
    }

    private static Object next(BlockingQueue<Object> arrived, String what, Duration wait)
            throws InterruptedException {
        Object answer = arrived.poll(wait.toMillis(), TimeUnit.MILLISECONDS);
        if (answer == null) {
            throw new HandOverException("--take-over: the running Gantry did not send " + what + " within "
                    + wait.toSeconds() + " s; nothing was taken over");
        }
        return answer;
    }

    private HandOverException unexpected(String what, Object answer) {
        if (answer == CLOSED) {
            return new HandOverException("--take-over: the running Gantry closed the hand-over before " + what);
        }
        if (answer instanceof String line && line.startsWith(HandOverProtocol.REFUSED)) {
            return refusal(line);
        }
        if (answer instanceof FileDescriptor descriptor) {
            closeQuietly(descriptor);
        }
        return new HandOverException("--take-over: expected " + what + " from the running Gantry, got '"
                + HandOverProtocol.abbreviate(String.valueOf(answer)) + "'");
    }

    private HandOverException refusal(String answer) {
        String reason = answer.startsWith(HandOverProtocol.REFUSED)
                ? answer.substring(HandOverProtocol.REFUSED.length()).strip() : "it answered '" + answer + "'";
        return new HandOverException("--take-over: the running Gantry (pid " + greeting.pid() + ") refused: "
                + reason);
    }

    private static void closeQuietly(FileDescriptor descriptor) {
        try {
            descriptor.close();
        } catch (IOException e) {
            LOG.debug("take-over: closing a descriptor: {}", e.toString());
        }
    }

    /** Closes the connection: before {@link #listening}, the running Gantry takes back what it lent. */
    @Override
    public void close() {
        channel.close().syncUninterruptibly();
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** Puts every line, descriptor and the close into the queue the steps read. */
    private static final class Arrivals extends ChannelInboundHandlerAdapter {

        private final BlockingQueue<Object> arrived;

        Arrivals(BlockingQueue<Object> arrived) {
            this.arrived = arrived;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object message) {
            arrived.add(message instanceof String line ? line.strip() : message);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            arrived.add(CLOSED);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LOG.warn("take-over: the hand-over connection failed: {}", cause.toString());
            ctx.close();
        }
    }
}
