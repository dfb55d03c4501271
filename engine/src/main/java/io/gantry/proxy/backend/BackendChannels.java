package io.gantry.proxy.backend;

import io.gantry.proxy.transport.ChannelBuffers;
import io.gantry.proxy.transport.SocketTransport;
import io.gantry.topology.UpstreamServer;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import java.time.Duration;

/**
 * How a backend connection's channel reaches its server: over TCP in the proxy; over in-process channels in the
 * JMH benchmark of the per-query path ({@code bench/jmh}), which measures everything but the sockets.
 */
public interface BackendChannels {

    /**
     * Connects a channel on {@code loop} to {@code server}, with {@code handler} (the connection's pipeline
     * initializer) installed; the future completes once connected.
     */
    ChannelFuture connect(UpstreamServer server, EventLoop loop, Duration connectTimeout, ChannelHandler handler);

    /** Keepalive probes start after this long without traffic on a backend connection. */
    int KEEPALIVE_IDLE_SECONDS = 5;
    /** ... and go every this long ... */
    int KEEPALIVE_INTERVAL_SECONDS = 1;
    /** ... until this many went unanswered: a silent dead host is noticed after 8 s. */
    int KEEPALIVE_PROBES = 3;

    /**
     * TCP with Nagle off (commands and responses are small and latency-bound), over {@code transport}: the one of the
     * event loops the channels are opened on. Buffers as the client channels' ({@link ChannelBuffers}). Keepalive
     * on: a server whose host or network went away without a word (no RST) is noticed on connections nobody
     * writes to, pooled ones among them.
     */
    static BackendChannels tcp(SocketTransport transport) {
        return (server, loop, connectTimeout, handler) -> {
            Bootstrap bootstrap = new Bootstrap()
                    .group(loop)
                    .channel(transport.socketChannel())
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) connectTimeout.toMillis())
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.ALLOCATOR, ChannelBuffers.ALLOCATOR)
                    .handler(handler);
            transport.keepAlive(bootstrap, KEEPALIVE_IDLE_SECONDS, KEEPALIVE_INTERVAL_SECONDS, KEEPALIVE_PROBES);
            return bootstrap.connect(server.url().host(), server.url().port());
        };
    }
}
