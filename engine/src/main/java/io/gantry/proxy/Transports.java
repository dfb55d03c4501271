package io.gantry.proxy;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * Netty's native epoll transport where Linux offers it (fewer system calls and less CPU per query), the JDK's NIO
 * elsewhere. Event loops and channels must come from the same transport, so both are chosen here, once.
 */
final class Transports {

    private static final boolean EPOLL = Epoll.isAvailable();

    private Transports() {
    }

    static String name() {
        return EPOLL ? "epoll (native)" : "nio";
    }

    static EventLoopGroup group(int threads, String threadName) {
        DefaultThreadFactory factory = new DefaultThreadFactory(threadName);
        return EPOLL ? new EpollEventLoopGroup(threads, factory) : new NioEventLoopGroup(threads, factory);
    }

    static Class<? extends ServerChannel> serverChannel() {
        return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    static Class<? extends SocketChannel> socketChannel() {
        return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }
}
