package io.gantry.proxy;

import io.gantry.wire.CommandType;
import io.gantry.wire.OkPacket;
import io.gantry.wire.Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Gantry's own cost of one client login, without the network: a new client channel on the proxy's pipeline, the
 * greeting, the client's handshake response (caching_sha2_password with an empty scramble: accepted without an
 * account look-up), the login's first backend connection taken from the event loop's pool, the OK, then the
 * client's COM_QUIT and close, and the connection given back to the pool ({@link InProcessSession#connectClient}).
 * Every client channel is on the same event loop, so every login after the first reuses the pooled primary
 * connection the one before gave back, as in steady churn: no backend login is played per operation (the set-up
 * checks that no backend channel is opened, and that the login sends the servers nothing).
 *
 * <p>{@code pooledLogin} is the login; {@code channelOnly} is the harness's share of it: an {@link EmbeddedChannel}
 * made, registered on the same loop and closed, with a handler that does nothing (a socket channel costs Netty
 * something alike, but not the same). Run with {@code -prof gc} for bytes per login ({@code gc.alloc.rate.norm}) and
 * {@code -prof io.gantry.proxy.CpuTimeProfiler} for CPU time per login; see BENCHMARKS.md.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 10, time = 2)
@Measurement(iterations = 5, time = 2)
// As PerQueryBenchmark: no leak detection (as Gantry's launcher has it), on threads of the event loops' kind.
@Fork(value = 2, jvmArgsAppend = {"-Dio.netty.leakDetection.level=disabled", "-Djmh.executor=CUSTOM",
        "-Djmh.executor.class=io.gantry.proxy.EventLoopLikeThreads"})
public class PerLoginBenchmark {

    private InProcessSession session;
    private ByteBuf handshake;
    private ByteBuf quit;
    private int backendChannels;
    private EventLoop loop;

    @Setup(Level.Trial)
    public void open() {
        session = new InProcessSession();
        loop = session.client().eventLoop();
        handshake = session.handshakeResponseFrame();
        quit = session.commandFrame(CommandType.COM_QUIT, new byte[0]);
        // The first login on a new channel finds the pool empty (the set-up session still holds its connection) and
        // opens one, logged in by the played primary; its close gives that to the pool, where every later login
        // finds it.
        session.login().close();
        backendChannels = countBackendChannels();
        for (int i = 0; i < 3; i++) {
            if (pooledLogin() <= 0) {
                throw new IllegalStateException("a login through the in-process proxy got no OK");
            }
        }
        if (countBackendChannels() != backendChannels) {
            throw new IllegalStateException("logins after the first opened backend connections of their own: "
                    + session.backends());
        }
        for (List<EmbeddedChannel> channels : session.backends().values()) {
            for (EmbeddedChannel channel : channels) {
                if (channel.outboundMessages().size() > 0) {
                    throw new IllegalStateException("a pooled login sent a server something");
                }
            }
        }
    }

    @TearDown(Level.Trial)
    public void close() {
        if (countBackendChannels() != backendChannels) {
            throw new IllegalStateException("the benchmark's logins opened backend connections: "
                    + countBackendChannels() + " instead of " + backendChannels);
        }
        handshake.release();
        quit.release();
        session.close();
    }

    private int countBackendChannels() {
        int count = 0;
        for (Map.Entry<String, List<EmbeddedChannel>> entry : session.backends().entrySet()) {
            count += entry.getValue().size();
        }
        return count;
    }

    /** One login and its end; returns the bytes of the OK the client got. */
    @Benchmark
    public int pooledLogin() {
        EmbeddedChannel client = session.connectClient();
        int greeting = drain(client);
        arrive(client, readFromSocket(handshake));
        int ok = okBytes(client);
        if (greeting == 0 || ok == 0) {
            throw new IllegalStateException("the login through the in-process proxy did not end with an OK");
        }
        arrive(client, readFromSocket(quit));
        client.close(); // the client closes its socket after COM_QUIT
        session.runLoopTasks();
        drain(client);
        return ok;
    }

    /** The harness's share: a channel made, registered on the same loop, and closed. */
    @Benchmark
    public boolean channelOnly() {
        EmbeddedChannel channel = EmbeddedChannel.builder().register(false).handlers(new Nothing()).build();
        channel.unsafe().register(loop, channel.newPromise());
        session.runLoopTasks();
        channel.close();
        session.runLoopTasks();
        return channel.isOpen();
    }

    private static final class Nothing extends ChannelInboundHandlerAdapter {
        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            ctx.fireChannelActive();
        }
    }

    /** The bytes Gantry wrote to the client when they are one OK packet; 0 otherwise. */
    private static int okBytes(EmbeddedChannel client) {
        ByteBuf answer = client.readOutbound();
        if (answer == null) {
            return 0;
        }
        int bytes = answer.getUnsignedByte(Packet.HEADER_SIZE) == OkPacket.HEADER ? answer.readableBytes() : 0;
        answer.release();
        return client.outboundMessages().isEmpty() ? bytes : 0;
    }

    private static int drain(EmbeddedChannel client) {
        int bytes = 0;
        ByteBuf next;
        while ((next = client.readOutbound()) != null) {
            bytes += next.readableBytes();
            next.release();
        }
        return bytes;
    }

    /** As in PerQueryBenchmark: what a socket read does, without {@code writeInbound}'s varargs array. */
    private void arrive(EmbeddedChannel channel, ByteBuf bytes) {
        channel.pipeline().fireChannelRead(bytes);
        channel.pipeline().fireChannelReadComplete();
        session.runLoopTasks();
        channel.checkException();
    }

    private static ByteBuf readFromSocket(ByteBuf bytes) {
        return PooledByteBufAllocator.DEFAULT.buffer(bytes.readableBytes()).writeBytes(bytes, bytes.readerIndex(),
                bytes.readableBytes());
    }
}
