package io.gantry.handover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.proxy.transport.AdoptedListener;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.unix.FileDescriptor;
import io.netty.channel.unix.UnixChannel;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Both ends of a take-over in one process, with a listening socket of its own and a lender that writes down what
 * it is asked: the protocol's steps, its refusals, and what is given back when the Gantry taking over goes away.
 */
class HandOverSocketTest {

    private static final Duration STEP = Duration.ofSeconds(5);

    @TempDir
    Path dataDir;

    private EventLoopGroup loop;
    private Channel listening;
    private InetSocketAddress listenAddress;
    private final RecordingLender lender = new RecordingLender();
    /** The connections the test's listener accepted: the sessions a lender offers. */
    private final BlockingQueue<Channel> accepted = new LinkedBlockingQueue<>();
    private HandOverSocket socket;

    @BeforeEach
    void listenAndOfferIt() throws Exception {
        Assumptions.assumeTrue(Epoll.isAvailable(), "native epoll is needed to pass a socket");
        loop = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        listening = new ServerBootstrap().group(loop).channel(EpollServerSocketChannel.class)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel channel) {
                        accepted.add(channel);
                    }
                }).bind("127.0.0.1", 0).sync().channel();
        listenAddress = (InetSocketAddress) listening.localAddress();
        socket = HandOverSocket.start(HandOverProtocol.socketIn(dataDir), lender).orElseThrow();
    }

    @AfterEach
    void stop() {
        if (socket != null) {
            socket.close();
        }
        if (loop != null) {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    @Test
    void theListenerPassesAndTheDataDirectoryIsLentThenHandedOver() throws Exception {
        try (TakeOver takeOver = TakeOver.connect(dataDir, STEP)) {
            assertThat(takeOver.greeting().pid()).isEqualTo(ProcessHandle.current().pid());
            assertThat(takeOver.greeting().listen()).isEqualTo("127.0.0.1:" + listenAddress.getPort());
            AdoptedListener adopted = takeOver.takeListener(listenAddress);
            assertThat(adopted.address().getPort()).isEqualTo(listenAddress.getPort());
            adopted.closeUnadopted();
            assertThat(takeOver.release()).as("the ids the running Gantry keeps").isEqualTo(1234);
            assertThat(lender.calls).containsExactly("lend");
            // The running Gantry's hand-over socket is gone, so the new one can make its own there.
            assertThat(HandOverProtocol.socketIn(dataDir)).doesNotExist();
            assertThat(takeOver.listening()).isTrue();
            TakeOver.Moved moved = takeOver.moveSessions((descriptor, state) -> {
                throw new AssertionError("no session to move");
            }, STEP);
            assertThat(moved.moved()).isZero();
            assertThat(moved.completed()).isTrue();
            // Both ends are this process here: the kernel names it as the successor, whose id a service manager gets.
            Successor successor = lender.handedOver.get(5, TimeUnit.SECONDS);
            assertThat(successor.pid()).hasValue(ProcessHandle.current().pid());
            assertThat(successor.name()).isEqualTo("the Gantry taking over (pid " + ProcessHandle.current().pid() + ")");
        }
        assertThat(lender.calls).containsExactly("lend", "stopAccepting", "handedOver");
    }

    @Test
    void aSessionMovesWithItsSocketAndTheRunningGantryLetsGoOnlyOnceToldItMoved() throws Exception {
        try (Socket client = new Socket(listenAddress.getAddress(), listenAddress.getPort());
             TakeOver takeOver = TakeOver.connect(dataDir, STEP)) {
            UnixChannel accepted = (UnixChannel) this.accepted.poll(5, TimeUnit.SECONDS);
            lender.offer(new MovingSession(7, accepted.fd(), "{\"id\":7}", () -> lender.calls.add("moved 7"),
                    () -> lender.calls.add("stays 7"), () -> true));
            takeOver.takeListener(listenAddress).closeUnadopted();
            takeOver.release();
            takeOver.listening();
            List<String> callsWhenAdopted = new CopyOnWriteArrayList<>();
            TakeOver.Moved moved = takeOver.moveSessions((descriptor, state) -> {
                assertThat(state).isEqualTo("{\"id\":7}");
                callsWhenAdopted.addAll(lender.calls);
                EpollSocketChannel channel = new EpollSocketChannel(descriptor.intValue());
                loop.next().register(channel).sync();
                return CompletableFuture.completedFuture(() -> channel.writeAndFlush(
                        Unpooled.copiedBuffer("from the new one", StandardCharsets.UTF_8)));
            }, STEP);
            assertThat(moved.moved()).isEqualTo(1);
            assertThat(callsWhenAdopted).as("the running Gantry's copy while the new one adopts it")
                    .doesNotContain("moved 7");
            // The socket the client holds is served by the new one's copy.
            client.setSoTimeout(5000);
            byte[] read = client.getInputStream().readNBytes("from the new one".length());
            assertThat(new String(read, StandardCharsets.UTF_8)).isEqualTo("from the new one");
        }
        awaitCalls("lend", "stopAccepting", "moved 7", "handedOver");
    }

    /**
     * Sessions move in batches that start at one session and double (while each takes less than its time): all of
     * one batch's sockets are asked for at once, the running Gantry is told of them once all are adopted, and one the new Gantry cannot take stays with
     * the running one while the others of its batch move.
     */
    @Test
    void batchesOfSessionsMoveTogetherAndOneThatCannotBeTakenStays() throws Exception {
        int sessions = 5;
        List<Socket> clients = new ArrayList<>();
        try (TakeOver takeOver = TakeOver.connect(dataDir, STEP)) {
            for (int id = 1; id <= sessions; id++) {
                clients.add(new Socket(listenAddress.getAddress(), listenAddress.getPort()));
                UnixChannel accepted = (UnixChannel) this.accepted.poll(5, TimeUnit.SECONDS);
                String name = Integer.toString(id);
                lender.offer(new MovingSession(id, accepted.fd(), "{\"id\":" + id + "}",
                        () -> lender.calls.add("moved " + name), () -> lender.calls.add("stays " + name), () -> true));
            }
            takeOver.takeListener(listenAddress).closeUnadopted();
            takeOver.release();
            takeOver.listening();
            Map<String, List<String>> callsWhenAdopting = new ConcurrentHashMap<>();
            TakeOver.Moved moved = takeOver.moveSessions((descriptor, state) -> {
                callsWhenAdopting.put(state, List.copyOf(lender.calls));
                if (state.equals("{\"id\":3}")) {
                    descriptor.close();
                    throw new IllegalArgumentException("not this one");
                }
                EpollSocketChannel channel = new EpollSocketChannel(descriptor.intValue());
                loop.next().register(channel).sync();
                return CompletableFuture.completedFuture(() -> channel.writeAndFlush(
                        Unpooled.copiedBuffer(state, StandardCharsets.UTF_8)));
            }, STEP, Duration.ofMinutes(1)); // no batch is slow enough to shrink the next
            assertThat(moved.moved()).isEqualTo(sessions - 1);
            assertThat(moved.failed()).isEqualTo(1);
            // Batches of 1, 2 and 2: [1], [2, 3], [4, 5].
            assertThat(callsWhenAdopting.get("{\"id\":3}")).as("session 2 of the same batch is not let go yet")
                    .contains("moved 1").doesNotContain("moved 2");
            assertThat(callsWhenAdopting.get("{\"id\":5}")).as("session 4 of the same batch is not let go yet")
                    .contains("moved 2", "stays 3").doesNotContain("moved 4");
            for (int id : new int[] {1, 2, 4, 5}) {
                Socket client = clients.get(id - 1);
                client.setSoTimeout(5000);
                String expected = "{\"id\":" + id + "}";
                assertThat(new String(client.getInputStream().readNBytes(expected.length()), StandardCharsets.UTF_8))
                        .as("served by the new one's copy").isEqualTo(expected);
            }
        } finally {
            for (Socket client : clients) {
                client.close();
            }
        }
        awaitCalls("lend", "stopAccepting", "moved 1", "moved 2", "stays 3", "moved 4", "moved 5", "handedOver");
    }

    @Test
    void aSessionTheNewGantryCannotTakeStaysWithTheRunningOne() throws Exception {
        try (Socket client = new Socket(listenAddress.getAddress(), listenAddress.getPort());
             TakeOver takeOver = TakeOver.connect(dataDir, STEP)) {
            UnixChannel accepted = (UnixChannel) this.accepted.poll(5, TimeUnit.SECONDS);
            lender.offer(new MovingSession(8, accepted.fd(), "{}", () -> lender.calls.add("moved 8"),
                    () -> lender.calls.add("stays 8"), () -> true));
            takeOver.takeListener(listenAddress).closeUnadopted();
            takeOver.release();
            takeOver.listening();
            TakeOver.Moved moved = takeOver.moveSessions((descriptor, state) -> {
                descriptor.close();
                throw new IllegalArgumentException("not a session's state");
            }, STEP);
            assertThat(moved.failed()).isEqualTo(1);
            assertThat(moved.moved()).isZero();
        }
        awaitCalls("lend", "stopAccepting", "stays 8", "handedOver");
    }

    @Test
    void aTakeOverThatGoesAwayWhileASessionIsOnItsWayLeavesItAndEverythingWithTheRunningGantry() throws Exception {
        try (Socket client = new Socket(listenAddress.getAddress(), listenAddress.getPort())) {
            UnixChannel accepted = (UnixChannel) this.accepted.poll(5, TimeUnit.SECONDS);
            lender.offer(new MovingSession(9, accepted.fd(), "{}", () -> lender.calls.add("moved 9"),
                    () -> lender.calls.add("stays 9"), () -> true));
            TakeOver takeOver = TakeOver.connect(dataDir, STEP);
            takeOver.takeListener(listenAddress).closeUnadopted();
            takeOver.release();
            takeOver.listening();
            TakeOver.Moved moved = takeOver.moveSessions((descriptor, state) -> {
                takeOver.close(); // as a kill -9 would: the descriptor is here, ADOPTED never leaves
                throw new IllegalStateException("gone");
            }, STEP);
            assertThat(moved.completed()).isFalse();
        }
        awaitCalls("lend", "stopAccepting", "stays 9", "takeBack", "acceptAgain");
    }

    /**
     * A session whose client left while it was held is never passed (its descriptor's number may name another file by
     * then): the Gantry taking over gets a socket that was never connected, which it ends at once, and the take-over
     * goes on to its end.
     */
    @Test
    void aSessionWhoseClientLeftIsPassedAsAnUnconnectedSocket() throws Exception {
        try (Socket client = new Socket(listenAddress.getAddress(), listenAddress.getPort())) {
            UnixChannel accepted = (UnixChannel) this.accepted.poll(5, TimeUnit.SECONDS);
            lender.offer(new MovingSession(10, accepted.fd(), "{}", () -> lender.calls.add("moved 10"),
                    () -> lender.calls.add("stays 10"), () -> false));
            TakeOver takeOver = TakeOver.connect(dataDir, STEP);
            takeOver.takeListener(listenAddress).closeUnadopted();
            takeOver.release();
            takeOver.listening();
            List<Object> peers = new CopyOnWriteArrayList<>();
            TakeOver.Moved moved = takeOver.moveSessions((descriptor, state) -> {
                io.netty.channel.unix.Socket passed = new io.netty.channel.unix.Socket(descriptor.intValue());
                peers.add(String.valueOf(passed.remoteAddress()));
                passed.close();
                return CompletableFuture.completedFuture(() -> { });
            }, STEP);
            assertThat(moved.completed()).isTrue();
            assertThat(peers).as("the socket passed for the session gone").containsExactly("null");
            takeOver.close();
        }
        awaitCalls("lend", "stopAccepting", "moved 10", "handedOver");
    }

    /** The same connection lost while the Gantry taking over runs on: it keeps the port, the running one hands over. */
    @Test
    void aConnectionLostWhileTheNewGantryRunsOnHandsOverInsteadOfTakingBack() throws Exception {
        lender.successorRuns = true;
        try (Socket client = new Socket(listenAddress.getAddress(), listenAddress.getPort())) {
            UnixChannel accepted = (UnixChannel) this.accepted.poll(5, TimeUnit.SECONDS);
            lender.offer(new MovingSession(11, accepted.fd(), "{}", () -> lender.calls.add("moved 11"),
                    () -> lender.calls.add("stays 11"), () -> true));
            TakeOver takeOver = TakeOver.connect(dataDir, STEP);
            takeOver.takeListener(listenAddress).closeUnadopted();
            takeOver.release();
            takeOver.listening();
            TakeOver.Moved moved = takeOver.moveSessions((descriptor, state) -> {
                takeOver.close();
                throw new IllegalStateException("the connection broke");
            }, STEP);
            assertThat(moved.completed()).isFalse();
        }
        awaitCalls("lend", "stopAccepting", "stays 11", "handedOver");
    }

    @Test
    void aProcessRunsUntilItIsGone() throws Exception {
        assertThat(HandOverSocket.processRuns(ProcessHandle.current().pid())).isTrue();
        Process exited = new ProcessBuilder("true").start();
        exited.waitFor();
        assertThat(HandOverSocket.processRuns(exited.pid())).as("gone").isFalse();
    }

    @Test
    void sessionsThatCannotMoveInTimeAreLeftToTheRunningGantrysDrain() throws Exception {
        lender.held = 2;
        try (TakeOver takeOver = TakeOver.connect(dataDir, STEP)) {
            takeOver.takeListener(listenAddress).closeUnadopted();
            takeOver.release();
            takeOver.listening();
            TakeOver.Moved moved = takeOver.moveSessions((descriptor, state) -> {
                throw new AssertionError("no session can move");
            }, Duration.ofMillis(100));
            assertThat(moved.drained()).isEqualTo(2);
            assertThat(moved.took()).isGreaterThanOrEqualTo(Duration.ofMillis(100));
        }
        awaitCalls("lend", "stopAccepting", "handedOver");
    }

    @Test
    void aTakeOverThatGoesAwayAfterTheReleaseGivesEverythingBack() throws Exception {
        try (TakeOver takeOver = TakeOver.connect(dataDir, STEP)) {
            takeOver.takeListener(listenAddress).closeUnadopted();
            takeOver.release();
        }
        awaitCalls("lend", "takeBack");
        // And it can be taken over again, once its socket is made again (after the take-back).
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!java.nio.file.Files.exists(HandOverProtocol.socketIn(dataDir)) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        try (TakeOver again = TakeOver.connect(dataDir, STEP)) {
            assertThat(again.greeting().busy()).isFalse();
        }
    }

    @Test
    void aTakeOverThatGoesAwayBeforeTheReleaseChangesNothing() throws Exception {
        try (TakeOver takeOver = TakeOver.connect(dataDir, STEP)) {
            takeOver.takeListener(listenAddress).closeUnadopted();
        }
        Thread.sleep(200);
        assertThat(lender.calls).isEmpty();
        assertThat(HandOverProtocol.socketIn(dataDir)).exists();
    }

    @Test
    void anotherListenAddressIsRefusedBeforeAnythingIsLent() throws Exception {
        try (TakeOver takeOver = TakeOver.connect(dataDir, STEP)) {
            assertThatThrownBy(() -> takeOver.takeListener(new InetSocketAddress("127.0.0.1",
                    listenAddress.getPort() + 1)))
                    .isInstanceOf(HandOverException.class)
                    .hasMessageContaining("--listen 127.0.0.1:" + (listenAddress.getPort() + 1))
                    .hasMessageContaining("127.0.0.1:" + listenAddress.getPort());
        }
        assertThat(lender.calls).isEmpty();
    }

    @Test
    void aSecondTakeOverIsToldOneIsUnderWay() throws Exception {
        try (TakeOver first = TakeOver.connect(dataDir, STEP)) {
            assertThatThrownBy(() -> TakeOver.connect(dataDir, STEP)).isInstanceOf(HandOverException.class)
                    .hasMessageContaining("another Gantry is taking over");
        }
    }

    @Test
    void aFailedLendIsRefusedWithItsReason() throws Exception {
        lender.lendFailure = new IllegalStateException("the change stream did not stop within 11000 ms");
        try (TakeOver takeOver = TakeOver.connect(dataDir, STEP)) {
            takeOver.takeListener(listenAddress).closeUnadopted();
            assertThatThrownBy(takeOver::release).isInstanceOf(HandOverException.class)
                    .hasMessageContaining("refused: could not let go of the data directory: the change stream did "
                            + "not stop within 11000 ms");
        }
    }

    @Test
    void noHandOverSocketMeansNoGantryRunsThere() {
        Path elsewhere = dataDir.resolve("empty");
        assertThatThrownBy(() -> TakeOver.connect(elsewhere, STEP)).isInstanceOf(HandOverException.class)
                .hasMessageContaining("no Gantry can be taken over on --data-dir " + elsewhere);
    }

    @Test
    void anotherProtocolVersionStopsTheTakeOverBeforeItAsksAnything() throws Exception {
        Path other = dataDir.resolve("other");
        java.nio.file.Files.createDirectories(other);
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(HandOverProtocol.socketIn(other)));
            CompletableFuture<byte[]> asked = CompletableFuture.supplyAsync(() -> {
                try (SocketChannel peer = server.accept()) {
                    OutputStream out = Channels.newOutputStream(peer);
                    String newer = "gantry-hand-over " + (HandOverProtocol.VERSION + 1) + " pid=1 something=new\n";
                    out.write(newer.getBytes(StandardCharsets.UTF_8));
                    out.flush();
                    InputStream in = Channels.newInputStream(peer);
                    return in.readAllBytes();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThatThrownBy(() -> TakeOver.connect(other, STEP)).isInstanceOf(HandOverException.class)
                    .hasMessageContaining("speaks hand-over version " + (HandOverProtocol.VERSION + 1)
                            + " and this one speaks version " + HandOverProtocol.VERSION)
                    .hasMessageContaining("nothing was taken over");
            assertThat(asked.get(5, TimeUnit.SECONDS)).isEmpty();
        }
    }

    @Test
    void aGreetingRoundTripsAndAStrangerIsNamedAsSuch() {
        HandOverProtocol.Greeting greeting = HandOverProtocol.Greeting.ofThisGantry(42, "development build",
                "0.0.0.0:3306", "io_uring", false);
        assertThat(HandOverProtocol.Greeting.parse(greeting.line())).isEqualTo(greeting);
        assertThatThrownBy(() -> HandOverProtocol.Greeting.parse("SSH-2.0-OpenSSH_9.6"))
                .isInstanceOf(HandOverException.class).hasMessageContaining("is not a Gantry");
    }

    private void awaitCalls(String... calls) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!lender.calls.equals(List.of(calls)) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(lender.calls).containsExactly(calls);
    }

    /** Lends the test's listening socket and writes down every call. */
    private final class RecordingLender implements HandOverSocket.Lender {

        final List<String> calls = new CopyOnWriteArrayList<>();
        final CompletableFuture<Successor> handedOver = new CompletableFuture<>();
        volatile boolean successorRuns;
        volatile RuntimeException lendFailure;
        final BlockingQueue<MovingSession> sessions = new LinkedBlockingQueue<>();
        /** Sessions held that cannot move, besides those offered. */
        volatile int held;

        void offer(MovingSession session) {
            sessions.add(session);
        }

        @Override
        public long sessionIdsUpTo() {
            return 1234;
        }

        @Override
        public void stopAccepting() {
            calls.add("stopAccepting");
        }

        @Override
        public void acceptAgain() {
            calls.add("acceptAgain");
        }

        @Override
        public List<MovingSession> nextSessions(int max) {
            List<MovingSession> batch = new ArrayList<>();
            sessions.drainTo(batch, max);
            return batch;
        }

        @Override
        public int sessionsHeld() {
            return held + sessions.size();
        }

        @Override
        public String sessionsWaiting() {
            return held + " (in a transaction)";
        }

        @Override
        public int sessionsEnded() {
            return 0;
        }

        @Override
        public String listenAddress() {
            return "127.0.0.1:" + listenAddress.getPort();
        }

        @Override
        public String transport() {
            return "epoll";
        }

        @Override
        public String version() {
            return "test";
        }

        @Override
        public Optional<FileDescriptor> listener() {
            return Optional.of(((UnixChannel) listening).fd());
        }

        @Override
        public void lend(String borrower) {
            if (lendFailure != null) {
                throw lendFailure;
            }
            calls.add("lend");
        }

        @Override
        public void takeBack(String borrower) {
            calls.add("takeBack");
        }

        @Override
        public void handedOver(Successor successor) {
            calls.add("handedOver");
            handedOver.complete(successor);
        }

        /** Both ends are this process here: whether the one taking over "runs on" is the test's to say. */
        @Override
        public boolean stillRuns(long pid) {
            return successorRuns;
        }
    }
}
