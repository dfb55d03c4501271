package io.gantry.proxy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
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
 * Gantry's own cost per query, without the network: one point select through a logged-in session, from the
 * client's bytes to the bytes the client gets back — framing, the command handler, classification, routing with
 * the read guarantees, the backend connection, response framing and forwarding ({@link InProcessSession}). The
 * server's answer is canned, so what is measured is Gantry's work plus Netty's pipeline, not a server's.
 *
 * <p>{@code textPointSelect} is a COM_QUERY ({@code --db-ps-mode=disable} in sysbench); {@code preparedPointSelect}
 * a COM_STMT_EXECUTE of a statement prepared once (sysbench's default), without the parameter types, as clients
 * send every execution after the first. Both go to the replica. Run with {@code -prof gc} for bytes per query
 * ({@code gc.alloc.rate.norm}) and {@code -prof io.gantry.proxy.CpuTimeProfiler} for CPU time per query; see
 * BENCHMARKS.md.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 10, time = 2)
@Measurement(iterations = 5, time = 2)
// Netty's leak detection (on by default) records a stack trace for one buffer in 128: it makes bytes per operation
// vary by hundreds between runs. Off, as Gantry's launcher has it. The benchmark runs on threads of the kind the
// proxy's I/O runs on (EventLoopLikeThreads), so that Netty recycles and caches buffers as it does there.
@Fork(value = 2, jvmArgsAppend = {"-Dio.netty.leakDetection.level=disabled", "-Djmh.executor=CUSTOM",
        "-Djmh.executor.class=io.gantry.proxy.EventLoopLikeThreads"})
public class PerQueryBenchmark {

    private InProcessSession session;
    private EmbeddedChannel client;
    private EmbeddedChannel replica;
    private ByteBuf query;
    private ByteBuf execute;
    private ByteBuf textRow;
    private ByteBuf binaryRow;

    @Setup(Level.Trial)
    public void open() {
        session = new InProcessSession();
        query = session.queryFrame("SELECT c FROM sbtest1 WHERE id=5021");
        long statement = session.prepare("SELECT c FROM sbtest1 WHERE id=?");
        // The first execution opens the replica connection, prepares there and sends the types; later ones do not.
        session.command(session.executeFrame(statement, 1, true)).forEach(ByteBuf::release);
        execute = session.executeFrame(statement, 5021, false);
        client = session.client();
        replica = session.replica();
        textRow = session.textRow();
        binaryRow = session.binaryRow();
        if (textPointSelect() <= 0 || preparedPointSelect() <= 0) {
            throw new IllegalStateException("a point select through the in-process session got no answer");
        }
    }

    /** The sampler's work between iterations: what the session read settles, and the replica stays fresh. */
    @Setup(Level.Iteration)
    public void sample() {
        session.samplePositions();
    }

    @TearDown(Level.Trial)
    public void close() {
        query.release();
        execute.release();
        textRow.release();
        binaryRow.release();
        session.close();
    }

    @Benchmark
    public int textPointSelect() {
        return roundTrip(query, textRow);
    }

    @Benchmark
    public int preparedPointSelect() {
        return roundTrip(execute, binaryRow);
    }

    /**
     * The client's command in, the command the replica got out, the replica's answer in, the client's out. Bytes go
     * in as fresh pooled buffers, as from a socket read: Gantry rewrites some in place (statement ids).
     */
    private int roundTrip(ByteBuf command, ByteBuf answer) {
        arrive(client, readFromSocket(command));
        ByteBuf sent = replica.readOutbound();
        if (sent == null) {
            throw new IllegalStateException("the command did not reach the replica");
        }
        sent.release();
        arrive(replica, readFromSocket(answer));
        return session.drainClient();
    }

    /**
     * What a socket read does to a channel's pipeline. Not {@code EmbeddedChannel.writeInbound}: its varargs array
     * would be counted in the bytes allocated per query, which are meant to be Gantry's alone.
     */
    private static void arrive(EmbeddedChannel channel, ByteBuf bytes) {
        channel.pipeline().fireChannelRead(bytes);
        channel.pipeline().fireChannelReadComplete();
        channel.runPendingTasks();
        channel.checkException();
    }

    private static ByteBuf readFromSocket(ByteBuf bytes) {
        return PooledByteBufAllocator.DEFAULT.buffer(bytes.readableBytes()).writeBytes(bytes, bytes.readerIndex(),
                bytes.readableBytes());
    }
}
