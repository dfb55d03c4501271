package io.gantry.proxy.transport;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioChannelOption;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringChannelOption;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import jdk.net.ExtendedSocketOptions;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.ThreadFactory;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Which Netty transport carries the proxy's client and backend sockets ({@code --socket-transport}). By default the
 * fastest one that works here: Linux's io_uring, which hands a whole event-loop turn of reads and writes to the
 * kernel in one system call (a quarter less proxy CPU per point select than epoll on the benchmark machine,
 * BENCHMARKS.md); else native epoll; else, off Linux x86-64 or where neither native library loads, the JDK's NIO.
 * A kernel that forbids io_uring ({@code kernel.io_uring_disabled}, a container's seccomp profile) makes it
 * unavailable, and the default falls back to epoll. Client and backend channels share event loops, so one
 * process's proxy uses one transport throughout.
 */
public enum SocketTransport {
    IO_URING("io_uring", IoUring::isAvailable, IoUring::unavailabilityCause),
    EPOLL("epoll", Epoll::isAvailable, Epoll::unavailabilityCause),
    NIO("nio", () -> true, () -> null);

    /** The value of {@code --socket-transport} that picks the fastest available transport. */
    public static final String AUTO = "auto";

    private final String flagValue;
    private final BooleanSupplier available;
    private final Supplier<Throwable> unavailabilityCause;

    SocketTransport(String flagValue, BooleanSupplier available, Supplier<Throwable> unavailabilityCause) {
        this.flagValue = flagValue;
        this.available = available;
        this.unavailabilityCause = unavailabilityCause;
    }

    /** The fastest transport available here: io_uring, else epoll, else NIO. */
    public static SocketTransport best() {
        return IO_URING.isAvailable() ? IO_URING : EPOLL.isAvailable() ? EPOLL : NIO;
    }

    /**
     * The transport named by a {@code --socket-transport} value: {@code auto} (the {@link #best} one),
     * {@code io_uring}, {@code epoll} or {@code nio}. Whether a named one can run here is {@code ProxyConfig}'s check.
     *
     * @throws IllegalArgumentException naming the accepted values when {@code value} is none of them
     */
    public static SocketTransport parse(String value) {
        String wanted = value.trim().toLowerCase(Locale.ROOT);
        if (wanted.equals(AUTO)) {
            return best();
        }
        for (SocketTransport transport : values()) {
            if (transport.flagValue.equals(wanted)) {
                return transport;
            }
        }
        throw new IllegalArgumentException("--socket-transport must be " + AUTO + ", "
                + Arrays.stream(values()).map(t -> t.flagValue).collect(Collectors.joining(", ")) + ", not '"
                + value + "'");
    }

    /** Whether this transport's native library loaded and the kernel lets it run. */
    public boolean isAvailable() {
        return available.getAsBoolean();
    }

    /** @throws IllegalArgumentException naming why, when this transport cannot run here */
    public void requireAvailable() {
        if (!isAvailable()) {
            Throwable cause = unavailabilityCause.get();
            throw new IllegalArgumentException("--socket-transport " + flagValue + " is not available on this machine"
                    + (cause == null ? "" : ": " + cause.getMessage()) + " (auto picks the best one that is)");
        }
    }

    /** The value of {@code --socket-transport} naming this transport. */
    public String flagValue() {
        return flagValue;
    }

    public EventLoopGroup newGroup(int threads, ThreadFactory threadFactory) {
        IoHandlerFactory handlers = switch (this) {
            case IO_URING -> IoUringIoHandler.newFactory();
            case EPOLL -> EpollIoHandler.newFactory();
            case NIO -> NioIoHandler.newFactory();
        };
        return new MultiThreadIoEventLoopGroup(threads, threadFactory, handlers);
    }

    public Class<? extends ServerSocketChannel> serverChannel() {
        return switch (this) {
            case IO_URING -> IoUringServerSocketChannel.class;
            case EPOLL -> EpollServerSocketChannel.class;
            case NIO -> NioServerSocketChannel.class;
        };
    }

    public Class<? extends SocketChannel> socketChannel() {
        return switch (this) {
            case IO_URING -> IoUringSocketChannel.class;
            case EPOLL -> EpollSocketChannel.class;
            case NIO -> NioSocketChannel.class;
        };
    }

    /**
     * Turns TCP keepalive on for the connections {@code bootstrap} makes, with probes after {@code idleSeconds} of
     * silence, every {@code intervalSeconds}, given up after {@code probes} unanswered: a server whose host or
     * network went away without a word is noticed on a connection nobody writes to. Each transport names the
     * per-socket timings its own way.
     */
    public void keepAlive(Bootstrap bootstrap, int idleSeconds, int intervalSeconds, int probes) {
        bootstrap.option(ChannelOption.SO_KEEPALIVE, true);
        switch (this) {
            case IO_URING -> bootstrap.option(IoUringChannelOption.TCP_KEEPIDLE, idleSeconds)
                    .option(IoUringChannelOption.TCP_KEEPINTVL, intervalSeconds)
                    .option(IoUringChannelOption.TCP_KEEPCNT, probes);
            case EPOLL -> bootstrap.option(EpollChannelOption.TCP_KEEPIDLE, idleSeconds)
                    .option(EpollChannelOption.TCP_KEEPINTVL, intervalSeconds)
                    .option(EpollChannelOption.TCP_KEEPCNT, probes);
            case NIO -> bootstrap.option(NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPIDLE), idleSeconds)
                    .option(NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPINTERVAL), intervalSeconds)
                    .option(NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPCOUNT), probes);
        }
    }

    /** For the start-up log: which transport, and why not a faster one when they are unavailable. */
    public String describe() {
        StringBuilder text = new StringBuilder(switch (this) {
            case IO_URING -> "io_uring";
            case EPOLL -> "native epoll";
            case NIO -> "Java NIO";
        });
        for (SocketTransport faster : values()) {
            if (faster.ordinal() < ordinal() && !faster.isAvailable()) {
                Throwable cause = faster.unavailabilityCause.get();
                text.append("; ").append(faster.flagValue).append(" unavailable")
                        .append(cause == null ? "" : ": " + cause.getMessage());
            }
        }
        return text.toString();
    }
}
