package io.gantry.proxy;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.util.concurrent.ThreadFactory;

/**
 * Which Netty transport carries the proxy's client and backend sockets. Linux's native epoll where its library
 * loads (the jar bundles it for x86-64): it reads and writes pooled buffers straight from the event loop, without
 * the JDK selector's locks, key sets and per-read bookkeeping, which is most of a point select's CPU outside
 * Gantry's own code. Elsewhere, or with {@code -Dio.netty.transport.noNative=true}, the JDK's NIO. Client and
 * backend channels share event loops, so both always use the one transport chosen here.
 */
enum SocketTransport {
    EPOLL, NIO;

    /** The transport of this process. */
    static final SocketTransport CHOSEN = Epoll.isAvailable() ? EPOLL : NIO;

    EventLoopGroup newGroup(int threads, ThreadFactory threadFactory) {
        return this == EPOLL ? new EpollEventLoopGroup(threads, threadFactory)
                : new NioEventLoopGroup(threads, threadFactory);
    }

    Class<? extends ServerSocketChannel> serverChannel() {
        return this == EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    Class<? extends SocketChannel> socketChannel() {
        return this == EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    /** For the start-up log: which transport, and why not epoll when it is not. */
    String describe() {
        if (this == EPOLL) {
            return "native epoll";
        }
        Throwable cause = Epoll.unavailabilityCause();
        return "Java NIO (native epoll unavailable: " + (cause == null ? "not chosen" : cause.getMessage()) + ")";
    }
}
