package io.gantry.handover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.proxy.transport.AdoptedListener;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.unix.FileDescriptor;
import io.netty.channel.unix.UnixChannel;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
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
    private HandOverSocket socket;

    @BeforeEach
    void listenAndOfferIt() throws Exception {
        Assumptions.assumeTrue(Epoll.isAvailable(), "native epoll is needed to pass a socket");
        loop = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        listening = new ServerBootstrap().group(loop).channel(EpollServerSocketChannel.class)
                .childHandler(new ChannelInboundHandlerAdapter()).bind("127.0.0.1", 0).sync().channel();
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
            takeOver.release();
            assertThat(lender.calls).containsExactly("lend");
            // The running Gantry's hand-over socket is gone, so the new one can make its own there.
            assertThat(HandOverProtocol.socketIn(dataDir)).doesNotExist();
            takeOver.listening();
            assertThat(lender.handedOver.get(5, TimeUnit.SECONDS)).startsWith("the Gantry taking over (pid ");
        }
        assertThat(lender.calls).containsExactly("lend", "handedOver");
    }

    @Test
    void aTakeOverThatGoesAwayAfterTheReleaseGivesEverythingBack() throws Exception {
        try (TakeOver takeOver = TakeOver.connect(dataDir, STEP)) {
            takeOver.takeListener(listenAddress).closeUnadopted();
            takeOver.release();
        }
        awaitCalls("lend", "takeBack");
        // And it can be taken over again.
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
                .hasMessageContaining("no Gantry runs on --data-dir " + elsewhere);
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
                    out.write("gantry-hand-over 2 pid=1 something=new\n".getBytes(StandardCharsets.UTF_8));
                    out.flush();
                    InputStream in = Channels.newInputStream(peer);
                    return in.readAllBytes();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThatThrownBy(() -> TakeOver.connect(other, STEP)).isInstanceOf(HandOverException.class)
                    .hasMessageContaining("speaks hand-over version 2 and this one speaks version 1")
                    .hasMessageContaining("nothing was taken over");
            assertThat(asked.get(5, TimeUnit.SECONDS)).isEmpty();
        }
    }

    @Test
    void aGreetingRoundTripsAndAStrangerIsNamedAsSuch() {
        HandOverProtocol.Greeting greeting = new HandOverProtocol.Greeting(42, "development build", "0.0.0.0:3306",
                "io_uring", false);
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
        final CompletableFuture<String> handedOver = new CompletableFuture<>();
        volatile RuntimeException lendFailure;

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
        public void handedOver(String borrower) {
            calls.add("handedOver");
            handedOver.complete(borrower);
        }
    }
}
